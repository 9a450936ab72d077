// tests/cpp/test_cuda_runtime.cpp — the CUDA backend runtime: driver absence, NVRTC search and
// loading, compiling to CUBIN/PTX, the memory and disk caches, compile errors; and, where a GPU
// is present, loading, launching and checking results (skipped elsewhere).
//
// NVRTC is found like the Python layer finds it: this test passes python3's sys.path as the
// wheel search directories (pip install nvidia-cuda-nvrtc), or $SHADEGRAD_NVRTC names it.
// Without NVRTC the compile tests skip with the reason.
#include "runtime/content_hash.h"
#include "runtime/cpu_module.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_launch.h"
#include "runtime/cuda_module.h"
#include "runtime/cuda_nvrtc.h"
#include "runtime/disk_cache.h"
#include "runtime/host_compiler.h"

#include <gtest/gtest.h>

#include "../support/cuda_compile_check.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace sg::runtime {
namespace {

namespace fs = std::filesystem;
using sg::test::nvrtc_required;
using sg::test::test_nvrtc;

// A self-contained kernel in the generated code's shape: one by-value parameter block, one
// thread per element, `total` first. += so that an element visited twice shows up.
const char* const kKernelSource = R"(
typedef long long int64_t;
struct Params { int64_t total; float a; const float* x; float* y; };
extern "C" __global__ void sg_test_axpy(const __grid_constant__ Params p) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= p.total) return;
    p.y[i] += p.a * p.x[i];
}
extern "C" __global__ void sg_test_two_params(int a, int* b) { if (b) *b = a; }
)";

struct KernelParams {
    int64_t total;
    float a;
    const float* x;
    float* y;
};
static_assert(sizeof(KernelParams) == 32, "matches the kernel's Params");

// Options without designated initializers (-Wextra warns on the members they leave out).
CudaCompileOptions opts(int arch, bool debug = false, bool ptx = false,
                        std::vector<std::string> flags = {}) {
    return CudaCompileOptions{arch, debug, ptx, std::move(flags)};
}

std::string read_whole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `action`, expecting a BackendError whose message contains `text`; returns the message.
template <class Action>
std::string expect_backend_error(Action&& action, const std::string& text) {
    try {
        action();
    } catch (const BackendError& error) {
        EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
        return error.what();
    }
    ADD_FAILURE() << "no BackendError; expected one saying '" << text << "'";
    return "";
}

// Each test gets an empty cache directory and an empty memory cache.
class CudaRuntimeTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "sg_cuda_test_XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        set_cache_directory_for_testing(dir_);
        clear_cuda_module_cache();
    }
    void TearDown() override {
        clear_cuda_module_cache();
        set_cache_directory_for_testing("");
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    std::string dir_;
};

// Compile tests: skipped (with the reason) where NVRTC is absent.
class CudaCompileTest : public CudaRuntimeTest {
protected:
    void SetUp() override {
        CudaRuntimeTest::SetUp();
        std::string reason;
        if (!test_nvrtc(&reason)) {
            if (nvrtc_required()) FAIL() << "SG_REQUIRE_NVRTC=1 but NVRTC was not found: " << reason;
            GTEST_SKIP() << "NVRTC not available (pip install nvidia-cuda-nvrtc): " << reason;
        }
    }
};

// GPU tests: skipped where no device is visible.
class CudaGpuTest : public CudaCompileTest {
protected:
    void SetUp() override {
        CudaCompileTest::SetUp();
        if (IsSkipped()) return;
        if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_driver_status();
        arch_ = cuda_device_arch(0);
    }
    int arch_ = 0;
};

// ---- the driver -----------------------------------------------------------------------------

TEST(CudaDriver, StatusAndAbsence) {
    std::cout << "[ info ] driver: " << cuda_driver_status() << "\n";
    if (cuda_available()) {
        EXPECT_GT(cuda_device_count(), 0);
        return;
    }
    // No driver (or no device): every query answers without crashing, and errors say why.
    EXPECT_EQ(cuda_device_count(), 0);
    EXPECT_EQ(cuda_driver_status().rfind("CUDA driver", 0), 0u) << cuda_driver_status();
    EXPECT_THROW(cuda_device_arch(0), BackendError);
    EXPECT_THROW(cuda_primary_context(0), BackendError);
    if (cuda_driver_version_without_init() == 0)
        expect_backend_error([] { cuda_driver(); }, "CUDA driver not found: ");
}

