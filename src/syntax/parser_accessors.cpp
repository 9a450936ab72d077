// src/syntax/parser_accessors.cpp — struct members with accessors: `property` and `__subscript`.
//
//   property float x { get { return _x; } set { _x = newValue; } }
//   property x : float { get { ... } set(float v) { ... } }
//   __subscript(int i) -> float { get { return v[i]; } set { v[i] = newValue; } }
//
// Each accessor becomes a method of the struct: a getter `__get_x` (for a subscript
// `__subscript_get`, its parameters the subscript's) returning the member's type, and a setter
// `__set_x` / `__subscript_set`, [mutating], taking the subscript's parameters and the new value
// (named `newValue` unless `set(T v)` names it). Sema (sema_accessors.cpp) turns `s.x`, `s.x = v`,
// `s[i]` and `s[i] = v` into calls of them. In an interface the accessors are written `get;` /
// `set;` and are requirements, which the conforming struct's accessor methods meet.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

namespace {

VarDecl* value_param(AstContext& ctx, SourceLoc loc, const std::string& name, TypeExpr* type) {
    auto* p = ctx.make<VarDecl>();
    p->loc = loc;
    p->name = name;
    p->type_expr = type;
    p->is_param = true;
    return p;
}

}  // namespace

// accessor_member = "property" (type ident | ident ":" type) accessors
//                 | "__subscript" "(" params ")" "->" type accessors
// accessors = "{" (attributes? ("get" body | "set" ("(" param ")")? body) | ";")* "}"
// body = block | ";"         (";" in an interface: the accessor is a requirement)
void Parser::parse_accessor_member(StructDecl* s, std::vector<Attribute> attrs, const Modifiers& lead) {
    const bool subscript = at_word("__subscript");
    const SourceLoc first = loc();
    advance();
    std::string name;
    SourceLoc name_loc = first;
    TypeExpr* type = nullptr;
    std::vector<VarDecl*> params;
    NameScope scope(*this);
    if (subscript) {
        expect(TokenKind::LParen);
        if (!at(TokenKind::RParen)) {
            do params.push_back(parse_param());
            while (match(TokenKind::Comma) && !at(TokenKind::RParen));
        }
        expect(TokenKind::RParen);
        expect(TokenKind::Arrow);
        type = parse_type();
    } else if (at(TokenKind::Identifier) && kind(1) == TokenKind::Colon) {
        Token n = advance();
        name_loc = loc(n);
        name = std::string(text(n));
        advance();  // :
        type = parse_type();
    } else {
        type = parse_type();
        Token n = expect(TokenKind::Identifier);
        name_loc = loc(n);
        name = std::string(text(n));
    }
    if (!attrs.empty()) error(attrs[0].loc, "attributes on a property go on its accessors (get, set)");
    expect(TokenKind::LBrace);
    bool have_get = false, have_set = false;
    while (!at(TokenKind::RBrace) && !at(TokenKind::EndOfFile)) {
        if (match(TokenKind::Semicolon)) continue;
        std::vector<Attribute> accessor_attrs;
        parse_attributes(accessor_attrs);
        const bool get = at_word("get"), set = at_word("set");
        if (!get && !set) fail_expected("'get' or 'set'");
        if ((get && have_get) || (set && have_set)) error(loc(), std::string("a second '") + (get ? "get" : "set") + "'");
        have_get |= get;
        have_set |= set;
        auto* fn = ctx_.make<FunctionDecl>();
        fn->loc = loc();
        advance();
        const std::string base = subscript ? "__subscript" : "__" + std::string(get ? "get" : "set") + "_" + name;
        fn->member_name = subscript ? base + (get ? "_get" : "_set") : base;
        fn->name = s->name + "." + fn->member_name;
        fn->owner = s;
        fn->visibility = lead.visibility;
        fn->attrs = std::move(accessor_attrs);
        for (const VarDecl* i : params) {  // the subscript's indices: a copy for each accessor
            auto* c = ctx_.make<VarDecl>(*i);
            c->type_expr = i->type_expr;
            fn->params.push_back(c);
        }
        if (get) {
            fn->return_type = type;
        } else {
            auto* v = ctx_.make<TypeExpr>();
            v->loc = fn->loc;
            v->name = "void";
            fn->return_type = v;
            VarDecl* value = nullptr;
            if (match(TokenKind::LParen)) {
                value = parse_param();
                expect(TokenKind::RParen);
            } else {
                value = value_param(ctx_, fn->loc, "newValue", type);
            }
            fn->params.push_back(value);
            if (!find_attribute(fn->attrs, "mutating")) fn->attrs.push_back(Attribute{fn->loc, "mutating", {}});
        }
        if (s->is_interface && !at(TokenKind::LBrace)) {
            expect(TokenKind::Semicolon);  // a requirement: `get;` / `set;`
        } else {  // in an interface, a default implementation (sema_interface_defaults.cpp)
            if (!at(TokenKind::LBrace)) fail_expected("'{'");
            fn->body = parse_block();
        }
        s->methods.push_back(fn);
    }
    expect(TokenKind::RBrace);
    match(TokenKind::Semicolon);
    if (!have_get && !have_set) error(name_loc, "a property needs 'get' or 'set'");
}

}  // namespace sg::lang::detail
