// src/call/scalar_store.h — one scalar of a parameter block, written as its kind's bytes: the
// per-element call's uniforms (call_plan.cpp) and a cooperative launch's values (coop_pack.cpp).
#pragma once

#include <cstdint>
#include <cstring>

#include "lang/half_float.h"
#include "lang/types.h"

namespace sg::call {

/// Stores a number as one scalar of kind `k` at `out`: integer kinds from `i`, bool, half, float
/// and double from `v` (half rounded once, from the double).
inline void store_scalar(uint8_t* out, lang::ScalarKind k, double v, int64_t i) {
    auto put = [out](auto x) { std::memcpy(out, &x, sizeof x); };
    switch (k) {
    case lang::ScalarKind::Bool: put(uint8_t(v != 0)); break;
    case lang::ScalarKind::Int8: put(int8_t(i)); break;
    case lang::ScalarKind::Int16: put(int16_t(i)); break;
    case lang::ScalarKind::Int32: put(int32_t(i)); break;
    case lang::ScalarKind::Int64: put(int64_t(i)); break;
    case lang::ScalarKind::UInt8: put(uint8_t(i)); break;
    case lang::ScalarKind::UInt16: put(uint16_t(i)); break;
    case lang::ScalarKind::UInt32: put(uint32_t(i)); break;
    case lang::ScalarKind::UInt64: put(uint64_t(i)); break;
    case lang::ScalarKind::Half: put(lang::half_bits_from_double(v)); break;
    case lang::ScalarKind::Float: put(float(v)); break;
    case lang::ScalarKind::Double: put(v); break;
    }
}

}  // namespace sg::call
