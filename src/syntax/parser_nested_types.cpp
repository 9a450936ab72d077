// src/syntax/parser_nested_types.cpp — a struct declared inside a struct (or an extension):
//
//   struct Maker : IMaker { struct Item { float a; }; Item make(float x) { ... } };
//
// The inner struct is a struct of the module named `Maker.Item` (how types print it, and how
// `Maker.Item` / `Maker::Item` name it from outside), parsed as any struct and handed to the
// module's declarations after the enclosing one; the enclosing struct gets a member alias
// `Item` for it, so its methods name it unqualified, `T.Item` finds it through a type parameter,
// and it satisfies an interface's `associatedtype Item`. Sema resolves a name used inside a
// nested struct in the structs that enclose it (sema_nested_types.cpp). A nested struct in a
// generic struct (which could name the outer type parameters) or in an interface is not
// supported yet.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

// nested_struct = struct_decl ";"?      (inside a struct body)
void Parser::parse_nested_struct(StructDecl* outer, const Modifiers& lead) {
    SourceLoc first = loc();
    if (outer->is_interface || !outer->generic_params.empty()) {
        unsupported(first, outer->is_interface ? "a struct declared in an interface"
                                               : "a struct declared in a generic struct");
        synchronize();
        return;
    }
    std::string saved = struct_prefix_;
    struct_prefix_ = outer->name + ".";
    Decl* d = nullptr;
    try {
        d = parse_struct(first);
    } catch (...) {
        struct_prefix_ = saved;
        throw;
    }
    struct_prefix_ = saved;
    match(TokenKind::Semicolon);
    StructDecl* inner = d->structure;
    if (!inner->generic_params.empty()) {
        unsupported(inner->loc, "a generic struct declared in a struct");
        return;
    }
    inner->visibility = lead.visibility;
    lifted_.push_back(d);
    // The member alias: `Item` in `Maker` names `Maker.Item`.
    const std::string short_name = inner->name.substr(outer->name.size() + 1);
    auto* type = ctx_.make<TypeExpr>();
    type->loc = inner->loc;
    type->name = inner->name;
    auto* v = ctx_.make<VarDecl>();
    v->loc = inner->loc;
    v->name = short_name;
    v->type_expr = type;
    v->is_static = true;
    outer->type_aliases.push_back(v);
    type_names_.insert(short_name);  // `(Item)x` is a cast
}

}  // namespace sg::lang::detail
