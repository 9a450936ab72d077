// src/syntax/pp_internal.h — the preprocessor's own tokens, macros and expander (preprocessor*.cpp
// and pp_*.cpp only).
//
// Preprocessing tokens are coarser than the lexer's: identifiers, pp-numbers, strings,
// punctuators and single other bytes. Each keeps its spelling location (file and offset) and
// its place in its file's token list, so the output can copy untouched runs of source verbatim.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "syntax/diagnostics.h"

namespace sg::lang::pp {

enum class Kind : uint8_t { Identifier, Number, String, Punct, Other };

struct Macro;

/// The macros a token came out of: it is not expanded again by any of them (C's hide set).
struct HideSet {
    const Macro* macro;
    const HideSet* next;
};

inline constexpr uint32_t kNoIndex = UINT32_MAX;

struct Token {
    std::string_view text;            ///< into the file's text, or the expander's arena
    const SourceFile* file = nullptr;  ///< spelling location
    uint32_t offset = 0;
    uint32_t index = kNoIndex;        ///< position in its file's token list; kNoIndex when made
    Kind kind = Kind::Other;
    bool line_start = false;          ///< first token of a line (a `#` there starts a directive)
    bool space_before = false;
    bool synthesized = false;         ///< made by `#` or `##`: its text is not at its location
    bool no_expand = false;           ///< named an active macro when it was seen: stays as it is
    const HideSet* hide = nullptr;

    bool is(std::string_view s) const { return kind == Kind::Punct && text == s; }
    SourceLoc loc() const { return {file, offset}; }
};

/// Splits `file` into preprocessing tokens (comments dropped, unterminated block comments
/// reported).
std::vector<Token> lex_file(const SourceFile* file, Diagnostics& diags);

struct Macro {
    std::string name;
    SourceLoc loc;
    bool function_like = false;
    bool variadic = false;            ///< the last parameter is `__VA_ARGS__` (or `name...`)
    std::vector<std::string> params;
    std::vector<Token> body;
};

/// Macro table and expansion of token runs (pp_macro.cpp).
class Expander {
public:
    explicit Expander(Diagnostics& diags) : diags_(diags) {}

    const Macro* find(std::string_view name) const;
    void define(std::unique_ptr<Macro> m);
    void undefine(std::string_view name);

    /// Expands every macro in `in`. In `#if` mode, `defined X` / `defined(X)` become 1 or 0.
    std::vector<Token> expand(std::vector<Token> in, bool if_mode);
    /// Keeps `text` alive for the expander's lifetime and returns a view of it.
    std::string_view keep(std::string text);

private:
    void expand_into(std::vector<Token>& stack, std::vector<Token>& out, bool if_mode, int depth);
    bool expand_function(const Macro& m, const Token& name, std::vector<Token>& stack, int depth);
    void substitute(const Macro& m, const Token& name, const std::vector<std::vector<Token>>& args,
                    std::vector<Token>& result, int depth);
    const HideSet* hide_with(const HideSet* hide, const Macro* m);
    bool budget_exceeded(const Token& at);

    Diagnostics& diags_;
    std::map<std::string, std::unique_ptr<Macro>, std::less<>> macros_;
    std::vector<std::unique_ptr<Macro>> retired_;  ///< undefined macros (hide sets point at them)
    std::deque<std::string> arena_;
    std::deque<HideSet> hide_sets_;
    size_t made_ = 0;                              ///< tokens made by expansion so far
    bool budget_reported_ = false;
};

/// Evaluates a `#if` expression of already-expanded tokens (pp_expr.cpp). Unknown identifiers
/// are 0 with warning 15205. Returns false and reports an error when it is malformed.
bool evaluate_condition(const std::vector<Token>& tokens, SourceLoc directive, Diagnostics& diags, bool& value);

}  // namespace sg::lang::pp
