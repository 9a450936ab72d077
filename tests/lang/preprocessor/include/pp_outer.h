// Side file of pp_include_nested.slang: includes sub/pp_inner.h from its own folder.
#include "sub/pp_inner.h"
#define OUTER_VALUE (INNER_VALUE + 1)
