// src/lang/half_float.h — IEEE binary16 (`half`) conversion on the host: the compiler folds
// half literals to their bits with it, and the call layer packs half scalar arguments.
//
// The device prelude (codegen/prelude_half.inc) implements the same rounding for generated code;
// both round to nearest, ties to even, keep subnormals, turn values of magnitude 65520 or more
// into infinity and every NaN into the canonical half NaN 0x7fff (what CUDA's cvt instructions
// produce).
#pragma once

#include <cstdint>

namespace sg::lang {

/// The half nearest to `value` (one rounding: no detour through float), as its bits.
uint16_t half_bits_from_double(double value);

}  // namespace sg::lang
