// src/codegen/prelude.cpp — the device prelude text, embedded in the library (never read from
// disk at run time). Its parts live in prelude_*.inc as raw string literals so that they
// read like the C++ they are; adjacent literals concatenate into one string.
#include "codegen/codegen.h"

namespace sg::codegen {

const char* device_prelude() {
    static const char* const kPrelude =
#include "codegen/prelude_core.inc"
#include "codegen/prelude_half.inc"
#include "codegen/prelude_math.inc"
#include "codegen/prelude_tensor.inc"
#include "codegen/prelude_coop.inc"
#include "codegen/prelude_fiber.inc"
#include "codegen/prelude_call_group.inc"
#include "codegen/prelude_wave.inc"
#include "codegen/prelude_reduce.inc"
#include "codegen/prelude_ordered.inc"
#include "codegen/prelude_fixed.inc"
        ;
    return kPrelude;
}

}  // namespace sg::codegen
