// tests/cpp/test_diagnostics.cpp — must-fail kernel-language programs (tests/lang/errors/*.slang):
// each names the error it must produce with `// error: LINE:COL: message substring` (the first
// reported error must be the first one named) and, for Slang's numbered diagnostics,
// `// error-code: N`. Covers syntax errors, names and types, conversions, lvalues, swizzles,
// the differentiability errors (30510, 41022, 41031, 30055) and tier 2/3 constructs, which must
// say "not supported yet". No program may crash the compiler or reach an internal error.
#include "test_programs_harness.h"

namespace sg::test {
namespace {

std::vector<std::string> error_programs() {
    return list_lang_files(".slang", [](const std::string& folder) { return folder == "errors"; });
}

class MustFail : public ::testing::TestWithParam<std::string> {};

TEST_P(MustFail, ReportsTheError) {
    const std::string rel = GetParam();
    const std::string source = read_text(lang_tests_dir() / rel);
    check_errors(fs::path(rel).filename().string(), source, source);
}

INSTANTIATE_TEST_SUITE_P(Lang, MustFail, ::testing::ValuesIn(error_programs()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test_name(info.param); });

TEST(MustFailSuite, HasAtLeast60Programs) { EXPECT_GE(error_programs().size(), 60u); }

// Every differentiability error of LANGUAGE.md has a program that expects its number.
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

}  // namespace
}  // namespace sg::test
