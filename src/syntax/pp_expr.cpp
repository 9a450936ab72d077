// src/syntax/pp_expr.cpp — evaluation of `#if` / `#elif` expressions: C's integer operators on
// 64-bit values, after macro expansion (`defined` already replaced by 1 or 0).
#include "syntax/lexer.h"
#include "syntax/pp_internal.h"

namespace sg::lang::pp {

namespace {

struct Malformed {};

/// Recursive descent over C's precedence levels. `live` is false inside the branch that a
/// `&&`, `||` or `?:` does not take, where division by zero is no error (as in C).
class ConditionParser {
public:
    ConditionParser(const std::vector<Token>& t, SourceLoc directive, Diagnostics& d)
        : toks_(t), directive_(directive), diags_(d) {}

    int64_t parse() {
        int64_t v = conditional(true);
        if (pos_ < toks_.size()) fail(toks_[pos_].loc(), "unexpected '" + std::string(toks_[pos_].text) +
                                                             "' in preprocessor expression");
        return v;
    }

private:
    const Token* peek() const { return pos_ < toks_.size() ? &toks_[pos_] : nullptr; }
    bool match(std::string_view op) {
        if (pos_ < toks_.size() && toks_[pos_].is(op)) return ++pos_, true;
        return false;
    }
    [[noreturn]] void fail(SourceLoc at, std::string message, int code = 15201) {
        diags_.error(at, std::move(message), code);
        throw Malformed{};
    }
    SourceLoc here() const { return pos_ < toks_.size() ? toks_[pos_].loc() : directive_; }

    void enter() {
        if (++depth_ > 256) fail(here(), "preprocessor expression nested too deeply");
    }

    // conditional = or ("?" conditional ":" conditional)?
    int64_t conditional(bool live) {
        enter();
        int64_t c = binary(0, live);
        if (match("?")) {
            int64_t a = conditional(live && c != 0);
            if (!match(":")) fail(here(), "expected ':' in preprocessor expression");
            int64_t b = conditional(live && c == 0);
            c = c ? a : b;
        }
        --depth_;
        return c;
    }

    // binary = unary (op unary)*, by precedence level (loosest first)
    int64_t binary(int level, bool live) {
        static const std::vector<std::vector<std::string_view>> kLevels = {
            {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"<<", ">>"}, {"+", "-"},
            {"*", "/", "%"}};
        if (level == int(kLevels.size())) return unary(live);
        int64_t v = binary(level + 1, live);
        for (;;) {
            const Token* t = peek();
            std::string_view op;
            if (t && t->kind == Kind::Punct)
                for (auto o : kLevels[size_t(level)])
                    if (t->text == o) op = o;
            if (op.empty()) return v;
            SourceLoc at = t->loc();
            ++pos_;
            bool rhs_live = live && !(op == "||" && v != 0) && !(op == "&&" && v == 0);
            int64_t r = binary(level + 1, rhs_live);
            uint64_t uv = uint64_t(v), ur = uint64_t(r);
            if (op == "||") v = (v || r);
            else if (op == "&&") v = (v && r);
            else if (op == "|") v = int64_t(uv | ur);
            else if (op == "^") v = int64_t(uv ^ ur);
            else if (op == "&") v = int64_t(uv & ur);
            else if (op == "==") v = v == r;
            else if (op == "!=") v = v != r;
            else if (op == "<") v = v < r;
            else if (op == ">") v = v > r;
            else if (op == "<=") v = v <= r;
            else if (op == ">=") v = v >= r;
            else if (op == "<<") v = int64_t(uv << (ur & 63));
            else if (op == ">>") v = v >> (ur & 63);
            else if (op == "+") v = int64_t(uv + ur);
            else if (op == "-") v = int64_t(uv - ur);
            else if (op == "*") v = int64_t(uv * ur);
            else {
                if (r == 0) {
                    if (live) fail(at, "division by zero in preprocessor expression", 15202);
                    v = 0;
                } else if (v == INT64_MIN && r == -1) {
                    v = op == "/" ? INT64_MIN : 0;
                } else {
                    v = op == "/" ? v / r : v % r;
                }
            }
        }
    }

    // unary = ("+" | "-" | "~" | "!") unary | "(" conditional ")" | number | identifier
    int64_t unary(bool live) {
        const Token* t = peek();
        if (!t) fail(here(), "expected a value in preprocessor expression", 15201);
        if (t->is("+") || t->is("-") || t->is("~") || t->is("!")) {
            ++pos_;
            enter();
            int64_t v = unary(live);
            --depth_;
            if (t->is("-")) return int64_t(0 - uint64_t(v));
            if (t->is("~")) return ~v;
            if (t->is("!")) return !v;
            return v;
        }
        if (t->is("(")) {
            ++pos_;
            int64_t v = conditional(live);
            if (!match(")")) fail(here(), "expected ')' in preprocessor expression");
            return v;
        }
        ++pos_;
        if (t->kind == Kind::Number) {
            IntLiteralValue lit = decode_int_literal(t->text);
            if (!lit.error.empty()) fail(t->loc(), "invalid number '" + std::string(t->text) + "' in preprocessor expression: " + lit.error);
            return int64_t(lit.value);
        }
        if (t->kind == Kind::Identifier) {
            diags_.warning(t->loc(), "undefined identifier '" + std::string(t->text) +
                                         "' in preprocessor expression will evaluate to zero", 15205);
            return 0;
        }
        fail(t->loc(), "unexpected '" + std::string(t->text) + "' in preprocessor expression");
    }

    const std::vector<Token>& toks_;
    SourceLoc directive_;
    Diagnostics& diags_;
    size_t pos_ = 0;
    int depth_ = 0;
};

}  // namespace

bool evaluate_condition(const std::vector<Token>& tokens, SourceLoc directive, Diagnostics& diags, bool& value) {
    if (tokens.empty()) {
        diags.error(directive, "expected an expression after the directive");
        return false;
    }
    try {
        value = ConditionParser(tokens, directive, diags).parse() != 0;
        return true;
    } catch (const Malformed&) {
        return false;
    }
}

}  // namespace sg::lang::pp
