// tests/cpp/test_stored_grads.cpp — tables whose gradient the backward stores instead of adding
// to (codegen::StoredGrad, src/codegen/stored_grads.cpp): which reads qualify (only at the call
// element's own index, in any order of the call dimensions), which do not (two reads, a
// neighbour, a branch, a smaller rank, computed indices, deterministic mode), the generated CPU
// and CUDA code (NVRTC), CPU gradients into an uninitialised buffer against the adds into a zeroed
// one, bit for bit, and the launch-time test that lets a buffer skip its zero fill.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "../support/bound_calls.h"
#include "../support/cuda_compile_check.h"
#include "call/autograd_node.h"
#include "call/call_key.h"
#include "call/call_plan.h"
#include "call/compile_kernel.h"
#include "call/launch.h"

namespace sg::test {
namespace {

const char* kTables = R"(
[Differentiable]
float own(no_diff int2 pix, IDiffTensor<float, 2> a, IDiffTensor<float, 2> b)
{
    return a[uint2(pix.x, pix.y)] * b[uint2(pix.x, pix.y)];
}
[Differentiable]
float transposed(no_diff int2 pix, IDiffTensor<float, 2> a)
{
    return a[uint2(pix.y, pix.x)] * 3.0;
}
[Differentiable]
double own3(no_diff int2 pix, IDiffTensor<double3, 2> a)
{
    double3 v = a[uint2(pix.x, pix.y)];
    return v.x * v.y + v.z;
}
[Differentiable]
float twice(no_diff int2 pix, IDiffTensor<float, 2> a)
{
    return a[uint2(pix.x, pix.y)] * a[uint2(pix.x, pix.y)];
}
[Differentiable]
float neighbour(no_diff int2 pix, IDiffTensor<float, 2> a)
{
    return a[uint2(pix.x, pix.y)] + a[uint2(min(pix.x + 1, 3), pix.y)];
}
[Differentiable]
float branch(no_diff int2 pix, IDiffTensor<float, 2> a)
{
    if (pix.x > 1) return a[uint2(pix.x, pix.y)] * 2.0;
    return 0.0;
}
[Differentiable]
float row(no_diff int2 pix, IDiffTensor<float, 1> w)
{
    return w[pix.x] * 2.0;
}
)";

Call bind_grid(const call::UserModule& m, const std::string& fn, std::vector<ArgInfo> tables, int64_t h, int64_t w,
               DeviceType device = DeviceType::CPU, bool deterministic = false) {
    ArgInfo g;
    g.kind = call::ArgKind::Grid;
    std::memset(&g.tensor, 0, sizeof(g.tensor));
    g.tensor.ndim = 2;
    g.tensor.shape[0] = h;
    g.tensor.shape[1] = w;
    g.tensor.device_type = device;
    tables.insert(tables.begin(), g);
    return bind(m, fn, std::move(tables), deterministic, device);
}

struct Generated {
    call::Glue glue;
    call::CompiledKernel kernel;
    std::string code;
};

Generated backward(const call::UserModule& m, const Call& c, DeviceType target, bool stored = true, bool deterministic = false,
                   bool load = false) {
    codegen::CodegenOptions base;
    base.call_rank = c.binding.call_rank;
    base.deterministic = deterministic;
    Generated g;
    g.glue = call::make_backward_glue(c.binding);
    codegen::CodegenOptions options = call::kernel_options(base, g.glue);
    if (!stored) options.stored_table_params = 0;
    g.kernel = load ? call::compile_kernel(m, g.glue, options, target, -1) : call::generate(m, g.glue, target, options);
    g.code = g.kernel.generated.source.substr(g.kernel.generated.body_begin);
    return g;
}

/// The user's parameter name of each stored table of `g`.
std::vector<std::string> stored_names(const Call& c, const Generated& g) {
    std::vector<std::string> names;
    for (const codegen::StoredGrad& s : g.kernel.generated.stored_grads)
        names.push_back(c.binding.params[size_t(g.glue.params[size_t(s.param)].binding)].name);
    return names;
}

TEST(StoredGrads, TablesReadAtTheCallIndexAreStored) {
    call::UserModule m("stored", kTables);
    const DType f = DType::Float32;
    std::vector<float> a(12), b(12);
    Call c = bind_grid(m, "own", {tensor_arg(tensor_info({3, 4}, a.data(), f, true)),
                                  tensor_arg(tensor_info({3, 4}, b.data(), f, true))}, 3, 4);
    EXPECT_EQ(strategy(c, 1), GradStrategy::Collide);  // the binder cannot tell; codegen proves it
    for (DeviceType target : {DeviceType::CPU, DeviceType::CUDA}) {
        Generated g = backward(m, c, target);
        EXPECT_EQ(stored_names(c, g), (std::vector<std::string>{"a", "b"})) << g.code;
        for (const codegen::StoredGrad& s : g.kernel.generated.stored_grads) {
            EXPECT_EQ(s.rank, 2);
            EXPECT_EQ(s.dims[0], 0);
            EXPECT_EQ(s.dims[1], 1);
        }
        EXPECT_NE(g.code.find("sg_grad_store("), std::string::npos) << g.code;
        EXPECT_EQ(g.code.find("sg_grad_add"), std::string::npos) << g.code;
        EXPECT_EQ(g.code.find("sg_private_begin("), std::string::npos) << g.code;
        EXPECT_EQ(g.code.find("sg_chunk_table("), std::string::npos) << g.code;
        EXPECT_TRUE(g.kernel.generated.final_entry.empty());
    }
    // Only `b` in the grad mask: `a` has no gradient view, `b` is stored.
    Call mixed = bind_grid(m, "own", {tensor_arg(tensor_info({3, 4}, a.data(), f, false)),
                                      tensor_arg(tensor_info({3, 4}, b.data(), f, true))}, 3, 4);
    EXPECT_EQ(stored_names(mixed, backward(m, mixed, DeviceType::CPU)), std::vector<std::string>{"b"});
    // Read as a[pix.y, pix.x]: tensor dimension 0 is call dimension 1 and the other way round.
    Call t = bind_grid(m, "transposed", {tensor_arg(tensor_info({4, 3}, a.data(), f, true))}, 3, 4);
    Generated tg = backward(m, t, DeviceType::CPU);
    ASSERT_EQ(tg.kernel.generated.stored_grads.size(), 1u) << tg.code;
    EXPECT_EQ(tg.kernel.generated.stored_grads[0].dims[0], 1);
    EXPECT_EQ(tg.kernel.generated.stored_grads[0].dims[1], 0);
    // Vector elements (double3) too.
    std::vector<double> v(36);
    Call d = bind_grid(m, "own3", {tensor_arg(tensor_info({3, 4, 3}, v.data(), DType::Float64, true))}, 3, 4);
    EXPECT_EQ(backward(m, d, DeviceType::CPU).kernel.generated.stored_grads.size(), 1u);
}

TEST(StoredGrads, CollidingReadsKeepTheirAdds) {
    call::UserModule m("stored", kTables);
    const DType f = DType::Float32;
    std::vector<float> a(16), w(4);
    auto table = [&] { return tensor_arg(tensor_info({4, 4}, a.data(), f, true)); };
    // Two reads of one entry (two adds by one element), a neighbour's entry, a read in a branch.
    for (const char* fn : {"twice", "neighbour", "branch"}) {
        Call c = bind_grid(m, fn, {table()}, 4, 4);
        for (DeviceType target : {DeviceType::CPU, DeviceType::CUDA}) {
            Generated g = backward(m, c, target);
            EXPECT_TRUE(g.kernel.generated.stored_grads.empty()) << fn << "\n" << g.code;
            EXPECT_EQ(g.code.find("sg_grad_store("), std::string::npos) << fn << "\n" << g.code;
        }
    }
    // A (4,) table over a 4x4 call: every row's elements add to the same entries.
    Call r = bind_grid(m, "row", {tensor_arg(tensor_info({4}, w.data(), f, true))}, 4, 4);
    EXPECT_TRUE(backward(m, r, DeviceType::CPU).kernel.generated.stored_grads.empty());
    // A table read at computed indices.
    call::UserModule lm("lut", kGradientKernels);
    std::vector<int32_t> idx(16);
    std::vector<float> lut(4);
    Call l = bind(lm, "lut", {tensor_arg(tensor_info({16}, idx.data(), DType::Int32, false)),
                              tensor_arg(tensor_info({4}, lut.data(), f, true))});
    EXPECT_TRUE(backward(lm, l, DeviceType::CPU).kernel.generated.stored_grads.empty());
    // Deterministic mode keeps its ordered sums (CUDA) and its order (CPU).
    Call det = bind_grid(m, "own", {table(), table()}, 4, 4, DeviceType::CPU, true);
    EXPECT_TRUE(backward(m, det, DeviceType::CPU, true, true).kernel.generated.stored_grads.empty());
    Call cdet = bind_grid(m, "own", {cuda_tensor_arg({4, 4}, f, true), cuda_tensor_arg({4, 4}, f, true)}, 4, 4,
                          DeviceType::CUDA, true);
    Generated cg = backward(m, cdet, DeviceType::CUDA, true, true);
    EXPECT_TRUE(cg.kernel.generated.stored_grads.empty());
    EXPECT_NE(cg.code.find("sg_ordered_record("), std::string::npos) << cg.code;
}

TEST(StoredGrads, GeneratedCudaCompiles) {
    call::UserModule m("stored", kTables);
    const DType f = DType::Float32;
    auto t = cuda_tensor_arg;
    for (const char* fn : {"own", "transposed", "twice", "branch"}) {
        std::vector<ArgInfo> args{t({64, 64}, f, true)};
        if (std::string(fn) == "own") args.push_back(t({64, 64}, f, false));
        Call c = bind_grid(m, fn, args, 64, 64, DeviceType::CUDA);
        Generated g = backward(m, c, DeviceType::CUDA);
        bool skipped = false;
        EXPECT_TRUE(cuda_compiles(g.kernel.generated.source, &skipped)) << fn << "\n" << g.code;
        if (std::getenv("SG_DUMP_STORED_CODE")) std::fprintf(stderr, "%s\n", g.code.c_str());
    }
    // As calls compile it when no tensor overlaps another: loads first (two phases) and dense
    // vector loads of the call-shaped views; the store stays in the second phase.
    {
        Call c = bind_grid(m, "own", {t({64, 64}, f, false), t({64, 64}, f, true)}, 64, 64, DeviceType::CUDA);
        codegen::CodegenOptions base;
        base.call_rank = 2;
        base.readonly_loads = true;
        call::Glue glue = call::make_backward_glue(c.binding);
        call::CompiledKernel k = call::generate(m, glue, DeviceType::CUDA, call::kernel_options(base, glue));
        const std::string code = k.generated.source.substr(k.generated.body_begin);
        EXPECT_EQ(k.generated.stored_grads.size(), 1u);
        EXPECT_NE(code.find("SG_PHASE"), std::string::npos) << code;
        EXPECT_NE(code.find("sg_grad_store("), std::string::npos) << code;
        bool skipped = false;
        EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << code;
    }
    Call d = bind_grid(m, "own3", {t({64, 64, 3}, DType::Float64, true)}, 64, 64, DeviceType::CUDA);
    Generated dg = backward(m, d, DeviceType::CUDA);
    EXPECT_EQ(dg.kernel.generated.stored_grads.size(), 1u);
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(dg.kernel.generated.source, &skipped)) << dg.code;
}