// ---- NVRTC search ---------------------------------------------------------------------------

// Sets or clears an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        value ? ::setenv(name, value, 1) : ::unsetenv(name);
    }
    ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

private:
    const char* name_;
    std::optional<std::string> old_;
};

using NvrtcSearch = CudaRuntimeTest;

TEST_F(NvrtcSearch, CandidatesFollowTheSearchOrder) {
    ScopedEnv no_override("SHADEGRAD_NVRTC", nullptr);
    ScopedEnv no_cuda_home("CUDA_HOME", nullptr);
    auto touch = [&](const std::string& relative) {
        fs::create_directories(fs::path(dir_ + "/" + relative).parent_path());
        std::ofstream(dir_ + "/" + relative) << "x";
    };
    touch("site1/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
    touch("site1/nvidia/cu13/lib/libnvrtc.so.13");
    touch("site1/nvidia/cu13/lib/libnvrtc-builtins.so.13.0");  // not NVRTC itself
    touch("site2/nvidia/cu13/lib/libnvrtc.so");
    touch("site2/nvidia/cu13/lib/libnvrtc.so.13.0.88");
    touch("site2/nvidia/cu13/lib/libnvrtc.so.13");
    const std::vector<std::string> candidates =
        nvrtc_candidates({dir_ + "/site1", dir_ + "/site2", dir_ + "/missing"});
    const std::vector<std::string> expected_start = {
        dir_ + "/site1/nvidia/cu13/lib/libnvrtc.so.13",
        dir_ + "/site1/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
        dir_ + "/site2/nvidia/cu13/lib/libnvrtc.so.13.0.88",
        dir_ + "/site2/nvidia/cu13/lib/libnvrtc.so.13",
        dir_ + "/site2/nvidia/cu13/lib/libnvrtc.so",
    };
    ASSERT_GE(candidates.size(), expected_start.size() + 3);
    EXPECT_EQ(std::vector<std::string>(candidates.begin(), candidates.begin() + 5), expected_start);
    EXPECT_EQ(std::vector<std::string>(candidates.end() - 3, candidates.end()),
              (std::vector<std::string>{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}));
    for (const std::string& candidate : candidates)
        EXPECT_EQ(candidate.find("builtins"), std::string::npos) << candidate;

    ScopedEnv explicit_path("SHADEGRAD_NVRTC", "/opt/my/libnvrtc.so.13");
    EXPECT_EQ(nvrtc_candidates({dir_ + "/site1"}),
              std::vector<std::string>{"/opt/my/libnvrtc.so.13"});
}

TEST_F(NvrtcSearch, FingerprintChangesWithTheLibrariesItCouldLoad) {
    ScopedEnv no_override("SHADEGRAD_NVRTC", nullptr);
    ScopedEnv no_cuda_home("CUDA_HOME", nullptr);
    const std::string lib = dir_ + "/site/nvidia/cu13/lib";
    fs::create_directories(lib);
    std::ofstream(lib + "/libnvrtc.so.13") << "x";
    // Memoized per set of search directories: setting them again computes it anew.
    auto fingerprint = [&]() {
        set_nvrtc_search_dirs({dir_ + "/site", dir_ + "/missing"});
        return nvrtc_fingerprint();
    };
    const std::string first = fingerprint();
    EXPECT_NE(first.find(lib + "/libnvrtc.so.13 "), std::string::npos) << first;
    EXPECT_EQ(first.find(dir_ + "/missing"), std::string::npos) << first;  // absent: not stamped
    EXPECT_EQ(fingerprint(), first);  // nothing changed

    std::ofstream(lib + "/libnvrtc.so.13") << "xyz";  // overwritten in place: size changes
    const std::string overwritten = fingerprint();
    EXPECT_NE(overwritten, first);

    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a later directory mtime
    std::ofstream(lib + "/libnvrtc.so.13.1.5") << "x";  // a soname it would list first
    const std::string added = fingerprint();
    EXPECT_NE(added, overwritten);

    fs::remove(lib + "/libnvrtc.so.13.1.5");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ofstream(lib + "/unrelated.txt") << "x";  // the directory changed again
    EXPECT_NE(fingerprint(), added);

    ScopedEnv explicit_path("SHADEGRAD_NVRTC", (lib + "/libnvrtc.so.13").c_str());
    const std::string chosen = fingerprint();
    EXPECT_NE(chosen.find(lib + "/libnvrtc.so.13 "), std::string::npos) << chosen;
    EXPECT_EQ(chosen.find("/usr/local/cuda"), std::string::npos) << chosen;  // nothing else searched
}

TEST_F(NvrtcSearch, UnloadableLibrariesAreReported) {
    std::string error;
    EXPECT_EQ(load_nvrtc_library(dir_ + "/nowhere/libnvrtc.so.13", error), nullptr);
    EXPECT_NE(error.find(dir_ + "/nowhere/libnvrtc.so.13: "), std::string::npos) << error;
    EXPECT_EQ(load_nvrtc_library("libm.so.6", error), nullptr);  // a library, but not NVRTC
    EXPECT_NE(error.find("not a usable NVRTC"), std::string::npos) << error;
}

TEST_F(NvrtcSearch, PrefetchOpensNvrtcOnAThreadOfItsOwn) {
    // Knowing that NVRTC is there without opening it takes CI's promise (SG_REQUIRE_NVRTC=1).
    if (!sg::test::nvrtc_required()) GTEST_SKIP() << "needs SG_REQUIRE_NVRTC=1 (NVRTC installed)";
    set_nvrtc_search_dirs(sg::test::python_sys_path());
    // ctest runs each test in a process of its own: nothing has opened NVRTC here yet.
    ASSERT_FALSE(nvrtc_loaded());
    nvrtc_prefetch();
    nvrtc_prefetch();  // started once per process; returns at once
    // Nothing on this thread calls nvrtc(): only the prefetch's thread can load it.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!nvrtc_loaded() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_TRUE(nvrtc_loaded()) << nvrtc_status();
    const Nvrtc& n = nvrtc();  // the library the prefetch loaded, without a second search
    EXPECT_GE(n.major, 11);
    EXPECT_EQ(&nvrtc(), &n);
    nvrtc_prefetch();  // loaded: nothing to start
}

// ---- compiling ------------------------------------------------------------------------------

TEST_F(CudaCompileTest, CompilesACubinForSm90) {
    const Nvrtc& n = *test_nvrtc();
    std::cout << "[ info ] " << nvrtc_status() << "\n";
    EXPECT_GE(n.major, 11);
    const CompiledCuda image = compile_cuda(kKernelSource, opts(90));
    EXPECT_TRUE(image.compiled);
    EXPECT_FALSE(image.is_ptx);
    EXPECT_EQ(image.arch, 90);
    EXPECT_EQ(image.hash.size(), 32u);
    ASSERT_GT(image.bytes.size(), 64u);
    EXPECT_EQ(image.bytes.substr(0, 4), "\x7f" "ELF");
    const int machine = (unsigned char)image.bytes[18] | (unsigned char)image.bytes[19] << 8;
    EXPECT_EQ(machine, 190) << "ELF e_machine is not EM_CUDA";
    EXPECT_NE(image.bytes.find("sg_test_axpy"), std::string::npos);
    EXPECT_TRUE(fs::exists(disk_cache_entry_path("cuda", image.hash)));
    EXPECT_TRUE(!fs::exists(dir_ + "/tmp") || fs::is_empty(dir_ + "/tmp"));

    // The disk cache answers the second compile with the same bytes.
    const CompiledCuda again = compile_cuda(kKernelSource, opts(90));
    EXPECT_FALSE(again.compiled);
    EXPECT_EQ(again.bytes, image.bytes);
    EXPECT_EQ(again.hash, image.hash);
}

TEST_F(CudaCompileTest, FlagsKeepIeeeSemantics) {
    auto joined = [](const CudaCompileOptions& options) {
        std::string out;
        for (const std::string& flag : cuda_compile_flags(options)) out += flag + " ";
        return out;
    };
    // NVRTC 12.4 and later leave out what generated code never uses (textures, device runtime).
    const std::string minimal = nvrtc().version() >= 12040 ? "--minimal " : "";
    EXPECT_EQ(joined(opts(90)), "--gpu-architecture=sm_90 -std=c++17 -DSG_TARGET_CUDA=1 "
                                "-default-device --ftz=false --prec-div=true --prec-sqrt=true "
                                "--fmad=true " + minimal);
    EXPECT_EQ(joined(opts(90, true, false, {"-DEXTRA"})).substr(joined(opts(90)).size()),
              "-lineinfo -DEXTRA ");
}

// Fast math makes only float division approximate at the NVRTC level (the intrinsics come from
// the source's SG_FAST_MATH): no flush-to-zero, exact sqrt; its modules are separate cache entries.
TEST_F(CudaCompileTest, FastMathMakesOnlyDivisionApproximate) {
    CudaCompileOptions fast = opts(90);
    fast.fast_math = true;
    std::string flags;
    for (const std::string& flag : cuda_compile_flags(fast)) flags += flag + " ";
    EXPECT_EQ(flags, "--gpu-architecture=sm_90 -std=c++17 -DSG_TARGET_CUDA=1 "
                     "-default-device --ftz=false --prec-div=false --prec-sqrt=true "
                     "--fmad=true " + std::string(nvrtc().version() >= 12040 ? "--minimal " : ""));
    const CompiledCuda image = compile_cuda(kKernelSource, fast);
    EXPECT_FALSE(image.is_ptx);
    EXPECT_NE(image.hash, compile_cuda(kKernelSource, opts(90)).hash);
}

TEST_F(CudaCompileTest, ModulesComeFromMemoryThenDisk) {
    auto first = load_cuda_module(kKernelSource, opts(90));
    EXPECT_TRUE(first->compiled());
    auto second = load_cuda_module(kKernelSource, opts(90));
    EXPECT_FALSE(second->compiled());
    EXPECT_EQ(&second->image(), &first->image());  // the same shared image

    clear_cuda_module_cache();
    auto from_disk = load_cuda_module(kKernelSource, opts(90));
    EXPECT_FALSE(from_disk->compiled());
    EXPECT_NE(&from_disk->image(), &first->image());
    EXPECT_EQ(from_disk->image().bytes, first->image().bytes);

    // Every input of the key makes a different module.
    for (const auto& options :
         {opts(80), opts(90, true), opts(90, false, true), opts(90, false, false, {"-DX"})})
        EXPECT_NE(load_cuda_module(kKernelSource, options)->hash(), first->hash());
    EXPECT_NE(load_cuda_module(std::string(kKernelSource) + " ", opts(90))->hash(), first->hash());
}

TEST_F(CudaCompileTest, DamagedDiskEntriesAreRebuilt) {
    const CompiledCuda image = compile_cuda(kKernelSource, opts(90));
    const std::string path = disk_cache_entry_path("cuda", image.hash);
    std::string entry = read_whole(path);
    entry[entry.size() / 2] ^= 0x40;  // a flipped bit in the CUBIN
    std::ofstream(path, std::ios::binary | std::ios::trunc) << entry;
    const CompiledCuda rebuilt = compile_cuda(kKernelSource, opts(90));
    EXPECT_TRUE(rebuilt.compiled);
    EXPECT_EQ(rebuilt.bytes, image.bytes);

    // An intact entry that holds the wrong form (PTX under a CUBIN key) is not trusted either.
    ASSERT_TRUE(disk_cache_store("cuda", image.hash, "ptx 90\n.version 8.0\n"));
    const CompiledCuda rebuilt_again = compile_cuda(kKernelSource, opts(90));
    EXPECT_TRUE(rebuilt_again.compiled);
    EXPECT_EQ(rebuilt_again.bytes, image.bytes);
}

TEST_F(CudaCompileTest, CompileErrorsCarryTheLogAndKeepTheSource) {
    const std::string source = std::string(kKernelSource) +
                               "extern \"C\" __global__ void broken() { undeclared_thing = 1; }\n";
    const std::string message = expect_backend_error(
        [&] { load_cuda_module(source, opts(90)); },
        "NVRTC failed on generated CUDA code (NVRTC_ERROR_COMPILATION)");
    EXPECT_NE(message.find("undeclared_thing"), std::string::npos) << message;
    EXPECT_NE(message.find("--gpu-architecture=sm_90"), std::string::npos) << message;
    const size_t at = message.find("source kept at: ");
    ASSERT_NE(at, std::string::npos) << message;
    const std::string kept = message.substr(at + 16, message.find('\n', at) - at - 16);
    EXPECT_EQ(read_whole(kept), source);
    const std::string log = read_whole(fs::path(kept).replace_extension(".log").string());
    EXPECT_NE(log.find("undeclared_thing"), std::string::npos);
    // Options NVRTC rejects are reported the same way, not thrown from inside NVRTC.
    EXPECT_THROW(compile_cuda(kKernelSource, opts(90, false, false, {"--no-such-option"})),
                 BackendError);
}

TEST_F(CudaCompileTest, PtxOnRequestAndForArchitecturesNvrtcDoesNotKnow) {
    const CompiledCuda ptx = compile_cuda(kKernelSource, opts(90, false, true));
    EXPECT_TRUE(ptx.is_ptx);
    EXPECT_NE(ptx.bytes.find(".entry sg_test_axpy"), std::string::npos);
    EXPECT_NE(ptx.bytes.find(".target sm_90"), std::string::npos);
    EXPECT_EQ(ptx.bytes.find('\0'), std::string::npos);

    // A device newer than this NVRTC: PTX for the newest architecture it knows.
    const Nvrtc& n = *test_nvrtc();
    if (n.supported_archs.empty()) GTEST_SKIP() << "this NVRTC does not list its architectures";
    const CompiledCuda future = compile_cuda(kKernelSource, opts(990));
    EXPECT_TRUE(future.is_ptx);
    EXPECT_EQ(future.arch, n.supported_archs.back());
    // Older than it supports: a clear error, and no architecture at all: another.
    EXPECT_THROW(compile_cuda(kKernelSource, opts(10)), BackendError);
    EXPECT_THROW(compile_cuda(kKernelSource, CudaCompileOptions{}), BackendError);
}

TEST_F(CudaCompileTest, DebugKeepsTheSourceForLineInfo) {
    const CompiledCuda image = compile_cuda(kKernelSource, opts(90, true));
    EXPECT_EQ(read_whole(dir_ + "/debug/" + image.hash + ".cu"), kKernelSource);
}

TEST_F(CudaCompileTest, ConcurrentLoadsCompileOnce) {
    std::atomic<int> compiled{0}, failed{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 6; ++i)
        threads.emplace_back([&] {
            try {
                compiled += load_cuda_module(kKernelSource, opts(90))->compiled();
            } catch (const BackendError&) {
                ++failed;  // an exception must not escape a thread (std::terminate)
            }
        });
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(compiled.load(), 1);
}

// ---- on a GPU -------------------------------------------------------------------------------

// Device memory for a test, freed at scope exit.
struct DeviceBuffer {
    explicit DeviceBuffer(size_t bytes) {
        CudaContextGuard guard(cuda_primary_context(0));
        check_cuda(cuda_driver().cuMemAlloc(&pointer, bytes), "cuMemAlloc");
    }
    ~DeviceBuffer() {
        CudaContextGuard guard(cuda_primary_context(0));
        cuda_driver().cuMemFree(pointer);
    }
    CuDevicePtr pointer = 0;
};

// Runs sg_test_axpy over n elements and checks every one exactly (small integers, exact in
// float even with FMA contraction).
void expect_axpy_works(const CudaFunction& function, int64_t n) {
    const CudaDriver& d = cuda_driver();
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(i % 1000), y[size_t(i)] = float(i % 7);
    DeviceBuffer dx(x.size() * 4), dy(y.size() * 4);
    CudaContextGuard guard(cuda_primary_context(0));
    check_cuda(d.cuMemcpyHtoD(dx.pointer, x.data(), x.size() * 4), "cuMemcpyHtoD");
    check_cuda(d.cuMemcpyHtoD(dy.pointer, y.data(), y.size() * 4), "cuMemcpyHtoD");
    KernelParams params{n, 3.0f, reinterpret_cast<const float*>(dx.pointer),
                        reinterpret_cast<float*>(dy.pointer)};
    cuda_launch(function, &params, sizeof params, n, nullptr);
    check_cuda(d.cuCtxSynchronize(), "cuCtxSynchronize");
    check_cuda(d.cuMemcpyDtoH(y.data(), dy.pointer, y.size() * 4), "cuMemcpyDtoH");
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += y[size_t(i)] != float(i % 7) + 3.0f * float(i % 1000);
    EXPECT_EQ(wrong, 0) << "n = " << n;
}

TEST_F(CudaGpuTest, LaunchesOverEveryElement) {
    std::cout << "[ info ] device 0: " << cuda_device_name(0) << ", sm_" << arch_ << "\n";
    auto module = load_cuda_module(kKernelSource, opts(arch_));
    const CudaFunction& function = module->function(0, "sg_test_axpy");
    EXPECT_EQ(&module->function(0, "sg_test_axpy"), &function);  // looked up once
    std::cout << "[ info ] block " << function.block_size << ", " << function.registers
              << " registers, param " << function.param_size << " bytes, grid limit "
              << function.max_blocks << "\n";
    EXPECT_TRUE(function.block_size >= 32 && function.block_size <= 1024 &&
                function.block_size % 32 == 0);
    EXPECT_GE(function.max_blocks, 65535);
    EXPECT_EQ(function.param_size, cuda_driver().cuFuncGetParamInfo ? sizeof(KernelParams) : 0);
    EXPECT_EQ(function.context, cuda_primary_context(0));
    for (int64_t n : {1, 255, 256, 257, 1000003, 1 << 24}) expect_axpy_works(function, n);
}

TEST_F(CudaGpuTest, LaunchesFromAThreadWithoutAContextBindDevice0s) {
    auto module = load_cuda_module(kKernelSource, opts(arch_));
    const CudaFunction& function = module->function(0, "sg_test_axpy");
    std::thread([&] {
        CuContext current = reinterpret_cast<CuContext>(1);
        check_cuda(cuda_driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent");
        ASSERT_EQ(current, nullptr);  // a fresh thread has none
        const int64_t n = 4097;
        DeviceBuffer dx(n * 4), dy(n * 4);
        KernelParams params{n, 2.0f, reinterpret_cast<const float*>(dx.pointer),
                            reinterpret_cast<float*>(dy.pointer)};
        const uint64_t binds = cuda_context_switches().binds;
        cuda_launch(function, &params, sizeof params, n, nullptr);
        // Bound for good, as the CUDA runtime's first call on this thread would bind it: later
        // launches here find it current (torch's autograd thread for cuda:0 is such a thread).
        check_cuda(cuda_driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent");
        EXPECT_EQ(current, function.context);
        EXPECT_EQ(cuda_context_switches().binds, binds + 1);
        const uint64_t pushes = cuda_context_switches().pushes;
        cuda_launch(function, &params, sizeof params, n, nullptr);
        EXPECT_EQ(cuda_context_switches().binds, binds + 1);
        EXPECT_EQ(cuda_context_switches().pushes, pushes);
        CudaContextGuard guard(function.context);
        check_cuda(cuda_driver().cuCtxSynchronize(), "cuCtxSynchronize");
    }).join();
}

TEST_F(CudaGpuTest, AGuardOnAThreadWithoutAContextLeavesItWithout) {
    const CuContext primary = cuda_primary_context(0);
    std::thread([&] {
        const CudaDriver& d = cuda_driver();
        CuContext current = reinterpret_cast<CuContext>(1);
        check_cuda(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
        ASSERT_EQ(current, nullptr);
        {
            CudaContextGuard guard(primary);  // pushes: guards never bind
            check_cuda(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
            EXPECT_EQ(current, primary);
        }
        check_cuda(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
        EXPECT_EQ(current, nullptr);
        // The launch path's entry binds device 0's primary context instead, and then finds it.
        EXPECT_EQ(cuda_enter_context(d, primary, 0), ContextEntry::kBound);
        EXPECT_EQ(cuda_enter_context(d, primary, 0), ContextEntry::kCurrent);
        check_cuda(d.cuCtxSetCurrent(nullptr), "cuCtxSetCurrent");
        // A caller naming another device than 0 gets a push, never a bind.
        EXPECT_EQ(cuda_enter_context(d, primary, 1), ContextEntry::kPushed);
        EXPECT_EQ(cuda_leave_context(d), kCudaSuccess);
        check_cuda(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
        EXPECT_EQ(current, nullptr);
    }).join();
}

TEST_F(CudaGpuTest, PtxModulesLoadAndRun) {
    auto module = load_cuda_module(kKernelSource, opts(arch_, false, true));
    ASSERT_TRUE(module->image().is_ptx);
    expect_axpy_works(module->function(0, "sg_test_axpy"), 100000);
}

TEST_F(CudaGpuTest, BadLaunchesAndLookupsThrow) {
    auto module = load_cuda_module(kKernelSource, opts(arch_));
    const CudaFunction& function = module->function(0, "sg_test_axpy");
    KernelParams params{};
    cuda_launch(function, &params, sizeof params, 0, nullptr);  // empty: nothing runs
    EXPECT_THROW(cuda_launch(function, &params, sizeof params, -1, nullptr), BackendError);
    EXPECT_THROW(cuda_launch(function, nullptr, sizeof params, 10, nullptr), BackendError);
    EXPECT_THROW(cuda_launch(function, &params, sizeof params,
                             (function.max_blocks + 1) * function.block_size, nullptr),
                 BackendError);
    if (function.param_size != 0) {
        EXPECT_THROW(cuda_launch(function, &params, sizeof params - 8, 10, nullptr), BackendError);
    }
    expect_backend_error([&] { module->function(0, "no_such_kernel"); },
                         "has no kernel 'no_such_kernel'");
    if (cuda_driver().cuFuncGetParamInfo) {
        // A kernel of another signature: its first parameter's size gives the mismatch away.
        const CudaFunction& other = module->function(0, "sg_test_two_params");
        EXPECT_EQ(other.param_size, sizeof(int));
        EXPECT_THROW(cuda_launch(other, &params, sizeof params, 1, nullptr), BackendError);
    }
    EXPECT_THROW(module->function(cuda_device_count(), "sg_test_axpy"), BackendError);
}

TEST_F(CudaGpuTest, ACubinForAnotherArchitectureIsRefusedClearly) {
    const int other = arch_ >= 90 ? 80 : 90;
    if (!test_nvrtc()->supports_arch(other)) GTEST_SKIP() << "NVRTC lacks sm_" << other;
    auto module = load_cuda_module(kKernelSource, opts(other));
    const std::string message = expect_backend_error(
        [&] { module->function(0, "sg_test_axpy"); }, "CUBIN for sm_" + std::to_string(other));
    EXPECT_NE(message.find("sm_" + std::to_string(arch_) + ")"), std::string::npos) << message;
}

TEST_F(CudaGpuTest, ModulesUnloadAndReload) {
    for (int round = 0; round < 3; ++round) {
        auto module = load_cuda_module(kKernelSource, opts(arch_));
        expect_axpy_works(module->function(0, "sg_test_axpy"), 1000);
        module.reset();
        clear_cuda_module_cache();  // the image is gone: unloaded from the device
    }
}

// Not an assertion (tests never assert timings): the host cost of one launch, for the
// performance model's "raw cuLaunchKernel" line.
TEST_F(CudaGpuTest, ReportsHostCostPerLaunch) {
    auto module = load_cuda_module(kKernelSource, opts(arch_));
    const CudaFunction& function = module->function(0, "sg_test_axpy");
    KernelParams params{0, 0.0f, nullptr, nullptr};  // threads return at once: launch cost only
    CudaContextGuard guard(function.context);
    const int launches = 20000;
    std::chrono::steady_clock::duration host{};
    for (int round = 0; round < 2; ++round) {  // the first round warms up
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < launches; ++i)
            cuda_launch(function, &params, sizeof params, 256, nullptr);
        host = std::chrono::steady_clock::now() - start;
        check_cuda(cuda_driver().cuCtxSynchronize(), "cuCtxSynchronize");
    }
    std::cout << "[ info ] cuda_launch host time: "
              << std::chrono::duration<double, std::micro>(host).count() / launches
              << " us per launch\n";
}

}  // namespace
}  // namespace sg::runtime
