// src/syntax/parser_expr.cpp — expressions, with C's precedence (docs/language.md, tier 1).
//
// Loosest to tightest: `,` · assignment (right) · `?:` (right) · `||` · `&&` · `|` · `^` · `&` ·
// `== !=` · `< > <= >=` · `<< >>` · `+ -` · `* / %` · prefix · postfix. The binary levels are
// parsed by one precedence-climbing loop driven by binary_precedence(), so long operator
// chains (`a + b + c + ...`) iterate instead of recursing.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

namespace {

/// Binding strength of a binary operator token; 0 for tokens that are not binary operators.
int binary_precedence(TokenKind k) {
    switch (k) {
    case TokenKind::PipePipe: return 1;
    case TokenKind::AmpAmp: return 2;
    case TokenKind::Pipe: return 3;
    case TokenKind::Caret: return 4;
    case TokenKind::Amp: return 5;
    case TokenKind::EqualEqual:
    case TokenKind::NotEqual: return 6;
    case TokenKind::Less:
    case TokenKind::Greater:
    case TokenKind::LessEqual:
    case TokenKind::GreaterEqual: return 7;
    case TokenKind::Shl:
    case TokenKind::Shr: return 8;
    case TokenKind::Plus:
    case TokenKind::Minus: return 9;  // Parser::kAdditivePrecedence
    case TokenKind::Star:
    case TokenKind::Slash:
    case TokenKind::Percent: return 10;
    default: return 0;
    }
}

Op binary_op(TokenKind k) {
    switch (k) {
    case TokenKind::PipePipe: return Op::LogOr;
    case TokenKind::AmpAmp: return Op::LogAnd;
    case TokenKind::Pipe: return Op::BitOr;
    case TokenKind::Caret: return Op::BitXor;
    case TokenKind::Amp: return Op::BitAnd;
    case TokenKind::EqualEqual: return Op::Eq;
    case TokenKind::NotEqual: return Op::Ne;
    case TokenKind::Less: return Op::Lt;
    case TokenKind::Greater: return Op::Gt;
    case TokenKind::LessEqual: return Op::Le;
    case TokenKind::GreaterEqual: return Op::Ge;
    case TokenKind::Shl: return Op::Shl;
    case TokenKind::Shr: return Op::Shr;
    case TokenKind::Plus: return Op::Add;
    case TokenKind::Minus: return Op::Sub;
    case TokenKind::Star: return Op::Mul;
    case TokenKind::Slash: return Op::Div;
    case TokenKind::Percent: return Op::Rem;
    default: return Op::None;
    }
}

Op assignment_op(TokenKind k) {
    switch (k) {
    case TokenKind::Assign: return Op::Assign;
    case TokenKind::StarAssign: return Op::MulAssign;
    case TokenKind::SlashAssign: return Op::DivAssign;
    case TokenKind::PercentAssign: return Op::RemAssign;
    case TokenKind::PlusAssign: return Op::AddAssign;
    case TokenKind::MinusAssign: return Op::SubAssign;
    case TokenKind::ShlAssign: return Op::ShlAssign;
    case TokenKind::ShrAssign: return Op::ShrAssign;
    case TokenKind::AmpAssign: return Op::AndAssign;
    case TokenKind::CaretAssign: return Op::XorAssign;
    case TokenKind::PipeAssign: return Op::OrAssign;
    default: return Op::None;
    }
}

Op prefix_op(TokenKind k) {
    switch (k) {
    case TokenKind::Minus: return Op::Neg;
    case TokenKind::Plus: return Op::Plus;
    case TokenKind::Bang: return Op::Not;
    case TokenKind::Tilde: return Op::BitNot;
    case TokenKind::PlusPlus: return Op::PreInc;
    case TokenKind::MinusMinus: return Op::PreDec;
    default: return Op::None;
    }
}

}  // namespace

Expr* Parser::make_expr(ExprKind kind, SourceLoc loc) {
    auto* e = ctx_.make<Expr>();
    e->kind = kind;
    e->loc = loc;
    return e;
}

// expr = assign ("," assign)*
Expr* Parser::parse_expression() {
    Expr* lhs = parse_assignment();
    DepthGuard chain(*this, 0);
    while (at(TokenKind::Comma)) {
        chain.deepen();
        Expr* comma = make_expr(ExprKind::Comma, loc(advance()));
        comma->operands = {lhs, parse_assignment()};
        lhs = comma;
    }
    return lhs;
}

// assign = conditional (assign_op assign)?
// assign_op = "=" | "*=" | "/=" | "%=" | "+=" | "-=" | "<<=" | ">>=" | "&=" | "^=" | "|="
Expr* Parser::parse_assignment() {
    DepthGuard guard(*this);
    Expr* lhs = parse_conditional();
    Op op = assignment_op(kind());
    if (op == Op::None) return lhs;
    Expr* assign = make_expr(ExprKind::Assign, loc(advance()));
    assign->op = op;
    assign->operands = {lhs, parse_assignment()};
    return assign;
}

