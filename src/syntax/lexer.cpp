// src/syntax/lexer.cpp — turns kernel source text into tokens, reporting lexical errors.
#include "syntax/lexer.h"

#include <charconv>
#include <cstdio>
#include <cstring>


namespace sg::lang {

namespace {

constexpr const char* kTokenSpellings[] = {
#define SG_TOKEN_SPELLING(name, spelling) spelling,
    SG_TOKEN_KINDS(SG_TOKEN_SPELLING)
#undef SG_TOKEN_SPELLING
};
// The same spellings with their lengths computed at compile time, for keyword matching.
constexpr std::string_view kTokenSpellingViews[] = {
#define SG_TOKEN_SPELLING(name, spelling) spelling,
    SG_TOKEN_KINDS(SG_TOKEN_SPELLING)
#undef SG_TOKEN_SPELLING
};

bool is_ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_hex_digit(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int digit_value(char c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = lower(c);
    return out;
}

/// Keyword lookup. Reserved words are few and short: a linear scan that compares lengths first
/// is cheaper than hashing on this identifier-heavy hot path.
TokenKind keyword_or_identifier(std::string_view word) {
    if (word.size() < 2 || word.size() > 8 || word[0] < 'a' || word[0] > 'w')
        return TokenKind::Identifier;
    for (int k = int(TokenKind::KwIf); k <= int(TokenKind::KwNoDiff); ++k)
        if (word == kTokenSpellingViews[k]) return TokenKind(k);
    return TokenKind::Identifier;
}

/// Length of the mantissa-and-exponent part of a decimal literal: `1.5e+3` in `1.5e+3f`.
/// The rest of the literal is its suffix. An `e` not followed by digits is not an exponent
/// (`1e` is the integer 1 with the bad suffix `e`). Shared by the lexer and the decoder so
/// that both agree on where a number ends.
size_t decimal_number_length(std::string_view text) {
    size_t i = 0;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i < text.size() && text[i] == '.') {
        ++i;
        while (i < text.size() && is_digit(text[i])) ++i;
    }
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        size_t j = i + 1;
        if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
        if (j < text.size() && is_digit(text[j])) {
            i = j;
            while (i < text.size() && is_digit(text[i])) ++i;
        }
    }
    return i;
}

/// One pass over the text. The text is indexed with explicit bounds everywhere (never read as a
/// NUL-terminated string), so embedded NUL bytes are ordinary (invalid) characters.
class Lexer {
public:
    Lexer(const SourceFile& file, Diagnostics& diags)
        : file_(file), text_(file.text), diags_(diags) {}

    std::vector<Token> run();

private:
    SourceLoc loc(size_t offset) const { return {&file_, uint32_t(offset)}; }
    void push(TokenKind kind, size_t begin) {
        tokens_.push_back({kind, uint32_t(begin), uint32_t(pos_ - begin)});
        at_line_start_ = false;
    }
    char peek(size_t ahead = 0) const {
        return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
    }

    bool skip_whitespace_and_comments();
    void skip_preprocessor_line();
    void lex_number();
    void lex_identifier();
    void lex_string();
    bool lex_punctuator();
    void skip_unknown_characters();

    const SourceFile& file_;
    const std::string& text_;
    Diagnostics& diags_;
    std::vector<Token> tokens_;
    size_t pos_ = 0;
    bool at_line_start_ = true;  ///< no token yet on this line: `#` starts a directive
};

std::vector<Token> Lexer::run() {
    if (text_.size() > kMaxSourceBytes) {
        diags_.error(loc(0), "source file is too large (" + std::to_string(text_.size()) +
                                 " bytes; the limit is " + std::to_string(kMaxSourceBytes) +
                                 " bytes)");
        tokens_.push_back({TokenKind::EndOfFile, 0, 0});
        return std::move(tokens_);
    }
    // Dense code has about one token per three bytes; reserving avoids copying a large vector
    // while it grows (pages that are never written cost nothing).
    tokens_.reserve(text_.size() / 3 + 16);
    // A UTF-8 byte-order mark is an editor artefact, not an error.
    if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;

    // Every branch consumes at least one byte, so the loop ends on any input.
    while (skip_whitespace_and_comments()) {
        char c = text_[pos_];
        if (is_ident_start(c)) {
            lex_identifier();
        } else if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
            lex_number();
        } else if (c == '"') {
            lex_string();
        } else if (c == '#' && at_line_start_) {  // C's rule: a directive starts its line
            skip_preprocessor_line();
        } else if (!lex_punctuator()) {
            skip_unknown_characters();
        }
    }
    tokens_.push_back({TokenKind::EndOfFile, uint32_t(text_.size()), 0});
    return std::move(tokens_);
}

