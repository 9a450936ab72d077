// src/syntax/parser_generics.cpp — generic parameter lists, `__generic<...>` prefixes, interfaces
// and the members of structs (fields, methods, static members, `__init`).
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

// generic_params = "<" generic_param ("," generic_param)* ">"
// generic_param = "let" ident ":" type     (a value parameter)
//               | type ident                (legacy value parameter: `int N`)
//               | ident (":" ident)?        (a type parameter, optionally constrained)
void Parser::parse_generic_params(std::vector<GenericParam>& out) {
    expect(TokenKind::Less);
    do {
        GenericParam p;
        if (match(TokenKind::KwLet)) {
            Token name = expect(TokenKind::Identifier);
            p.loc = loc(name);
            p.name = std::string(text(name));
            p.is_value = true;
            expect(TokenKind::Colon);
            p.value_type = parse_type();
        } else if (at(TokenKind::Identifier) && kind(1) == TokenKind::Identifier) {
            p.value_type = parse_type();
            Token name = expect(TokenKind::Identifier);
            p.loc = loc(name);
            p.name = std::string(text(name));
            p.is_value = true;
        } else {
            Token name = expect(TokenKind::Identifier);
            p.loc = loc(name);
            p.name = std::string(text(name));
            if (match(TokenKind::Colon)) parse_constraints(p);
            type_names_.insert(p.name);  // `(T)x` is a cast
        }
        if (at(TokenKind::Assign)) {
            unsupported(loc(), "a default generic argument");
            throw SyntaxError{};
        }
        out.push_back(std::move(p));
    } while (match(TokenKind::Comma));
    expect_closing_angle();
}

// interface_decl = "interface" ident generic_params? bases "{" interface_member* "}" ";"?
// interface_member = ";" | "associatedtype" ident (":" ident (("," | "&") ident)*)? ";"
//                  | attributes? "static"? type ident "(" params ")" ";"
Decl* Parser::parse_interface(SourceLoc first) {
    Decl* d = make_decl(DeclKind::Interface, first);
    advance();  // interface
    Token name = expect(TokenKind::Identifier);
    auto* s = ctx_.make<StructDecl>();
    s->loc = loc(name);
    s->name = std::string(text(name));
    s->is_interface = true;
    d->structure = s;
    if (at(TokenKind::Less)) parse_generic_params(s->generic_params);  // `interface IGet<T>`
    parse_bases(s);
    parse_struct_body(s);
    return d;
}

// struct_body = "{" struct_member* "}"   (each member recovers from its own syntax errors)
void Parser::parse_struct_body(StructDecl* s) {
    NameScope scope(*this);  // fields named by reserved words, for the methods
    expect(TokenKind::LBrace);
    while (!at(TokenKind::RBrace) && !at(TokenKind::EndOfFile)) {
        size_t start = pos_;
        try {
            parse_struct_member(s);
        } catch (const SyntaxError&) {
            synchronize();
        }
        if (pos_ == start && !at(TokenKind::RBrace)) advance();
    }
    expect(TokenKind::RBrace);
}

// bases = (":" base ("," base)*)?
// base = ident generic_args?            (a generic interface with its arguments: `IGet<float>`)
void Parser::parse_bases(StructDecl* s) {
    if (!match(TokenKind::Colon)) return;
    do {
        Token b = expect(TokenKind::Identifier);
        s->bases.emplace_back(text(b));
        s->base_locs.push_back(loc(b));
        TypeExpr* te = nullptr;
        if (at(TokenKind::Less)) {
            te = ctx_.make<TypeExpr>();
            te->loc = loc(b);
            te->name = s->bases.back();
            parse_generic_args(te);
        }
        s->base_types.push_back(te);
    } while (match(TokenKind::Comma));
}

/// A member type alias (`typealias N = T;` / `typedef T N;`), its `;` included.
void Parser::add_member_alias(StructDecl* s, const Token& name, TypeExpr* type) {
    auto* v = ctx_.make<VarDecl>();
    v->loc = loc(name);
    v->name = std::string(text(name));
    v->type_expr = type;
    v->is_static = true;
    s->type_aliases.push_back(v);
    expect(TokenKind::Semicolon);
}

