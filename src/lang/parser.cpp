// src/lang/parser.cpp — parse_module: the token cursor, error recovery and top-level declarations.
#include "lang/parser.h"

#include <utility>

#include "lang/parser_internal.h"

namespace sg::lang {

namespace detail {

namespace {

/// Declaration keywords of later tiers. They are contextual (plain identifiers to the lexer), so
/// a kernel may still use e.g. `property` as a variable name inside a function body.
struct UnsupportedKeyword {
    std::string_view word;
    std::string_view construct;  ///< "<construct> is not supported yet"
};
constexpr UnsupportedKeyword kUnsupportedDeclKeywords[] = {
    {"typedef", "'typedef'"},
    {"typealias", "'typealias'"},
    {"interface", "'interface'"},
    {"extension", "'extension'"},
    {"namespace", "'namespace'"},
    {"enum", "'enum'"},
    {"class", "'class'"},
    {"union", "'union'"},
    {"cbuffer", "'cbuffer'"},
    {"tbuffer", "'tbuffer'"},
    {"template", "'template'"},
    {"__generic", "'__generic'"},
    {"__init", "'__init'"},
    {"property", "'property'"},
    {"__subscript", "'__subscript'"},
    {"associatedtype", "'associatedtype'"},
    {"using", "'using'"},
};

/// Modifiers that Slang accepts on declarations but that this subset does not model; they are
/// reported and otherwise ignored so that the rest of the declaration is still checked.
constexpr std::string_view kUnsupportedModifiers[] = {
    "public", "private", "internal", "inline", "uniform", "groupshared",
};

}  // namespace

// ---------------------------------------------------------------- cursor

bool Parser::match(TokenKind k) {
    if (!at(k)) return false;
    advance();
    return true;
}

// Tokens are returned by value: expect_closing_angle() may rewrite the token array in place.
Token Parser::advance() {
    Token t = tok();
    if (pos_ + 1 < tokens_.size()) ++pos_;  // EndOfFile is sticky
    return t;
}

Token Parser::expect(TokenKind k) {
    if (!at(k)) fail_expected(std::string("'") + token_kind_spelling(k) + "'");
    return advance();
}

/// Closes a generic argument list. `>>` closes two nested lists (`DifferentialPair<vector<float,
/// 3>>`): the lexer cannot know that, so the first half is consumed by turning the token into
/// the second `>`. Safe because a type is only parsed after the parser has committed to it.
void Parser::expect_closing_angle() {
    if (match(TokenKind::Greater)) return;
    if (at(TokenKind::Shr)) {
        Token& t = tokens_[pos_];
        t = {TokenKind::Greater, t.offset + 1, 1};
        return;
    }
    fail_expected("'>'");
}

// ---------------------------------------------------------------- diagnostics and recovery

void Parser::error(SourceLoc where, std::string message) {
    // A second error at the same token is almost always a consequence of the first one.
    if (int64_t(where.offset) == last_error_offset_) return;
    last_error_offset_ = where.offset;
    diags_.error(where, std::move(message));
}

void Parser::unsupported(SourceLoc where, std::string_view construct) {
    last_error_offset_ = where.offset;
    diags_.unsupported(where, construct);
}

std::string Parser::describe(const Token& t) const {
    if (t.kind == TokenKind::EndOfFile) return "end of file";
    std::string_view s = text(t);
    return s.size() > 32 ? quoted(std::string(s.substr(0, 29)) + "...") : quoted(s);
}

void Parser::fail_expected(std::string_view what) {
    fail(loc(), "expected " + std::string(what) + ", found " + describe(tok()));
}

void Parser::fail(SourceLoc where, std::string message) {
    error(where, std::move(message));
    throw SyntaxError{};
}

/// Skips to where parsing can resume after an error: just past a `;` or a `{...}` group at the
/// current level, or before a `}` that closes an enclosing block, or at end of file.
void Parser::synchronize() {
    int depth = 0;
    while (!at(TokenKind::EndOfFile)) {
        TokenKind k = kind();
        if (k == TokenKind::RBrace) {
            if (depth == 0) return;
            advance();
            if (--depth == 0) return;
            continue;
        }
        if (k == TokenKind::LBrace) ++depth;
        advance();
        if (k == TokenKind::Semicolon && depth == 0) return;
    }
}

void Parser::enter_nesting() {
    if (depth_ >= kMaxNestingDepth) [[unlikely]] {
        error(loc(), "nesting too deep (limit " + std::to_string(kMaxNestingDepth) + ")");
        throw NestingTooDeep{};
    }
    ++depth_;
}

// ---------------------------------------------------------------- module and declarations

// module = top_decl* EOF
// The top level is the outermost recovery point: a declaration with a syntax error is dropped
// (the rest of it skipped) and parsing goes on with the next one.
ModuleAst* Parser::parse_module() {
    auto* module = ctx_.make<ModuleAst>();
    module->file = file_;
    while (!at(TokenKind::EndOfFile)) {
        size_t start = pos_;
        try {
            parse_top_level_decl(module->decls);
        } catch (const SyntaxError&) {
            synchronize();
        } catch (const NestingTooDeep&) {
            pos_ = start;  // skip the whole declaration: from its start to its `;` or `}`
            synchronize();
        }
        if (pos_ == start) advance();  // a stray `}`: already reported, step over it
    }
    return module;
}

Decl* Parser::make_decl(DeclKind kind, SourceLoc loc) {
    auto* d = ctx_.make<Decl>();
    d->kind = kind;
    d->loc = loc;
    return d;
}

// top_decl = ";" | import_decl | attributes? (unsupported_decl | struct_decl | function_or_global)
void Parser::parse_top_level_decl(std::vector<Decl*>& out) {
    if (match(TokenKind::Semicolon)) return;  // e.g. after a function body: harmless
    SourceLoc first = loc();
    if (at(TokenKind::KwImport) || at_word("__include")) {
        out.push_back(parse_import());
        return;
    }
    if ((at_word("module") || at_word("implementing")) &&
        (kind(1) == TokenKind::Identifier || kind(1) == TokenKind::StringLiteral) &&
        (kind(2) == TokenKind::Semicolon || kind(2) == TokenKind::Dot)) {
        out.push_back(parse_import());
        return;
    }
    std::vector<Attribute> attrs;
    parse_attributes(attrs);
    if (report_unsupported_declaration(&out)) {
        synchronize();
        return;
    }
    if (at(TokenKind::KwStruct)) {
        if (!attrs.empty()) error(attrs[0].loc, "attributes on a struct are not supported yet");
        out.push_back(parse_struct(first));
        return;
    }
    if (!at(TokenKind::Identifier) && !at(TokenKind::KwStatic) && !at(TokenKind::KwConst) &&
        !at(TokenKind::KwNoDiff))
        fail_expected("a declaration");
    out.push_back(parse_function_or_global(first, std::move(attrs)));
}

/// Reports a declaration of a later tier (`typedef`, `interface`, `__generic<T>`, ...) at the
/// cursor, adding an Unsupported Decl to `out` when given. Returns false when the current token
/// starts no such declaration. The caller skips the declaration (synchronize).
bool Parser::report_unsupported_declaration(std::vector<Decl*>* out) {
    if (!at(TokenKind::Identifier)) return false;
    std::string_view word = text(tok());
    for (const auto& k : kUnsupportedDeclKeywords) {
        if (k.word != word) continue;
        SourceLoc where = loc();
        unsupported(where, k.construct);
        if (out) out->push_back(make_decl(DeclKind::Unsupported, where));
        return true;
    }
    return false;
}

// import_decl = ("import" | "__include" | "module" | "implementing") (string | ident ("." ident)*) ";"
// `module` and `implementing` name the module a file belongs to; `__include` adds a file to it.
Decl* Parser::parse_import() {
    Decl* d = make_decl(DeclKind::Import, loc());
    std::string_view word = text(advance());
    d->import_kind = word == "import"         ? ImportKind::Import
                     : word == "__include"    ? ImportKind::Include
                     : word == "module"       ? ImportKind::ModuleName
                                              : ImportKind::Implementing;
    d->import_loc = loc();
    if (at(TokenKind::StringLiteral)) {
        d->import_is_path = true;
        d->import_name = decode_string_literal(text(advance()));
    } else {
        d->import_name = std::string(text(expect(TokenKind::Identifier)));
        while (match(TokenKind::Dot))
            d->import_name.append(".").append(text(expect(TokenKind::Identifier)));
    }
    expect(TokenKind::Semicolon);
    return d;
}

// attributes = ("[" attribute ("," attribute)* "]")*
// attribute = ident ("(" (assign ("," assign)*)? ")")?
void Parser::parse_attributes(std::vector<Attribute>& out) {
    while (match(TokenKind::LBracket)) {
        do {
            Token name = expect(TokenKind::Identifier);
            Attribute attr{loc(name), std::string(text(name)), {}};
            if (match(TokenKind::LParen) && !match(TokenKind::RParen)) {
                do attr.args.push_back(parse_assignment());
                while (match(TokenKind::Comma));
                expect(TokenKind::RParen);
            }
            out.push_back(std::move(attr));
        } while (match(TokenKind::Comma));
        expect(TokenKind::RBracket);
    }
}

// modifiers = ("static" | "const" | "no_diff" | "in" | "out" | "inout" | unsupported_modifier)*
// Which ones a context accepts is checked by the caller, which knows what is being declared.
Modifiers Parser::parse_modifiers() {
    Modifiers m;
    for (;;) {
        SourceLoc where = loc();
        bool* flag = nullptr;
        switch (kind()) {
        case TokenKind::KwStatic: flag = &m.is_static; break;
        case TokenKind::KwConst: flag = &m.is_const; break;
        case TokenKind::KwNoDiff: flag = &m.is_no_diff; break;
        case TokenKind::KwIn: flag = &m.is_in; break;
        case TokenKind::KwOut: flag = &m.is_out; break;
        case TokenKind::KwInOut: flag = &m.is_inout; break;
        case TokenKind::Identifier: {
            std::string_view word = text(tok());
            if (word == "extern" || word == "export") {  // link-time constants: checked by the caller
                bool& f = word == "extern" ? m.is_extern : m.is_export;
                if (f) error(where, "duplicate modifier '" + std::string(word) + "'");
                if (m.is_extern && m.is_export) error(where, "a declaration cannot be both 'extern' and 'export'");
                f = true;
                if (!m.link.valid()) m.link = where;
                advance();
                continue;
            }
            bool known = false;
            for (std::string_view u : kUnsupportedModifiers) known |= u == word;
            if (!known) return m;
            unsupported(where, quoted(word) + " modifier");
            advance();
            continue;
        }
        default: return m;
        }
        if (*flag) error(where, "duplicate modifier '" + std::string(text(tok())) + "'");
        *flag = true;
        if (!m.first.valid()) m.first = where;
        advance();
    }
}

// struct_decl = "struct" ident (":" ident ("," ident)*)? "{" struct_member* "}" ";"?
// The body is a recovery point of its own: a bad member is skipped, the other fields are kept.
Decl* Parser::parse_struct(SourceLoc first) {
    Decl* d = make_decl(DeclKind::Struct, first);
    advance();  // struct
    Token name = expect(TokenKind::Identifier);
    if (at(TokenKind::Less)) {
        unsupported(loc(), "generic struct declaration");
        d->kind = DeclKind::Unsupported;
        synchronize();
        return d;
    }
    auto* s = ctx_.make<StructDecl>();
    s->loc = loc(name);
    s->name = std::string(text(name));
    d->structure = s;
    if (match(TokenKind::Colon)) {
        do s->bases.emplace_back(text(expect(TokenKind::Identifier)));
        while (match(TokenKind::Comma));
    }
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
    return d;  // a trailing `;` is taken as an empty top-level declaration
}

// struct_member = ";" | attributes? (unsupported_member | modifiers type declarators ";")
// Member functions (`type ident "("`) are reported and skipped.
void Parser::parse_struct_member(StructDecl* s) {
    if (match(TokenKind::Semicolon)) return;
    std::vector<Attribute> attrs;
    parse_attributes(attrs);  // `[mutating]` and friends only precede member functions
    if (report_unsupported_declaration(nullptr)) {
        synchronize();
        return;
    }
    if (at(TokenKind::KwStruct)) {
        unsupported(loc(), "nested struct declaration");
        synchronize();
        return;
    }
    Modifiers mods = parse_modifiers();
    reject_link_modifiers(mods);
    if (mods.is_static) {
        unsupported(mods.first, "static struct member");
        synchronize();
        return;
    }
    if (mods.is_in || mods.is_out || mods.is_inout)
        error(mods.first, "parameter direction modifiers are not allowed on struct fields");
    TypeExpr* type = parse_type();
    if (at(TokenKind::Identifier) && (kind(1) == TokenKind::LParen || kind(1) == TokenKind::Less)) {
        unsupported(loc(), "member function");
        synchronize();
        return;
    }
    if (!attrs.empty()) error(attrs[0].loc, "attributes on struct fields are not supported yet");
    VarDecl proto;
    proto.is_no_diff = mods.is_no_diff;
    proto.is_const = mods.is_const;
    parse_declarators(type, proto, s->fields);
    expect(TokenKind::Semicolon);
}

// function_or_global = modifiers type ident (function_rest | declarators ";")
// Both start with `type ident`; the token after the name decides. Which modifiers a global
// needs (`static const`) is checked by sema, which reports every missing one at once.
Decl* Parser::parse_function_or_global(SourceLoc first, std::vector<Attribute> attrs) {
    Modifiers mods = parse_modifiers();
    if (mods.is_in || mods.is_out || mods.is_inout)
        error(mods.first, "parameter direction modifiers are only allowed on parameters");
    TypeExpr* type = parse_type();
    if (!at(TokenKind::Identifier)) fail_expected("a name");
    if (mods.link.valid() && kind(1) == TokenKind::LParen) {
        unsupported(mods.link, std::string("'") + (mods.is_extern ? "extern" : "export") + "' on a function");
        mods.is_extern = mods.is_export = false;
    }

    if (kind(1) == TokenKind::Less) {
        Decl* d = make_decl(DeclKind::Unsupported, first);
        unsupported(loc(tok()), "generic function declaration");
        synchronize();
        return d;
    }
    if (kind(1) == TokenKind::LParen) {
        Decl* d = make_decl(DeclKind::Function, first);
        Token name = advance();
        auto* fn = ctx_.make<FunctionDecl>();
        fn->loc = loc(name);
        fn->name = std::string(text(name));
        fn->attrs = std::move(attrs);
        fn->return_type = type;
        fn->return_no_diff = mods.is_no_diff;
        if (mods.is_const) error(mods.first, "'const' is not allowed on a function");
        // `static` on a free function has no meaning in this subset (no linkage): accepted.
        d->function = fn;
        parse_function_rest(fn);
        return d;
    }

    Decl* d = make_decl(DeclKind::GlobalVar, first);
    if (!attrs.empty()) error(attrs[0].loc, "attributes on global variables are not supported");
    VarDecl proto;
    proto.is_global = true;
    proto.is_static = mods.is_static;
    proto.is_const = mods.is_const;
    proto.is_no_diff = mods.is_no_diff;
    proto.is_extern = mods.is_extern;
    proto.is_export = mods.is_export;
    parse_declarators(type, proto, d->globals);
    expect(TokenKind::Semicolon);
    return d;
}

// function_rest = "(" ("void" | param ("," param)*)? ")" (";" | block)
void Parser::parse_function_rest(FunctionDecl* fn) {
    expect(TokenKind::LParen);
    if (at_word("void") && kind(1) == TokenKind::RParen) advance();  // C-style `f(void)`
    if (!at(TokenKind::RParen)) {
        do fn->params.push_back(parse_param());
        while (match(TokenKind::Comma));
    }
    expect(TokenKind::RParen);
    if (at(TokenKind::Colon)) {  // `float4 main() : SV_Target` (entry points are tier 3)
        unsupported(loc(), "semantic annotation");
        advance();
        match(TokenKind::Identifier);
    }
    if (match(TokenKind::Semicolon)) return;  // declaration without body
    if (!at(TokenKind::LBrace)) fail_expected("'{' or ';'");
    fn->body = parse_block();
}

// param = modifiers type ident ("[" expr "]")* (":" ident)? ("=" assign)?
VarDecl* Parser::parse_param() {
    Modifiers mods = parse_modifiers();
    reject_link_modifiers(mods);
    if (mods.is_static) error(mods.first, "'static' is not allowed on a parameter");
    TypeExpr* type = parse_type();
    VarDecl proto;
    proto.is_param = true;
    proto.is_no_diff = mods.is_no_diff;
    proto.is_const = mods.is_const;
    // `in out` spelled as two words means `inout`, as in HLSL.
    if (mods.is_inout || (mods.is_in && mods.is_out)) proto.dir = ParamDir::InOut;
    else if (mods.is_out) proto.dir = ParamDir::Out;
    Token name = expect(TokenKind::Identifier);
    auto* v = ctx_.make<VarDecl>(proto);
    v->loc = loc(name);
    v->name = std::string(text(name));
    v->type_expr = parse_declarator_dims(type);  // `float a[5]`
    if (at(TokenKind::Colon)) {
        unsupported(loc(), "semantic annotation");
        advance();
        match(TokenKind::Identifier);
    }
    if (at(TokenKind::Assign)) {  // kept in `init` so that sema still checks the expression
        unsupported(loc(), "default parameter value");
        advance();
        v->init = parse_assignment();
    }
    return v;
}

}  // namespace detail

ModuleAst* parse_module(const SourceFile* file, AstContext& ctx, Diagnostics& diags) {
    detail::Parser parser(file, lex(*file, diags), ctx, diags);
    return parser.parse_module();
}

}  // namespace sg::lang