/// Skips blanks and comments; returns false at the end of the text.
bool Lexer::skip_whitespace_and_comments() {
    while (pos_ < text_.size()) {
        char c = text_[pos_];
        if (c == '\n') {
            at_line_start_ = true;
            ++pos_;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++pos_;
        } else if (c == '/' && peek(1) == '/') {
            size_t end = text_.find('\n', pos_);
            pos_ = end == std::string::npos ? text_.size() : end;
        } else if (c == '/' && peek(1) == '*') {
            size_t end = text_.find("*/", pos_ + 2);
            if (end == std::string::npos) {
                // Slang accepts it silently: the comment runs to the end of the file.
                diags_.warning(loc(pos_), "unterminated block comment: it runs to the end of the file");
                pos_ = text_.size();
            } else {
                pos_ = end + 2;
            }
        } else {
            return true;
        }
    }
    return false;
}

/// `#include ...` and friends: there is no preprocessor yet (tier 2). Report the directive at
/// the `#` and skip its line, including backslash-continued lines.
void Lexer::skip_preprocessor_line() {
    size_t hash = pos_++;
    while (peek() == ' ' || peek() == '\t') ++pos_;
    size_t name_begin = pos_;
    while (is_ident_char(peek())) ++pos_;
    std::string construct = "preprocessor directive '#";
    construct.append(text_, name_begin, pos_ - name_begin).append("'");
    diags_.unsupported(loc(hash), construct);
    while (pos_ < text_.size() && text_[pos_] != '\n') {
        if (text_[pos_] == '\\' && peek(1) == '\n') ++pos_;
        else if (text_[pos_] == '\\' && peek(1) == '\r' && peek(2) == '\n') pos_ += 2;
        ++pos_;
    }
}

void Lexer::lex_identifier() {
    size_t begin = pos_;
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
    push(keyword_or_identifier(std::string_view(text_).substr(begin, pos_ - begin)), begin);
}

/// Numbers are scanned greedily like C's pp-numbers (digits, one '.', an exponent, then any
/// letters as suffix) and validated afterwards, so `0b102` or `1.5q` give one precise message
/// instead of a confusing token split.
void Lexer::lex_number() {
    size_t begin = pos_;
    bool is_float = false;
    char c1 = lower(peek(1));
    if (peek() == '0' && (c1 == 'x' || c1 == 'b')) {
        pos_ += 2;
    } else {
        size_t n = decimal_number_length(std::string_view(text_).substr(pos_));
        std::string_view number = std::string_view(text_).substr(pos_, n);
        is_float = number.find_first_of(".eE") != std::string_view::npos;
        pos_ += n;
    }
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;

    std::string_view spelling = std::string_view(text_).substr(begin, pos_ - begin);
    std::string error = is_float ? decode_float_literal(spelling).error
                                 : decode_int_literal(spelling).error;
    // Slang's number for a literal no integer type holds (10012); other literal errors have none.
    const int code = !is_float && error.find("too large") != std::string::npos ? 10012 : 0;
    if (!error.empty()) diags_.error(loc(begin), error, code);
    push(is_float ? TokenKind::FloatLiteral : TokenKind::IntLiteral, begin);
}

