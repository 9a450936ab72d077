// tests/cpp/test_parser_errors.cpp — the parser on bad input: syntax errors with locations,
// recovery, tier-2/3 constructs reported as "not supported yet", resource limits (deep nesting,
// 10 MB sources) and robustness against random and truncated input.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "parser_test_util.h"

// Timing bounds are asserted tightly only in optimized builds without sanitizers; instrumented
// builds are 10-50x slower and run these tests for memory safety, not speed.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SG_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SG_TEST_SANITIZED 1
#endif
#endif
#if defined(NDEBUG) && !defined(SG_TEST_SANITIZED)
#define SG_TEST_OPTIMIZED 1
#endif

namespace sg::lang::test {
namespace {

#ifdef SG_TEST_OPTIMIZED
constexpr double kQuickMs = 1000;
#else
constexpr double kQuickMs = 5000;
#endif

size_t count_of(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

// ---------------------------------------------------------------- syntax errors and recovery

TEST(ParserErrors, ErrorIsRenderedWithFileLineColumnAndCaret) {
    Parsed p("void f()\n{\n  a = );\n}\n");
    EXPECT_EQ(p.errors(),
              "m.slang:3:7: error: expected an expression, found ')'\n"
              "      a = );\n"
              "          ^\n");
}

TEST(ParserErrors, MissingSemicolonNamesTheTokenFound) {
    EXPECT_TRUE(contains(errors_of("void f() {\n  x = 1\n  return x;\n}"),
                         "m.slang:3:3: error: expected ';', found 'return'"));
    EXPECT_TRUE(contains(errors_of("float f(float x) { return x; }\nfloat g"),
                         "m.slang:2:8: error: expected ';', found end of file"));
    EXPECT_TRUE(contains(errors_of("void f() { x = 1;"),
                         "m.slang:1:18: error: expected '}', found end of file"));
    EXPECT_TRUE(contains(errors_of("void f() { for (int i = 0; i < 3) {} }"),
                         "1:33: error: expected ';', found ')'"));
    EXPECT_TRUE(contains(errors_of("void f() { x = a.; }"),
                         "1:18: error: expected a member name, found ';'"));
    EXPECT_TRUE(contains(errors_of("void f() { x = t[]; }"),
                         "1:18: error: expected an index, found ']'"));
}

TEST(ParserErrors, MissingSemicolonAtTheEndOfALineGetsANoteThere) {
    // The error stays at the next token, as slangc reports it (tests/lang/errors/
    // syntax_missing_semicolon.slang); the note points at where the ';' belongs.
    Parsed p("float f(float x)\n{\n    float y = x * 2.0\n    return y;\n}\n");
    EXPECT_EQ(p.errors(),
              "m.slang:4:5: error: expected ';', found 'return'\n"
              "        return y;\n"
              "        ^\n"
              "m.slang:3:22: note: the ';' is missing at the end of this line\n"
              "        float y = x * 2.0\n"
              "                         ^\n");
    // On one line, the token found is where the ';' belongs: no note.
    EXPECT_FALSE(contains(errors_of("void f() { x = 1 return x; }"), "note:"));
}

TEST(ParserErrors, SeveralErrorsInOneFileAreAllReported) {
    Parsed p("float f(float x) { return x +; }\n"
             "float g(float x) { float y = ; return y; }\n"
             "struct S { float a; int ; };\n"
             "float h(float x) { return x * 2; }\n");
    EXPECT_EQ(p.diags.error_count(), 3u) << p.errors();
    EXPECT_TRUE(contains(p.errors(), "m.slang:1:30: error: expected an expression, found ';'"));
    EXPECT_TRUE(contains(p.errors(), "m.slang:2:30: error: expected an expression, found ';'"));
    EXPECT_TRUE(contains(p.errors(), "m.slang:3:25: error: expected a variable name, found ';'"));
    // Everything around the errors is still there.
    ASSERT_EQ(p.module->decls.size(), 4u);
    EXPECT_EQ(p.module->decls[2]->structure->fields.size(), 1u);
    const FunctionDecl* h = p.function(2);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(print_stmt(*h->body), "(block\n  (return (* x 2)))\n");
}

TEST(ParserErrors, RecoveryInsideABlockKeepsTheFollowingStatements) {
    Parsed p("void f() {\n  a = ;\n  b = 1;\n  c = (;\n  if (x { y = 2; }\n  d = 2;\n}");
    EXPECT_EQ(p.diags.error_count(), 3u) << p.errors();
    ASSERT_EQ(p.body().size(), 2u);
    EXPECT_EQ(print_stmt(*p.body()[0]), "(expr (= b 1))\n");
    EXPECT_EQ(print_stmt(*p.body()[1]), "(expr (= d 2))\n");
}

TEST(ParserErrors, RecoveryAtTopLevel) {
    // (`float f(float x, )` is valid: a trailing comma; two commas leave a parameter out.)
    Parsed p("}\nfloat f(float x, , ) { return x; }\n) ] 3;\nint g() { return 1; }\n");
    EXPECT_GE(p.diags.error_count(), 3u) << p.errors();
    EXPECT_TRUE(contains(p.errors(), "m.slang:1:1: error: expected a declaration, found '}'"));
    EXPECT_TRUE(contains(p.errors(), "m.slang:2:18: error: expected a type, found ','"));
    ASSERT_NE(p.function(0), nullptr);
    EXPECT_EQ(p.function(0)->name, "g");
}

TEST(ParserErrors, ElseWithoutIfAndStringOutsideImport) {
    EXPECT_TRUE(contains(errors_of("void f() { else x = 1; }"),
                         "1:12: error: 'else' without a matching 'if'"));
    EXPECT_TRUE(contains(errors_of("void f() { x = \"s\"; }"),
                         "1:16: error: string literals are only allowed in 'import' declarations"));
}

TEST(ParserErrors, ModifiersInTheWrongPlace) {
    EXPECT_TRUE(contains(errors_of("void f() { out float x = 1; }"),
                         "1:12: error: parameter direction modifiers are only allowed on parameters"));
    EXPECT_TRUE(contains(errors_of("void f(static float x) {}"),
                         "1:8: error: 'static' is not allowed on a parameter"));
    EXPECT_TRUE(contains(errors_of("void f(in in float x) {}"),
                         "1:11: error: duplicate modifier 'in'"));
    EXPECT_TRUE(contains(errors_of("const float f() { return 1; }"),
                         "1:1: error: 'const' is not allowed on a function"));
}

TEST(ParserErrors, ExplicitGenericArgumentsAreParsed) {
    // Tier 2: `g<4>(x)` and `h<float, 2>(z)` are calls with explicit generic arguments, not
    // comparisons; sema resolves them (tests/lang/generics).
    Parsed p("void f() {\n  y = g<4>(x) + h<float, 2>(z);\n}");
    EXPECT_EQ(p.diags.error_count(), 0u) << p.errors();
    EXPECT_EQ(print_stmt(*p.body()[0]), "(expr (= y (+ (call g x) (call h z))))\n");
    const Expr* sum = p.body()[0]->expr->operands[1];
    const Expr* g = sum->operands[0]->operands[0];
    const Expr* h = sum->operands[1]->operands[0];
    ASSERT_TRUE(g->type_expr && h->type_expr);
    EXPECT_EQ(g->type_expr->arg_is_value, std::vector<bool>({true}));
    EXPECT_EQ(h->type_expr->arg_is_value, std::vector<bool>({false, true}));
}

// ---------------------------------------------------------------- tier-2/3 constructs

TEST(ParserErrors, UnsupportedDeclarationsAreReportedAndSkipped) {
    struct Case {
        const char* source;
        const char* message;
    } cases[] = {
        {"namespace N { float f() { return 1; } }", "'namespace' is not supported yet"},
        {"class C { float x; };", "'class' is not supported yet"},
        {"cbuffer C { float x; };", "'cbuffer' is not supported yet"},
        {"template<typename T> T f(T x) { return x; }", "'template' is not supported yet"},
        {"inline float f() { return 1; }", "1:1: error: 'inline' modifier is not supported yet"},
        {"void f(float x : SV_Position) {}", "1:16: error: semantic annotation is not supported yet"},
        {"void f() { float a[] = {1, 2}; }", "1:19: error: unsized array is not supported yet"},
        {"void f() { struct L { float a; }; }",
         "1:12: error: local struct declaration is not supported yet"},
        {"void f() { x = 1; } [shader(\"compute\")] void g() {}",
         "string literals are only allowed in 'import' declarations"},
    };
    for (const Case& c : cases) {
        Parsed p(std::string(c.source) + "\nfloat ok(float x) { return x; }");
        EXPECT_EQ(p.diags.error_count(), 1u) << c.source << "\n" << p.errors();
        EXPECT_TRUE(contains(p.errors(), c.message)) << c.source << "\n" << p.errors();
        ASSERT_FALSE(p.module->decls.empty());
        const Decl* last = p.module->decls.back();
        ASSERT_EQ(last->kind, DeclKind::Function) << c.source;
        EXPECT_EQ(last->function->name, "ok") << c.source;
    }
    Parsed p("class C { float x; };");
    ASSERT_EQ(p.module->decls.size(), 1u);
    EXPECT_EQ(p.module->decls[0]->kind, DeclKind::Unsupported);
}

TEST(ParserErrors, UnsupportedStructMembersAreSkippedAndFieldsKept) {
    struct Case {
        const char* members;
        const char* message;
    } cases[] = {
        {"associatedtype T;", "'associatedtype' declares a requirement of an interface"},
        {"static float k;", "a static struct member that is not 'static const' is not supported yet"},
    };
    for (const Case& c : cases) {
        Parsed p(std::string("struct S {\n  float x;\n  ") + c.members + "\n  float y;\n};");
        EXPECT_EQ(p.diags.error_count(), 1u) << c.members << "\n" << p.errors();
        EXPECT_TRUE(contains(p.errors(), std::string("m.slang:3:") )) << p.errors();
        EXPECT_TRUE(contains(p.errors(), c.message)) << c.members << "\n" << p.errors();
        ASSERT_EQ(p.module->decls.size(), 1u);
        const StructDecl* s = p.module->decls[0]->structure;
        ASSERT_EQ(s->fields.size(), 2u) << c.members;
        EXPECT_EQ(s->fields[1]->name, "y");
    }
}

// A struct declared in a struct is a module struct `S.Inner`, after S, and S gets a member alias
// `Inner` for it (parser_nested_types.cpp); in a generic struct it is generic over its parameters.
TEST(ParserErrors, NestedStructIsAModuleStructAndAMemberAlias) {
    Parsed p("struct S {\n  float x;\n  struct Inner { float a; struct Deep { int k; }; };\n  float y;\n};");
    EXPECT_EQ(p.diags.error_count(), 0u) << p.errors();
    ASSERT_EQ(p.module->decls.size(), 3u);
    const StructDecl* s = p.module->decls[0]->structure;
    ASSERT_EQ(s->fields.size(), 2u);
    ASSERT_EQ(s->type_aliases.size(), 1u);
    EXPECT_EQ(s->type_aliases[0]->name, "Inner");
    EXPECT_EQ(s->type_aliases[0]->type_expr->name, "S.Inner");
    std::set<std::string> names;
    for (const Decl* d : p.module->decls) names.insert(d->structure->name);
    EXPECT_EQ(names, (std::set<std::string>{"S", "S.Inner", "S.Inner.Deep"}));
    // In a generic struct: the inner struct is generic over B's parameters, `Item` is `B.Item<T>`.
    Parsed g("struct B<T, let N : int> {\n  struct Item { T v[N]; };\n  float y;\n};");
    EXPECT_EQ(g.diags.error_count(), 0u) << g.errors();
    ASSERT_EQ(g.module->decls.size(), 2u);
    const StructDecl* b = g.module->decls[0]->structure;
    const StructDecl* item = g.module->decls[1]->structure;
    EXPECT_EQ(item->name, "B.Item");
    ASSERT_EQ(item->generic_params.size(), 2u);
    EXPECT_EQ(item->generic_params[1].name, "N");
    ASSERT_EQ(b->type_aliases.size(), 1u);
    const TypeExpr* alias = b->type_aliases[0]->type_expr;
    EXPECT_EQ(alias->name, "B.Item");
    EXPECT_EQ(alias->arg_is_value, (std::vector<bool>{false, true}));
    Parsed deep("struct B<T> {\n  struct Item { struct Deep { T v; }; };\n};");
    EXPECT_TRUE(contains(deep.errors(), "m.slang:2:17")) << deep.errors();
    EXPECT_TRUE(contains(deep.errors(), "declared in a generic struct is not supported yet")) << deep.errors();
    Parsed i("interface I {\n  struct Item { float v; };\n};");
    EXPECT_TRUE(contains(i.errors(), "m.slang:2:3")) << i.errors();
    EXPECT_TRUE(contains(i.errors(), "a struct cannot be declared in an interface")) << i.errors();
}

// `property` and `__subscript` members become accessor methods (parser_accessors.cpp).
TEST(ParserErrors, AccessorMembersBecomeMethods) {
    Parsed p("struct S {\n  float x;\n  property float p { get { return x; } set { x = newValue; } }\n"
             "  __subscript(int i) -> float { get { return x; } }\n  float y;\n};");
    EXPECT_EQ(p.diags.error_count(), 0u) << p.errors();
    ASSERT_EQ(p.module->decls.size(), 1u);
    const StructDecl* s = p.module->decls[0]->structure;
    ASSERT_EQ(s->fields.size(), 2u);
    ASSERT_EQ(s->methods.size(), 3u);
    EXPECT_EQ(s->methods[0]->member_name, "__get_p");
    EXPECT_EQ(s->methods[1]->member_name, "__set_p");
    ASSERT_EQ(s->methods[1]->params.size(), 1u);
    EXPECT_EQ(s->methods[1]->params[0]->name, "newValue");
    EXPECT_NE(find_attribute(s->methods[1]->attrs, "mutating"), nullptr);
    EXPECT_EQ(s->methods[2]->member_name, "__subscript_get");
    ASSERT_EQ(s->methods[2]->params.size(), 1u);
}

TEST(ParserErrors, GenericMemberFunctionsParse) {
    Parsed p("struct S {\n  float x;\n  T f<T : IFloat>(T v) { return v; }\n  float y;\n};");
    EXPECT_EQ(p.diags.error_count(), 0u) << p.errors();
    ASSERT_EQ(p.module->decls.size(), 1u);
    const StructDecl* s = p.module->decls[0]->structure;
    ASSERT_EQ(s->methods.size(), 1u);
    ASSERT_EQ(s->methods[0]->generic_params.size(), 1u);
    EXPECT_EQ(s->methods[0]->generic_params[0].constraint, "IFloat");
    EXPECT_EQ(s->fields.size(), 2u);
}

TEST(ParserErrors, ContextualKeywordsStayUsableAsNamesInFunctions) {
    Parsed p("void f() { property = 1; float class = enum + 1; }");
    EXPECT_FALSE(p.diags.has_errors()) << p.errors();
    EXPECT_EQ(p.body().size(), 2u);
}

// ---------------------------------------------------------------- resource limits

std::string nested(const std::string& open, const std::string& middle, const std::string& close,
                   int depth) {
    std::string out;
    out.reserve((open.size() + close.size()) * size_t(depth) + middle.size());
    for (int i = 0; i < depth; ++i) out += open;
    out += middle;
    for (int i = 0; i < depth; ++i) out += close;
    return out;
}

TEST(ParserLimits, HundredThousandParenthesesGiveOneDiagnosticQuickly) {
    auto start = std::chrono::steady_clock::now();
    Parsed p("float f() { return " + nested("(", "1", ")", 100000) + "; }\n"
             "float g() { return 2; }\n");
    double ms = milliseconds_since(start);
    EXPECT_LT(ms, 1000.0);
    EXPECT_EQ(p.diags.error_count(), 1u) << p.errors().substr(0, 2000);
    EXPECT_TRUE(contains(p.errors(), "error: nesting too deep (limit 256)"));
    // The offending declaration is skipped; the next one parses.
    ASSERT_NE(p.function(0), nullptr);
    EXPECT_EQ(p.function(0)->name, "g");
}

TEST(ParserLimits, EveryKindOfDeepNestingIsCaught) {
    const int kDeep = 100000;
    std::string else_ifs;
    for (int i = 0; i < kDeep; ++i) else_ifs += "if (x) y; else ";
    std::string chain = "1";
    for (int i = 0; i < kDeep; ++i) chain += "+1";
    std::string sources[] = {
        "void f() " + nested("{", "", "}", kDeep),
        "float f() { return " + nested("-", "1", "", kDeep) + "; }",
        "float f() { return " + nested("!", "1", "", kDeep) + "; }",
        "float f() { return " + nested("no_diff ", "1", "", kDeep) + "; }",
        "float f() { return " + chain + "; }",
        "void f() { " + nested("a = ", "1", "", kDeep) + "; }",
        "void f() { x = " + nested("a ? b : ", "c", "", kDeep) + "; }",
        "void f(" + nested("vector<", "float", ">", kDeep) + " x) {}",
        "void f() { " + else_ifs + "z; }",
        "void f() { x = " + nested("{", "1", "}", kDeep) + "; }",
        "void f() { x = " + nested("g(", "1", ")", kDeep) + "; }",
        "void f() { x = " + nested("a[", "1", "]", kDeep) + "; }",
        "void f() { x = a" + nested("[0]", "", "", kDeep) + "; }",
        "void f() { x = a" + nested(".b", "", "", kDeep) + "; }",
        "void f() { x = f" + nested("()", "", "", kDeep) + "; }",
        "void f() { x = a" + nested(", a", "", "", kDeep) + "; }",
        "void f() { x = " + nested("(float)", "1", "", kDeep) + "; }",
        "float f[" + nested("(", "1", ")", kDeep) + "];",
        "[A(" + nested("(", "1", ")", kDeep) + ")] void f() {}",
        "void f() { while (x) " + nested("for (;;) ", ";", "", kDeep) + " }",
    };
    for (const std::string& source : sources) {
        auto start = std::chrono::steady_clock::now();
        Parsed p(source + "\nint ok() { return 1; }");
        EXPECT_LT(milliseconds_since(start), kQuickMs) << source.substr(0, 40);
        EXPECT_EQ(p.diags.error_count(), 1u) << source.substr(0, 40) << "\n"
                                             << p.errors().substr(0, 1000);
        EXPECT_EQ(count_of(p.errors(), "nesting too deep (limit 256)"), 1u) << source.substr(0, 40);
        ASSERT_NE(p.function(0), nullptr) << source.substr(0, 40);
        EXPECT_EQ(p.function(0)->name, "ok") << source.substr(0, 40);
    }
}

TEST(ParserLimits, NestingBelowTheLimitIsFine) {
    Parsed p("float f() { return " + nested("(", "1", ")", 200) + "; }\n"
             "void g() " + nested("{", "x = 1;", "}", 100) + "\n"
             "float h() { return " + nested("-", "1", "", 200) + "; }");
    EXPECT_FALSE(p.diags.has_errors()) << p.errors().substr(0, 1000);
    EXPECT_EQ(p.module->decls.size(), 3u);
    EXPECT_FALSE(p.ast().empty());  // the printer copes with the depth too
}

// A long flat sequence is not nesting: 100,000 statements or list elements are fine.
TEST(ParserLimits, WideInputIsNotNesting) {
    std::string statements, elements;
    for (int i = 0; i < 100000; ++i) statements += "x += 1;\n";
    for (int i = 0; i < 100000; ++i) elements += "1, ";
    Parsed p("void f() {\n" + statements + "}\nstatic const float K[100000] = {" + elements + "};");
    EXPECT_FALSE(p.diags.has_errors()) << p.errors().substr(0, 1000);
    EXPECT_EQ(p.body().size(), 100000u);
    EXPECT_EQ(p.module->decls[1]->globals[0]->init->operands.size(), 100000u);
}

TEST(ParserLimits, TenMegabyteSourceParsesQuickly) {
    const std::string kernel =
        "// a dense kernel, repeated\n"
        "[Differentiable]\n"
        "void linear(int r, IDiffTensor<float, 2> W, IDiffTensor<float, 1> bias, "
        "IDiffTensor<float, 1> x, IWDiffTensor<float, 1> y)\n"
        "{\n"
        "    float s = bias[r];\n"
        "    [MaxIters(64)]\n"
        "    for (uint c = 0; c < W.shape[1]; c++)\n"
        "        s += W[r, c] * x[c];\n"
        "    y[r] = s > 0.0f ? s : 0.01f * s;\n"
        "}\n";
    // Just under the source size limit (parser.h); a larger file is refused (test_limits.cpp).
    const size_t kBytes = sg::lang::kMaxSourceBytes - 4096;
    std::string source = "import slangpy;\n";
    source.reserve(kBytes + kernel.size());
    size_t copies = 0;
    while (source.size() < kBytes) {
        source += kernel;
        ++copies;
    }
    auto start = std::chrono::steady_clock::now();
    Parsed p(source);
    double ms = milliseconds_since(start);
    EXPECT_FALSE(p.diags.has_errors()) << p.errors().substr(0, 1000);
    EXPECT_EQ(p.module->decls.size(), copies + 1);
    std::printf("[ info     ] %zu MB source (%zu kernels) parsed in %.0f ms\n", kBytes >> 20, copies,
                ms);
    // The time is reported, not asserted (tests never assert timings): bench_frontend measures
    // the front end's speed. About 0.4 s on an idle machine, dominated by ~2.5 million AST nodes.
}

// ---------------------------------------------------------------- robustness

/// Parses arbitrary text; the only acceptable outcomes are a module or CompileError (the error
/// limit). Anything else (a crash, a hang, another exception) fails the test.
void parse_anything(const std::string& text) {
    try {
        Parsed p(text);
        ASSERT_NE(p.module, nullptr);
        (void)p.ast();
    } catch (const CompileError&) {
    }
}

TEST(ParserRobustness, RandomBytes) {
    std::mt19937 rng(12345);
    for (int i = 0; i < 3000; ++i) {
        std::string text(rng() % 300, '\0');
        for (char& c : text) c = char(rng() % 256);
        parse_anything(text);
        if (HasFatalFailure()) return;
    }
}

TEST(ParserRobustness, RandomTokenSoup) {
    // Random sequences of real tokens reach far deeper into the parser than random bytes.
    static const char* kVocabulary[] = {
        "(", ")", "{", "}", "[", "]", ";", ",", "<", ">", ">>", ">>=", "=", "+", "-", "*", "?",
        ":", ".", "::", "float", "float3", "x", "1", "2.5f", "if", "else", "for", "while",
        "do", "switch", "return", "break", "struct", "import", "static", "const", "var", "let",
        "in", "out", "inout", "no_diff", "true", "[Differentiable]", "[MaxIters(4)]",
        "vector", "DifferentialPair", "IDiffTensor", "typedef", "__init", "property", "\"s\"",
        "case", "default", "typealias", "enum", "enum class", "(int)", "(E)",
        "#define X\n", "/* c */", "//\n", "void", "T", ".Differential", "++", "--", "!",
    };
    constexpr size_t kCount = sizeof(kVocabulary) / sizeof(kVocabulary[0]);
    std::mt19937 rng(54321);
    for (int i = 0; i < 3000; ++i) {
        std::string text;
        size_t n = rng() % 120;
        for (size_t k = 0; k < n; ++k) {
            text += kVocabulary[rng() % kCount];
            text += ' ';
        }
        parse_anything(text);
        if (HasFatalFailure()) return;
    }
}

TEST(ParserRobustness, EveryPrefixOfTheConformanceKernels) {
    for (const auto& entry : std::filesystem::directory_iterator(conformance_dir())) {
        if (entry.path().extension() != ".slang") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        std::string full = text.str();
        for (size_t n = 0; n <= full.size(); ++n) {
            parse_anything(full.substr(0, n));
            if (HasFatalFailure()) return;
        }
    }
}

TEST(ParserRobustness, TooManyErrorsStopWithCompileError) {
    std::string junk;
    for (int i = 0; i < 500; ++i) junk += "@ ";  // one error per '@' (separated by blanks)
    EXPECT_THROW(Parsed p(junk), CompileError);
}

}  // namespace
}  // namespace sg::lang::test
