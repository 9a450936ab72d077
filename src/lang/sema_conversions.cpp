// src/lang/sema_conversions.cpp — slangc's warning 30081 on implicit conversions that lose
// information ("implicit conversion from 'int' to 'int8_t' is not recommended").
//
// The rule, checked pair by pair against slangc for every scalar type: converting implicitly
// to bool, from bool to a float type, from a float type to an integer, to a narrower float
// type, from an integer to half, or to a narrower integer warns. Integer constants are exempt
// when the target is an integer, float or double type, and for half when they lie in
// [-2048, 2048] (the integers half holds exactly, as slangc decides). Float constants are not
// exempt (`half h = 1.0;` warns). The conversion is located at the converted expression; a scalar
// splat into a vector names the vector type.
#include "lang/sema_internal.h"

namespace sg::lang {

bool conversion_not_recommended(ScalarKind from, ScalarKind to) {
    if (from == to) return false;
    if (to == ScalarKind::Bool) return true;
    if (from == ScalarKind::Bool) return is_floating(to);
    if (is_floating(from)) return !is_floating(to) || scalar_bits(to) < scalar_bits(from);
    if (to == ScalarKind::Half) return true;
    if (is_floating(to)) return false;
    return scalar_bits(to) < scalar_bits(from);
}

void Sema::warn_implicit_conversion(Expr* e, const Type* to) {
    const Type* from = e ? e->type : nullptr;
    if (!from || !to || !from->is_numeric() || !to->is_numeric()) return;
    if (!conversion_not_recommended(from->scalar, to->scalar)) return;
    if (from->is_scalar() && is_integer(from->scalar) && to->scalar != ScalarKind::Bool) {
        if (auto v = eval_const_int(e)) {
            if (to->scalar != ScalarKind::Half || (*v >= -2048 && *v <= 2048)) return;
        }
    }
    // A scalar made into a vector or matrix (a splat) names that type, as slangc does ("from
    // 'bool' to 'vector<float,3>'" for `float3 f(bool b) { return b; }`).
    const Type* target = from->is_scalar() ? to : types_.with_scalar(from, to->scalar);
    diags_.warning(e->loc,
                   "implicit conversion from '" + type_name(from) + "' to '" + type_name(target) +
                       "' is not recommended",
                   30081);
}

}  // namespace sg::lang