/// String literals exist only for `import "slangpy";`; they end at the closing quote and may
/// not span lines.
void Lexer::lex_string() {
    size_t begin = pos_++;
    while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n') ++pos_;
        ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '"') {
        ++pos_;
    } else {
        diags_.error(loc(begin), "unterminated string literal");
    }
    push(TokenKind::StringLiteral, begin);
}

/// Maximal munch over C's operators. Returns false when the character starts no operator.
bool Lexer::lex_punctuator() {
    using K = TokenKind;
    size_t begin = pos_;
    char c = peek(), n = peek(1), n2 = peek(2);
    auto one = [&](K k) { pos_ += 1; push(k, begin); return true; };
    auto two = [&](K k) { pos_ += 2; push(k, begin); return true; };
    auto three = [&](K k) { pos_ += 3; push(k, begin); return true; };
    switch (c) {
    case '(': return one(K::LParen);
    case ')': return one(K::RParen);
    case '[': return one(K::LBracket);
    case ']': return one(K::RBracket);
    case '{': return one(K::LBrace);
    case '}': return one(K::RBrace);
    case ';': return one(K::Semicolon);
    case ',': return one(K::Comma);
    case '.': return one(K::Dot);
    case '?': return one(K::Question);
    case '~': return one(K::Tilde);
    case ':': return n == ':' ? two(K::ColonColon) : one(K::Colon);
    case '+': return n == '+' ? two(K::PlusPlus) : n == '=' ? two(K::PlusAssign) : one(K::Plus);
    case '-':
        if (n == '-') return two(K::MinusMinus);
        if (n == '=') return two(K::MinusAssign);
        return n == '>' ? two(K::Arrow) : one(K::Minus);
    case '*': return n == '=' ? two(K::StarAssign) : one(K::Star);
    case '/': return n == '=' ? two(K::SlashAssign) : one(K::Slash);
    case '%': return n == '=' ? two(K::PercentAssign) : one(K::Percent);
    case '^': return n == '=' ? two(K::CaretAssign) : one(K::Caret);
    case '!': return n == '=' ? two(K::NotEqual) : one(K::Bang);
    case '=': return n == '=' ? two(K::EqualEqual) : one(K::Assign);
    case '&': return n == '&' ? two(K::AmpAmp) : n == '=' ? two(K::AmpAssign) : one(K::Amp);
    case '|': return n == '|' ? two(K::PipePipe) : n == '=' ? two(K::PipeAssign) : one(K::Pipe);
    case '<':
        if (n == '<') return n2 == '=' ? three(K::ShlAssign) : two(K::Shl);
        return n == '=' ? two(K::LessEqual) : one(K::Less);
    case '>':
        if (n == '>') return n2 == '=' ? three(K::ShrAssign) : two(K::Shr);
        return n == '=' ? two(K::GreaterEqual) : one(K::Greater);
    default: return false;
    }
}

/// Whether `c` can begin a token, a blank or a comment (used to end a run of junk bytes).
bool can_start_token(char c) {
    return c != '\0' && (is_ident_char(c) || std::strchr(" \t\r\n\f\v\"./#", c) ||
                         std::strchr("()[]{};,?~:+-*%^!=&|<>", c));
}

/// Reports a run of characters that start no token as one error (random bytes or a UTF-8
/// sequence would otherwise produce one error per byte) and skips it.
void Lexer::skip_unknown_characters() {
    size_t begin = pos_;
    unsigned char c = (unsigned char)text_[pos_];
    at_line_start_ = false;
    if (c == '\'') {
        // Skip the whole `'a'` so that its contents do not produce further errors.
        diags_.error(loc(begin), "character literals are not supported");
        size_t end = text_.find_first_of("'\n", pos_ + 1);
        pos_ = (end == std::string::npos || text_[end] == '\n') ? pos_ + 1 : end + 1;
        return;
    }
    std::string message;
    if (c >= 0x21 && c < 0x7f) {
        message = std::string("unexpected character '") + char(c) + "'";
    } else {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", c);
        message = std::string("unexpected byte ") + hex + " in source";
    }
    diags_.error(loc(begin), message);
    ++pos_;
    while (pos_ < text_.size() && !can_start_token(text_[pos_])) ++pos_;
}

}  // namespace

