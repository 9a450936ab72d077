// src/syntax/parser.cpp — parse_module: the token cursor, error recovery and top-level declarations.
#include "syntax/parser.h"

#include <utility>

#include "syntax/parser_internal.h"

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
    {"interface", "'interface'"},
    {"extension", "'extension'"},
    {"namespace", "'namespace'"},
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
    "inline",
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
    if (!at(k)) [[unlikely]] {
        if (k == TokenKind::Semicolon) fail_missing_semicolon();
        fail_expected(std::string("'") + token_kind_spelling(k) + "'");
    }
    return advance();
}

/// A missing ';' is reported where slangc reports it, at the token that follows; when that token
/// is on a later line, a note points at the end of the statement that lacks it.
void Parser::fail_missing_semicolon() {
    if (pos_ == 0 || int64_t(tok().offset) == last_error_offset_) return;
    const Token& previous = tokens_[pos_ - 1];
    const uint32_t end = previous.offset + previous.length;
    if (end > tok().offset || std::string_view(file_->text).substr(end, tok().offset - end).find('\n') ==
                                  std::string_view::npos)
        return;
    error(loc(), "expected ';', found " + describe(tok()));
    diags_.note({file_, end}, "the ';' is missing at the end of this line");
    throw SyntaxError{};
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
        module->decls.insert(module->decls.end(), lifted_.begin(), lifted_.end());  // nested structs
        lifted_.clear();
    }
    return module;
}

Decl* Parser::make_decl(DeclKind kind, SourceLoc loc) {
    auto* d = ctx_.make<Decl>();
    d->kind = kind;
    d->loc = loc;
    return d;
}

