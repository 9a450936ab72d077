// src/syntax/parser_operators.cpp — the names of operator functions: `V operator+(V a, V b)`,
// `float operator()(float x)` in a struct. The function is named "operator" followed by the
// operator's spelling ("operator+", "operator()"); sema applies a free binary operator function
// where no built-in operator takes the operands, and a struct's `operator()` to a call of a value.
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

namespace {

/// The binary operators a function may overload, by token.
const char* overloadable_binary(TokenKind k) {
    switch (k) {
    case TokenKind::Plus: return "+";
    case TokenKind::Minus: return "-";
    case TokenKind::Star: return "*";
    case TokenKind::Slash: return "/";
    case TokenKind::Percent: return "%";
    case TokenKind::Amp: return "&";
    case TokenKind::Pipe: return "|";
    case TokenKind::Caret: return "^";
    case TokenKind::Less: return "<";
    case TokenKind::Greater: return ">";
    case TokenKind::LessEqual: return "<=";
    case TokenKind::GreaterEqual: return ">=";
    case TokenKind::EqualEqual: return "==";
    case TokenKind::NotEqual: return "!=";
    case TokenKind::AmpAmp: return "&&";
    case TokenKind::PipePipe: return "||";
    case TokenKind::Shl: return "<<";
    case TokenKind::Shr: return ">>";
    default: return nullptr;
    }
}

}  // namespace

// operator_name = "operator" (binary_operator | "(" ")")
bool Parser::parse_operator_name(std::string& name, SourceLoc& where) {
    if (!at_word("operator")) return false;
    where = loc();
    advance();
    if (at(TokenKind::LParen) && kind(1) == TokenKind::RParen) {
        advance();
        advance();
        name = "operator()";
        return true;
    }
    if (const char* op = overloadable_binary(kind())) {
        advance();
        name = std::string("operator") + op;
        return true;
    }
    // Slang: 20008 invalid operator (`operator[]` is written `__subscript`; unary operators are
    // not overloadable in the Slang this follows).
    diags_.error(loc(), "'" + std::string(text(tok())) + "' is not an operator a function can overload here", 20008);
    throw SyntaxError{};
}

}  // namespace sg::lang::detail
