// tests/cpp/test_preprocessor.cpp — the preprocessor and module loader on in-memory files: what
// the program tests cannot show (stringizing, the limits that keep recursive and exploding
// macros and includes from hanging or crashing, the origin map and the include chain).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "syntax/lexer.h"
#include "syntax/module_loader.h"
#include "syntax/parser.h"
#include "syntax/preprocessor.h"

namespace sg::lang {
namespace {

/// Preprocesses `main` (named main.slang) with `files` as the only other files.
struct PpRun {
    SourceManager sources;
    SourceLoader loader;
    Diagnostics diags;
    const SourceFile* out = nullptr;

    PpRun(const std::string& main, std::map<std::string, std::string> files = {}) {
        loader.use_virtual_files(std::move(files));
        out = preprocess(sources.add("main.slang", main), sources, loader, diags);
    }
    /// The output's tokens as text, one space between them (the layout does not matter).
    std::string tokens() {
        std::string s;
        for (const Token& t : lex(*out, diags)) {
            if (t.kind == TokenKind::EndOfFile) break;
            if (!s.empty()) s += ' ';
            s += out->text.substr(t.offset, t.length);
        }
        return s;
    }
};

TEST(Preprocessor, FileWithoutHashIsItsOwnOutput) {
    PpRun r("float f() { return 1; }\n");
    EXPECT_TRUE(r.out->origins.empty());
    EXPECT_EQ(r.out->text, "float f() { return 1; }\n");
}

TEST(Preprocessor, StringizeAndPaste) {
    PpRun r("#define S(x) #x\n#define P(a, b) a ## b\nS(a \"q\" b) P(x, 1) P(, y) P(1, 2)\n");
    EXPECT_FALSE(r.diags.has_errors()) << r.diags.render();
    EXPECT_EQ(r.tokens(), "\"a \\\"q\\\" b\" x1 y 12");
}

TEST(Preprocessor, VariadicAndEmptyArguments) {
    PpRun r("#define V(a, ...) [a | __VA_ARGS__]\n#define E() e\nV(1) V(1, 2, 3) E()\n");
    EXPECT_FALSE(r.diags.has_errors()) << r.diags.render();
    EXPECT_EQ(r.tokens(), "[ 1 | ] [ 1 | 2 , 3 ] e");
}

TEST(Preprocessor, MutuallyRecursiveMacrosStop) {
    PpRun r("#define A B + 1\n#define B A * 2\nA B\n");
    EXPECT_FALSE(r.diags.has_errors()) << r.diags.render();
    EXPECT_EQ(r.tokens(), "A * 2 + 1 B + 1 * 2");
}

TEST(Preprocessor, ExplodingMacrosHitTheLimitQuickly) {
    std::string src = "#define A0 x\n";
    for (int k = 1; k <= 40; ++k)
        src += "#define A" + std::to_string(k) + " A" + std::to_string(k - 1) + " A" + std::to_string(k - 1) + "\n";
    src += "A40\n";
    auto start = std::chrono::steady_clock::now();
    PpRun r(src);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(r.diags.has_errors());
    EXPECT_NE(r.diags.render().find("macro expansion is too large"), std::string::npos) << r.diags.render();
    EXPECT_LT(seconds, 10.0);
}

TEST(Preprocessor, DeeplyNestedMacroCallsAreAnError) {
    std::string src = "#define F(x) x\n";
    for (int k = 0; k < 3000; ++k) src += "F(";
    src += "1";
    for (int k = 0; k < 3000; ++k) src += ")";
    PpRun r(src + "\n");
    EXPECT_NE(r.diags.render().find("macro calls nested too deeply"), std::string::npos) << r.diags.render();
}

TEST(Preprocessor, SelfIncludeStopsAtTheDepthLimit) {
    PpRun r("#include \"self.h\"\n", {{"self.h", "int x;\n#include \"self.h\"\n"}});
    EXPECT_NE(r.diags.render().find("#include nested too deeply"), std::string::npos) << r.diags.render();
}

TEST(Preprocessor, DiagnosticsFollowTheIncludeChain) {
    PpRun r("// main\n#include \"a.h\"\n", {{"a.h", "\n#include \"b.h\"\n"}, {"b.h", "#define X 1\n#error stop here\n"}});
    ASSERT_EQ(r.diags.error_count(), 1u);
    const Diagnostic& d = r.diags.all()[0];
    EXPECT_EQ(d.location.file, "b.h");
    EXPECT_EQ(d.location.line, 2);
    EXPECT_EQ(d.location.col, 2);
    ASSERT_EQ(d.location.include_chain.size(), 2u);
    EXPECT_EQ(d.location.include_chain[0], "in file included from a.h:2");
    EXPECT_EQ(d.location.include_chain[1], "in file included from main.slang:2");
    std::string text = render_diagnostic(d);
    EXPECT_EQ(text.rfind("in file included from main.slang:2:\nin file included from a.h:2:\nb.h:2:2: error 15900: "
                         "#error: stop here\n", 0),
              0u)
        << text;
}

TEST(Preprocessor, OutputMapsBackToEachFile) {
    PpRun r("#define TWO 2\nint a = TWO;\n#include \"v.h\"\nint c = 3;\n", {{"v.h", "int b = 1;\n"}});
    ASSERT_FALSE(r.diags.has_errors()) << r.diags.render();
    auto where = [&](const std::string& needle) {
        size_t at = r.out->text.find(needle);
        EXPECT_NE(at, std::string::npos) << needle << " in " << r.out->text;
        ResolvedLocation l = resolve_location({r.out, uint32_t(at)});
        return l.file + ":" + std::to_string(l.line) + ":" + std::to_string(l.col);
    };
    EXPECT_EQ(where("int a"), "main.slang:2:1");
    EXPECT_EQ(where("2"), "main.slang:1:13");  // a macro's body token: where it was defined
    EXPECT_EQ(where("int b"), "v.h:1:1");
    EXPECT_EQ(where("int c"), "main.slang:4:1");
}

TEST(Preprocessor, MalformedDirectivesAreErrorsNotCrashes) {
    for (const char* src : {"#if defined(\n#endif\n", "#if (1\n#endif\n", "#define F(a\n", "#define F(a,)\n",
                            "#define\n", "#include\n", "#include <x\n", "#if 1 ? 2\n#endif\n", "#elif\n",
                            "#ifdef\n#endif\n", "#undef 3\n", "#define F(x) #y\nF(1)\n", "#if 99999999999999999999\n#endif\n",
                            "#define F(...) __VA_ARGS__\nF(\n"}) {
        PpRun r(src);
        EXPECT_TRUE(r.diags.has_errors()) << src;
    }
    // As in Slang, a block comment that never closes runs to the end of the file: a warning.
    PpRun r("#define X /* unterminated\n");
    EXPECT_FALSE(r.diags.has_errors()) << r.diags.render();
    EXPECT_NE(r.diags.render().find("warning: unterminated block comment"), std::string::npos) << r.diags.render();
}

TEST(ModuleLoader, ImportCycleNamesTheModule) {
    SourceManager sources;
    AstContext ast;
    SourceLoader loader;
    loader.use_virtual_files({{"a.slang", "import b;\n"}, {"b.slang", "import a;\n"}});
    Diagnostics diags;
    load_modules(sources.add("main.slang", "import a;\n"), sources, loader, ast, diags);
    ASSERT_EQ(diags.error_count(), 1u) << diags.render();
    const Diagnostic& d = diags.all()[0];
    EXPECT_EQ(d.code, 38200);
    EXPECT_EQ(d.location.file, "b.slang");
    EXPECT_NE(d.message.find("module `a` recursively imports itself"), std::string::npos);
    ASSERT_EQ(d.location.include_chain.size(), 2u);
    EXPECT_EQ(d.location.include_chain[1], "in module imported from main.slang:1");
}

TEST(ModuleLoader, ModulesComeInDependencyOrderOnce) {
    SourceManager sources;
    AstContext ast;
    SourceLoader loader;
    loader.use_virtual_files({{"a.slang", "import c;\nint fa() { return 1; }\n"}, {"c.slang", "int fc() { return 3; }\n"},
                              {"b.slang", "import c;\nimport a;\nint fb() { return 2; }\n"}});
    Diagnostics diags;
    auto modules = load_modules(sources.add("main.slang", "import a;\nimport b;\nimport c;\n"), sources, loader, ast, diags);
    ASSERT_FALSE(diags.has_errors()) << diags.render();
    std::vector<std::string> names;
    for (ModuleAst* m : modules) names.push_back(original_location({m->file, 0}).file->name);
    EXPECT_EQ(names, (std::vector<std::string>{"c.slang", "a.slang", "b.slang", "main.slang"}));
}

}  // namespace
}  // namespace sg::lang
