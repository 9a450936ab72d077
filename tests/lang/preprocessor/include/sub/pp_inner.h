// Side file of pp_include_nested.slang.
#define INNER_VALUE 10