/// Runs the CPU backward of `c` (result gradient `g` over `shape`) into `grads` (per binding).
void run(const call::UserModule& m, Call& c, const Generated& bw, std::vector<std::vector<float>>& grads,
         std::vector<float>& g, std::vector<int64_t> shape) {
    std::vector<TensorInfo> infos(c.binding.params.size());
    std::vector<const TensorInfo*> ptrs(c.binding.params.size(), nullptr);
    for (size_t i = 0; i < c.binding.params.size(); ++i) {
        if (!c.binding.params[i].requires_grad) continue;
        infos[i] = c.args[size_t(c.binding.params[i].arg)].tensor;
        infos[i].data = grads[i].data();
        infos[i].requires_grad = false;
        ptrs[i] = &infos[i];
    }
    TensorInfo rg = tensor_info(shape, g.data(), DType::Float32, false);
    call::LaunchData data;
    data.args = c.args.data();
    data.call_shape = shape.data();
    data.result_grad = &rg;
    data.binding_grads = ptrs.data();
    std::vector<uint8_t> block;
    call::launch::pack(bw.kernel, bw.glue, c.binding, data, block);
    call::launch::run(bw.kernel, block, nullptr, c.binding.function);
    (void)m;
}

TEST(StoredGrads, StoredGradientsMatchTheAddsBitForBit) {
    call::UserModule m("stored", kTables);
    const DType f = DType::Float32;
    const int64_t H = 37, W = 53;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::vector<float> a(size_t(H * W)), b(size_t(H * W)), g(size_t(H * W)), at(size_t(H * W));
    for (auto* v : {&a, &b, &g, &at})
        for (float& x : *v) x = u(rng);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // own: both tables; transposed: a (W, H) table over the (H, W) call.
    struct Case {
        const char* fn;
        std::vector<ArgInfo> args;
        std::vector<int> tables;  // bindings with gradients
    };
    std::vector<Case> cases{
        {"own", {tensor_arg(tensor_info({H, W}, a.data(), f, true)), tensor_arg(tensor_info({H, W}, b.data(), f, true))}, {1, 2}},
        {"transposed", {tensor_arg(tensor_info({W, H}, at.data(), f, true))}, {1}},
    };
    for (Case& cs : cases) {
        Call c = bind_grid(m, cs.fn, cs.args, H, W);
        Generated stored = backward(m, c, DeviceType::CPU, true, false, true);
        Generated added = backward(m, c, DeviceType::CPU, false, false, true);
        ASSERT_EQ(stored.kernel.generated.stored_grads.size(), cs.tables.size()) << cs.fn;
        ASSERT_TRUE(added.kernel.generated.stored_grads.empty());
        std::vector<std::vector<float>> into_garbage(c.binding.params.size()), into_zeros(c.binding.params.size());
        for (int i : cs.tables) {
            into_garbage[size_t(i)].assign(size_t(H * W), nan);  // what torch.empty may hold
            into_zeros[size_t(i)].assign(size_t(H * W), 0.0f);
        }
        run(m, c, stored, into_garbage, g, {H, W});
        run(m, c, added, into_zeros, g, {H, W});
        for (int i : cs.tables) {
            EXPECT_EQ(std::memcmp(into_garbage[size_t(i)].data(), into_zeros[size_t(i)].data(), size_t(H * W) * 4), 0)
                << cs.fn << " binding " << i;
            // The buffer has the call's extents: the launch skips its fill.
            const TensorInfo& t = c.args[size_t(c.binding.params[size_t(i)].arg)].tensor;
            call::CallKey key;
            call::build_call_key(key, 0, c.args.data(), c.args.size(), c.args.size(), {}, true, 0);
            call::CallPlan plan(m, c.binding, key, {});
            call::CallPlan::Backward& bw = plan.backward(plan.grad_mask());
            const int64_t shape[2] = {H, W};
            EXPECT_TRUE(call::stores_every_entry(bw, i, t, shape)) << cs.fn;
            // A call over part of the table stores only that part: the rest needs the fill.
            const int64_t part[2] = {H - 1, W};
            EXPECT_FALSE(call::stores_every_entry(bw, i, t, part)) << cs.fn;
        }
        // Values: d(a*b)/db = g * a at the same entry; transposed: 3 * g at the swapped one.
        if (std::string(cs.fn) == "own") {
            for (int64_t k = 0; k < H * W; ++k) {
                EXPECT_EQ(into_garbage[2][size_t(k)], g[size_t(k)] * a[size_t(k)]);
                EXPECT_EQ(into_garbage[1][size_t(k)], g[size_t(k)] * b[size_t(k)]);
            }
        } else {
            for (int64_t i = 0; i < H; ++i)
                for (int64_t j = 0; j < W; ++j)
                    EXPECT_EQ(into_garbage[1][size_t(j * H + i)], g[size_t(i * W + j)] * 3.0f);
        }
    }
}

}  // namespace
}  // namespace sg::test