const char* token_kind_spelling(TokenKind kind) { return kTokenSpellings[int(kind)]; }

std::vector<Token> lex(const SourceFile& file, Diagnostics& diags) {
    return Lexer(file, diags).run();
}

// ---------------------------------------------------------------- literal decoding

// Digits are accumulated with an overflow check instead of strtoull, which would accept signs,
// blanks and locale-specific forms and could not tell "too large" from other failures.
IntLiteralValue decode_int_literal(std::string_view text) {
    IntLiteralValue out;
    int base = 10;
    size_t i = 0;
    if (text.size() >= 2 && text[0] == '0' && lower(text[1]) == 'x') base = 16, i = 2;
    else if (text.size() >= 2 && text[0] == '0' && lower(text[1]) == 'b') base = 2, i = 2;

    size_t digits_begin = i;
    bool overflow = false;
    auto is_base_digit = [&](char c) {
        return base == 16 ? is_hex_digit(c) : base == 2 ? (c == '0' || c == '1') : is_digit(c);
    };
    for (; i < text.size() && is_base_digit(text[i]); ++i) {
        uint64_t d = uint64_t(digit_value(text[i]));
        if (out.value > (UINT64_MAX - d) / uint64_t(base)) overflow = true;
        else out.value = out.value * uint64_t(base) + d;
    }
    size_t digit_count = i - digits_begin;
    out.suffix = text.substr(i);
    out.decimal = base == 10;

    if (digit_count == 0) {
        out.error = "missing digits after '" + std::string(text.substr(0, 2)) + "'";
    } else if (!out.suffix.empty() && is_digit(out.suffix[0])) {
        out.error = std::string("invalid digit '") + out.suffix[0] + "' in " +
                    (base == 2 ? "binary" : "hexadecimal") + " literal";
    } else if (std::string s = lowered(out.suffix);
               !(s.empty() || s == "u" || s == "l" || s == "ll" || s == "ul" || s == "lu" ||
                 s == "ull" || s == "llu")) {
        out.error = "invalid suffix '" + std::string(out.suffix) + "' on integer literal";
    } else if (base == 10 && digit_count > 1 && text[0] == '0') {
        // C would read this as octal; silently reading it as decimal would differ from slangc.
        out.error = "octal integer literals are not supported yet";
    } else if (overflow) {
        out.error = "integer literal is too large (it does not fit in 64 bits)";
    }
    if (!out.error.empty()) out.value = 0;
    return out;
}

FloatLiteralValue decode_float_literal(std::string_view text) {
    FloatLiteralValue out;
    size_t n = decimal_number_length(text);
    out.suffix = text.substr(n);
    std::string s = lowered(out.suffix);
    if (!(s.empty() || s == "f" || s == "h" || s == "l")) {
        out.error = "invalid suffix '" + std::string(out.suffix) + "' on floating-point literal";
        return out;
    }
    // from_chars is locale-independent (strtod would read `1,5` under some locales) and
    // correctly rounded, so the value is exactly what slangc computes for the same literal.
    auto [end, ec] = std::from_chars(text.data(), text.data() + n, out.value,
                                     std::chars_format::general);
    if (ec == std::errc::result_out_of_range) {
        out.error = "floating-point literal is out of range";
        out.value = 0;
    } else if (ec != std::errc() || end != text.data() + n) {
        out.error = "malformed floating-point literal";  // unreachable for lexer-made tokens
        out.value = 0;
    }
    return out;
}

std::string decode_string_literal(std::string_view text) {
    if (!text.empty() && text.front() == '"') text.remove_prefix(1);
    if (!text.empty() && text.back() == '"') text.remove_suffix(1);
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '\\' && i + 1 < text.size()) {
            c = text[++i];
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
        }
        out += c;
    }
    return out;
}

}  // namespace sg::lang
