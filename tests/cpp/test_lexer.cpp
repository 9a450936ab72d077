// tests/cpp/test_lexer.cpp — the lexer: tokens, literals, comments, preprocessor lines and
// lexical errors.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "syntax/lexer.h"
#include "syntax/parser.h"

namespace sg::lang {
namespace {

struct Lexed {
    SourceManager sources;
    Diagnostics diags;
    const SourceFile* file = nullptr;
    std::vector<Token> tokens;

    explicit Lexed(std::string text) {
        file = sources.add("m.slang", std::move(text));
        tokens = lex(*file, diags);
    }
    std::vector<TokenKind> kinds() const {
        std::vector<TokenKind> out;
        for (const Token& t : tokens) out.push_back(t.kind);
        return out;
    }
    std::string text(size_t i) const { return file->text.substr(tokens[i].offset, tokens[i].length); }
    std::string errors() const { return diags.render(); }
};

using K = TokenKind;

TEST(Lexer, OperatorsUseMaximalMunch) {
    Lexed l("<<= >>= << >> <= >= < > :: : -> ++ -- += -= *= /= %= &= |= ^= && || == != ! ~ ? .");
    EXPECT_EQ(l.kinds(),
              (std::vector<K>{K::ShlAssign, K::ShrAssign, K::Shl, K::Shr, K::LessEqual,
                              K::GreaterEqual, K::Less, K::Greater, K::ColonColon, K::Colon,
                              K::Arrow, K::PlusPlus, K::MinusMinus, K::PlusAssign,
                              K::MinusAssign, K::StarAssign, K::SlashAssign, K::PercentAssign,
                              K::AmpAssign, K::PipeAssign, K::CaretAssign, K::AmpAmp,
                              K::PipePipe, K::EqualEqual, K::NotEqual, K::Bang, K::Tilde,
                              K::Question, K::Dot, K::EndOfFile}));
    EXPECT_FALSE(l.diags.has_errors());
}

TEST(Lexer, AdjacentOperatorsWithoutSpaces) {
    Lexed l("a+++b;x>>=1;");
    EXPECT_EQ(l.kinds(), (std::vector<K>{K::Identifier, K::PlusPlus, K::Plus, K::Identifier,
                                         K::Semicolon, K::Identifier, K::ShrAssign,
                                         K::IntLiteral, K::Semicolon, K::EndOfFile}));
}

TEST(Lexer, CommentsAreSkippedAndOffsetsKept) {
    Lexed l("a // line comment\n/* block\n comment */ b/**/c");
    ASSERT_EQ(l.tokens.size(), 4u);
    EXPECT_EQ(l.text(0), "a");
    EXPECT_EQ(l.text(1), "b");
    EXPECT_EQ(l.text(2), "c");
    EXPECT_EQ(l.tokens[1].offset, l.file->text.find("b/**/"));
    EXPECT_EQ(l.tokens[3].kind, K::EndOfFile);
    EXPECT_EQ(l.tokens[3].offset, l.file->text.size());
}

TEST(Lexer, UnterminatedBlockCommentRunsToTheEndWithAWarning) {
    // As in Slang, which accepts it: the comment ends the file.
    Lexed l("a\n  /* never closed\nb c");
    EXPECT_EQ(l.kinds(), (std::vector<K>{K::Identifier, K::EndOfFile}));
    EXPECT_FALSE(l.diags.has_errors());
    EXPECT_NE(l.errors().find("m.slang:2:3: warning: unterminated block comment"), std::string::npos)
        << l.errors();
}

TEST(Lexer, KeywordsAndContextualWords) {
    Lexed l("if else for while do switch break continue return struct import static const "
            "true false var let in out inout no_diff float typedef property");
    std::vector<K> k = l.kinds();
    EXPECT_EQ(k[0], K::KwIf);
    EXPECT_EQ(k[13], K::KwTrue);
    EXPECT_EQ(k[14], K::KwFalse);
    EXPECT_EQ(k[20], K::KwNoDiff);
    // Type names and tier-2/3 words are identifiers; the parser gives them meaning.
    EXPECT_EQ(k[21], K::Identifier);
    EXPECT_EQ(k[22], K::Identifier);
    EXPECT_EQ(k[23], K::Identifier);
}

TEST(Lexer, IntegerLiteralValuesAndSuffixes) {
    struct Case {
        const char* text;
        uint64_t value;
        const char* suffix;
    } cases[] = {
        {"0", 0, ""},           {"42", 42, ""},          {"7u", 7, "u"},
        {"7U", 7, "U"},         {"8l", 8, "l"},          {"9ll", 9, "ll"},
        {"10ul", 10, "ul"},     {"11ULL", 11, "ULL"},    {"12lu", 12, "lu"},
        {"0x1F", 31, ""},       {"0XffU", 255, "U"},     {"0b101", 5, ""},
        {"0B11ull", 3, "ull"},  {"18446744073709551615", UINT64_MAX, ""},
        {"0xFFFFFFFFFFFFFFFF", UINT64_MAX, ""},
    };
    for (const Case& c : cases) {
        Lexed l(c.text);
        ASSERT_EQ(l.tokens[0].kind, K::IntLiteral) << c.text;
        EXPECT_EQ(l.tokens[0].length, std::string(c.text).size()) << c.text;
        EXPECT_FALSE(l.diags.has_errors()) << c.text << ": " << l.errors();
        IntLiteralValue v = decode_int_literal(c.text);
        EXPECT_EQ(v.value, c.value) << c.text;
        EXPECT_EQ(v.suffix, c.suffix) << c.text;
    }
}

TEST(Lexer, IntegerLiteralErrors) {
    struct Case {
        const char* text;
        const char* message;
    } cases[] = {
        {"18446744073709551616", "10012: integer literal is too large (it does not fit in 64 bits)"},
        {"0x10000000000000000", "10012: integer literal is too large"},
        {"0b102", "invalid digit '2' in binary literal"},
        {"0x", "missing digits after '0x'"},
        {"12abc", "invalid suffix 'abc' on integer literal"},
        {"5uu", "invalid suffix 'uu' on integer literal"},
        {"0123", "octal integer literals are not supported yet"},
    };
    for (const Case& c : cases) {
        Lexed l(std::string("x = ") + c.text + ";");
        // Errors with a Slang number read "error NNNNN: ...".
        std::string prefix = std::isdigit(static_cast<unsigned char>(c.message[0])) ? "m.slang:1:5: error " : "m.slang:1:5: error: ";
        EXPECT_NE(l.errors().find(prefix + c.message),
                  std::string::npos)
            << c.text << ":\n" << l.errors();
        EXPECT_EQ(l.tokens.size(), 5u) << c.text;  // the literal stays one token
    }
}

TEST(Lexer, FloatLiteralValuesAndSuffixes) {
    struct Case {
        const char* text;
        double value;
        const char* suffix;
    } cases[] = {
        {"1.0", 1.0, ""},      {"1.", 1.0, ""},       {".5", 0.5, ""},    {"1e-3", 1e-3, ""},
        {"1.5e+3f", 1500, "f"}, {"2.5F", 2.5, "F"},   {"0.25h", 0.25, "h"}, {"3.0l", 3.0, "l"},
        {"1E2", 100, ""},      {"6.02e23", 6.02e23, ""}, {"1.f", 1.0, "f"},
    };
    for (const Case& c : cases) {
        Lexed l(c.text);
        ASSERT_EQ(l.tokens[0].kind, K::FloatLiteral) << c.text;
        EXPECT_EQ(l.tokens.size(), 2u) << c.text;
        EXPECT_FALSE(l.diags.has_errors()) << c.text << ": " << l.errors();
        FloatLiteralValue v = decode_float_literal(c.text);
        EXPECT_DOUBLE_EQ(v.value, c.value) << c.text;
        EXPECT_EQ(v.suffix, c.suffix) << c.text;
    }
}

TEST(Lexer, FloatLiteralErrors) {
    EXPECT_NE(Lexed("1.5q").errors().find("invalid suffix 'q' on floating-point literal"),
              std::string::npos);
    EXPECT_NE(Lexed("1e999").errors().find("floating-point literal is out of range"),
              std::string::npos);
    // `1e` has no exponent digits: `e` is a (bad) suffix of the integer 1.
    EXPECT_NE(Lexed("1e").errors().find("invalid suffix 'e' on integer literal"),
              std::string::npos);
}

TEST(Lexer, MemberAccessAfterNumberAndDot) {
    // `.5` is a number, `.x` is member access; `a[1].x` must not lex `1.` as a float.
    Lexed l("a[1].x + .5");
    EXPECT_EQ(l.kinds(), (std::vector<K>{K::Identifier, K::LBracket, K::IntLiteral, K::RBracket,
                                         K::Dot, K::Identifier, K::Plus, K::FloatLiteral,
                                         K::EndOfFile}));
}

TEST(Lexer, PreprocessorDirectivesAreReportedAndSkipped) {
    Lexed l("#include \"a.slang\"\n  # pragma once\n#define X \\\n  1 + 2\nfloat y;");
    EXPECT_EQ(l.kinds(), (std::vector<K>{K::Identifier, K::Identifier, K::Semicolon,
                                         K::EndOfFile}));
    std::string e = l.errors();
    EXPECT_NE(e.find("m.slang:1:1: error: preprocessor directive '#include' is not supported yet"),
              std::string::npos) << e;
    EXPECT_NE(e.find("m.slang:2:3: error: preprocessor directive '#pragma' is not supported yet"),
              std::string::npos) << e;
    EXPECT_NE(e.find("m.slang:3:1: error: preprocessor directive '#define' is not supported yet"),
              std::string::npos) << e;
    EXPECT_EQ(l.diags.error_count(), 3u);
}

TEST(Lexer, HashInsideALineIsAnUnknownCharacter) {
    Lexed l("a # b");
    EXPECT_NE(l.errors().find("m.slang:1:3: error: unexpected character '#'"), std::string::npos);
    EXPECT_EQ(l.kinds(), (std::vector<K>{K::Identifier, K::Identifier, K::EndOfFile}));
}

TEST(Lexer, UnknownCharactersAreReportedOncePerRun) {
    using namespace std::string_literals;
    Lexed l("a @ b $$ c \xC3\xA9 d \0\0 e 'x' f"s);
    EXPECT_EQ(l.kinds(), (std::vector<K>{K::Identifier, K::Identifier, K::Identifier,
                                         K::Identifier, K::Identifier, K::Identifier,
                                         K::EndOfFile}));
    std::string e = l.errors();
    EXPECT_NE(e.find("1:3: error: unexpected character '@'"), std::string::npos) << e;
    EXPECT_NE(e.find("1:7: error: unexpected character '$'"), std::string::npos) << e;
    EXPECT_NE(e.find("unexpected byte 0xC3 in source"), std::string::npos) << e;
    EXPECT_NE(e.find("unexpected byte 0x00 in source"), std::string::npos) << e;
    EXPECT_NE(e.find("character literals are not supported"), std::string::npos) << e;
    EXPECT_EQ(l.diags.error_count(), 5u) << e;
}

TEST(Lexer, StringLiterals) {
    Lexed ok("import \"slangpy\";");
    EXPECT_EQ(ok.kinds(), (std::vector<K>{K::KwImport, K::StringLiteral, K::Semicolon,
                                          K::EndOfFile}));
    EXPECT_EQ(decode_string_literal(ok.text(1)), "slangpy");
    EXPECT_EQ(decode_string_literal("\"a\\\"b\\\\\""), "a\"b\\");
    Lexed bad("import \"slangpy;\nx");
    EXPECT_NE(bad.errors().find("m.slang:1:8: error: unterminated string literal"),
              std::string::npos);
    EXPECT_EQ(bad.tokens.back().kind, K::EndOfFile);
}

TEST(Lexer, ByteOrderMarkIsIgnored) {
    Lexed l("\xEF\xBB\xBF" "float x;");
    EXPECT_FALSE(l.diags.has_errors());
    EXPECT_EQ(l.tokens.size(), 4u);
}

TEST(Lexer, SourceLargerThanTheLimitIsRejected) {
    Lexed l(std::string(kMaxSourceBytes + 1, ' '));
    EXPECT_EQ(l.kinds(), (std::vector<K>{K::EndOfFile}));
    EXPECT_NE(l.errors().find("source file is too large"), std::string::npos);
}

TEST(Lexer, EveryTokenKindHasASpelling) {
    EXPECT_STREQ(token_kind_spelling(K::EndOfFile), "end of file");
    EXPECT_STREQ(token_kind_spelling(K::ShrAssign), ">>=");
    EXPECT_STREQ(token_kind_spelling(K::KwNoDiff), "no_diff");
}

}  // namespace
}  // namespace sg::lang
