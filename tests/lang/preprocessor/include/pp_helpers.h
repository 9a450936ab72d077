// Side file of pp_include.slang and pp_include_twice_once.slang.
#pragma once
#define HELPER_BASE 3
float triple(float x) { return 3 * x; }
