// src/syntax/parser_stmt.cpp — statements, local declarations and variable declarators.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

Stmt* Parser::make_stmt(StmtKind kind, SourceLoc loc) {
    auto* s = ctx_.make<Stmt>();
    s->kind = kind;
    s->loc = loc;
    return s;
}

void Parser::declare_name(const Token& name) {
    if (!is_reserved_word(name.kind)) return;
    if (name.kind == TokenKind::KwTrue || name.kind == TokenKind::KwFalse)
        diags_.warning(loc(name), "'" + std::string(text(name)) + "' names a variable here: in its scope '" +
                                      std::string(text(name)) + "' reads the variable, not the literal (as in Slang)");
    keyword_names_.push_back(name.kind);
    ++keyword_name_counts_[size_t(name.kind) - size_t(TokenKind::KwIf)];
    keyword_names_ever_ |= uint64_t(1) << (int(name.kind) - int(TokenKind::KwIf));
}

bool Parser::names_variable(TokenKind k) const {
    return is_reserved_word(k) && keyword_name_counts_[size_t(k) - size_t(TokenKind::KwIf)] > 0;
}

static_assert(int(TokenKind::KwNoDiff) - int(TokenKind::KwIf) < 64, "keyword_names_ever_ has a bit per reserved word");

bool Parser::reads_as_name(TokenKind k) const {
    if (!is_reserved_word(k)) return false;
    // Words that also start an expression are the variable only in its scope.
    if (k == TokenKind::KwTrue || k == TokenKind::KwFalse || k == TokenKind::KwNoDiff) return names_variable(k);
    return (keyword_names_ever_ >> (int(k) - int(TokenKind::KwIf))) & 1;
}

bool Parser::at_name_statement() const {
    // Slang keeps the statement keywords (if, for, return, no_diff, struct, ...) at a statement's
    // start; these words read as the variable there, unless a declaration follows them.
    switch (kind()) {
    case TokenKind::KwElse: case TokenKind::KwImport: case TokenKind::KwStatic: case TokenKind::KwConst:
    case TokenKind::KwTrue: case TokenKind::KwFalse: case TokenKind::KwVar: case TokenKind::KwLet:
    case TokenKind::KwIn: case TokenKind::KwOut: case TokenKind::KwInOut: break;
    default: return false;
    }
    return names_variable(kind()) && kind(1) != TokenKind::Identifier && !is_reserved_word(kind(1));
}

// block = "{" stmt* "}"
// A statement that fails to parse is dropped after resynchronizing, and the block goes on.
Stmt* Parser::parse_block() {
    DepthGuard guard(*this);
    NameScope scope(*this);
    Stmt* block = make_stmt(StmtKind::Block, loc());
    expect(TokenKind::LBrace);
    while (!at(TokenKind::RBrace) && !at(TokenKind::EndOfFile)) {
        size_t start = pos_;
        try {
            block->body.push_back(parse_statement());
        } catch (const SyntaxError&) {
            synchronize();
        }
        if (pos_ == start && !at(TokenKind::RBrace)) advance();  // always make progress
    }
    expect(TokenKind::RBrace);
    return block;
}