// conditional = binary ("?" expr ":" conditional)?
Expr* Parser::parse_conditional() {
    Expr* cond = parse_binary(1);
    if (!at(TokenKind::Question)) return cond;
    DepthGuard guard(*this);
    Expr* e = make_expr(ExprKind::Conditional, loc(advance()));
    Expr* then_value = parse_expression();
    expect(TokenKind::Colon);
    e->operands = {cond, then_value, parse_conditional()};
    return e;
}

// binary = unary (binary_op binary)*     — precedence climbing; all binary operators are
//   left-associative: logor = logand ("||" logand)*, logand = bitor ("&&" bitor)*, ...,
//   mul = unary ("*" unary | "/" unary | "%" unary)*
Expr* Parser::parse_binary(int min_precedence) {
    Expr* lhs = parse_unary();
    DepthGuard chain(*this, 0);  // `a + b + c` is a left-deep tree: count its depth
    for (;;) {
        int precedence = binary_precedence(kind());
        if (precedence == 0 || precedence < min_precedence) return lhs;
        chain.deepen();
        Token op = advance();
        Expr* e = make_expr(ExprKind::Binary, loc(op));
        e->op = binary_op(op.kind);
        e->operands = {lhs, parse_binary(precedence + 1)};
        lhs = e;
    }
}

// unary = ("-" | "+" | "!" | "~" | "++" | "--") unary
//       | "no_diff" unary
//       | "(" type_name ")" unary               (C-style cast: a built-in or declared type name)
//       | postfix
Expr* Parser::parse_unary() {
    if (Op op = prefix_op(kind()); op != Op::None) {
        DepthGuard guard(*this);
        Expr* e = make_expr(ExprKind::Unary, loc(advance()));
        e->op = op;
        e->operands = {parse_unary()};
        return e;
    }
    if (at(TokenKind::KwNoDiff) && !reads_as_name(TokenKind::KwNoDiff)) {
        DepthGuard guard(*this);
        Expr* e = make_expr(ExprKind::NoDiff, loc(advance()));
        e->operands = {parse_unary()};
        return e;
    }
    // Only a known scalar/vector/matrix name makes `(name)` a cast: `(x) - y` stays a
    // subtraction for every variable x.
    if (at(TokenKind::LParen) && kind(1) == TokenKind::Identifier && kind(2) == TokenKind::RParen &&
        (is_builtin_type_name(text(tokens_[pos_ + 1])) || is_declared_type_name(text(tokens_[pos_ + 1])))) {
        DepthGuard guard(*this);
        Expr* e = make_expr(ExprKind::Cast, loc(advance()));
        e->type_expr = parse_type();
        expect(TokenKind::RParen);
        e->operands = {parse_unary()};
        return e;
    }
    return parse_postfix();
}

// postfix = primary ( "(" args? ")" | "[" args "]" | ("." | "::") ident | "++" | "--" )*
// args = assign ("," assign)*
Expr* Parser::parse_postfix() {
    SourceLoc start = loc();
    Expr* e = parse_primary();
    DepthGuard chain(*this, 0);
    for (;;) {
        Expr* next = nullptr;
        switch (kind()) {
        case TokenKind::LParen:
            chain.deepen();
            next = make_expr(ExprKind::Call, start);  // located at the callee's start
            advance();
            next->operands.push_back(e);
            parse_arguments(next, TokenKind::RParen);
            break;
        case TokenKind::LBracket:
            chain.deepen();
            next = make_expr(ExprKind::Index, loc(advance()));
            next->operands.push_back(e);
            if (at(TokenKind::RBracket)) fail_expected("an index");
            parse_arguments(next, TokenKind::RBracket);  // `t[i, j]`: one node, two indices
            break;
        case TokenKind::Dot:
        case TokenKind::ColonColon: {  // `S::f` is `S.f`, `Mode::A` is `Mode.A`: sema tells them apart
            chain.deepen();
            advance();
            if (!at_variable_name()) fail_expected("a member name");  // `s.in`: a field named by a reserved word
            Token name = advance();
            next = make_expr(ExprKind::Member, loc(name));
            next->name = std::string(text(name));
            next->operands.push_back(e);
            if (at(TokenKind::Less)) {
                // `s.get<float>(x)`: a generic method's explicit arguments (only before '(').
                size_t end = scan_generic_args(pos_);
                if (end != npos && kind_at(end) == TokenKind::LParen) {
                    next->type_expr = ctx_.make<TypeExpr>();
                    next->type_expr->loc = next->loc;
                    next->type_expr->name = next->name;
                    DepthGuard guard(*this);
                    parse_generic_args(next->type_expr);
                }
            }
            break;
        }
        case TokenKind::PlusPlus:
        case TokenKind::MinusMinus:
            chain.deepen();
            next = make_expr(ExprKind::Postfix, loc());
            next->op = at(TokenKind::PlusPlus) ? Op::Inc : Op::Dec;
            advance();
            next->operands.push_back(e);
            break;
        default: return e;
        }
        e = next;
    }
}

