// tests/cpp/test_tree_tables.cpp — CUDA tree tables in fast mode (CodegenOptions::chunk_table_params
// on CUDA, GeneratedKernel::tree_tables): a partially broadcast gradient ((1, W), (H, 1)) and a
// lookup table's gradient are summed per block in a double copy in shared memory, the blocks'
// copies added into double tables in scratch memory, and each entry rounded once by the last
// block. Checked here without a GPU: which gradients get a table (at most two; float and double
// scalar or vector elements; never in deterministic mode), the generated CUDA compiled by NVRTC
// (fast, debug checks, 64-bit indexing), its block-wide structure (every thread reaches each
// barrier: the copies begin before the elements and flush after them), and the scratch the call
// layer sizes for a launch against what the kernel reads (tree_table_bytes of each table's
// extent, below the header's pointer, zeroed with the 16-byte block counter).
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "../support/bound_calls.h"
#include "../support/cuda_compile_check.h"
#include "call/call_plan.h"
#include "call/compile_kernel.h"
#include "call/launch.h"

namespace sg::test {
namespace {

const std::string kModule = std::string(kGradientKernels) + R"(
[Differentiable]
float3 scale3(float3 p, float3 s) { return p * s * s; }
[Differentiable]
double dscale(double x, double w) { return w * x; }
[Differentiable]
half hquad(half x, half a) { return a * x * x; }
[Differentiable]
float lutmix(int i, float x, float w, IDiffTensor<float, 1> table) { return table[i] * x * w; }
)";

struct Generated {
    call::Glue glue;
    call::CompiledKernel kernel;
    std::string code;
};

Generated cuda_backward(const call::UserModule& m, const Call& c, bool deterministic = false, bool debug = false,
                        bool wide = false) {
    codegen::CodegenOptions base;
    base.call_rank = c.binding.call_rank;
    base.deterministic = deterministic;
    base.debug_checks = debug;
    base.index_64bit = wide;
    Generated g;
    g.glue = call::make_backward_glue(c.binding, wide);
    g.kernel = call::generate(m, g.glue, DeviceType::CUDA, call::kernel_options(base, g.glue));
    g.kernel.device_type = DeviceType::CUDA;  // as compile_kernel sets it (the scratch is the CUDA backend's)
    g.code = g.kernel.generated.source.substr(g.kernel.generated.body_begin);
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(g.kernel.generated.source, &skipped)) << g.code;
    return g;
}

std::vector<std::string> tree_names(const Call& c, const Generated& g) {
    std::vector<std::string> names;
    for (const auto& t : g.kernel.generated.tree_tables)
        names.push_back(c.binding.params[size_t(g.glue.params[size_t(t.param)].binding)].name);
    return names;
}

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(TreeTables, PartialBroadcastsAndTablesGetTreeTables) {
    call::UserModule m("trees", kModule);
    const DType f = DType::Float32;
    auto t = cuda_tensor_arg;
    // x elementwise, a (1,) reduced, b (1, 64) and c (64, 1) partial broadcasts.
    Call q = bind(m, "quad", {t({64, 64}, f, true), t({1}, f, true), t({1, 64}, f, true), t({64, 1}, f, true)}, false,
                  DeviceType::CUDA);
    for (int variant = 0; variant < 3; ++variant) {
        Generated g = cuda_backward(m, q, false, variant == 1, variant == 2);
        EXPECT_EQ(tree_names(q, g), (std::vector<std::string>{"b", "c"})) << g.code;
        EXPECT_EQ(count(g.code, "sg_tensor_atomic_add_tree("), 2u) << g.code;
        EXPECT_EQ(g.code.find("sg_tensor_atomic_add("), std::string::npos) << g.code;
        // The copies begin before the thread's elements and flush after them, in every thread.
        const size_t begin = g.code.find("sg_tree_begin(sg_tt_buf_"), loop = g.code.find("for (int k = 0; k <"),
                     flush = g.code.find("sg_tree_flush(sg_tt_"), last = g.code.find("sg_reduce_last_block(params.header)"),
                     final = g.code.find("sg_tree_final(params.");
        ASSERT_NE(begin, std::string::npos) << g.code;
        EXPECT_LT(begin, loop);
        EXPECT_LT(loop, flush);
        EXPECT_LT(flush, last);
        EXPECT_LT(last, final);
        // One last-block test serves the reduced (1,) gradient and both tables.
        EXPECT_EQ(count(g.code, "sg_reduce_last_block("), 1u) << g.code;
        EXPECT_EQ(count(g.code, "__shared__ double sg_tt_buf_"), 2u) << g.code;
        // Buffers (not tables): no float copy.
        EXPECT_EQ(g.code.find("sg_tree_private("), std::string::npos) << g.code;
    }
    // A table of float elements: the double copy, and the float copy where that does not fit.
    Call l = bind(m, "lut", {t({4096}, DType::Int32, false), t({256}, f, true)}, false, DeviceType::CUDA);
    Generated lg = cuda_backward(m, l);
    EXPECT_EQ(tree_names(l, lg), std::vector<std::string>{"table"});
    EXPECT_NE(lg.code.find("sg_grad_add_tree("), std::string::npos) << lg.code;
    EXPECT_NE(lg.code.find("sg_tree_private(sg_tt_buf_"), std::string::npos) << lg.code;
    // Vector and double elements.
    Call s = bind(m, "scale3", {t({64, 32, 3}, f, false), t({1, 32, 3}, f, true)}, false, DeviceType::CUDA);
    EXPECT_EQ(tree_names(s, cuda_backward(m, s)), std::vector<std::string>{"s"});
    Call d = bind(m, "dscale", {t({64, 64}, DType::Float64, false), t({1, 64}, DType::Float64, true)}, false,
                  DeviceType::CUDA);
    EXPECT_EQ(tree_names(d, cuda_backward(m, d)), std::vector<std::string>{"w"});
    Call lv = bind(m, "lut3", {t({4096}, DType::Int32, false), t({64, 3}, DType::Float64, true)}, false, DeviceType::CUDA);
    Generated lvg = cuda_backward(m, lv);
    EXPECT_EQ(tree_names(lv, lvg), std::vector<std::string>{"table"});
    EXPECT_EQ(lvg.code.find("sg_tree_private("), std::string::npos) << "double tables have no float copy";
    // A table beside two partial broadcasts: two tree tables (shared memory), the third keeps
    // its previous form (a table: atomics to the buffer, as no shared memory is left).
    Call mix = bind(m, "lutmix", {t({64, 64}, DType::Int32, false), t({1, 64}, f, true), t({64, 1}, f, true),
                                  t({256}, f, true)}, false, DeviceType::CUDA);
    Generated mg = cuda_backward(m, mix);
    EXPECT_EQ(tree_names(mix, mg), (std::vector<std::string>{"x", "w"})) << mg.code;
    EXPECT_NE(mg.code.find("sg_grad_add(") , std::string::npos) << mg.code;
    EXPECT_EQ(mg.code.find("sg_private_begin("), std::string::npos) << mg.code;
}

