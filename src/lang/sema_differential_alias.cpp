// src/lang/sema_differential_alias.cpp — a differentiable struct that names its Differential
// itself: `typedef S Differential;` / `typealias Differential = S;` inside `struct S :
// IDifferentiable`. As in Slang, the struct is then its own Differential, every field included
// (an `int` field too: its derivative is 0); a `no_diff` field cannot be part of it (41031).
// Another type as the Differential needs [DerivativeMember] on each differentiable field, which
// is not supported: each such field is Slang's 30121 (missing field in differential type).
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
    for (VarDecl* f : s->fields)
        if (!f->is_no_diff && f->type && types_.is_differentiable(f->type))
            diags_.error(f->loc, "field '" + f->name + "' of " + s->name + " has no counterpart in its declared Differential " +
                                     type_name(t) + " (a Differential other than the struct itself needs [DerivativeMember], "
                                     "which is not supported yet)",
                         30121);
    return false;
}

}  // namespace sg::lang
