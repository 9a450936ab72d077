// src/syntax/parser_type.cpp — type expressions and the speculative scans that tell a declaration
// (`float[5] a;`, `IDiffTensor<float,2> t;`, `Particle p;`) from an expression (`a[i] = 3;`,
// `x < y;`, `f(x);`).
//
// The parser does not interpret type names (sema does): `float3`, `vector<float,3>` and
// `Particle` are all just TypeExprs. Speculation is done by pure token scans that build nothing
// and report nothing, so backtracking is simply not advancing the cursor.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

bool is_builtin_type_name(std::string_view name) {
    static constexpr std::string_view kScalars[] = {
        "bool",     "int",      "uint",      "float",     "double",    "half",
        "int8_t",   "int16_t",  "int32_t",   "int64_t",   "uint8_t",   "uint16_t",
        "uint32_t", "uint64_t", "float16_t", "float32_t", "float64_t",
    };
    auto is_dim = [](char c) { return c >= '1' && c <= '4'; };
    for (std::string_view base : kScalars) {
        if (!name.starts_with(base)) continue;
        std::string_view rest = name.substr(base.size());
        if (rest.empty()) return true;                                       // float
        if (rest.size() == 1 && is_dim(rest[0])) return true;                // float3
        if (rest.size() == 3 && is_dim(rest[0]) && rest[1] == 'x' && is_dim(rest[2]))
            return true;                                                     // float3x3
    }
    return false;
}

bool is_generic_type_name(std::string_view name) {
    static constexpr std::string_view kNames[] = {
        "vector",        "matrix",       "DifferentialPair", "ITensor",       "IWTensor",
        "IRWTensor",     "Tensor",       "WTensor",          "RWTensor",      "AtomicTensor",
        "IDiffTensor",   "IWDiffTensor", "IRWDiffTensor",    "DiffTensor",    "WDiffTensor",
        "RWDiffTensor",  "PrimalTensor", "WPrimalTensor",    "RWPrimalTensor", "StructuredBuffer",
        "RWStructuredBuffer", "TensorView",   "DiffTensorView",
    };
    for (std::string_view n : kNames)
        if (n == name) return true;
    return false;
}

// ---------------------------------------------------------------- parsing types

// type = ident generic_args? (("." | "::") ident)* array_dims
// Dims written after a type wrap it one at a time, as in Slang: `float[2][3]` is (float[2])[3],
// three arrays of two (array_dims {3, 2}, outermost first), unlike the C declarator `float a[2][3]`.
TypeExpr* Parser::parse_type() {
    DepthGuard guard(*this);
    if (!at(TokenKind::Identifier)) fail_expected("a type");
    Token name = advance();
    auto* type = ctx_.make<TypeExpr>();
    type->loc = loc(name);
    type->name = std::string(text(name));
    if (at(TokenKind::Less)) parse_generic_args(type);
    if (type->name == "Array" && !type->arg_is_value.empty()) {
        // Dims written after `Array<T, N>` are outer ones: `Array<float, 3>[5]` is five of them.
        type = array_type_from_generic(type);
        std::vector<Expr*> outer;
        parse_array_dims(outer);
        type->array_dims.insert(type->array_dims.begin(), outer.rbegin(), outer.rend());
        return type;
    }
    // `T.Differential`, `T.Assoc`, `T::Assoc`; deeper paths (`T.Assoc.Differential`) are kept
    // joined, each part's location beside them.
    while ((at(TokenKind::Dot) || at(TokenKind::ColonColon)) && kind(1) == TokenKind::Identifier) {
        advance();
        if (!type->member.empty()) type->member += '.';
        type->member_locs.push_back(loc());
        type->member += text(advance());
    }
    std::vector<Expr*> dims;
    parse_array_dims(dims);
    type->array_dims.assign(dims.rbegin(), dims.rend());
    return type;
}

/// `Array<T, N>` is `T[N]`: the count goes before T's own dims (it is the outer one), so that
/// `Array<Array<float, 2>, 3>` is three arrays of two, like `float a[3][2]`. A count written as
/// a plain name (`Array<float, N>`) arrives as a type argument and becomes a name expression.
TypeExpr* Parser::array_type_from_generic(TypeExpr* generic) {
    const char* usage = "Array takes an element type and a size: Array<float, 4>";
    if (generic->arg_is_value.size() != 2 || generic->arg_is_value[0]) fail(generic->loc, usage);
    Expr* count = nullptr;
    if (generic->arg_is_value[1]) {
        count = generic->value_args[0];
    } else {
        const TypeExpr* n = generic->type_args[1];
        if (!n->type_args.empty() || !n->array_dims.empty() || !n->member.empty()) fail(n->loc, usage);
        count = make_expr(ExprKind::Name, n->loc);
        count->name = n->name;
    }
    auto* out = ctx_.make<TypeExpr>(*generic->type_args[0]);
    out->loc = generic->loc;
    out->array_dims.insert(out->array_dims.begin(), count);
    return out;
}

