// src/lang/sema_differential_members.cpp — the members Slang synthesizes for every
// differentiable type X (a floating-point scalar, vector or matrix, a struct conforming to
// IDifferentiable, DifferentialPair<T>, a generic's T : IDifferentiable):
//
//   X.dzero()         the zero of X.Differential
//   X.dadd(a, b)      a + b in X.Differential (field by field for a struct)
//   X.Differential(…) X.Differential's constructor (a struct's: its fields in order)
//
// called on the type (`V.dzero()`, `T.dadd(a, b)`) or on a value of it (`v.dadd(a, b)`). A
// type that is not differentiable has none of them (`int.dzero()`: Slang's 30027), and slangc
// 0.43.1 (the oracle) synthesizes no `dmul`: it is 30027 too. A struct's own method of one of
// these names is called as itself.
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

const Builtin kDZero{BuiltinKind::DZero, IntrinsicId::Count, "dzero"};
const Builtin kDAdd{BuiltinKind::DAdd, IntrinsicId::Count, "dadd"};

bool synthesized_name(const std::string& n) {
    return n == "dzero" || n == "dadd" || n == "dmul" || n == "Differential";
}

}  // namespace

const Type* Sema::check_differential_member(Expr* e) {
    Expr* callee = e->operands[0];
    const std::string& n = callee->name;
    if (!synthesized_name(n)) return nullptr;
    Expr* base = callee->operands[0];
    // The type: a type name (`V.dzero()`, `float3.dadd(...)`, a generic's `T`), or a variable's.
    const Type* x = nullptr;
    if (base->kind != ExprKind::Name) return nullptr;
    if (base->type_expr) {  // `DifferentialPair<float>.dadd(a, b)`, `Poly<3>.dzero()`
        if (module_.generic_functions.count(base->name) || module_.functions.count(base->name)) return nullptr;
        x = resolve_type(base->type_expr);
        if (x->is_error()) return x;
        base->ref = RefKind::Type;
        base->type_ref = x;
        base->type = types_.void_type();
    } else if (lookup_local(base->name) || module_.globals.count(base->name)) {
        x = check_expr(base);
        if (x->is_error()) return x;
    } else if (subst_ && subst_->values.count(base->name)) {
        return nullptr;
    } else {
        x = resolve_named_type(base->name, base->loc, false);
        if (!x) return nullptr;
        base->ref = RefKind::Type;  // the base names a type, as a constructor's callee does
        base->type_ref = x;
        base->type = types_.void_type();
    }
    if (x->is_struct() && x->decl && !find_methods(x->decl, n).empty()) return nullptr;  // the struct's own
    if (standins_.is_standin(x)) {
        // A generic checked as declared: these members are what IDifferentiable gives, which a
        // stand-in does not model; the check through its representative stands.
        standins_.set_unmodelled(true);
        for (size_t k = 1; k < e->operands.size(); ++k) check_expr(e->operands[k]);
        return types_.error_type();
    }
    if (!types_.is_differentiable(x) || n == "dmul") {  // Slang: member not found
        diags_.error(callee->loc, "type " + type_name(x) + " has no member '" + n + "'" +
                                      (n == "dmul" ? std::string(" (Slang synthesizes dzero and dadd only)")
                                                   : std::string(" (it is not differentiable)")),
                     30027);
        for (size_t k = 1; k < e->operands.size(); ++k) check_expr(e->operands[k]);
        return types_.error_type();
    }
    const Type* d = types_.differential(x);
    const size_t nargs = e->operands.size() - 1;
    if (n == "Differential") {
        for (size_t k = 1; k < e->operands.size(); ++k)
            if (e->operands[k]->kind != ExprKind::InitList) check_expr(e->operands[k]);
        callee->ref = RefKind::Type;
        callee->type_ref = d;
        callee->type = types_.void_type();
        return check_constructor(e, d, 1);
    }
    const size_t want = n == "dzero" ? 0 : 2;
    bool ok = true;
    for (size_t k = 1; k < e->operands.size(); ++k) ok &= !check_expr(e->operands[k], d)->is_error();
    if (nargs != want) {  // Slang: 39999, no overload takes these arguments
        diags_.error(e->loc, type_name(x) + "." + n + " takes " +
                                 (want == 0 ? std::string("no arguments") : std::string("two differentials")) + ", " +
                                 std::to_string(nargs) + " given",
                     39999);
        return types_.error_type();
    }
    if (!ok) return types_.error_type();
    for (size_t k = 1; k < e->operands.size(); ++k) {
        Expr* a = e->operands[k];
        if (a->kind == ExprKind::InitList) continue;  // checked against d above
        if (!implicitly_convertible(a->type, d)) {
            diags_.error(a->loc, "cannot convert " + type_name(a->type) + " to " + type_name(d) + " in " +
                                     type_name(x) + ".dadd",
                         39999);
            return types_.error_type();
        }
        warn_implicit_conversion(a, d);
    }
    callee->type = types_.void_type();
    e->builtin = n == "dzero" ? &kDZero : &kDAdd;
    return d;
}

}  // namespace sg::lang