/// Appends comma-separated arguments to `node` up to and including the `close` token (a
/// trailing comma before it is allowed, as in Slang: `f(a, b,)`).
void Parser::parse_arguments(Expr* node, TokenKind close) {
    if (!at(close)) {
        do node->operands.push_back(parse_assignment());
        while (match(TokenKind::Comma) && !(close == TokenKind::RParen && at(close)));
    }
    expect(close);
}

// primary = int_lit | float_lit | "true" | "false" | "(" expr ")" | init_list
//         | generic_type "(" args? ")"             (TypeCtor: `vector<float,3>(x)`)
//         | ident generic_args                     (before "(", "." or "::": `f<4>(x)`, `Poly<3>`)
//         | ident ("[" conditional "]")+ "(" args? ")"   (TypeCtor: `float[2](a, b)`)
//         | ident
//         | reserved_word                          (that names a variable in scope: `in + 1`)
Expr* Parser::parse_primary() {
    if (reads_as_name(kind())) {
        Expr* e = make_expr(ExprKind::Name, loc());
        e->name = std::string(text(tok()));
        advance();
        return e;
    }
    switch (kind()) {
    case TokenKind::IntLiteral:
    case TokenKind::FloatLiteral: return parse_literal();
    case TokenKind::KwTrue:
    case TokenKind::KwFalse: {
        Expr* e = make_expr(ExprKind::BoolLit, loc());
        e->int_value = at(TokenKind::KwTrue) ? 1 : 0;
        advance();
        return e;
    }
    case TokenKind::LParen: {
        advance();
        Expr* e = parse_expression();  // no node for the parentheses themselves
        expect(TokenKind::RParen);
        return e;
    }
    case TokenKind::LBrace: return parse_init_list();
    case TokenKind::StringLiteral:
        fail(loc(), "string literals are only allowed in 'import' declarations");
    case TokenKind::Identifier: break;
    default: fail_expected("an expression");
    }

    std::string_view name = text(tok());
    if ((is_generic_type_name(name) && looks_like_generic_type_ctor()) ||
        looks_like_array_type_ctor()) {
        Expr* e = make_expr(ExprKind::TypeCtor, loc());
        e->type_expr = parse_type();
        if (!at(TokenKind::LParen)) fail_expected("'(' after the type");
        advance();
        parse_arguments(e, TokenKind::RParen);
        return e;
    }
    if (looks_like_generic_type_ctor() || looks_like_generic_member_access()) {
        // `f<4>(x)`, `Poly<3>(...)`, `S<float>.make()`: a name with explicit generic arguments,
        // kept in type_expr. Like Slang, this prefers the generic reading over `(f < 4) > (x)`.
        Expr* e = make_expr(ExprKind::Name, loc());
        e->name = std::string(name);
        e->type_expr = ctx_.make<TypeExpr>();
        e->type_expr->loc = e->loc;
        e->type_expr->name = e->name;
        advance();
        DepthGuard guard(*this);
        parse_generic_args(e->type_expr);  // only the arguments: `.x` / `::x` after them is a member
        return e;
    }
    Expr* e = make_expr(ExprKind::Name, loc());
    e->name = std::string(name);
    advance();
    return e;
}

// int_lit and float_lit: the lexer has validated them (and reported bad ones, which decode
// to 0 here so that parsing goes on).
Expr* Parser::parse_literal() {
    Token t = advance();
    if (t.kind == TokenKind::IntLiteral) {
        IntLiteralValue v = decode_int_literal(text(t));
        Expr* e = make_expr(ExprKind::IntLit, loc(t));
        e->int_value = v.value;
        e->suffix = std::string(v.suffix);
        e->decimal = v.decimal;
        return e;
    }
    FloatLiteralValue v = decode_float_literal(text(t));
    Expr* e = make_expr(ExprKind::FloatLit, loc(t));
    e->float_value = v.value;
    e->suffix = std::string(v.suffix);
    return e;
}

// init_list = "{" (assign ("," assign)* ","?)? "}"
Expr* Parser::parse_init_list() {
    DepthGuard guard(*this);
    Expr* list = make_expr(ExprKind::InitList, loc());
    expect(TokenKind::LBrace);
    while (!at(TokenKind::RBrace)) {
        list->operands.push_back(parse_assignment());
        if (!match(TokenKind::Comma)) break;
    }
    expect(TokenKind::RBrace);
    return list;
}

}  // namespace sg::lang::detail