// struct_member = ";" | attributes? member
// member = "__init" "(" params ")" block
//        | "associatedtype" ident (":" ident (("," | "&") ident)*)? ";"   (interfaces)
//        | "typealias" ident "=" type ";" | "typedef" type ident ";"   (member type aliases)
//        | modifiers type ident generic_params? "(" params ")" (";" | block)   (a method)
//        | modifiers type declarators ";"                      (fields; `static const` members)
//        | "property" ... | "__subscript" ...                   (parser_accessors.cpp)
//        | struct_decl                                         (a nested struct: parser_nested_types.cpp)
void Parser::parse_struct_member(StructDecl* s) {
    if (match(TokenKind::Semicolon)) return;
    std::vector<Attribute> attrs;
    parse_attributes(attrs);  // `[mutating]`, `[Differentiable]`, ... precede member functions
    Modifiers lead;           // `public __init(...)`, `private float x;`
    while (parse_visibility(lead)) {
    }
    if ((at_word("property") && kind(1) == TokenKind::Identifier) ||
        (at_word("__subscript") && kind(1) == TokenKind::LParen)) {
        parse_accessor_member(s, std::move(attrs), lead);
        return;
    }
    if (at_word("__init")) {
        auto* fn = ctx_.make<FunctionDecl>();
        fn->loc = loc();
        advance();
        fn->member_name = "__init";
        fn->name = s->name + ".__init";
        fn->is_init = true;
        fn->owner = s;
        fn->visibility = lead.visibility;
        fn->attrs = std::move(attrs);
        auto* ret = ctx_.make<TypeExpr>();
        ret->loc = fn->loc;
        ret->name = s->name;  // sema replaces it with the (instantiated) struct type
        fn->return_type = ret;
        parse_function_rest(fn);
        apply_where_clauses(fn, true);
        s->methods.push_back(fn);
        return;
    }
    if (at_word("associatedtype") && kind(1) == TokenKind::Identifier) {
        advance();
        Token name = expect(TokenKind::Identifier);
        std::vector<std::string> constraints;  // `: IA, IB` or `: IA & IB`
        std::vector<SourceLoc> constraint_locs;
        if (match(TokenKind::Colon)) {
            do {
                Token c = expect(TokenKind::Identifier);
                constraints.emplace_back(text(c));
                constraint_locs.push_back(loc(c));
            } while (match(TokenKind::Comma) || match(TokenKind::Amp));
        }
        expect(TokenKind::Semicolon);
        if (!s->is_interface) {  // Slang: 30102 declaration not allowed here
            diags_.error(loc(name), "'associatedtype' declares a requirement of an interface; in a struct, give the "
                                    "type with `typealias " + std::string(text(name)) + " = ...;`",
                         30102);
            return;
        }
        s->associated_types.emplace_back(text(name));
        s->associated_locs.push_back(loc(name));
        s->associated_constraints.push_back(std::move(constraints));
        s->associated_constraint_locs.push_back(std::move(constraint_locs));
        return;
    }
    if (at_word("typealias") && !s->is_interface && kind(1) == TokenKind::Identifier &&
        kind(2) == TokenKind::Assign) {
        // `typealias T = float;` inside a struct: satisfies an associated type.
        advance();
        Token name = advance();
        advance();  // '='
        add_member_alias(s, name, parse_type());
        return;
    }
    if (at_word("typedef") && !s->is_interface) {
        // `typedef MyVec Differential;`: the same member alias, C-style.
        advance();
        TypeExpr* type = parse_type();
        add_member_alias(s, expect(TokenKind::Identifier), type);
        return;
    }
    if (report_unsupported_declaration(nullptr)) {
        synchronize();
        return;
    }
    if (at(TokenKind::KwStruct)) {
        parse_nested_struct(s, lead);  // parser_nested_types.cpp
        return;
    }
    Modifiers mods = parse_modifiers();
    reject_link_modifiers(mods);
    if (mods.is_in || mods.is_out || mods.is_inout)
        error(mods.first, "parameter direction modifiers are not allowed on struct members");
    if (mods.groupshared.valid()) error(mods.groupshared, "'groupshared' is not allowed on a struct member");
    reject_uniform(mods);
    if (lead.visibility != Visibility::Default && mods.visibility != Visibility::Default)
        diags_.error(mods.visibility_loc, "duplicate modifier: a declaration has one visibility", 31202);
    else if (mods.visibility == Visibility::Default)
        mods.visibility = lead.visibility;
    TypeExpr* type = parse_type();
    const bool is_operator = at_word("operator") && kind(1) != TokenKind::Semicolon && kind(1) != TokenKind::Assign;
    if (is_operator || (at(TokenKind::Identifier) && (kind(1) == TokenKind::LParen || kind(1) == TokenKind::Less))) {
        auto* fn = ctx_.make<FunctionDecl>();
        if (is_operator) {
            parse_operator_name(fn->member_name, fn->loc);  // `float operator()(float x)`
        } else {
            Token name = advance();
            fn->loc = loc(name);
            fn->member_name = std::string(text(name));
        }
        fn->name = s->name + "." + fn->member_name;
        fn->owner = s;
        fn->visibility = mods.visibility;
        fn->is_static = mods.is_static;
        fn->is_override = mods.override_loc.valid();
        fn->attrs = std::move(attrs);
        fn->return_type = type;
        fn->return_no_diff = mods.is_no_diff;
        if (mods.is_const) error(mods.first, "'const' is not allowed on a member function");
        // `T get<T : IFloat>(T x)`: instantiated per call (in an interface: a generic requirement)
        if (at(TokenKind::Less)) parse_generic_params(fn->generic_params);
        parse_function_rest(fn);
        apply_where_clauses(fn, true);
        s->methods.push_back(fn);
        return;
    }
    if (s->is_interface) {
        error(type->loc, "an interface may declare only methods and associated types");
        synchronize();
        return;
    }
    VarDecl proto;
    for (Attribute& a : attrs) {
        // `[DerivativeMember(D.f)]`: which field of the declared Differential D holds this one's derivative.
        if (a.name == "DerivativeMember" && a.args.size() == 1 && !proto.derivative_member)
            proto.derivative_member = a.args[0];
        else if (a.name == "DerivativeMember") error(a.loc, "[DerivativeMember] takes one field of the Differential: [DerivativeMember(D.f)]");
        else error(a.loc, "attribute [" + a.name + "] on a struct field is not supported yet");
    }
    if (mods.override_loc.valid())  // Slang: 31201 modifier not allowed
        diags_.error(mods.override_loc, "'override' applies to a struct's methods", 31201);
    proto.is_no_diff = mods.is_no_diff;
    proto.is_const = mods.is_const;
    proto.visibility = mods.visibility;
    proto.column_major = mods.column_major;
    if (mods.is_static) {
        if (!mods.is_const) {
            unsupported(mods.first, "a static struct member that is not 'static const'");
            synchronize();
            return;
        }
        proto.is_static = true;
        proto.is_global = true;
        parse_declarators(type, proto, s->static_consts);
    } else {
        if (mods.is_const) error(mods.first, "a 'const' field must also be 'static'");
        parse_declarators(type, proto, s->fields);
    }
    expect(TokenKind::Semicolon);
}

}  // namespace sg::lang::detail
