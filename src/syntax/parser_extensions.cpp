// src/syntax/parser_extensions.cpp — `extension S : IFoo { ... }`: members (methods, static
// constants, type aliases, properties) and interfaces added to a struct declared elsewhere
// (before or after, in this module or an imported one). Parsed like a struct body into a
// StructDecl named S; sema (sema_extensions.cpp) moves its members into S.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

// extension_decl = "extension" ident bases struct_body ";"?
Decl* Parser::parse_extension(SourceLoc first) {
    Decl* d = make_decl(DeclKind::Extension, first);
    advance();  // extension
    Token name = expect(TokenKind::Identifier);
    auto* s = ctx_.make<StructDecl>();
    s->loc = loc(name);
    s->name = std::string(text(name));
    d->structure = s;
    if (at(TokenKind::Less)) {
        unsupported(loc(), "an extension of a generic struct's instance");
        d->kind = DeclKind::Unsupported;
        synchronize();
        return d;
    }
    parse_bases(s);
    parse_struct_body(s);
    match(TokenKind::Semicolon);
    return d;
}

}  // namespace sg::lang::detail
