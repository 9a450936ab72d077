// src/lang/sema_explicit_intrinsics.cpp — explicit type arguments to the math built-ins:
// `pow<float>(x, 3)`, `max<int>(a, b)`, `lerp<double>(a, b, t)`. As in Slang, the one type
// argument is the scalar element type T of the built-in's generic declaration: each argument
// converts to T with its own shape (a float3 argument becomes vector<T, 3>), warning 30081 where
// the conversion loses information, and the call is then checked as written with those
// arguments. A T the built-in has no overload for (`sin<int>`: the floating-point-only ones) and
// a T that is not a scalar is Slang's 39999. A type parameter as T (`pow<T>(x, y)` in a generic)
// is checked through its stand-in or its instantiation like the call without it.
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// Whether the built-in of `info` has overloads for the integer element types (the others take
/// only floating-point types).
bool takes_integers(const IntrinsicInfo& info) {
    return info.rule == IntrinsicRule::SameAny || info.id == IntrinsicId::Dot || info.id == IntrinsicId::Cross;
}

bool takes_explicit_type(const IntrinsicInfo& info) {
    switch (info.rule) {
    case IntrinsicRule::Same:
    case IntrinsicRule::SameAny:
    case IntrinsicRule::Reduce:
    case IntrinsicRule::Cross: return true;
    default: return false;
    }
}

}  // namespace

const Type* Sema::check_explicit_intrinsic(Expr* e, const IntrinsicInfo& info) {
    Expr* callee = e->operands[0];
    const TypeExpr* te = callee->type_expr;
    if (!takes_explicit_type(info)) {
        diags_.unsupported(callee->loc, std::string("explicit type arguments to ") + info.name);
        return types_.error_type();
    }
    if (te->arg_is_value.size() != 1 || te->arg_is_value[0]) {
        diags_.error(callee->loc, std::string(info.name) + " takes one type argument, its element type (" +
                                      info.name + "<float>)");
        return types_.error_type();
    }
    const Type* t = resolve_type(te->type_args[0]);
    if (t->is_error()) return t;
    // A generic's type parameter checked through its stand-in (a struct): the built-in is checked
    // with what its constraint offers, the arguments as written.
    if (t->is_struct() && int(e->operands.size() - 1) == info.arity) return check_intrinsic(e, info);
    if (!t->is_scalar() || t->scalar == ScalarKind::Bool || t->enumeration ||
        (!takes_integers(info) && !is_floating(t->scalar))) {  // Slang: no overload applicable
        diags_.error(callee->loc, std::string("no overload of ") + info.name + " takes the type argument " +
                                      type_name(t) +
                                      (t->is_scalar() ? "" : " (the type argument is the element type, a scalar)"),
                     39999);
        return types_.error_type();
    }
    size_t nargs = e->operands.size() - 1;
    if (int(nargs) != info.arity) return check_intrinsic(e, info);  // reports the count
    for (size_t k = 1; k < e->operands.size(); ++k) {
        Expr* a = e->operands[k];
        if (!a->type->is_numeric()) return check_intrinsic(e, info);  // reports the argument
        const Type* to = types_.with_scalar(a->type, t->scalar);
        if (!implicitly_convertible(a->type, to)) {
            diags_.error(a->loc, "cannot convert " + type_name(a->type) + " to " + type_name(to) + " for " +
                                     info.name + "<" + type_name(t) + ">",
                         39999);
            return types_.error_type();
        }
        warn_implicit_conversion(a, to);
        if (a->type == to) continue;
        // The conversion the explicit argument asks for, written out: lowering converts a Cast
        // to its type, and the intrinsic is then checked (and lowered) with T's operands.
        Expr* c = ast_.make<Expr>();
        c->kind = ExprKind::Cast;
        c->loc = a->loc;
        c->type_expr = te->type_args[0];
        c->operands.push_back(a);
        c->type = to;
        e->operands[k] = c;
    }
    return check_intrinsic(e, info);
}

}  // namespace sg::lang