// generic_args = "<" generic_arg ("," generic_arg)* ">"
// generic_arg = add_expr | type
// An argument that starts with a literal, '(' or a sign is a value (`vector<float, 3>`,
// `Tensor<float, (N + 1)>`); anything else is a type. A plain name such as `N` therefore
// arrives as a type argument and sema decides whether it names a constant. Values are parsed
// at the additive level so that `>` and `>>` end the list rather than compare or shift.
void Parser::parse_generic_args(TypeExpr* type) {
    advance();  // '<'
    do {
        switch (kind()) {
        case TokenKind::IntLiteral:
        case TokenKind::FloatLiteral:
        case TokenKind::KwTrue:
        case TokenKind::KwFalse:
        case TokenKind::LParen:
        case TokenKind::Minus:
        case TokenKind::Plus:
            type->value_args.push_back(parse_binary(kAdditivePrecedence));
            type->arg_is_value.push_back(true);
            break;
        default:
            type->type_args.push_back(parse_type());
            type->arg_is_value.push_back(false);
            break;
        }
    } while (match(TokenKind::Comma));
    expect_closing_angle();
}

// array_dims = ("[" conditional "]")*
void Parser::parse_array_dims(std::vector<Expr*>& dims) {
    while (at(TokenKind::LBracket)) {
        Token open = advance();
        if (match(TokenKind::RBracket)) {
            unsupported(loc(open), "unsized array");
            continue;
        }
        dims.push_back(parse_conditional());
        expect(TokenKind::RBracket);
    }
}

/// C-style dims after a declared name (`float a[5][3]`, `float[2] b[3]`). They are the outer
/// dimensions, as in C, so they are placed *before* the type's own dims: `float[2] b[3]` gets
/// array_dims {3, 2}; `float a[5][3]` gets {5, 3}, the order as written (`float[5][3] c` gets
/// {3, 5}: see parse_type). The type is copied so
/// that the other declarators of the same statement keep the type as written.
TypeExpr* Parser::parse_declarator_dims(TypeExpr* type) {
    if (!at(TokenKind::LBracket)) return type;
    std::vector<Expr*> dims;
    parse_array_dims(dims);
    auto* copy = ctx_.make<TypeExpr>(*type);
    copy->array_dims.insert(copy->array_dims.begin(), dims.begin(), dims.end());
    return copy;
}

// ---------------------------------------------------------------- speculative scans

/// Index just past the bracket group that opens at token `i`, or npos when the group does not
/// close before a `;`, a brace, the end of file or the lookahead bound.
size_t Parser::skip_balanced(size_t i, TokenKind open, TokenKind close) const {
    int depth = 0;
    for (size_t limit = i + kMaxLookahead; i < limit; ++i) {
        TokenKind k = kind_at(i);
        if (k == open) ++depth;
        else if (k == close && --depth == 0) return i + 1;
        else if (k == TokenKind::Semicolon || k == TokenKind::LBrace || k == TokenKind::RBrace ||
                 k == TokenKind::EndOfFile)
            return npos;
    }
    return npos;
}

/// Index just past the generic argument list that opens at token `i` (a '<'), or npos when the
/// tokens cannot be one: only names, literals, commas, '.', brackets, arithmetic and nested
/// lists may appear (anything inside parentheses is allowed, as a value expression).
size_t Parser::scan_generic_args(size_t i) const {
    int angles = 0, parens = 0;
    for (size_t limit = i + kMaxLookahead; i < limit; ++i) {
        TokenKind k = kind_at(i);
        if (k == TokenKind::EndOfFile || k == TokenKind::Semicolon || k == TokenKind::LBrace ||
            k == TokenKind::RBrace)
            return npos;
        if (parens > 0) {
            parens += k == TokenKind::LParen ? 1 : k == TokenKind::RParen ? -1 : 0;
            continue;
        }
        switch (k) {
        case TokenKind::Less: ++angles; break;
        case TokenKind::Greater:
            if (--angles == 0) return i + 1;
            break;
        case TokenKind::Shr:
            angles -= 2;
            if (angles == 0) return i + 1;
            if (angles < 0) return npos;
            break;
        case TokenKind::LParen: ++parens; break;
        case TokenKind::Identifier:
        case TokenKind::IntLiteral:
        case TokenKind::FloatLiteral:
        case TokenKind::KwTrue:
        case TokenKind::KwFalse:
        case TokenKind::Comma:
        case TokenKind::Dot:
        case TokenKind::ColonColon:
        case TokenKind::LBracket:
        case TokenKind::RBracket:
        case TokenKind::Plus:
        case TokenKind::Minus:
        case TokenKind::Star:
        case TokenKind::Slash:
        case TokenKind::Percent: break;
        default: return npos;
        }
    }
    return npos;
}