// stmt = attributes? ( block | if_stmt | for_stmt | while_stmt | do_stmt | switch_stmt
//                    | case_label | typealias_decl | typedef_decl
//                    | "break" ";" | "continue" ";" | return_stmt | ";"
//                    | decl_stmt | expr ";" )
Stmt* Parser::parse_statement() {
    DepthGuard guard(*this);
    std::vector<Attribute> attrs;
    parse_attributes(attrs);  // `[MaxIters(16)]`, `[ForceUnroll]`, `[unroll]`, `[loop]`, ...
    SourceLoc where = loc();
    Stmt* s = nullptr;
    if (at_name_statement()) {  // `in = in + 3;` where a variable is named `in`
        s = parse_expression_statement();
        s->attrs = std::move(attrs);
        return s;
    }
    switch (kind()) {
    case TokenKind::LBrace: s = parse_block(); break;
    case TokenKind::KwIf: s = parse_if(where); break;
    case TokenKind::KwFor: s = parse_for(where); break;
    case TokenKind::KwWhile: s = parse_while(where); break;
    case TokenKind::KwDo: s = parse_do_while(where); break;
    case TokenKind::KwSwitch: s = parse_switch(where); break;
    case TokenKind::KwReturn: s = parse_return(where); break;
    case TokenKind::KwBreak:
    case TokenKind::KwContinue:
        s = make_stmt(at(TokenKind::KwBreak) ? StmtKind::Break : StmtKind::Continue, where);
        advance();
        expect(TokenKind::Semicolon);
        break;
    case TokenKind::Semicolon:
        s = make_stmt(StmtKind::Empty, where);
        advance();
        break;
    case TokenKind::KwElse: fail(where, "'else' without a matching 'if'");
    case TokenKind::KwStruct:
        unsupported(where, "local struct declaration");
        throw SyntaxError{};  // the enclosing block skips it and goes on
    default:
        if ((at_word("case") && kind(1) != TokenKind::Assign && kind(1) != TokenKind::Semicolon) ||
            (at_word("default") && kind(1) == TokenKind::Colon)) {
            s = parse_case_label(where);
            break;
        }
        if (at_type_alias()) {
            s = make_stmt(StmtKind::TypeAlias, where);
            s->alias = at_word("typealias") ? parse_typealias() : parse_typedef();
            break;
        }
        if (at_word("enum") && (kind(1) == TokenKind::Identifier || kind(1) == TokenKind::LBrace)) {
            // Slang's 30102 ("declaration not allowed here").
            diags_.error(where, "an enum cannot be declared inside a function; declare it at the top level", 30102);
            last_error_offset_ = where.offset;
            throw SyntaxError{};
        }
        // Inside functions the tier-2/3 words stay usable as names: `property = 1;` is fine.
        if ((kind(1) == TokenKind::Identifier || kind(1) == TokenKind::Less ||
             kind(1) == TokenKind::LBrace) &&
            report_unsupported_declaration(nullptr))
            throw SyntaxError{};
        s = at_declaration_statement() ? parse_decl_statement() : parse_expression_statement();
        break;
    }
    s->attrs = std::move(attrs);
    return s;
}

// if_stmt = "if" "(" expr ")" stmt ("else" stmt)?
Stmt* Parser::parse_if(SourceLoc where) {
    Stmt* s = make_stmt(StmtKind::If, where);
    advance();
    expect(TokenKind::LParen);
    s->cond = parse_expression();
    expect(TokenKind::RParen);
    s->then_stmt = parse_statement();
    if (match(TokenKind::KwElse)) s->else_stmt = parse_statement();
    return s;
}

// for_stmt = "for" "(" (decl_stmt | expr? ";") expr? ";" expr? ")" stmt
Stmt* Parser::parse_for(SourceLoc where) {
    NameScope scope(*this);  // the init declaration's names
    Stmt* s = make_stmt(StmtKind::For, where);
    advance();
    expect(TokenKind::LParen);
    if (!match(TokenKind::Semicolon))
        s->init = at_declaration_statement() ? parse_decl_statement() : parse_expression_statement();
    if (!at(TokenKind::Semicolon)) s->cond = parse_expression();
    expect(TokenKind::Semicolon);
    if (!at(TokenKind::RParen)) s->step = parse_expression();
    expect(TokenKind::RParen);
    s->then_stmt = parse_statement();
    return s;
}

// while_stmt = "while" "(" expr ")" stmt
Stmt* Parser::parse_while(SourceLoc where) {
    Stmt* s = make_stmt(StmtKind::While, where);
    advance();
    expect(TokenKind::LParen);
    s->cond = parse_expression();
    expect(TokenKind::RParen);
    s->then_stmt = parse_statement();
    return s;
}

// do_stmt = "do" stmt "while" "(" expr ")" ";"
Stmt* Parser::parse_do_while(SourceLoc where) {
    Stmt* s = make_stmt(StmtKind::DoWhile, where);
    advance();
    s->then_stmt = parse_statement();
    expect(TokenKind::KwWhile);
    expect(TokenKind::LParen);
    s->cond = parse_expression();
    expect(TokenKind::RParen);
    expect(TokenKind::Semicolon);
    return s;
}

// switch_stmt = "switch" "(" expr ")" "{" stmt* "}"
// The case labels are statements of the body (parse_statement reads them), as in C: a label
// marks where execution enters; sema groups the statements into sections.
Stmt* Parser::parse_switch(SourceLoc where) {
    Stmt* s = make_stmt(StmtKind::Switch, where);
    advance();
    expect(TokenKind::LParen);
    s->cond = parse_expression();
    expect(TokenKind::RParen);
    if (!at(TokenKind::LBrace)) fail_expected("'{'");
    s->body = std::move(parse_block()->body);
    return s;
}

