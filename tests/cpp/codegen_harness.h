// tests/cpp/codegen_harness.h — test support for test_codegen.cpp: builds IR programs, compiles
// generated CPU code with the system compiler and loads it (without the runtime layer), fills
// parameter blocks from a ParamLayout, and compiles generated CUDA code with nvcc and NVRTC
// (which has no system headers: the strict check of the prelude).
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/cuda_compile_check.h"
#include "codegen/codegen.h"
#include "ir/builder.h"
#include "ir/passes.h"

namespace sg::test {

using ir::OpKind;
using ir::Value;
using lang::Type;
using lang::IntrinsicId;
using lang::ScalarKind;
using lang::TensorAccess;

/// Tensor parameters read only, and read and written.
constexpr TensorAccess kRead = TensorAccess::Read;
constexpr TensorAccess kRW = TensorAccess::ReadWrite;

/// A program with its own TypeContext and helpers to declare kernels and functions.
struct TestProgram {
    lang::TypeContext types;
    ir::Program program;
    TestProgram() { program.types = &types; }

    ir::Function* add_function(const std::string& name, std::vector<ir::Param> params,
                               const Type* return_type, std::vector<const Type*> results, bool kernel) {
        auto fn = std::make_unique<ir::Function>();
        fn->name = name;
        fn->is_kernel = kernel;
        fn->return_type = return_type;
        fn->result_types = std::move(results);
        fn->body = std::make_unique<ir::Block>();
        for (const auto& p : params) {
            if (p.dir == ir::ParamDir::Out) continue;
            Value* v = fn->new_value(p.type, p.name);
            v->block = fn->body.get();
            fn->body->params.push_back(v);
        }
        fn->params = std::move(params);
        return program.add(std::move(fn));
    }
    ir::Function* add_kernel(const std::string& name, std::vector<ir::Param> params) {
        return add_function(name, std::move(params), types.void_type(), {}, true);
    }
    const Type* tensor(const Type* element, int rank, lang::TensorAccess access, bool grad = false) {
        lang::TensorKind kind;
        kind.access = access;
        kind.differentiable = grad;
        kind.has_grad = grad;
        return types.tensor(element, rank, kind);
    }
};

inline ir::Value* arg(ir::Function* fn, size_t k) { return fn->body->params.at(k); }

/// Per-process scratch directory for generated sources and objects; removed at exit unless
/// $SG_TEST_KEEP is set (failure messages name the files in it).
inline const std::filesystem::path& scratch_dir() {
    struct Scratch {
        std::filesystem::path path;
        ~Scratch() {
            std::error_code ec;
            if (!std::getenv("SG_TEST_KEEP")) std::filesystem::remove_all(path, ec);
        }
    };
    static const Scratch dir{[] {
        auto path = std::filesystem::temp_directory_path() / ("sg_codegen_test_" + std::to_string(getpid()));
        std::filesystem::create_directories(path);
        return path;
    }()};
    return dir.path;
}

/// Runs a shell command; returns {exit status, combined output}.
inline std::pair<int, std::string> run_command(const std::string& command) {
    std::string output;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return {-1, "popen failed"};
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
    return {pclose(pipe), output};
}

inline std::filesystem::path write_source(const std::string& source, const std::string& ext) {
    static int counter = 0;
    auto path = scratch_dir() / ("k" + std::to_string(counter++) + ext);
    std::ofstream(path) << source;
    return path;
}

/// A generated CPU kernel compiled into a shared object and loaded.
class CpuKernel {
public:
    using Entry = void (*)(const void*, int64_t, int64_t);
    CpuKernel(const codegen::GeneratedKernel& kernel, const char* flags = "-O1") {
        auto src = write_source(kernel.source, ".cpp");
        auto so = std::filesystem::path(src).replace_extension(".so");
        auto [status, output] = run_command("g++ -std=c++17 " + std::string(flags) + " -Wall -Wextra -shared -fPIC -fwrapv -o " +
                                            so.string() + " " + src.string());
        log_ = output;
        if (status != 0) return;
        handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle_) {
            log_ += dlerror();
            return;
        }
        entry_ = reinterpret_cast<Entry>(dlsym(handle_, kernel.entry.c_str()));
        if (!entry_) log_ += "entry " + kernel.entry + " not exported";
    }
    ~CpuKernel() {
        if (handle_) dlclose(handle_);
    }
    bool ok() const { return entry_ != nullptr; }
    const std::string& log() const { return log_; }
    void run(const void* params, int64_t begin, int64_t end) const { entry_(params, begin, end); }

private:
    void* handle_ = nullptr;
    Entry entry_ = nullptr;
    std::string log_;
};

