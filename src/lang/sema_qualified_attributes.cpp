// src/lang/sema_qualified_attributes.cpp — derivative attributes that name a struct's static
// method by its qualified name:
//
//   [BackwardDerivative(S.g)]  [ForwardDerivative(S::g)]     on f: S's static g is f's derivative
//   [BackwardDerivativeOf(S.f)]  [ForwardDerivativeOf(S::f)]  on g: g is S's static f's derivative
//
// The candidates are S's static methods of that name (overloads: the one whose signature is the
// derived one, as for a plain name; sema_diff.cpp checks it). As in Slang: a name S does not
// have is 30027 at the member, an instance method 30100, S not a type 30015, a generic struct's
// instance (`Box<float>.g`) 31151; and a static method's derivative must itself be a static
// method (31156), which a free function is not.
#include "lang/sema_internal.h"

namespace sg::lang {

std::optional<std::vector<FunctionDecl*>> Sema::qualified_attribute_candidates(FunctionDecl* f, const Attribute& a) {
    Expr* target = a.args[0];
    Expr* base = target->operands.empty() ? nullptr : target->operands[0];
    if (!base || base->kind != ExprKind::Name) {
        diags_.error(a.loc, "[" + a.name + "] takes the name of a function or of a struct's static method");
        return std::nullopt;
    }
    if (base->type_expr) {  // Slang: 31151 cannot deduce generic arguments for derivative
        diags_.error(a.loc, "[" + a.name + "] cannot name a method of a generic struct's instance ('" + base->name +
                                "<...>." + target->name + "')",
                     31151);
        return std::nullopt;
    }
    const Type* t = resolve_named_type(base->name, base->loc, false);
    if (!t) {
        diags_.error(base->loc, "unknown name '" + base->name + "' in [" + a.name + "]", 30015);
        return std::nullopt;
    }
    if (!t->is_struct() || !t->decl || t->decl->is_interface) {
        diags_.error(target->loc, "type " + type_name(t) + " has no member '" + target->name + "'", 30027);
        return std::nullopt;
    }
    std::vector<FunctionDecl*> statics;
    bool instance = false, generic = false;
    for (FunctionDecl* m : t->decl->methods) {
        if (m->member_name != target->name || m->is_init || m == f) continue;
        if (!m->generic_params.empty()) generic = true;
        else if (m->is_static) statics.push_back(m);
        else instance = true;
    }
    if (statics.empty()) {
        if (generic) {
            diags_.unsupported(target->loc, "a generic method named by a qualified name in [" + a.name + "]");
        } else if (instance) {  // Slang: 30100 type cannot refer to non-static member
            diags_.error(target->loc, "'" + type_name(t) + "." + target->name + "' is not static: [" + a.name +
                                          "] names a static method by its qualified name",
                         30100);
        } else {  // Slang: 30027 member not found
            diags_.error(target->loc, "struct " + type_name(t) + " has no static method '" + target->name + "'", 30027);
        }
        return std::nullopt;
    }
    return statics;
}

std::string attribute_target_text(const Attribute& a) {
    if (a.args.empty()) return "";
    const Expr* t = a.args[0];
    if (t->kind == ExprKind::Member && !t->operands.empty() && t->operands[0]->kind == ExprKind::Name)
        return t->operands[0]->name + "." + t->name;
    return t->name;
}

bool Sema::check_static_derivative(const FunctionDecl* primal, const FunctionDecl* derivative, const Attribute& a) {
    if (!primal->owner || !primal->is_static || (derivative->owner && derivative->is_static)) return true;
    // Slang: 31156 expected static custom derivative
    diags_.error(a.loc, "'" + derivative->name + "' is the derivative of static method '" + primal->name +
                            "', so it must be a static method too (of any struct)",
                 31156);
    return false;
}

}  // namespace sg::lang