// top_decl = ";" | "__exported"? import_decl
//          | attributes? ("__generic" generic_params)? (interface_decl | unsupported_decl | struct_decl
//                                                        | function_or_global)
void Parser::parse_top_level_decl(std::vector<Decl*>& out) {
    if (match(TokenKind::Semicolon)) return;  // e.g. after a function body: harmless
    SourceLoc first = loc();
    if (at(TokenKind::KwImport) || at_word("__include")) {
        out.push_back(parse_import());
        return;
    }
    // `__exported import m;`: m's declarations are visible to this module's importers too, as
    // every imported module's are here (an import makes its whole closure visible).
    if (at_word("__exported") && kind(1) == TokenKind::KwImport) {
        advance();
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
    // `__generic<T : IFloat>` before a function or struct: its generic parameters.
    std::vector<GenericParam> generic_prefix;
    if (at_word("__generic") && kind(1) == TokenKind::Less) {
        advance();
        parse_generic_params(generic_prefix);
        parse_attributes(attrs);
    }
    // `public struct S`, `internal float f()`: a top-level declaration's visibility.
    Modifiers vis;
    while (parse_visibility(vis)) {
    }
    if (vis.visibility == Visibility::Private)  // Slang: 30603
        diags_.error(vis.visibility_loc, "'private' applies to struct members, not to a top-level declaration", 30603);
    if (at_word("interface") && kind(1) == TokenKind::Identifier) {
        if (!attrs.empty()) error(attrs[0].loc, "attributes on an interface are not supported yet");
        if (!generic_prefix.empty()) unsupported(generic_prefix[0].loc, "generic interface declaration");
        Decl* d = parse_interface(first);
        if (d->structure) d->structure->visibility = vis.visibility;
        out.push_back(d);
        return;
    }
    if (at_type_alias() || at_word("enum")) {
        if (!attrs.empty()) error(attrs[0].loc, "attributes on a type declaration are not supported yet");
        if (!generic_prefix.empty()) unsupported(generic_prefix[0].loc, "generic type alias or enum");
        Decl* d = make_decl(at_word("enum") ? DeclKind::Enum : DeclKind::TypeAlias, first);
        if (d->kind == DeclKind::Enum) d->enumeration = parse_enum();
        else d->alias = at_word("typealias") ? parse_typealias() : parse_typedef();
        out.push_back(d);
        return;
    }
    if (at_word("extension") && (kind(1) == TokenKind::Identifier || kind(1) == TokenKind::Less)) {
        if (!attrs.empty()) error(attrs[0].loc, "attributes on an extension are not supported yet");
        if (!generic_prefix.empty()) unsupported(generic_prefix[0].loc, "a generic extension");
        out.push_back(parse_extension(first));
        return;
    }
    if (at_word("__func_extension")) {
        // As slangc 0.43.1 does: an experimental declaration it warns about (30131) and ignores
        // unless -experimental-feature is given; the function keeps its own derivatives.
        diags_.warning(loc(), "'__func_extension' is experimental in Slang and is ignored (slangc needs "
                              "-experimental-feature); attach a custom derivative with [BackwardDerivative(f)] or "
                              "[ForwardDerivative(f)] instead",
                       30131);
        synchronize();
        return;
    }
    if (report_unsupported_declaration(&out)) {
        synchronize();
        return;
    }
    if (at(TokenKind::KwStruct)) {
        if (!attrs.empty()) error(attrs[0].loc, "attributes on a struct are not supported yet");
        Decl* d = parse_struct(first);
        if (d->structure) d->structure->visibility = vis.visibility;
        if (d->structure && !generic_prefix.empty()) {
            if (!d->structure->generic_params.empty()) error(d->loc, "a struct with two generic parameter lists");
            d->structure->generic_params = std::move(generic_prefix);
        }
        out.push_back(d);
        return;
    }
    if (!at(TokenKind::Identifier) && !at(TokenKind::KwStatic) && !at(TokenKind::KwConst) &&
        !at(TokenKind::KwNoDiff))
        fail_expected("a declaration");
    Decl* d = parse_function_or_global(first, std::move(attrs), vis);
    if (!generic_prefix.empty()) {
        if (d->kind != DeclKind::Function) {
            error(first, "'__generic' must precede a function or struct declaration");
        } else {
            if (!d->function->generic_params.empty()) error(d->loc, "a function with two generic parameter lists");
            d->function->generic_params = std::move(generic_prefix);
        }
    }
    if (d->kind == DeclKind::Function && d->function) apply_where_clauses(d->function, true);
    out.push_back(d);
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
            if (parse_visibility(m)) continue;
            std::string_view word = text(tok());
            if (word == "__constref") {  // a direction of its own: with in/out/inout it is 31202
                if (m.is_constref || m.is_in || m.is_out || m.is_inout)
                    diags_.error(where, "duplicate modifier '__constref': a parameter has one direction", 31202);
                m.is_constref = true;
                if (!m.first.valid()) m.first = where;
                advance();
                continue;
            }
            if (word == "extern" || word == "export") {  // link-time constants: checked by the caller
                bool& f = word == "extern" ? m.is_extern : m.is_export;
                if (f) error(where, "duplicate modifier '" + std::string(word) + "'");
                if (m.is_extern && m.is_export) error(where, "a declaration cannot be both 'extern' and 'export'");
                f = true;
                if (!m.link.valid()) m.link = where;
                advance();
                continue;
            }
            if (word == "uniform") {  // SlangPy's `uniform` parameters: no effect on a function's parameter
                if (m.uniform.valid()) diags_.error(where, "duplicate modifier 'uniform'", 31202);
                m.uniform = where;
                advance();
                continue;
            }
            if ((word == "row_major" || word == "column_major") && kind(1) == TokenKind::Identifier) {
                // Matrix layout qualifiers. As in Slang they change no value a function computes
                // with; they say how a matrix field is laid out in a buffer's memory. Matrices are
                // stored row by row here, so row_major changes nothing; a column_major field in a
                // buffer's element is stored column by column (FieldInfo::column_major, codegen).
                if (word == "column_major") m.column_major = where;
                advance();
                continue;
            }
            if (word == "override" && kind(1) == TokenKind::Identifier) {  // sema_interface_defaults.cpp
                m.override_loc = where;
                advance();
                continue;
            }
            if (word == "groupshared") {  // cooperative kernels: only a global may be (the caller checks)
                if (m.groupshared.valid()) error(where, "duplicate modifier 'groupshared'");
                m.groupshared = where;
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
        if (m.is_constref && (flag == &m.is_in || flag == &m.is_out || flag == &m.is_inout))
            diags_.error(where, "duplicate modifier '" + std::string(text(tok())) + "': a parameter has one direction",
                         31202);
        *flag = true;
        if (!m.first.valid()) m.first = where;
        advance();
    }
}

// visibility = "public" | "internal" | "private"
// One per declaration: a second is Slang's 31202 (duplicate modifier), as is a conflicting one.
bool Parser::parse_visibility(Modifiers& m) {
    if (!at(TokenKind::Identifier)) return false;
    std::string_view word = text(tok());
    Visibility v = word == "public"     ? Visibility::Public
                   : word == "internal" ? Visibility::Internal
                   : word == "private"  ? Visibility::Private
                                        : Visibility::Default;
    if (v == Visibility::Default) return false;
    SourceLoc where = loc();
    if (m.visibility != Visibility::Default) {
        last_error_offset_ = where.offset;
        diags_.error(where, "duplicate modifier '" + std::string(word) + "': a declaration has one visibility", 31202);
    } else {
        m.visibility = v;
        m.visibility_loc = where;
    }
    advance();
    return true;
}

// struct_decl = "struct" ident generic_params? bases "{" struct_member* "}" ";"?
// The body is a recovery point of its own: a bad member is skipped, the other fields are kept.
Decl* Parser::parse_struct(SourceLoc first) {
    Decl* d = make_decl(DeclKind::Struct, first);
    advance();  // struct
    Token name = expect(TokenKind::Identifier);
    auto* s = ctx_.make<StructDecl>();
    s->loc = loc(name);
    s->name = struct_prefix_ + std::string(text(name));  // `Outer.Inner` for a nested struct
    type_names_.insert(s->name);
    d->structure = s;
    if (at(TokenKind::Less)) parse_generic_params(s->generic_params);
    parse_bases(s);
    parse_struct_body(s);
    return d;  // a trailing `;` is taken as an empty top-level declaration
}

// function_or_global = modifiers type ident (generic_params? function_rest | declarators ";")
//                    | modifiers type reserved_word declarators-rest ";"      (a global named `in`)
// Both start with `type ident`; the token after the name decides. Which modifiers a global
// needs (`static const`) is checked by sema, which reports every missing one at once.
Decl* Parser::parse_function_or_global(SourceLoc first, std::vector<Attribute> attrs, const Modifiers& vis) {
    Modifiers mods = parse_modifiers();
    if (vis.visibility != Visibility::Default && mods.visibility != Visibility::Default)
        diags_.error(mods.visibility_loc, "duplicate modifier: a declaration has one visibility", 31202);
    else if (mods.visibility == Visibility::Private)  // after `static`: still top level
        diags_.error(mods.visibility_loc, "'private' applies to struct members, not to a top-level declaration", 30603);
    if (mods.is_in || mods.is_out || mods.is_inout)
        error(mods.first, "parameter direction modifiers are only allowed on parameters");
    if (mods.override_loc.valid())  // Slang: 31201 modifier not allowed
        diags_.error(mods.override_loc, "'override' applies to a struct's methods", 31201);
    // `uniform` on a global: a parameter of the module, as a global without `static` is anyway;
    // with `static` it is Slang's 31202 (one storage class), on a function its 31201.
    if (mods.uniform.valid() && mods.is_static)
        diags_.error(mods.first.offset > mods.uniform.offset ? mods.first : mods.uniform,
                     "duplicate modifier: a global is either 'uniform' or 'static'", 31202);
    else if (mods.uniform.valid() && (mods.is_const || mods.groupshared.valid() || mods.link.valid()))
        unsupported(mods.uniform, "'uniform' with 'const', 'groupshared', 'extern' or 'export'");
    TypeExpr* type = parse_type();
    // A reserved word may name a global (`static const int in = 4;`), not a function.
    bool keyword_global = is_reserved_word(kind()) && kind(1) != TokenKind::LParen && kind(1) != TokenKind::Less;
    if (!at(TokenKind::Identifier) && !keyword_global) fail_expected("a name");
    if (mods.link.valid() && (kind(1) == TokenKind::LParen || kind(1) == TokenKind::Less)) {
        unsupported(mods.link, std::string("'") + (mods.is_extern ? "extern" : "export") + "' on a function");
        mods.is_extern = mods.is_export = false;
    }

    const bool is_operator = at_word("operator") && kind(1) != TokenKind::Semicolon && kind(1) != TokenKind::Assign &&
                             kind(1) != TokenKind::Comma && kind(1) != TokenKind::LBracket;
    if (is_operator || kind(1) == TokenKind::LParen || kind(1) == TokenKind::Less) {
        Decl* d = make_decl(DeclKind::Function, first);
        auto* fn = ctx_.make<FunctionDecl>();
        if (is_operator) {
            parse_operator_name(fn->name, fn->loc);  // `V operator+(V a, V b)`
        } else {
            Token name = advance();
            fn->loc = loc(name);
            fn->name = std::string(text(name));
        }
        if (at(TokenKind::Less)) parse_generic_params(fn->generic_params);
        fn->attrs = std::move(attrs);
        fn->return_type = type;
        fn->return_no_diff = mods.is_no_diff;
        if (mods.is_const) error(mods.first, "'const' is not allowed on a function");
        if (mods.uniform.valid()) diags_.error(mods.uniform, "modifier 'uniform' is not allowed on a function", 31201);
        if (mods.groupshared.valid()) error(mods.groupshared, "'groupshared' is not allowed on a function");
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
    proto.is_groupshared = mods.groupshared.valid();
    parse_declarators(type, proto, d->globals);
    expect(TokenKind::Semicolon);
    return d;
}

// function_rest = "(" ("void" | param ("," param)* ","?)? ")" where_clause* (";" | block)
void Parser::parse_function_rest(FunctionDecl* fn) {
    NameScope scope(*this);  // the parameters' names
    expect(TokenKind::LParen);
    if (at_word("void") && kind(1) == TokenKind::RParen) advance();  // C-style `f(void)`
    if (!at(TokenKind::RParen)) {
        do fn->params.push_back(parse_param());
        while (match(TokenKind::Comma) && !at(TokenKind::RParen));  // a trailing comma, as in Slang
    }
    expect(TokenKind::RParen);
    parse_where_clauses(fn);
    if (at(TokenKind::Colon)) {  // `float4 main() : SV_Target` (entry points are tier 3)
        unsupported(loc(), "semantic annotation");
        advance();
        match(TokenKind::Identifier);
    }
    if (match(TokenKind::Semicolon)) return;  // declaration without body
    if (!at(TokenKind::LBrace)) fail_expected("'{' or ';'");
    fn->body = parse_block();
}

// param = modifiers type ((ident | reserved_word) ("[" expr "]")*)? (":" ident)? ("=" assign)?
// A parameter without a name (`float f(float, float b)`) takes its argument and is never read.
VarDecl* Parser::parse_param() {
    Modifiers mods = parse_modifiers();
    reject_link_modifiers(mods);
    if (mods.is_static) error(mods.first, "'static' is not allowed on a parameter");
    if (mods.groupshared.valid()) error(mods.groupshared, "'groupshared' is not allowed on a parameter");
    TypeExpr* type = parse_type();
    VarDecl proto;
    proto.is_param = true;
    proto.is_no_diff = mods.is_no_diff;
    proto.is_const = mods.is_const || mods.is_constref;  // read-only (assigning it is an error)
    proto.is_constref = mods.is_constref;
    // `in out` spelled as two words means `inout`, as in HLSL.
    if (mods.is_inout || (mods.is_in && mods.is_out)) proto.dir = ParamDir::InOut;
    else if (mods.is_out) proto.dir = ParamDir::Out;
    if (at(TokenKind::Comma) || at(TokenKind::RParen)) {
        auto* v = ctx_.make<VarDecl>(proto);
        v->loc = type->loc;
        v->type_expr = type;
        return v;
    }
    if (!at_variable_name()) fail_expected("a parameter name");
    Token name = advance();
    declare_name(name);
    auto* v = ctx_.make<VarDecl>(proto);
    v->loc = loc(name);
    v->name = std::string(text(name));
    v->type_expr = parse_declarator_dims(type);  // `float a[5]`
    if (at(TokenKind::Colon)) {
        unsupported(loc(), "semantic annotation");
        advance();
        match(TokenKind::Identifier);
    }
    if (match(TokenKind::Assign)) {  // `float s = 2.0`: sema checks it, calls may leave it out
        size_t first = pos_;
        v->default_value = parse_assignment();
        for (size_t k = first; k < pos_; ++k) {
            if (!v->default_text.empty()) v->default_text += ' ';
            v->default_text += text(tokens_[k]);
        }
    }
    return v;
}

}  // namespace detail

ModuleAst* parse_module(const SourceFile* file, AstContext& ctx, Diagnostics& diags) {
    detail::Parser parser(file, lex(*file, diags), ctx, diags);
    return parser.parse_module();
}

}  // namespace sg::lang
