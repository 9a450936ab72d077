// src/lang/sema_scalar_members.cpp — the static members Slang gives the built-in scalar types:
// `T.maxValue` and `T.minValue` (every integer and floating-point type; a float's minValue is
// its lowest finite value, -maxValue) and `T.getPi()` (floating-point types). Each becomes the
// literal it stands for, of type T. Any other member of a scalar type is 30027.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

double float_max(ScalarKind k) {
    switch (k) {
    case ScalarKind::Half: return 65504.0;
    case ScalarKind::Float: return double(FLT_MAX);
    default: return DBL_MAX;
    }
}

/// (min, max) of an integer kind, as the bits of a 64-bit value.
std::pair<int64_t, uint64_t> int_range(ScalarKind k) {
    switch (k) {
    case ScalarKind::Int8: return {INT8_MIN, INT8_MAX};
    case ScalarKind::Int16: return {INT16_MIN, INT16_MAX};
    case ScalarKind::Int32: return {INT32_MIN, INT32_MAX};
    case ScalarKind::Int64: return {INT64_MIN, INT64_MAX};
    case ScalarKind::UInt8: return {0, UINT8_MAX};
    case ScalarKind::UInt16: return {0, UINT16_MAX};
    case ScalarKind::UInt32: return {0, UINT32_MAX};
    default: return {0, UINT64_MAX};
    }
}

}  // namespace

const Type* Sema::scalar_type_base(const Expr* base) {
    if (base->kind != ExprKind::Name || lookup_local(base->name) || module_.globals.count(base->name)) return nullptr;
    const Type* t = resolve_named_type(base->name, base->loc, false);
    return t && t->is_scalar() && t->scalar != ScalarKind::Bool && !t->enumeration ? t : nullptr;
}

const Type* Sema::check_scalar_type_member(Expr* e, bool called) {
    if (const Type* t = check_builtin_type_member(e, called)) return t;  // sema_extensions_builtin.cpp
    Expr* member = called ? e->operands[0] : e;
    const Type* t = scalar_type_base(member->operands[0]);
    if (!t) return nullptr;
    const std::string& n = member->name;
    bool floating = is_floating(t->scalar);
    bool ok = called ? (n == "getPi" && floating && e->operands.size() == 1) : (n == "maxValue" || n == "minValue");
    if (!ok) {
        diags_.error(member->loc, "type " + type_name(t) + " has no static member '" + n + "'" +
                                      (called && n == "getPi" && floating ? " taking arguments" : ""),
                     30027);  // Slang: member not found
        return types_.error_type();
    }
    Expr* lit = e;  // the node becomes the literal
    lit->operands.clear();
    lit->builtin = nullptr;
    if (n == "getPi") {
        lit->kind = ExprKind::FloatLit;
        lit->float_value = 3.14159265358979323846;
    } else if (floating) {
        lit->kind = ExprKind::FloatLit;
        lit->float_value = n == "maxValue" ? float_max(t->scalar) : -float_max(t->scalar);
    } else {
        auto [lo, hi] = int_range(t->scalar);
        lit->kind = ExprKind::IntLit;
        lit->int_value = n == "maxValue" ? hi : uint64_t(lo);
    }
    return t;
}

}  // namespace sg::lang