/// A parameter block laid out by compute_param_layout, as the call layer will pack it.
class ParamBlock {
public:
    explicit ParamBlock(const codegen::ParamLayout& layout) : layout_(layout), storage_(layout.size / 8 + 1, 0) {}
    codegen::CallHeader& header() { return *reinterpret_cast<codegen::CallHeader*>(storage_.data()); }
    void set_call_shape(const std::vector<int64_t>& shape) {
        auto& h = header();
        h.rank = int32_t(shape.size());
        h.total = 1;
        for (int d = 0; d < 8; ++d) h.shape[d] = d < int(shape.size()) ? shape[size_t(d)] : 1;
        for (int64_t n : shape) h.total *= n;
    }
    template <class T> void set(size_t field, const T& value) { put(layout_.fields.at(field).offset, &value, sizeof value); }
    void set_tensor(size_t field, void* data, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                    std::array<int64_t, 2> inner = {1, 1}) {
        const auto& t = layout_.fields.at(field).tensor;
        put(t.data, &data, 8);
        put(t.shape, shape.data(), 8 * shape.size());
        put(t.strides, strides.data(), 8 * strides.size());
        put(t.inner, inner.data(), 16);
    }
    void set_grad(size_t field, void* data, const std::vector<int64_t>& strides, std::array<int64_t, 2> inner = {1, 1}) {
        const auto& t = layout_.fields.at(field).tensor;
        put(t.grad_data, &data, 8);
        put(t.grad_strides, strides.data(), 8 * strides.size());
        put(t.grad_inner, inner.data(), 16);
    }
    const void* data() const { return storage_.data(); }

private:
    void put(size_t offset, const void* src, size_t n) {
        ASSERT_LE(offset + n, layout_.size);
        std::memcpy(reinterpret_cast<char*>(storage_.data()) + offset, src, n);
    }
    codegen::ParamLayout layout_;
    std::vector<uint64_t> storage_;
};

/// nvcc -cubin for sm_90 (compile only; no GPU needed); passes where there is no nvcc.
inline ::testing::AssertionResult nvcc_compiles(const std::string& source) {
    const std::string nvcc = find_nvcc();
    if (nvcc.empty()) return ::testing::AssertionSuccess();
    return detail::nvcc_compiles(nvcc, source);
}

/// NVRTC as the runtime finds it (tests/support/cuda_compile_check.h: nvcc where NVRTC is
/// missing, a failure where SG_REQUIRE_NVRTC=1).
inline ::testing::AssertionResult nvrtc_compiles(const std::string& source) {
    bool skipped = false;
    return cuda_compiles(source, &skipped);
}

/// A kernel generated for the CPU and loaded; code() is the part after the prelude.
struct Compiled {
    codegen::GeneratedKernel gen;
    std::unique_ptr<CpuKernel> cpu;
    std::string code() const { return gen.source.substr(gen.body_begin); }
};

inline Compiled compile_cpu(TestProgram& tp, ir::Function* kernel, const codegen::CodegenOptions& options = {}) {
    ir::verify_function(*kernel, "test");
    Compiled c;
    c.gen = codegen::generate_kernel(tp.program, *kernel, DeviceType::CPU, options);
    c.cpu = std::make_unique<CpuKernel>(c.gen);
    return c;
}

#define ASSERT_COMPILED(c) ASSERT_TRUE((c).cpu->ok()) << (c).cpu->log() << "\n" << (c).code()

/// Generates the CUDA version of `kernel` and checks that nvcc and NVRTC accept it.
/// Compiles the kernel for CUDA with `options`, and again with read-only loads (the variant of
/// calls whose tensors do not overlap).
inline void expect_cuda_compiles(const ir::Program& program, const ir::Function& kernel,
                                 const codegen::CodegenOptions& options = {}) {
    auto cuda = codegen::generate_kernel(program, kernel, DeviceType::CUDA, options);
    EXPECT_TRUE(nvcc_compiles(cuda.source));
    EXPECT_TRUE(nvrtc_compiles(cuda.source));
    codegen::CodegenOptions readonly = options;
    readonly.readonly_loads = true;
    auto ro = codegen::generate_kernel(program, kernel, DeviceType::CUDA, readonly);
    EXPECT_TRUE(nvrtc_compiles(ro.source));
}

}  // namespace sg::test
