// src/lang/sema_field_defaults.cpp — default values of struct fields: `struct S { float a = 5; }`.
//
// A field's default is what the field holds when nothing else gives it a value: a local declared
// without an initializer, and the fields an initializer list leaves out (`S s = {};`, `S s = {1};`)
// get it, as in Slang (lowering applies them, ir/lower_expr.cpp default_value). It is checked
// once per struct (each instance of a generic one too), as a global constant's initializer is.
#include "base/on_exit.h"
#include "lang/sema_internal.h"

namespace sg::lang {

void Sema::check_field_defaults(StructDecl* s) {
    for (VarDecl* f : s->fields) {
        if (!f->init || !f->type || f->type->is_error()) continue;
        OnExit restore{[this, saved_subst = subst_, saved_struct = resolving_struct_, saved_of = field_defaults_of_]() {
            subst_ = saved_subst;
            resolving_struct_ = saved_struct;
            field_defaults_of_ = saved_of;
        }};
        AtModuleScope module_scope(*this);
        subst_ = substitution_of_struct(s);
        resolving_struct_ = s;
        field_defaults_of_ = s;  // the struct's static constants are in scope unqualified
        if (f->init->kind == ExprKind::InitList) check_init_list(f->init, f->type);
        else check_convertible(f->init, f->type, "field default value");
    }
}

}  // namespace sg::lang
