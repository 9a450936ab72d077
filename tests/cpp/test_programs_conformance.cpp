// tests/cpp/test_programs_conformance.cpp — the shared conformance kernels (SG_CONFORMANCE_DIR)
// through explicit bwd_diff / fwd_diff calls from a kernel-language test entry point.
//
// Each tests/lang/conformance/Txx_<case>.test holds a `test()` (and helpers) that is appended to
// the text of the conformance kernel Txx_*.slang, with either an `// expect:` header (the hand
// values of the kernel's header comment) or `// error:` headers for the must-fail variants
// (`// remove: TEXT` deletes every TEXT from the kernel first, e.g. its [MaxIters]). Kernels that need
// tensors (T02, T12) run through the Python call API instead; here every kernel must at least
// compile as a module.
#include "test_programs_harness.h"

namespace sg::test {
namespace {

fs::path conformance_dir() { return fs::path(SG_CONFORMANCE_DIR); }

std::vector<std::string> conformance_cases() {
    return list_lang_files(".test", [](const std::string& folder) { return folder == "conformance"; });
}

/// The conformance kernel a case belongs to: the file named like the case's `Txx_` prefix, in the
/// conformance folder or its tier2/ subfolder.
fs::path kernel_of(const std::string& rel) {
    std::string stem = fs::path(rel).filename().string();
    std::string prefix = stem.substr(0, stem.find('_') + 1);
    for (const fs::path& dir : {conformance_dir(), conformance_dir() / "tier2"}) {
        if (!fs::is_directory(dir)) continue;
        for (const auto& f : fs::directory_iterator(dir))
            if (f.path().extension() == ".slang" && f.path().filename().string().rfind(prefix, 0) == 0)
                return f.path();
    }
    throw std::runtime_error("no conformance kernel " + prefix + "*.slang for " + rel);
}

struct Case {
    std::string name;
    std::string source;  ///< kernel text (after removals) followed by the case's text
    std::string case_text;
    int appended_first_line;  ///< line of `source` where the case's text starts
};

Case load_case(const std::string& rel) {
    Case c;
    c.case_text = read_text(lang_tests_dir() / rel);
    std::string kernel = read_text(kernel_of(rel));
    for (const std::string& text : header_values(c.case_text, "remove")) {
        size_t at = kernel.find(text);
        if (at == std::string::npos) throw std::runtime_error("'// remove: " + text + "' not found in the kernel");
        for (; at != std::string::npos; at = kernel.find(text, at)) kernel.erase(at, text.size());
    }
    if (!kernel.empty() && kernel.back() != '\n') kernel += '\n';
    c.appended_first_line = int(std::count(kernel.begin(), kernel.end(), '\n')) + 1;
    c.source = kernel + c.case_text;
    c.name = kernel_of(rel).filename().string();
    return c;
}

bool is_error_case(const Case& c) { return !header_values(c.case_text, "error").empty(); }

/// The cases with an `// expect:` result (the ones that also compile for CUDA).
std::vector<std::string> value_cases() {
    std::vector<std::string> out;
    for (const std::string& rel : conformance_cases())
        if (header_values(read_text(lang_tests_dir() / rel), "error").empty()) out.push_back(rel);
    return out;
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, Cpu) {
    Case c = load_case(GetParam());
    if (is_error_case(c)) check_errors(c.name, c.source, c.case_text, c.appended_first_line);
    else check_program(c.name, c.source);
}

INSTANTIATE_TEST_SUITE_P(Lang, Conformance, ::testing::ValuesIn(conformance_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test_name(info.param); });

class ConformanceCuda : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceCuda, Compiles) {
    Case c = load_case(GetParam());
    check_program_cuda(c.name, c.source);
}

TEST_P(ConformanceCuda, RunsOnGpu) {
    Case c = load_case(GetParam());
    check_program_on_gpu(c.name, c.source);
}

INSTANTIATE_TEST_SUITE_P(Lang, ConformanceCuda, ::testing::ValuesIn(value_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return test_name(info.param); });

TEST(ConformanceKernels, EveryKernelCompilesAsAModule) {
    int count = 0;
    for (const auto& f : fs::directory_iterator(conformance_dir())) {
        if (f.path().extension() != ".slang") continue;
        ++count;
        try {
            call::UserModule module(f.path().filename().string(), read_text(f.path()));
        } catch (const lang::CompileError& e) {
            ADD_FAILURE() << f.path().filename() << " does not compile:\n" << e.what();
        }
    }
    EXPECT_GE(count, 12);
}

// Every kernel with a `// call:` line (the scalar ones) has a case here.
TEST(ConformanceKernels, EveryScalarKernelHasACase) {
    auto cases = conformance_cases();
    for (const auto& f : fs::directory_iterator(conformance_dir())) {
        if (f.path().extension() != ".slang" || header_values(read_text(f.path()), "call").empty()) continue;
        std::string prefix = f.path().filename().string().substr(0, 4);
        bool found = false;
        for (const auto& c : cases) found |= fs::path(c).filename().string().rfind(prefix, 0) == 0;
        EXPECT_TRUE(found) << f.path().filename() << " has no tests/lang/conformance/" << prefix << "*.test";
    }
}

}  // namespace
}  // namespace sg::test
