// src/syntax/parser_extensions.cpp — `extension S : IFoo { ... }`: members (methods, static
// constants, type aliases, properties) and interfaces added to a struct declared elsewhere
// (before or after, in this module or an imported one). Parsed like a struct body into a
// StructDecl named S; sema (sema_extensions.cpp) moves its members into S.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

// extension_decl = "extension" generic_params? ident generic_args? bases struct_body ";"?
// `extension<T> Box<T>` extends every instance of a generic struct (sema_generic_extensions.cpp),
// `extension Box<float>` and `extension<T : IFloat> Box<T>` some of them (sema_extensions_instances.cpp).
Decl* Parser::parse_extension(SourceLoc first) {
    Decl* d = make_decl(DeclKind::Extension, first);
    advance();  // extension
    std::vector<GenericParam> params;
    if (at(TokenKind::Less)) parse_generic_params(params);
    Token name = expect(TokenKind::Identifier);
    auto* s = ctx_.make<StructDecl>();
    s->loc = loc(name);
    s->name = std::string(text(name));
    d->structure = s;
    if (!params.empty() || at(TokenKind::Less)) {  // `extension Box<float>`: one instance
        auto* target = ctx_.make<TypeExpr>();
        target->loc = loc(name);
        target->name = s->name;
        if (at(TokenKind::Less)) parse_generic_args(target);
        s->generic_params = std::move(params);
        s->extension_target = target;
    }
    parse_bases(s);
    parse_struct_body(s);
    match(TokenKind::Semicolon);
    return d;
}

}  // namespace sg::lang::detail
