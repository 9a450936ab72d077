// src/syntax/parser_typedecl.cpp — declarations that name types: typealias, typedef and enum.
//
// The words are contextual (plain identifiers to the lexer): `typealias`, `typedef` and `enum`
// start a declaration only in the shapes checked here, so a kernel may still use them as names
// inside a function. Every name declared here is recorded, so that `(Name)x` parses as a cast.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

bool Parser::at_type_alias() const {
    if (at_word("typealias")) return kind(1) == TokenKind::Identifier && kind(2) == TokenKind::Assign;
    if (at_word("typedef")) return looks_like_declaration(pos_ + 1);
    return false;
}

// typealias_decl = "typealias" ident "=" type ";"
TypeAliasDecl* Parser::parse_typealias() {
    advance();  // typealias
    Token name = expect(TokenKind::Identifier);
    auto* a = ctx_.make<TypeAliasDecl>();
    a->loc = loc(name);
    a->name = std::string(text(name));
    expect(TokenKind::Assign);
    a->type = parse_type();
    expect(TokenKind::Semicolon);
    type_names_.insert(a->name);
    return a;
}

// typedef_decl = "typedef" type ident ("[" conditional "]")* ";"
// C-style dims after the name are the outer ones, as for variables: `typedef float A[3];`.
TypeAliasDecl* Parser::parse_typedef() {
    advance();  // typedef
    TypeExpr* type = parse_type();
    Token name = expect(TokenKind::Identifier);
    auto* a = ctx_.make<TypeAliasDecl>();
    a->loc = loc(name);
    a->name = std::string(text(name));
    a->type = parse_declarator_dims(type);
    expect(TokenKind::Semicolon);
    type_names_.insert(a->name);
    return a;
}

// enum_decl = "enum" "class"? ident (":" type)? "{" (enumerator ("," enumerator)* ","?)? "}" ";"?
// enumerator = ident ("=" conditional)?
// (A trailing `;` is taken as an empty top-level declaration.)
EnumDecl* Parser::parse_enum() {
    advance();  // enum
    auto* e = ctx_.make<EnumDecl>();
    if (at_word("class") || at(TokenKind::KwStruct)) {
        advance();
        e->is_class = true;
    }
    Token name = expect(TokenKind::Identifier);
    e->loc = loc(name);
    e->name = std::string(text(name));
    type_names_.insert(e->name);
    if (match(TokenKind::Colon)) e->underlying = parse_type();
    expect(TokenKind::LBrace);
    while (!at(TokenKind::RBrace)) {
        Token member = expect(TokenKind::Identifier);
        EnumMember m;
        m.loc = loc(member);
        m.name = std::string(text(member));
        if (match(TokenKind::Assign)) m.value = parse_conditional();
        e->members.push_back(m);
        if (!match(TokenKind::Comma)) break;
    }
    expect(TokenKind::RBrace);
    return e;
}

}  // namespace sg::lang::detail
