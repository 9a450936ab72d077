// src/lang/half_float.h — IEEE binary16 (`half`) conversions on the host: the compiler folds
// half literals to their bits with these, and tests compare half results with them.
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
/// The exact value of a half given by its bits.
double half_bits_to_double(uint16_t bits);
/// `value` rounded to the nearest half (the value the half type can hold).
inline double round_to_half(double value) { return half_bits_to_double(half_bits_from_double(value)); }

}  // namespace sg::lang
