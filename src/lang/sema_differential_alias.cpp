// src/lang/sema_differential_alias.cpp — a differentiable struct that names its Differential
// itself: `typedef S Differential;` / `typealias Differential = S;` inside `struct S :
// IDifferentiable`. As in Slang, the struct is then its own Differential, every field included
// (an `int` field too: its derivative is 0); a `no_diff` field cannot be part of it (41031).
// Another type as the Differential needs [DerivativeMember] on each differentiable field
// (sema_derivative_members.cpp).
#include "lang/sema_internal.h"

namespace sg::lang {

bool Sema::declares_own_differential(StructDecl* s) {
    VarDecl* alias = nullptr;
    for (VarDecl* a : s->type_aliases)
        if (a->name == "Differential") alias = a;
    if (!alias) return false;
    const Type* t = alias->type ? alias->type : resolve_type(alias->type_expr);
    if (!t || t->is_error()) return false;
    if (t == s->type) {
        for (VarDecl* f : s->fields)
            if (f->is_no_diff)
                diags_.error(f->loc, "no_diff field '" + f->name + "' of " + s->name + ", which is its own Differential (typedef " +
                                         s->name + " Differential): the field's derivative would be lost; drop no_diff or the typedef",
                             41031);
        return true;
    }
    return false;  // another type: its fields name their counterparts (sema_derivative_members.cpp)
}

}  // namespace sg::lang