// case_label = ("case" conditional | "default") ":"
// Parsed wherever a statement may start; sema reports one outside a switch body.
Stmt* Parser::parse_case_label(SourceLoc where) {
    Stmt* s = make_stmt(StmtKind::Case, where);
    if (text(advance()) == "case") s->expr = parse_conditional();
    expect(TokenKind::Colon);
    return s;
}

// return_stmt = "return" expr? ";"        (expr may be an initializer list: `return {a, b};`)
Stmt* Parser::parse_return(SourceLoc where) {
    Stmt* s = make_stmt(StmtKind::Return, where);
    advance();
    if (!at(TokenKind::Semicolon)) s->expr = parse_expression();
    expect(TokenKind::Semicolon);
    return s;
}

// expr_stmt = expr ";"
Stmt* Parser::parse_expression_statement() {
    Stmt* s = make_stmt(StmtKind::Expr, loc());
    s->expr = parse_expression();
    expect(TokenKind::Semicolon);
    return s;
}

// decl_stmt = modifiers ("var" | "let") inferred_declarators ";"
//           | modifiers type declarators ";"
Stmt* Parser::parse_decl_statement() {
    Stmt* s = make_stmt(StmtKind::Decl, loc());
    Modifiers mods = parse_modifiers();
    reject_link_modifiers(mods);
    if (mods.is_in || mods.is_out || mods.is_inout)
        error(mods.first, "parameter direction modifiers are only allowed on parameters");
    if (mods.groupshared.valid()) unsupported(mods.groupshared, "'groupshared' on a local variable (declare it at global scope)");
    if (mods.uniform.valid())  // Slang: modifier not allowed (a uniform is a global)
        diags_.error(mods.uniform, "modifier 'uniform' is not allowed on a local variable", 31201);
    VarDecl proto;
    proto.is_const = mods.is_const;
    proto.is_static = mods.is_static;  // `static const` tables inside functions (HLSL idiom)
    proto.is_no_diff = mods.is_no_diff;
    if (at(TokenKind::KwVar) || at(TokenKind::KwLet)) {
        proto.is_const |= at(TokenKind::KwLet);
        advance();
        parse_inferred_declarators(proto, s->decls);
    } else {
        TypeExpr* type = parse_type();
        parse_declarators(type, proto, s->decls);
    }
    expect(TokenKind::Semicolon);
    return s;
}

// declarators = declarator ("," declarator)*
// declarator = (ident | reserved_word) ("[" conditional "]")* ("=" initializer | init_list)?
// initializer = assign            (an init_list is an assign-level primary)
// Shared by locals, globals and struct fields; each VarDecl starts as a copy of `proto`. As in
// Slang, a reserved word may name the variable (`int return = 1;`), and expressions in its
// scope read the word as the variable (declare_name; its initializer does not see it yet).
void Parser::parse_declarators(TypeExpr* type, const VarDecl& proto, std::vector<VarDecl*>& out) {
    do {
        if (!at_variable_name()) fail_expected("a variable name");
        Token name = advance();
        auto* v = ctx_.make<VarDecl>(proto);
        v->loc = loc(name);
        v->name = std::string(text(name));
        v->type_expr = parse_declarator_dims(type);
        if (match(TokenKind::Assign)) v->init = parse_assignment();
        else if (at(TokenKind::LBrace)) v->init = parse_init_list();  // `float3 v{1, 2, 3}`
        declare_name(name);
        out.push_back(v);
    } while (match(TokenKind::Comma));
}

// inferred_declarators = inferred ("," inferred)*
// inferred = (ident | reserved_word) (":" type)? ("=" initializer)?
// For `var`/`let`: type_expr stays nullptr unless written after a colon (`var x : float = 1`).
void Parser::parse_inferred_declarators(const VarDecl& proto, std::vector<VarDecl*>& out) {
    do {
        if (!at_variable_name()) fail_expected("a variable name");
        Token name = advance();
        auto* v = ctx_.make<VarDecl>(proto);
        v->loc = loc(name);
        v->name = std::string(text(name));
        if (match(TokenKind::Colon)) v->type_expr = parse_type();
        if (match(TokenKind::Assign)) v->init = parse_assignment();
        declare_name(name);
        out.push_back(v);  // neither type nor initializer: sema reports it
    } while (match(TokenKind::Comma));
}

}  // namespace sg::lang::detail