/// Index just past something shaped like a type starting at token `i`, or npos.
// type_shape = ident ("<" ... ">")? (("." | "::") ident)* ("[" ... "]")*
size_t Parser::scan_type(size_t i) const {
    if (kind_at(i) != TokenKind::Identifier) return npos;
    ++i;
    if (kind_at(i) == TokenKind::Less && (i = scan_generic_args(i)) == npos) return npos;
    while ((kind_at(i) == TokenKind::Dot || kind_at(i) == TokenKind::ColonColon) &&
           kind_at(i + 1) == TokenKind::Identifier)
        i += 2;
    while (kind_at(i) == TokenKind::LBracket)
        if ((i = skip_balanced(i, TokenKind::LBracket, TokenKind::RBracket)) == npos) return npos;
    return i;
}

/// `Type Identifier` at token `i`: the shape of a declaration. Two adjacent names can never be
/// an expression, so this also decides `a < b > c;` for the declaration, as C++ does.
bool Parser::looks_like_declaration(size_t i) const {
    size_t j = scan_type(i);
    return j != npos && kind_at(j) == TokenKind::Identifier;
}

bool Parser::keyword_declarator_at(size_t i) const {
    size_t j = scan_type(i);
    if (j == npos || !is_reserved_word(kind_at(j))) return false;
    TokenKind next = kind_at(j + 1);
    return next == TokenKind::Assign || next == TokenKind::Semicolon || next == TokenKind::Comma ||
           next == TokenKind::LBracket;
}

/// Whether the statement at the cursor is a local variable declaration.
bool Parser::at_declaration_statement() const {
    size_t i = pos_;
    // `extern` / `export` start a declaration (reported there: they belong on globals).
    if (at_word("extern") || at_word("export")) return true;
    bool only_no_diff = true;
    for (;; ++i) {
        TokenKind k = kind_at(i);
        if (k == TokenKind::KwNoDiff) continue;
        if (k == TokenKind::KwConst || k == TokenKind::KwStatic || k == TokenKind::KwIn ||
            k == TokenKind::KwOut || k == TokenKind::KwInOut) {
            only_no_diff = false;
            continue;
        }
        if (k == TokenKind::KwVar || k == TokenKind::KwLet) return true;
        break;
    }
    // `no_diff` alone may also prefix an expression (`no_diff f(x);`).
    return !only_no_diff || looks_like_declaration(i) || keyword_declarator_at(i);
}

/// `float[2](a, b)`: a name, bracket groups, then '(' — an array constructor (tier 2; sema
/// reports it). `a[i](x)` has no other meaning in the language, so the guess is safe.
bool Parser::looks_like_array_type_ctor() const {
    size_t i = pos_ + 1;
    if (kind_at(i) != TokenKind::LBracket) return false;
    while (kind_at(i) == TokenKind::LBracket)
        if ((i = skip_balanced(i, TokenKind::LBracket, TokenKind::RBracket)) == npos) return false;
    return kind_at(i) == TokenKind::LParen;
}

/// A name, a generic argument list, then '(': `vector<float,3>(x)` when the name is a generic
/// type, else an explicit generic call `f<4>(x)`. `vector < 3` and `a < b && c > (d)` are not.
bool Parser::looks_like_generic_type_ctor() const {
    if (kind(1) != TokenKind::Less) return false;
    size_t end = scan_generic_args(pos_ + 1);
    return end != npos && kind_at(end) == TokenKind::LParen;
}

/// A name, a generic argument list, then '.' or '::' and a name: `Poly<3>.make()`, `S<float>::N`.
/// (`a < b > .c` has no other reading: a comparison cannot be followed by '.'.)
/// Also a name and a generic argument list closed by ')' or ',' (`bwd_diff(f<float>)`): no
/// comparison can end there (`a < b >` lacks its right operand).
bool Parser::looks_like_generic_member_access() const {
    if (kind(1) != TokenKind::Less) return false;
    size_t end = scan_generic_args(pos_ + 1);
    if (end == npos) return false;
    TokenKind next = kind_at(end);
    return ((next == TokenKind::ColonColon || next == TokenKind::Dot) && kind_at(end + 1) == TokenKind::Identifier) ||
           next == TokenKind::RParen || next == TokenKind::Comma;
}

}  // namespace sg::lang::detail
