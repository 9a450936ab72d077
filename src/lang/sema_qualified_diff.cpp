// src/lang/sema_qualified_diff.cpp — derivative operators applied to a qualified name:
// `bwd_diff(S.f)(...)` and `fwd_diff(S::f)(...)`, where S is a struct and f one of its static
// methods (overloads chosen by the derivative's arguments, as for a free function). A method
// with `this` (`bwd_diff(S.m)`) is not supported yet; a name S does not have is 30027.
#include "lang/sema_internal.h"

namespace sg::lang {

const Type* Sema::check_qualified_derivative(Expr* e, Expr* target, bool bwd, const std::string& op) {
    Expr* base = target->operands[0];
    const Type* t = nullptr;
    if (base->kind == ExprKind::Name && !lookup_local(base->name)) t = resolve_named_type(base->name, base->loc, false);
    if (!t) {
        // A value's member (`v.f`): Slang finds no such member function (30027).
        const Type* vt = check_expr(base);
        if (vt->is_error()) return vt;
        if (vt->is_struct() && vt->decl)
            for (FunctionDecl* m : vt->decl->methods)
                if (m->member_name == target->name) {
                    diags_.unsupported(target->loc, op + " of method '" + type_name(vt) + "." + target->name +
                                                        "' through a value");
                    return types_.error_type();
                }
        diags_.error(target->loc, type_name(vt) + " has no member function '" + target->name + "'", 30027);
        return types_.error_type();
    }
    if (!t->is_struct() || !t->decl) {
        diags_.error(target->loc, op + " needs the name of a function", 33070);  // Slang: expected a function
        return types_.error_type();
    }
    base->ref = RefKind::Type;
    base->type_ref = t;
    base->type = types_.void_type();
    std::vector<FunctionDecl*> statics;
    bool method = false;
    for (FunctionDecl* m : t->decl->methods) {
        if (m->member_name != target->name || m->is_init) continue;
        if (m->is_static) statics.push_back(m);
        else method = true;
    }
    const std::string qualified = type_name(t) + "." + target->name;
    if (statics.empty()) {
        if (method) diags_.unsupported(target->loc, op + " of method '" + qualified + "', which is not static");
        else diags_.error(target->loc, type_name(t) + " has no member '" + target->name + "'", 30027);
        return types_.error_type();
    }
    if (statics.size() == 1) return check_derivative_call(e, statics.front(), bwd);
    for (size_t k = 1; k < e->operands.size(); ++k)
        if (e->operands[k]->type && e->operands[k]->type->is_error()) return types_.error_type();
    std::vector<FunctionDecl*> fits;
    for (bool exact : {true, false}) {
        for (FunctionDecl* f : statics)
            if (derivative_call_fits(e, f, bwd, exact)) fits.push_back(f);
        if (!fits.empty()) break;
    }
    if (fits.size() != 1) {
        diags_.error(target->loc, fits.empty() ? "no overload of '" + qualified + "' has a " + op +
                                                     " that takes these arguments"
                                               : op + " of '" + qualified +
                                                     "' is ambiguous: several overloads take these arguments");
        return types_.error_type();
    }
    return check_derivative_call(e, fits.front(), bwd);
}

}  // namespace sg::lang
