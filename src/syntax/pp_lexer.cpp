// src/syntax/pp_lexer.cpp — splits a source file into preprocessing tokens.
#include "syntax/pp_internal.h"

namespace sg::lang::pp {

namespace {

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool ident_char(char c) { return ident_start(c) || digit(c); }

// Longest first within each length: maximal munch, so that a macro body's `+=` stays one token
// and the output never glues `-` `-` into `--`.
constexpr std::string_view kPunct3[] = {"<<=", ">>=", "..."};
constexpr std::string_view kPunct2[] = {"##", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
                                        "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="};
constexpr std::string_view kPunct1 = "()[]{};,.?~:+-*/%^!=&|<>#";

}  // namespace

std::vector<Token> lex_file(const SourceFile* file, Diagnostics& diags) {
    const std::string& s = file->text;
    const size_t n = s.size();
    std::vector<Token> out;
    out.reserve(n / 4 + 8);
    size_t i = 0;
    bool line_start = true, space = false;
    if (s.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;
    auto push = [&](Kind kind, size_t begin) {
        Token t;
        t.text = std::string_view(s).substr(begin, i - begin);
        t.file = file;
        t.offset = uint32_t(begin);
        t.index = uint32_t(out.size());
        t.kind = kind;
        t.line_start = line_start;
        t.space_before = space;
        out.push_back(t);
        line_start = space = false;
    };
    while (i < n) {
        char c = s[i];
        if (c == '\n') {
            line_start = true, space = true, ++i;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            space = true, ++i;
        } else if (c == '\\' && (i + 1 < n && (s[i + 1] == '\n' || (s[i + 1] == '\r' && i + 2 < n && s[i + 2] == '\n')))) {
            i += s[i + 1] == '\n' ? 2 : 3;  // a line splice: the logical line goes on
            space = true;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            // A `//` comment ends at the newline, except one spliced with a backslash.
            while (i < n && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') ++i;
                ++i;
            }
            space = true;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            size_t end = s.find("*/", i + 2);
            if (end == std::string::npos) {
                // Slang accepts it silently: the comment runs to the end of the file.
                diags.warning({file, uint32_t(i)}, "unterminated block comment: it runs to the end of the file");
                i = n;
            } else {
                // A comment spanning lines ends the line it started on, as a newline would.
                if (s.find('\n', i) < end) line_start = true;
                i = end + 2;
            }
            space = true;
        } else if (ident_start(c)) {
            size_t b = i;
            while (i < n && ident_char(s[i])) ++i;
            push(Kind::Identifier, b);
        } else if (digit(c) || (c == '.' && i + 1 < n && digit(s[i + 1]))) {
            // pp-number: digits, letters, `_`, `.`, and a sign right after an exponent letter.
            size_t b = i++;
            while (i < n) {
                char d = s[i];
                if ((d == '+' || d == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E')) ++i;
                else if (ident_char(d) || d == '.') ++i;
                else break;
            }
            push(Kind::Number, b);
        } else if (c == '"') {
            size_t b = i++;
            while (i < n && s[i] != '"' && s[i] != '\n') i += (s[i] == '\\' && i + 1 < n && s[i + 1] != '\n') ? 2 : 1;
            if (i < n && s[i] == '"') ++i;  // an unterminated string is the lexer's to report
            push(Kind::String, b);
        } else {
            size_t b = i;
            std::string_view rest = std::string_view(s).substr(i);
            size_t len = 0;
            for (auto p : kPunct3)
                if (!len && rest.substr(0, 3) == p) len = 3;
            for (auto p : kPunct2)
                if (!len && rest.substr(0, 2) == p) len = 2;
            if (!len && kPunct1.find(c) != std::string_view::npos) len = 1;
            i += len ? len : 1;
            push(len ? Kind::Punct : Kind::Other, b);
        }
    }
    return out;
}

}  // namespace sg::lang::pp
