// tests/support/cuda_compile_check.h — compiling generated CUDA in tests on machines without a GPU.
//
// NVRTC is found the way the Python layer finds it: python3's sys.path is passed as the wheel
// search directories (pip install nvidia-cuda-nvrtc), $SHADEGRAD_NVRTC names a library, or the
// toolkit and loader paths hold one. Where no NVRTC exists the check falls back to nvcc, and
// where neither exists it reports itself skipped — unless SG_REQUIRE_NVRTC=1 (set by CI), which
// turns a missing NVRTC into a failure so that the compile checks can never pass vacuously.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "runtime/cpu_module.h"  // BackendError
#include "runtime/cuda_nvrtc.h"
#include "runtime/host_compiler.h"

namespace sg::test {

/// python3's sys.path, as the Python layer would pass it; empty when there is no python3.
inline std::vector<std::string> python_sys_path() {
    std::vector<std::string> dirs;
    try {
        const char* script = "import sys; print('\\n'.join(p for p in sys.path if p))";
        const runtime::ProcessResult result = runtime::run_process({"python3", "-c", script});
        std::istringstream lines(result.succeeded() ? result.output : "");
        for (std::string line; std::getline(lines, line);) dirs.push_back(line);
    } catch (const runtime::BackendError&) {
    }
    return dirs;
}

/// NVRTC, searched once per process with python's sys.path; null (and the reason) when absent.
inline const runtime::Nvrtc* test_nvrtc(std::string* reason = nullptr) {
    static const bool configured = (runtime::set_nvrtc_search_dirs(python_sys_path()), true);
    if (reason && configured) *reason = runtime::nvrtc_status();
    try {
        return &runtime::nvrtc();
    } catch (const runtime::BackendError&) {
        return nullptr;
    }
}

/// SG_REQUIRE_NVRTC=1: the compile checks must use NVRTC (CI installs it).
inline bool nvrtc_required() {
    const char* v = std::getenv("SG_REQUIRE_NVRTC");
    return v && std::string(v) == "1";
}

inline std::string find_nvcc() {
    if (const char* env = std::getenv("SG_TEST_NVCC")) return env;
    for (const char* p : {"/usr/local/bin/nvcc", "/usr/local/cuda/bin/nvcc"})
        if (std::filesystem::exists(p)) return p;
    return {};
}

namespace detail {

inline ::testing::AssertionResult nvcc_compiles(const std::string& nvcc, const std::string& source) {
    namespace fs = std::filesystem;
    // Sources that fail stay in a per-process directory (named in the failure message) until exit.
    struct Scratch {
        fs::path path = fs::temp_directory_path() / ("sg_cuda_check_" + std::to_string(getpid()));
        ~Scratch() {
            std::error_code ec;
            if (!std::getenv("SG_TEST_KEEP")) fs::remove_all(path, ec);
        }
    };
    static Scratch scratch;
    static int counter = 0;
    fs::create_directories(scratch.path);
    const fs::path src = scratch.path / ("p" + std::to_string(counter++) + ".cu");
    std::ofstream(src) << source;
    const runtime::ProcessResult result = runtime::run_process(
        {nvcc, "-cubin", "-arch=sm_90", "-std=c++17", "-x", "cu", "-o", src.string() + ".cubin", src.string()});
    std::error_code ec;
    if (result.succeeded()) {
        fs::remove(src, ec);
        fs::remove(src.string() + ".cubin", ec);
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "nvcc failed on " << src.string() << ":\n" << result.output;
}

}  // namespace detail

/// Compiles a complete generated CUDA translation unit for sm_90 with NVRTC (the production
/// compiler and options' architecture), else with nvcc; `*skipped` is set when neither exists
/// and NVRTC is not required.
inline ::testing::AssertionResult cuda_compiles(const std::string& source, bool* skipped) {
    *skipped = false;
    std::string reason;
    if (const runtime::Nvrtc* nvrtc = test_nvrtc(&reason)) {
        static bool noted =
            (std::fprintf(stderr, "[ NOTE     ] CUDA compile checks use NVRTC %s\n", nvrtc->path.c_str()), true);
        (void)noted;
        const bool ptx = !nvrtc->supports_arch(90);
        const std::vector<std::string> options = {ptx ? "--gpu-architecture=compute_90" : "--gpu-architecture=sm_90",
                                                  "-std=c++17", "-DSG_TARGET_CUDA=1", "-default-device"};
        const runtime::NvrtcOutput out = runtime::nvrtc_compile(*nvrtc, source, "program.cu", options, ptx);
        if (out.ok) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "NVRTC: " << out.error << "\n" << out.log;
    }
    if (nvrtc_required())
        return ::testing::AssertionFailure() << "SG_REQUIRE_NVRTC=1 but NVRTC was not found: " << reason;
    const std::string nvcc = find_nvcc();
    if (nvcc.empty()) {
        *skipped = true;
        return ::testing::AssertionSuccess();
    }
    static bool noted =
        (std::fprintf(stderr, "[ NOTE     ] no NVRTC found: CUDA compile checks use %s\n", nvcc.c_str()), true);
    (void)noted;
    return detail::nvcc_compiles(nvcc, source);
}

}  // namespace sg::test
