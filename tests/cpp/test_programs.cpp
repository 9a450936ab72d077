// tests/cpp/test_programs.cpp — the kernel-language programs of tests/lang/<feature>/*.slang:
// each declares `T test()` and a `// expect:` header; it is compiled through a generated entry,
// run on the CPU backend and compared. The same entry is compiled for CUDA (NVRTC or nvcc when
// available) and, on a machine with a GPU, run there and compared too. One small program per feature (chibicc style); errors/ and conformance/ have
// their own runners (test_diagnostics.cpp, test_programs_conformance.cpp).
#include "test_programs_harness.h"

namespace sg::test {
namespace {

std::vector<std::string> feature_programs() {
    return list_lang_files(".slang",
                           [](const std::string& folder) { return folder != "errors" && folder != "conformance"; });
}

class Program : public ::testing::TestWithParam<std::string> {};

TEST_P(Program, Cpu) {
    const std::string rel = GetParam();
    check_program(fs::path(rel).filename().string(), read_text(lang_tests_dir() / rel),
                  program_setup(lang_tests_dir() / rel));
}

TEST_P(Program, CudaCompiles) {
    const std::string rel = GetParam();
    check_program_cuda(fs::path(rel).filename().string(), read_text(lang_tests_dir() / rel),
                       program_setup(lang_tests_dir() / rel));
}

TEST_P(Program, RunsOnGpu) {
    const std::string rel = GetParam();
    check_program_on_gpu(fs::path(rel).filename().string(), read_text(lang_tests_dir() / rel));
}

INSTANTIATE_TEST_SUITE_P(Lang, Program, ::testing::ValuesIn(feature_programs()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test_name(info.param); });

// The suite must not pass vacuously when the folder moves.
TEST(ProgramSuite, HasAtLeast150Programs) { EXPECT_GE(feature_programs().size(), 150u); }

}  // namespace
}  // namespace sg::test
