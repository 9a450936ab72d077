// tests/cpp/coop_harness.h — support for test_coop_kernels.cpp: compiles a [CUDAKernel]
// function of a kernel-language source for the CPU (and checks its CUDA with NVRTC), packs a
// parameter block from host arrays (TensorView arguments: data, shape, contiguous strides) and
// scalars, and launches it with a block and grid shape the way the cooperative entry expects
// (header shape = block x, y, z, grid x, y, z; total = the number of blocks).
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "../support/cuda_compile_check.h"
#include "driver/driver.h"
#include "runtime/backend.h"

namespace sg::test {

/// One argument of a launch: a TensorView over host memory, or a scalar's bytes.
struct CoopArg {
    void* data = nullptr;
    std::vector<int64_t> shape;     ///< a view's extents (its rank is their count)
    std::vector<int64_t> strides;   ///< in scalar elements; empty: contiguous (row-major, vectors packed)
    int components = 1;             ///< scalar components of a view's element (float2: 2)
    std::vector<uint8_t> bytes;     ///< a scalar parameter's value
    void* grad = nullptr;           ///< a DiffTensorView's gradient (same shape; null: none bound)

    template <class T>
    static CoopArg view(std::vector<T>& v, std::vector<int64_t> shape, int components = 1) {
        CoopArg a;
        a.data = v.data();
        a.shape = std::move(shape);
        a.components = components;
        return a;
    }
    /// A DiffTensorView over `v` with gradient `g` (contiguous, same shape; null: none).
    template <class T>
    static CoopArg diff_view(std::vector<T>& v, std::type_identity_t<std::vector<T>>* g, std::vector<int64_t> shape) {
        CoopArg a = view(v, std::move(shape));
        a.grad = g ? g->data() : nullptr;
        return a;
    }
    template <class T>
    static CoopArg scalar(T value) {
        CoopArg a;
        a.bytes.resize(sizeof(T));
        std::memcpy(a.bytes.data(), &value, sizeof(T));
        return a;
    }
};

/// A compiled cooperative kernel: the front end's state (the layout's types live there), the
/// generated CPU kernel, loaded.
struct CoopKernel {
    lang::SourceManager sources;
    lang::AstContext ast;
    lang::TypeContext types;
    lang::Diagnostics diags;
    driver::Result result;
    std::shared_ptr<const runtime::LoadedKernel> loaded;

    /// Runs the kernel over `grid` blocks of `block` threads; returns the fault record (code 0:
    /// none). `sequential`: the blocks in order on this thread, else through the thread pool.
    codegen::FaultRecord launch(std::array<int64_t, 3> block, std::array<int64_t, 3> grid,
                                const std::vector<CoopArg>& args, bool sequential = false) const {
        const codegen::ParamLayout& layout = result.kernel.layout;
        EXPECT_EQ(layout.fields.size(), args.size()) << "argument count";
        std::vector<uint8_t> params(layout.size, 0);
        codegen::CallHeader header{};
        for (int64_t& d : header.shape) d = 1;
        for (int d = 0; d < 3; ++d) {
            header.shape[d] = block[size_t(d)];
            header.shape[3 + d] = grid[size_t(d)];
        }
        header.shape[6] = 0;  // no 1-D thread count
        header.total = grid[0] * grid[1] * grid[2];
        header.rank = 7;
        std::memcpy(params.data(), &header, sizeof header);
        for (size_t k = 0; k < args.size() && k < layout.fields.size(); ++k) {
            const codegen::ParamField& f = layout.fields[k];
            const CoopArg& a = args[k];
            if (!f.type->is_tensor()) {
                EXPECT_EQ(a.bytes.size(), f.size) << "scalar argument " << f.name;
                std::memcpy(params.data() + f.offset, a.bytes.data(), std::min(a.bytes.size(), f.size));
                continue;
            }
            int64_t shape[8] = {}, strides[8] = {};
            const int64_t rank = int64_t(a.shape.size());
            int64_t stride = a.components;
            for (int64_t d = rank - 1; d >= 0; --d) {
                shape[d] = a.shape[size_t(d)];
                strides[d] = a.strides.empty() ? stride : a.strides[size_t(d)];
                stride *= shape[d];
            }
            const int64_t inner[2] = {1, 0};
            std::memcpy(params.data() + f.tensor.data, &a.data, sizeof(void*));
            std::memcpy(params.data() + f.tensor.shape, shape, sizeof shape);
            std::memcpy(params.data() + f.tensor.strides, strides, sizeof strides);
            std::memcpy(params.data() + f.tensor.inner, inner, sizeof inner);
            std::memcpy(params.data() + f.tensor.view_rank, &rank, sizeof rank);
            if (f.tensor.grad_view) {  // a DiffTensorView: the gradient's record, as the primal's
                const size_t g = f.tensor.grad_view - f.tensor.data;
                const int64_t grad_rank = a.grad ? rank : 0;
                std::memcpy(params.data() + f.tensor.data + g, &a.grad, sizeof(void*));
                std::memcpy(params.data() + f.tensor.shape + g, shape, sizeof shape);
                std::memcpy(params.data() + f.tensor.strides + g, strides, sizeof strides);
                std::memcpy(params.data() + f.tensor.inner + g, inner, sizeof inner);
                std::memcpy(params.data() + f.tensor.view_rank + g, &grad_rank, sizeof grad_rank);
            }
        }
        runtime::LaunchRequest r;
        r.kernel = loaded.get();
        r.block = params.data();
        r.block_size = params.size();
        r.total = header.total;
        r.sequential = sequential;
        for (int d = 0; d < 3; ++d) {
            r.coop_block[d] = block[size_t(d)];
            r.coop_grid[d] = grid[size_t(d)];
        }
        return runtime::backend(DeviceType::CPU).launch(r).record;
    }
};

/// Compiles `entry` of `source` for `target`; throws lang::CompileError on a diagnostic.
inline void compile_coop_into(CoopKernel& k, const std::string& source, const std::string& entry, DeviceType target) {
    driver::Input input;
    input.roots.push_back({"coop.slang", source, "", nullptr, nullptr});
    driver::Options options;
    options.scope = driver::Scope::Kernel;
    options.entry = entry;
    options.target = target;
    options.verify = true;
    options.codegen.debug_checks = true;
    driver::compile({k.sources, k.ast, k.types, k.diags}, input, options, k.result);
}

/// The kernel compiled for the CPU and loaded; its CUDA translation compiled with NVRTC (or
/// nvcc; skipped where neither exists and NVRTC is not required).
inline std::unique_ptr<CoopKernel> build_coop(const std::string& source, const std::string& entry) {
    {
        CoopKernel cuda;
        compile_coop_into(cuda, source, entry, DeviceType::CUDA);
        bool skipped = false;
        EXPECT_TRUE(cuda_compiles(cuda.result.kernel.source, &skipped)) << cuda.result.kernel.source.substr(
            cuda.result.kernel.body_begin);
    }
    auto k = std::make_unique<CoopKernel>();
    compile_coop_into(*k, source, entry, DeviceType::CPU);
    runtime::KernelSpec spec;
    spec.source = &k->result.kernel.source;
    spec.entry = k->result.kernel.entry;
    k->loaded = runtime::backend(DeviceType::CPU).load(spec);
    return k;
}

}  // namespace sg::test