TEST(TreeTables, NotInDeterministicModeNorForHalf) {
    call::UserModule m("trees", kModule);
    auto t = cuda_tensor_arg;
    Call q = bind(m, "quad", {t({64, 64}, DType::Float32, true), t({1}, DType::Float32, true),
                              t({1, 64}, DType::Float32, true), t({64, 1}, DType::Float32, true)},
                  true, DeviceType::CUDA);
    Generated g = cuda_backward(m, q, true);
    EXPECT_TRUE(g.kernel.generated.tree_tables.empty());
    EXPECT_EQ(g.code.find("sg_tree_"), std::string::npos) << g.code;
    Call h = bind(m, "hquad", {t({64, 64}, DType::Float16, false), t({1, 64}, DType::Float16, true)}, false,
                  DeviceType::CUDA);
    Generated hg = cuda_backward(m, h);
    EXPECT_TRUE(hg.kernel.generated.tree_tables.empty());
    EXPECT_NE(hg.code.find("sg_tensor_atomic_add("), std::string::npos) << hg.code;
}

/// The scratch the call layer gives a launch of `g` over `call_shape` with `c`'s tensors.
std::pair<size_t, size_t> scratch_of(const Call& c, const Generated& g, std::vector<int64_t> call_shape) {
    std::vector<TensorInfo> grads(c.binding.params.size());
    std::vector<const TensorInfo*> ptrs(c.binding.params.size(), nullptr);
    for (size_t i = 0; i < c.binding.params.size(); ++i) {
        if (!c.binding.params[i].requires_grad) continue;
        grads[i] = c.args[size_t(c.binding.params[i].arg)].tensor;
        ptrs[i] = &grads[i];
    }
    TensorInfo rg = tensor_info(call_shape, nullptr, DType::Float32, false, DeviceType::CUDA);
    call::LaunchData data;
    data.args = c.args.data();
    data.call_shape = call_shape.data();
    data.result_grad = &rg;
    data.binding_grads = ptrs.data();
    std::vector<uint8_t> block;
    call::launch::pack(g.kernel, g.glue, c.binding, data, block);
    return {call::launch::scratch_prefix(g.kernel, block), call::launch::scratch_bytes(g.kernel, g.glue, c.binding, block)};
}

TEST(TreeTables, ScratchHoldsADoubleTablePerGradientThatFits) {
    call::UserModule m("trees", kModule);
    const DType f = DType::Float32;
    auto t = cuda_tensor_arg;
    // b (1, 1000): 1000 doubles (8000 bytes); c (64, 1): 64 doubles (512 bytes).
    Call q = bind(m, "quad", {t({64, 1000}, f, false), t({1}, f, false), t({1, 1000}, f, true), t({64, 1}, f, true)},
                  false, DeviceType::CUDA);
    Generated g = cuda_backward(m, q);
    ASSERT_EQ(g.kernel.generated.tree_tables.size(), 2u);
    auto [prefix, bytes] = scratch_of(q, g, {64, 1000});
    EXPECT_EQ(prefix, 8000u + 512u);
    EXPECT_EQ(bytes, prefix + 16u);  // the block counter (no reduced gradient)
    EXPECT_EQ(codegen::tree_table_bytes(3), 32u);
    EXPECT_EQ(codegen::tree_table_bytes(codegen::kTreeTableEntries), size_t(codegen::kTreeTableEntries) * 8);
    EXPECT_EQ(codegen::tree_table_bytes(codegen::kTreeTableEntries + 1), 0u);
    // A (1, 4096) gradient does not fit a block's double copy: no scratch table for it.
    Call wide = bind(m, "quad", {t({8, 4096}, f, false), t({1}, f, false), t({1, 4096}, f, true), t({8, 1}, f, true)},
                     false, DeviceType::CUDA);
    Generated wg = cuda_backward(m, wide);
    auto [wprefix, wbytes] = scratch_of(wide, wg, {8, 4096});
    EXPECT_EQ(wprefix, 64u);
    EXPECT_EQ(wbytes, 64u + 16u);
    // The device computes the same: sg_tree_bytes mirrors tree_table_bytes.
    EXPECT_NE(g.kernel.generated.source.find("SG_TREE_TABLE 2048"), std::string::npos);
}

}  // namespace
}  // namespace sg::test
