// src/syntax/parser_nested_types.cpp — a struct declared inside a struct (or an extension):
//
//   struct Maker : IMaker { struct Item { float a; }; Item make(float x) { ... } };
//
// The inner struct is a struct of the module named `Maker.Item` (how types print it, and how
// `Maker.Item` / `Maker::Item` name it from outside), parsed as any struct and handed to the
// module's declarations after the enclosing one; the enclosing struct gets a member alias
// `Item` for it, so its methods name it unqualified, `T.Item` finds it through a type parameter,
// and it satisfies an interface's `associatedtype Item`. Sema resolves a name used inside a
// nested struct in the structs that enclose it (sema_assoc_types.cpp). In a generic struct the
// inner one is generic over the outer's parameters (`Box<float>.Item` is `Box.Item<float>`; sema
// gives it the outer's member types: sema_nested_generic.cpp). In an interface a struct is
// Slang's 30102.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

// nested_struct = struct_decl ";"?      (inside a struct body)
void Parser::parse_nested_struct(StructDecl* outer, const Modifiers& lead) {
    SourceLoc first = loc();
    if (outer->is_interface) {  // Slang: 30102 declaration not allowed here
        diags_.error(first, "a struct cannot be declared in an interface (declare it outside, or require one with "
                            "`associatedtype`)",
                     30102);
        synchronize();
        return;
    }
    if (in_generic_nest_) {  // its parameters would be the generic struct's too
        unsupported(first, "a struct declared in a struct that is declared in a generic struct");
        synchronize();
        return;
    }
    std::string saved = struct_prefix_;
    struct_prefix_ = outer->name + ".";
    in_generic_nest_ = !outer->generic_params.empty();
    Decl* d = nullptr;
    try {
        d = parse_struct(first);
    } catch (...) {
        struct_prefix_ = saved;
        in_generic_nest_ = false;
        throw;
    }
    struct_prefix_ = saved;
    in_generic_nest_ = false;
    match(TokenKind::Semicolon);
    StructDecl* inner = d->structure;
    if (!inner->generic_params.empty()) {
        unsupported(inner->loc, "a generic struct declared in a struct");
        return;
    }
    inner->visibility = lead.visibility;
    lifted_.push_back(d);
    // The member alias: `Item` in `Maker` names `Maker.Item`; in a generic `Box<T>`, the inner
    // struct is generic over Box's parameters and `Item` names `Box.Item<T>`.
    const std::string short_name = inner->name.substr(outer->name.size() + 1);
    auto* type = ctx_.make<TypeExpr>();
    type->loc = inner->loc;
    type->name = inner->name;
    if (!outer->generic_params.empty()) {
        inner->generic_params = outer->generic_params;
        for (const GenericParam& p : outer->generic_params) {
            type->arg_is_value.push_back(p.is_value);
            if (p.is_value) {
                Expr* v = ctx_.make<Expr>();
                v->kind = ExprKind::Name;
                v->loc = inner->loc;
                v->name = p.name;
                type->value_args.push_back(v);
            } else {
                auto* t = ctx_.make<TypeExpr>();
                t->loc = inner->loc;
                t->name = p.name;
                type->type_args.push_back(t);
            }
        }
    }
    auto* v = ctx_.make<VarDecl>();
    v->loc = inner->loc;
    v->name = short_name;
    v->type_expr = type;
    v->is_static = true;
    outer->type_aliases.push_back(v);
    type_names_.insert(short_name);  // `(Item)x` is a cast
}

}  // namespace sg::lang::detail
