// Side file of pp_include_guard.slang.
#ifndef PP_GUARDED_H
#define PP_GUARDED_H
#define GUARDED_VALUE 2
int twice_int(int x) { return 2 * x; }
#endif
