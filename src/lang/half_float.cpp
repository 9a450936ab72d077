// src/lang/half_float.cpp — IEEE binary16 conversion on the host (see half_float.h).
#include "lang/half_float.h"

#include <cstring>

namespace sg::lang {

uint16_t half_bits_from_double(double value) {
    uint64_t x;
    std::memcpy(&x, &value, sizeof x);
    const uint16_t sign = uint16_t((x >> 48) & 0x8000u);
    const uint64_t ax = x & 0x7fffffffffffffffull;
    if (ax > 0x7ff0000000000000ull) return 0x7fff;       // NaN: canonical
    if (ax >= 0x40effe0000000000ull) return sign | 0x7c00;  // >= 65520 (and inf): infinity
    const int exponent = int(ax >> 52);                    // biased by 1023
    const uint64_t mantissa = (ax & 0xfffffffffffffull) | (uint64_t(1) << 52);
    // A half normal has exponent >= -14 (biased 1009); below that the result is subnormal, in
    // units of 2^-24. `shift` drops the bits below the half's last mantissa bit.
    uint64_t kept;
    int shift;
    if (exponent >= 1009) {
        shift = 42;
        kept = (uint64_t(exponent - 1008) << 52) | (mantissa & 0xfffffffffffffull);
    } else {
        shift = 1051 - exponent;  // value = mantissa * 2^(exponent - 1075) = bits * 2^-24
        if (shift > 54) return sign;
        kept = mantissa;
    }
    uint64_t bits = kept >> shift;
    const uint64_t rest = kept & ((uint64_t(1) << shift) - 1);
    const uint64_t halfway = uint64_t(1) << (shift - 1);
    if (rest > halfway || (rest == halfway && (bits & 1))) ++bits;  // a carry may reach the exponent
    return uint16_t(sign | bits);
}

}  // namespace sg::lang
