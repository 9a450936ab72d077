// src/syntax/lexer.h — tokens of the kernel language and the lexer that produces them.
//
// In: one SourceFile. Out: a vector of Tokens (kind, byte offset, length) ending with exactly
// one EndOfFile token; comments and whitespace are dropped. Lexical errors (unknown characters,
// unterminated comments or strings, bad literal digits or suffixes, integer literals wider than
// 64 bits, preprocessor directives) are reported to Diagnostics and the offending text is
// skipped, so the token stream is always usable by the parser.
//
// Tokens do not store literal values: the parser decodes a literal's text with the decode_*
// functions below when it builds the node. The lexer calls the same functions to validate, so
// the parser never sees a malformed literal it would have to report again.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "syntax/diagnostics.h"

namespace sg::lang {

/// Largest source file accepted, in bytes (the lexer, the preprocessor and the parser check it).
/// Every kernel compilation parses and checks the whole user module, at about 5 MB/s (parse +
/// sema, measured by tests/cpp/test_limits.cpp), so 2 MiB (some 75,000 lines of kernel code, far
/// beyond real modules) keeps that under half a second, and anything larger — a 10 MB file —
/// gets one diagnostic at once instead of seconds of work.
inline constexpr size_t kMaxSourceBytes = 2u << 20;

// One list of token kinds: X(Name, spelling). The spelling is what diagnostics print.
#define SG_TOKEN_KINDS(X)                                                                      \
    X(EndOfFile, "end of file")                                                                \
    X(Identifier, "identifier")                                                                \
    X(IntLiteral, "integer literal")                                                           \
    X(FloatLiteral, "floating-point literal")                                                  \
    X(StringLiteral, "string literal")                                                         \
    /* punctuators */                                                                          \
    X(LParen, "(") X(RParen, ")") X(LBracket, "[") X(RBracket, "]") X(LBrace, "{")             \
    X(RBrace, "}") X(Semicolon, ";") X(Comma, ",") X(Dot, ".") X(Colon, ":")                   \
    X(ColonColon, "::") X(Question, "?") X(Arrow, "->")                                        \
    X(Plus, "+") X(Minus, "-") X(Star, "*") X(Slash, "/") X(Percent, "%") X(Amp, "&")          \
    X(Pipe, "|") X(Caret, "^") X(Tilde, "~") X(Bang, "!") X(Assign, "=") X(Less, "<")          \
    X(Greater, ">") X(PlusAssign, "+=") X(MinusAssign, "-=") X(StarAssign, "*=")               \
    X(SlashAssign, "/=") X(PercentAssign, "%=") X(AmpAssign, "&=") X(PipeAssign, "|=")         \
    X(CaretAssign, "^=") X(ShlAssign, "<<=") X(ShrAssign, ">>=") X(EqualEqual, "==")           \
    X(NotEqual, "!=") X(LessEqual, "<=") X(GreaterEqual, ">=") X(AmpAmp, "&&")                 \
    X(PipePipe, "||") X(Shl, "<<") X(Shr, ">>") X(PlusPlus, "++") X(MinusMinus, "--")          \
    /* reserved words; everything else (float, typedef, property, ...) is an Identifier */     \
    X(KwIf, "if") X(KwElse, "else") X(KwFor, "for") X(KwWhile, "while") X(KwDo, "do")          \
    X(KwSwitch, "switch") X(KwBreak, "break") X(KwContinue, "continue")                        \
    X(KwReturn, "return") X(KwStruct, "struct") X(KwImport, "import") X(KwStatic, "static")    \
    X(KwConst, "const") X(KwTrue, "true") X(KwFalse, "false") X(KwVar, "var") X(KwLet, "let")  \
    X(KwIn, "in") X(KwOut, "out") X(KwInOut, "inout") X(KwNoDiff, "no_diff")

enum class TokenKind : uint8_t {
#define SG_TOKEN_ENUM(name, spelling) name,
    SG_TOKEN_KINDS(SG_TOKEN_ENUM)
#undef SG_TOKEN_ENUM
};

/// How diagnostics name a token kind: "identifier", "(", "if", "end of file".
const char* token_kind_spelling(TokenKind kind);

/// One token. 12 bytes, because a 10 MB source produces millions of them.
struct Token {
    TokenKind kind = TokenKind::EndOfFile;
    uint32_t offset = 0;  ///< byte offset of the first character in the source text
    uint32_t length = 0;  ///< bytes of source text covered (0 for EndOfFile)
};
static_assert(sizeof(Token) == 12, "keep tokens small: large files produce millions");

/// Tokenizes `file`. Sources larger than kMaxSourceBytes (parser.h) produce one diagnostic and
/// only the EndOfFile token. May throw CompileError when Diagnostics hits its error limit.
std::vector<Token> lex(const SourceFile& file, Diagnostics& diags);

// ---------------------------------------------------------------- literal decoding

/// A decoded integer literal (`42`, `0xFFu`, `0b101ull`).
struct IntLiteralValue {
    uint64_t value = 0;
    std::string_view suffix;   ///< as written: "", "u", "l", "ll", "ul", "ull", "LU", ...
    bool decimal = true;       ///< false for 0x and 0b literals
    std::string error;         ///< empty when the literal is valid
};

/// A decoded floating-point literal (`1.0`, `1.`, `.5`, `1e-3`, `1.5e+3f`).
struct FloatLiteralValue {
    double value = 0;
    std::string_view suffix;   ///< as written: "", "f", "h", "l" (either case)
    std::string error;         ///< empty when the literal is valid
};

/// Decodes the text of an IntLiteral token. Never throws; problems are described in `error`.
IntLiteralValue decode_int_literal(std::string_view text);
/// Decodes the text of a FloatLiteral token. Never throws; problems are described in `error`.
FloatLiteralValue decode_float_literal(std::string_view text);
/// The contents of a StringLiteral token (quotes removed, `\"` `\\` `\n` `\t` unescaped).
std::string decode_string_literal(std::string_view text);

}  // namespace sg::lang
