// src/lang/sema_visibility.cpp — `public` / `internal` / `private` as Slang checks them inside a
// module: a member may not be more visible than its struct (30601), a private member is
// accessible only in its own struct's methods (30600), and a struct with a member less visible
// than itself has no initializer-list construction (30513). Without a modifier a declaration is
// internal. (`private` on a top-level declaration, 30603, and a second visibility, 31202, are
// the parser's.) What an importing module may see is not narrowed: every declaration of an
// imported module is visible to it, as before.
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

int rank(Visibility v) {
    switch (v) {
    case Visibility::Private: return 0;
    case Visibility::Public: return 2;
    default: return 1;  // internal, written or not
    }
}

const char* name_of(Visibility v) {
    switch (v) {
    case Visibility::Private: return "private";
    case Visibility::Public: return "public";
    default: return "internal";
    }
}

}  // namespace

void Sema::check_member_visibility(const StructDecl* s) {
    auto check = [&](Visibility v, SourceLoc loc, const std::string& what) {
        if (rank(v) > rank(s->visibility))
            diags_.error(loc, std::string(name_of(v)) + " " + what + " in " + name_of(s->visibility) + " struct " +
                                  s->name + ": a member cannot be more visible than its struct",
                         30601);
    };
    for (const VarDecl* f : s->fields) check(f->visibility, f->loc, "field '" + f->name + "'");
    for (const VarDecl* c : s->static_consts) check(c->visibility, c->loc, "constant '" + c->name + "'");
    for (const FunctionDecl* m : s->methods) check(m->visibility, m->loc, "member '" + m->member_name + "'");
}

void Sema::check_member_access(SourceLoc loc, const StructDecl* owner, Visibility v, const std::string& member) {
    if (v != Visibility::Private) return;
    if (current_fn_ && current_fn_->owner == owner) return;  // its own methods
    diags_.error(loc, "'" + member + "' is private to struct " + owner->name + "; only its own methods can use it",
                 30600);
}

void Sema::check_init_list_visibility(const Expr* list, const Type* struct_type) {
    if (list->operands.empty()) return;  // `{}`: the default value
    const StructDecl* s = struct_type->decl;
    for (const VarDecl* f : s->fields)
        if (rank(f->visibility) < rank(s->visibility)) {
            diags_.error(list->loc, "cannot use an initializer list for " + type_name(struct_type) + ": its field '" +
                                        f->name + "' is " + name_of(f->visibility) + ", less visible than the struct",
                         30513);
            return;
        }
}

}  // namespace sg::lang
