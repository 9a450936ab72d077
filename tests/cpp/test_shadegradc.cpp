// tests/cpp/test_shadegradc.cpp — the shadegradc command-line compiler, run as a process: exit
// statuses, diagnostics, output modes, and for every conformance kernel, `--emit cuda` output
// that NVRTC compiles (tests/support/cuda_compile_check.h; CI sets SG_REQUIRE_NVRTC=1) and
// `--emit cpp` output that the host compiler accepts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <stdlib.h>

#include "../support/cuda_compile_check.h"
#include "runtime/host_compiler.h"

namespace sg::test {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A scratch directory per test, removed afterwards.
class Shadegradc : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "sg_shadegradc_XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    fs::path write(const std::string& name, const std::string& text) {
        fs::path p = dir_ / name;
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }
    static runtime::ProcessResult run(std::vector<std::string> args) {
        args.insert(args.begin(), SG_SHADEGRADC);
        return runtime::run_process(args);
    }
    fs::path dir_;
};

TEST_F(Shadegradc, CompilesAFileToEachForm) {
    const fs::path src = write("k.slang", "[Differentiable]\nfloat sq(float x) { return x * x; }\n");
    runtime::ProcessResult ast = run({src.string(), "--emit", "ast"});
    ASSERT_EQ(ast.exit_code, 0) << ast.output;
    EXPECT_NE(ast.output.find("sq"), std::string::npos) << ast.output;

    runtime::ProcessResult ir = run({src.string()});  // --emit ir is the default
    ASSERT_EQ(ir.exit_code, 0) << ir.output;
    EXPECT_NE(ir.output.find("func @sq("), std::string::npos) << ir.output;
    EXPECT_NE(ir.output.find("func @bwd_sq("), std::string::npos) << ir.output;
    EXPECT_NE(ir.output.find("func @fwd_sq("), std::string::npos) << ir.output;

    runtime::ProcessResult plain = run({src.string(), "--no-derivatives"});
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
    EXPECT_NE(plain.output.find("func @sq("), std::string::npos) << plain.output;
    EXPECT_EQ(plain.output.find("bwd_sq"), std::string::npos) << plain.output;

    const fs::path out = dir_ / "k.cu";
    runtime::ProcessResult cuda = run({src.string(), "--emit", "cuda", "-o", out.string()});
    ASSERT_EQ(cuda.exit_code, 0) << cuda.output;
    EXPECT_EQ(cuda.output, "");  // with -o nothing goes to the terminal
    const std::string code = read_file(out);
    EXPECT_NE(code.find("#define SG_TARGET_CUDA 1"), std::string::npos);
    EXPECT_NE(code.find("SG_FN float sq("), std::string::npos);
}

