// tests/cpp/test_diagnostics.cpp — must-fail kernel-language programs (tests/lang/errors/*.slang):
// each names the error it must produce with `// error: LINE:COL: message substring` (the first
// reported error must be the first one named) and, for Slang's numbered diagnostics,
// `// error-code: N`. Covers syntax errors, names and types, conversions, lvalues, swizzles,
// the differentiability errors (30510, 41022, 41031, 30055) and tier 2/3 constructs, which must
// say "not supported yet". No program may crash the compiler or reach an internal error.
// Also: a CompileError's diagnostics stay readable after the sources they came from are gone.
#include "test_programs_harness.h"

#include <memory>
#include <optional>

namespace sg::test {
namespace {

std::vector<std::string> error_programs() {
    return list_lang_files(".slang", [](const std::string& folder) { return folder == "errors"; });
}

class MustFail : public ::testing::TestWithParam<std::string> {};

TEST_P(MustFail, ReportsTheError) {
    const std::string rel = GetParam();
    const std::string source = read_text(lang_tests_dir() / rel);
    check_errors(fs::path(rel).filename().string(), source, source, 1, program_setup(lang_tests_dir() / rel));
}

INSTANTIATE_TEST_SUITE_P(Lang, MustFail, ::testing::ValuesIn(error_programs()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test_name(info.param); });

TEST(MustFailSuite, HasAtLeast60Programs) { EXPECT_GE(error_programs().size(), 60u); }

// Every differentiability error of docs/language.md has a program that expects its number.
TEST(MustFailSuite, CoversTheNumberedDiagnostics) {
    std::set<int> codes;
    for (const auto& rel : error_programs())
        for (const std::string& c : header_values(read_text(lang_tests_dir() / rel), "error-code"))
            codes.insert(std::stoi(c));
    for (int code : {30510, 41022, 41031, 30055}) EXPECT_TRUE(codes.count(code)) << "no program expects error " << code;
}

// Tier 2/3 constructs are reported as such, never as a generic syntax error.
TEST(MustFailSuite, UnsupportedConstructsSayNotSupportedYet) {
    int count = 0;
    for (const auto& rel : error_programs()) {
        if (fs::path(rel).filename().string().rfind("unsupported_", 0) != 0) continue;
        ++count;
        for (const std::string& e : header_values(read_text(lang_tests_dir() / rel), "error"))
            EXPECT_NE(e.find("not supported yet"), std::string::npos) << rel << ": " << e;
    }
    EXPECT_GE(count, 10);
}

// ---------------------------------------------------------------- a CompileError outlives its sources

// The sources of a compilation usually die while its CompileError unwinds the stack, so what
// the error carries must not point into them. Built with -fsanitize=address, a dangling read in
// these tests (or in rendering) is reported as a heap-use-after-free.

/// Reports one error in a file of its own SourceManager and throws; the sources are destroyed
/// before the caller's handler runs.
[[noreturn]] void throw_from_sources_that_die() {
    auto sources = std::make_unique<lang::SourceManager>();
    lang::Diagnostics diags;
    const lang::SourceFile* file = sources->add("gone.slang", "float f()\n{\n\treturn x;\n}\n");
    diags.error({file, uint32_t(file->text.find("x;"))}, "unknown name 'x'", 1234);
    diags.warning({}, "a warning without a location");
    diags.throw_if_errors();
    throw std::logic_error("throw_if_errors did not throw");
}

TEST(CompileErrorLifetime, OutlivesItsSourceManager) {
    std::optional<lang::CompileError> caught;
    try {
        throw_from_sources_that_die();
    } catch (const lang::CompileError& e) {
        caught = e;  // a copy, kept past the handler as well
    }
    ASSERT_TRUE(caught.has_value());
    ASSERT_EQ(caught->diagnostics.size(), 2u);
    const lang::Diagnostic& d = caught->diagnostics[0];
    EXPECT_EQ(d.severity, lang::Severity::Error);
    EXPECT_EQ(d.code, 1234);
    EXPECT_EQ(d.message, "unknown name 'x'");
    EXPECT_TRUE(d.location.valid());
    EXPECT_EQ(d.location.file, "gone.slang");
    EXPECT_EQ(d.location.line, 3);
    EXPECT_EQ(d.location.col, 9);  // after a tab and "return " (columns count bytes)
    EXPECT_EQ(d.location.source_line, "\treturn x;");
    const lang::Diagnostic& w = caught->diagnostics[1];
    EXPECT_EQ(w.severity, lang::Severity::Warning);
    EXPECT_FALSE(w.location.valid());
    EXPECT_EQ(w.location.file, "");
    // Rendering from the carried diagnostics gives what() again, caret and all.
    std::string rendered = lang::render_diagnostic(d) + lang::render_diagnostic(w);
    EXPECT_EQ(rendered, caught->what());
    EXPECT_EQ(lang::render_diagnostic(d),
              "gone.slang:3:9: error 1234: unknown name 'x'\n    \treturn x;\n    \t       ^\n");
}

// A UserModule owns its sources: a failed load destroys them while the error propagates.
TEST(CompileErrorLifetime, OutlivesAFailedUserModule) {
    try {
        call::UserModule module("lost", "float f(float a)\n{\n    return a + nope;\n}\n");
        FAIL() << "the module compiled";
    } catch (const lang::CompileError& e) {
        ASSERT_FALSE(e.diagnostics.empty());
        const lang::Diagnostic& d = e.diagnostics[0];
        EXPECT_EQ(d.severity, lang::Severity::Error);
        EXPECT_EQ(d.location.file, "lost.slang");
        EXPECT_EQ(d.location.line, 3);
        EXPECT_EQ(d.location.col, 16);
        EXPECT_EQ(d.location.source_line, "    return a + nope;");
        EXPECT_NE(d.message.find("unknown name 'nope'"), std::string::npos) << d.message;
    }
}

// generate() owns the kernel's Compilation (user module and glue sources) on its stack.
TEST(CompileErrorLifetime, OutlivesAFailedKernelCompilation) {
    call::UserModule module("ok", "float twice(float a) { return a * 2; }\n");
    call::Glue glue;
    glue.source = "void sg_entry()\n{\n    float v = missing_in_glue;\n}\n";
    glue.entry = "sg_entry";
    try {
        call::generate(module, glue, DeviceType::CPU, {});
        FAIL() << "the glue compiled";
    } catch (const lang::CompileError& e) {
        ASSERT_FALSE(e.diagnostics.empty());
        const lang::Diagnostic& d = e.diagnostics[0];
        EXPECT_EQ(d.location.file, "<glue>");
        EXPECT_EQ(d.location.line, 3);
        EXPECT_EQ(d.location.col, 15);
        EXPECT_EQ(d.location.source_line, "    float v = missing_in_glue;");
        EXPECT_NE(d.message.find("missing_in_glue"), std::string::npos) << d.message;
    }
}

}  // namespace
}  // namespace sg::test
