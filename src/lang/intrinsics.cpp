// src/lang/intrinsics.cpp — the intrinsic table generated from intrinsics.def.
#include "lang/intrinsics.h"

namespace sg::lang {

static const IntrinsicInfo kIntrinsics[] = {
#define SG_INTRINSIC(Id, name, arity, rule, diff) {IntrinsicId::Id, name, arity, IntrinsicRule::rule, diff},
#include "lang/intrinsics.def"
#undef SG_INTRINSIC
};

const IntrinsicInfo& intrinsic_info(IntrinsicId id) { return kIntrinsics[int(id)]; }

const IntrinsicInfo* find_intrinsic(std::string_view name) {
    for (const auto& info : kIntrinsics)
        if (name == info.name) return &info;
    return nullptr;
}

}  // namespace sg::lang