TEST_F(Shadegradc, EntrySelectsOneFunctionAndWhatItCalls) {
    const fs::path src = write("k.slang",
                               "float helper(float x) { return x + 1.0; }\n"
                               "float used(float x) { return helper(x) * 2.0; }\n"
                               "float other(float x) { return x; }\n");
    runtime::ProcessResult r = run({src.string(), "--entry", "used"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("func @used("), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("func @other("), std::string::npos) << r.output;

    runtime::ProcessResult missing = run({src.string(), "--entry", "nope"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.output.find("no function 'nope'"), std::string::npos) << missing.output;
}

TEST_F(Shadegradc, ReportsEveryErrorWithLocationAndCaret) {
    const fs::path src = write("bad.slang",
                               "float f(float x) {\n"
                               "    return y;\n"
                               "}\n"
                               "float g() { return undefined_fn(1.0); }\n");
    runtime::ProcessResult r = run({src.string(), "--emit", "cuda"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find(src.string() + ":2:12: error"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("    return y;"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("^"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(src.string() + ":4:20: error"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("#define SG_TARGET_CUDA"), std::string::npos) << "no code after errors";
}

TEST_F(Shadegradc, UsageErrorsExitWithTwo) {
    const fs::path src = write("k.slang", "float f() { return 1.0; }\n");
    // Each says what was wrong before the usage text.
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{}, "shadegradc: no input file\n"},
        {{src.string(), "--emit", "ptx"}, "shadegradc: --emit takes ast, ir, cpp or cuda, got 'ptx'\n"},
        {{src.string(), "--bogus"}, "shadegradc: unknown option '--bogus'\n"},
        {{src.string(), src.string()}, "shadegradc: one input file only, got '" + src.string() + "' and '" + src.string() + "'\n"},
        {{src.string(), "--entry"}, "shadegradc: option --entry needs a value\n"},
    };
    for (const auto& [args, problem] : cases) {
        runtime::ProcessResult r = run(args);
        EXPECT_EQ(r.exit_code, 2) << r.output;
        EXPECT_EQ(r.output.rfind(problem, 0), 0u) << r.output;
        EXPECT_NE(r.output.find("usage: shadegradc FILE"), std::string::npos) << r.output;
    }
    runtime::ProcessResult unreadable = run({(dir_ / "absent.slang").string()});
    EXPECT_EQ(unreadable.exit_code, 1);
    EXPECT_NE(unreadable.output.find("cannot read"), std::string::npos) << unreadable.output;
}

TEST_F(Shadegradc, HelpPrintsTheUsageAndSucceeds) {
    for (const char* flag : {"--help", "-h"}) {
        runtime::ProcessResult r = run({flag});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_NE(r.output.find("usage: shadegradc FILE"), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("--help"), std::string::npos) << r.output;
    }
}

// ---- every conformance kernel, with its derivatives, through both backends' compilers

std::vector<std::string> conformance_kernels() {
    std::vector<std::string> out;
    for (const auto& f : fs::directory_iterator(SG_CONFORMANCE_DIR))
        if (f.path().extension() == ".slang") out.push_back(f.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

class ConformanceKernel : public Shadegradc, public ::testing::WithParamInterface<std::string> {};

TEST_P(ConformanceKernel, EmitCudaCompilesWithNvrtc) {
    const std::string path = (fs::path(SG_CONFORMANCE_DIR) / GetParam()).string();
    const fs::path out = dir_ / "k.cu";
    runtime::ProcessResult r = run({path, "--emit", "cuda", "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string code = read_file(out);
    EXPECT_NE(code.find("SG_FN "), std::string::npos);
    EXPECT_NE(code.find(" bwd_"), std::string::npos) << "every conformance kernel has a backward derivative";
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(code, &skipped)) << path;
    if (skipped) GTEST_SKIP() << "neither NVRTC nor nvcc found (pip install nvidia-cuda-nvrtc)";
}

TEST_P(ConformanceKernel, EmitCppCompilesWithTheHostCompiler) {
    const std::string path = (fs::path(SG_CONFORMANCE_DIR) / GetParam()).string();
    const fs::path out = dir_ / "k.cpp";
    runtime::ProcessResult r = run({path, "--emit", "cpp", "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    runtime::ProcessResult cc = runtime::run_process({"c++", "-std=c++17", "-fsyntax-only", "-Wall", out.string()});
    EXPECT_TRUE(cc.succeeded()) << cc.output;
}

INSTANTIATE_TEST_SUITE_P(Conformance, ConformanceKernel, ::testing::ValuesIn(conformance_kernels()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             return info.param.substr(0, info.param.find('.'));
                         });

// Every scalar type in tensors, with derivatives and atomics (half gradients accumulate with
// the prelude's half atomic add), through NVRTC and the host compiler with -Wall.
TEST_F(Shadegradc, ScalarTypeKernelsCompileForBothBackends) {
    const fs::path src = write("scalars.slang", R"(import slangpy;
[Differentiable]
half read_h(no_diff int i, IDiffTensor<half, 1> t) { return t[i] * t[i]; }
[Differentiable]
half3 poly(half3 v, half k) { return v * v * k + sin(v); }
[Differentiable]
double smooth(double x, IDiffTensor<double3, 1> t) { return dot(t[0], double3(x, x, 1.0l)) * exp(x); }
void acc(int i, AtomicTensor<half, 1> t, half v) { t.add(i, v); }
void acc8(int i, AtomicTensor<int8_t, 1> t, int8_t v) { t.add(i, v); }
uint bits(int64_t a, uint8_t b, int16_t2 c) { return countbits(a) + firstbithigh(b) + reversebits(b) + firstbitlow(c).y; }
float halves(uint h, float f) { return f16tof32(h) + float(f32tof16(f)); }
)");
    for (const char* target : {"cuda", "cpp"}) {
        const fs::path out = dir_ / (std::string("scalars.") + (target[1] == 'u' ? "cu" : "cpp"));
        runtime::ProcessResult r = run({src.string(), "--emit", target, "-o", out.string()});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        const std::string code = read_file(out);
        if (target[1] == 'u') {
            bool skipped = false;
            EXPECT_TRUE(cuda_compiles(code, &skipped));
        } else {
            runtime::ProcessResult cc = runtime::run_process({"c++", "-std=c++17", "-fsyntax-only", "-Wall", out.string()});
            EXPECT_TRUE(cc.succeeded()) << cc.output;
        }
    }
}

// The example programs' kernel files (examples/*.slang, e.g. the Gaussian splatting rasterizer),
// with their derivatives: CI runs them on the CPU backend; this compiles the CUDA that a GPU runs.
TEST_F(Shadegradc, ExampleKernelsCompileForBothBackends) {
    std::vector<fs::path> kernels;
    for (const auto& f : fs::directory_iterator(fs::path(SG_SOURCE_DIR) / "examples"))
        if (f.path().extension() == ".slang") kernels.push_back(f.path());
    ASSERT_FALSE(kernels.empty());
    for (const fs::path& path : kernels) {
        const fs::path cu = dir_ / "example.cu";
        runtime::ProcessResult r = run({path.string(), "--emit", "cuda", "-o", cu.string()});
        ASSERT_EQ(r.exit_code, 0) << path << "\n" << r.output;
        const std::string code = read_file(cu);
        EXPECT_NE(code.find(" bwd_"), std::string::npos) << path;
        bool skipped = false;
        EXPECT_TRUE(cuda_compiles(code, &skipped)) << path;
        const fs::path cpp = dir_ / "example.cpp";
        r = run({path.string(), "--emit", "cpp", "-o", cpp.string()});
        ASSERT_EQ(r.exit_code, 0) << path << "\n" << r.output;
        runtime::ProcessResult cc = runtime::run_process({"c++", "-std=c++17", "-fsyntax-only", "-Wall", cpp.string()});
        EXPECT_TRUE(cc.succeeded()) << path << "\n" << cc.output;
    }
}

TEST(ShadegradcSuite, SeesAllTwelveConformanceKernels) { EXPECT_GE(conformance_kernels().size(), 12u); }

}  // namespace
}  // namespace sg::test
