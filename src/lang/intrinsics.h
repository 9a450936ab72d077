// src/lang/intrinsics.h — ids and static facts of the math intrinsics (intrinsics.def).
#pragma once

#include <cstdint>
#include <string_view>

namespace sg::lang {

enum class IntrinsicRule : uint8_t {
    Same, SameAny, Reduce, Cross, Select, Pred, AnyAll, BitCast, Mul, Transpose, Sign, BitCount, BitSame, F16ToF32,
    F32ToF16
};

enum class IntrinsicId : uint16_t {
#define SG_INTRINSIC(Id, name, arity, rule, diff) Id,
#include "lang/intrinsics.def"
#undef SG_INTRINSIC
    Count
};

struct IntrinsicInfo {
    IntrinsicId id;
    const char* name;
    int arity;
    IntrinsicRule rule;
    bool differentiable;
};

const IntrinsicInfo& intrinsic_info(IntrinsicId id);
/// nullptr when `name` is not an intrinsic.
const IntrinsicInfo* find_intrinsic(std::string_view name);

}  // namespace sg::lang
