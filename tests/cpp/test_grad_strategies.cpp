// tests/cpp/test_grad_strategies.cpp — how a backward kernel writes each gradient
// (binder.h: GradStrategy): the classification from the call's layout, the strategy comment in
// the backward glue (what debug_code shows), the generated reductions, gradients of the CPU
// backend against float64 sums, deterministic mode (bitwise-identical runs), and the generated
// CUDA of every strategy compiled by NVRTC (fast and deterministic).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "../support/bound_calls.h"
#include "../support/cuda_compile_check.h"
#include "call/binder.h"
#include "call/call_key.h"
#include "call/call_plan.h"
#include "call/launch.h"
#include "call/resolve.h"
#include "call/errors.h"
#include "call/compile_kernel.h"
#include "call/resolve.h"
#include "call/user_module.h"

namespace sg::test {
namespace {

using call::ArgInfo;
using call::GradStrategy;

const std::string kModule = std::string(kGradientKernels) + R"([Differentiable]
float3 scale3(float3 p, float3 s) { return p * s * s; }
[Differentiable]
half hquad(half x, half a) { return a * x * x; }
[Differentiable]
double dquad(double x, double a) { return a * x * x; }
[Differentiable]
float asum(float x, float w[4]) { return x * (w[0] + w[1] * x + w[2] * x * x + w[3]); }
)";


TEST(GradStrategies, ClassifiesEachGradientFromTheLayout) {
    call::UserModule m("strategies", kModule);
    std::vector<float> x(64), one(1), row(8), col(8), full(64);
    const DType f = DType::Float32;
    // x (8, 8) one per element; a (1,) broadcast everywhere; b (1, 8) and c (8, 1) partially.
    Call c = bind(m, "quad",
                  {tensor_arg(tensor_info({8, 8}, x.data(), f, true)), tensor_arg(tensor_info({1}, one.data(), f, true)),
                   tensor_arg(tensor_info({1, 8}, row.data(), f, true)),
                   tensor_arg(tensor_info({8, 1}, col.data(), f, true))});
    EXPECT_EQ(strategy(c, 0), GradStrategy::Store);
    EXPECT_EQ(strategy(c, 1), GradStrategy::Reduce);
    EXPECT_EQ(strategy(c, 2), GradStrategy::Atomic);
    EXPECT_EQ(strategy(c, 3), GradStrategy::Atomic);
    // A 0-d tensor and a (1, 1) tensor are broadcast along every call dim too.
    Call z = bind(m, "quad",
                  {tensor_arg(tensor_info({8, 8}, x.data(), f, true)), tensor_arg(tensor_info({}, one.data(), f, true)),
                   tensor_arg(tensor_info({1, 1}, one.data(), f, true)),
                   tensor_arg(tensor_info({8, 8}, full.data(), f, false))});
    EXPECT_EQ(strategy(z, 1), GradStrategy::Reduce);
    EXPECT_EQ(strategy(z, 2), GradStrategy::Reduce);
    EXPECT_EQ(strategy(z, 3), GradStrategy::Store);  // classified; not in the grad mask
    // A whole tensor read at computed indices collides by data.
    std::vector<int32_t> idx(16);
    std::vector<float> table(4);
    Call l = bind(m, "lut", {tensor_arg(tensor_info({16}, idx.data(), DType::Int32, false)),
                             tensor_arg(tensor_info({4}, table.data(), f, true))});
    EXPECT_EQ(strategy(l, 1), GradStrategy::Collide);
}

TEST(GradStrategies, BackwardGlueSaysEachStrategy) {
    call::UserModule m("strategies", kModule);
    std::vector<float> x(64), one(1), row(8);
    const DType f = DType::Float32;
    Call c = bind(m, "quad",
                  {tensor_arg(tensor_info({8, 8}, x.data(), f, true)), tensor_arg(tensor_info({1}, one.data(), f, true)),
                   tensor_arg(tensor_info({1, 8}, row.data(), f, true)), tensor_arg(tensor_info({1}, one.data(), f, false))});
    const std::string glue = call::make_backward_glue(c.binding).source;
    EXPECT_NE(glue.find("// gradient of 'x': store (one thread per element"), std::string::npos) << glue;
    EXPECT_NE(glue.find("// gradient of 'a': reduce (broadcast along every call dimension"), std::string::npos) << glue;
    EXPECT_NE(glue.find("// gradient of 'b': atomic (broadcast along some call dimensions"), std::string::npos) << glue;
    EXPECT_EQ(glue.find("gradient of 'c'"), std::string::npos) << glue;  // not in the grad mask
    std::vector<int32_t> idx(16);
    std::vector<float> table(4);
    Call l = bind(m, "lut", {tensor_arg(tensor_info({16}, idx.data(), DType::Int32, false)),
                             tensor_arg(tensor_info({4}, table.data(), f, true))});
    const std::string lglue = call::make_backward_glue(l.binding).source;
    EXPECT_NE(lglue.find("// gradient of 'table': collide (colliding by data"), std::string::npos) << lglue;
}

/// Runs the backward of `c` on the CPU with `grad_out` as the result's gradient (ones when
/// empty); gradient buffers are the vectors of `grads` (indexed by binding, empty: none).
template <class T>
void run_backward(const call::UserModule& m, Call& c, std::vector<std::vector<T>>& grads, const std::vector<T>& grad_out,
                  const std::vector<int64_t>& call_shape) {
    call::CallKey key;
    call::build_call_key(key, 0, c.args.data(), c.args.size(), c.args.size(), {}, true, 0);
    call::CallPlan plan(m, c.binding, key, {});
    const call::CallPlan::Backward& bw = plan.backward(plan.grad_mask());
    std::vector<TensorInfo> grad_infos(c.binding.params.size());
    std::vector<const TensorInfo*> grad_ptrs(c.binding.params.size(), nullptr);
    for (size_t i = 0; i < c.binding.params.size(); ++i) {
        if (!c.binding.params[i].requires_grad) continue;
        const TensorInfo& t = c.args[size_t(c.binding.params[i].arg)].tensor;
        grad_infos[i] = t;
        grad_infos[i].data = grads[i].data();
        grad_ptrs[i] = &grad_infos[i];
    }
    std::vector<int64_t> shape = call_shape;
    TensorInfo rg = tensor_info(shape, const_cast<T*>(grad_out.data()), DType::Float32, false);
    call::LaunchData data;
    data.args = c.args.data();
    data.call_shape = shape.data();
    data.result_grad = &rg;
    data.binding_grads = grad_ptrs.data();
    std::vector<uint8_t> block;
    call::launch::pack(bw.kernel, bw.glue, bw.binding, data, block);
    call::launch::run(bw.kernel, block, nullptr, c.binding.function);
}

TEST(GradStrategies, ReductionsMatchFloat64SumsOnTheCpu) {
    call::UserModule m("strategies", kModule);
    const int64_t H = 37, W = 1000;  // many pool chunks, a ragged last one
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(H * W)), g(static_cast<size_t>(H * W));
    for (auto& v : x) v = u(rng);
    for (auto& v : g) v = u(rng);
    std::vector<float> a{0.5f}, b(static_cast<size_t>(W)), c(static_cast<size_t>(H));
    for (auto& v : b) v = u(rng);
    for (auto& v : c) v = u(rng);
    const DType f = DType::Float32;
    for (bool deterministic : {false, true}) {
        Call call = bind(m, "quad",
                         {tensor_arg(tensor_info({H, W}, x.data(), f, false)), tensor_arg(tensor_info({1}, a.data(), f, true)),
                          tensor_arg(tensor_info({1, W}, b.data(), f, true)),
                          tensor_arg(tensor_info({H, 1}, c.data(), f, true))},
                         deterministic);
        std::vector<std::vector<float>> grads{{}, std::vector<float>(1), std::vector<float>(size_t(W)),
                                              std::vector<float>(size_t(H))};
        run_backward(m, call, grads, g, {H, W});
        double da = 0;
        std::vector<double> db(static_cast<size_t>(W)), dc(static_cast<size_t>(H));
        for (int64_t i = 0; i < H; ++i)
            for (int64_t j = 0; j < W; ++j) {
                const double gi = g[size_t(i * W + j)], xi = x[size_t(i * W + j)];
                da += gi * xi * xi;
                db[size_t(j)] += gi * xi;
                dc[size_t(i)] += gi;
            }
        EXPECT_NEAR(grads[1][0], da, 1e-5 * (std::fabs(da) + 100)) << "deterministic=" << deterministic;
        for (int64_t j = 0; j < W; ++j) EXPECT_NEAR(grads[2][size_t(j)], db[size_t(j)], 1e-4);
        for (int64_t i = 0; i < H; ++i) EXPECT_NEAR(grads[3][size_t(i)], dc[size_t(i)], 1e-3);
    }
}

// A (1,) gradient over 1M elements is summed as a tree on the CPU (double sums per pool chunk,
// the chunks added pairwise, one rounding): for c's gradient, whose terms are g itself, the double
// sum of 2^20 floats in [0.5, 1.5) is exact, so the gradient is that sum rounded once to float,
// in fast mode (many chunks) and in deterministic mode (one chunk) alike.
TEST(GradStrategies, ReducedGradientIsRoundedOnceOnTheCpu) {
    call::UserModule m("strategies", kModule);
    const int64_t N = int64_t(1) << 20;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0.5f, 1.5f);
    std::vector<float> x(static_cast<size_t>(N)), g(static_cast<size_t>(N));
    for (auto& v : x) v = u(rng);
    for (auto& v : g) v = u(rng);
    double exact = 0;
    for (float v : g) exact += v;
    const DType f = DType::Float32;
    std::vector<float> k{0.25f};
    for (bool deterministic : {false, true}) {
        for (int run = 0; run < 3; ++run) {
            Call q = bind(m, "quad",
                          {tensor_arg(tensor_info({N}, x.data(), f, false)), tensor_arg(tensor_info({1}, k.data(), f, false)),
                           tensor_arg(tensor_info({1}, k.data(), f, false)), tensor_arg(tensor_info({1}, k.data(), f, true))},
                          deterministic);
            std::vector<std::vector<float>> grads{{}, {}, {}, std::vector<float>(1)};
            run_backward(m, q, grads, g, {N});
            EXPECT_EQ(grads[3][0], float(exact)) << "deterministic=" << deterministic << " run " << run;
        }
    }
    // The generated CPU code: chunk sums to the backend's scratch, a second entry adds them.
    Call q = bind(m, "quad", {tensor_arg(tensor_info({N}, x.data(), f, false)), tensor_arg(tensor_info({1}, k.data(), f, true)),
                              tensor_arg(tensor_info({1}, k.data(), f, false)), tensor_arg(tensor_info({1}, k.data(), f, false))},
                  false);
    codegen::CodegenOptions base;
    base.call_rank = q.binding.call_rank;
    call::Glue glue = call::make_backward_glue(q.binding);
    call::CompiledKernel kernel = call::generate(m, glue, DeviceType::CPU, call::kernel_options(base, glue));
    const std::string code = kernel.generated.source.substr(kernel.generated.body_begin);
    EXPECT_NE(code.find("sg_reduce_store(sg_sums"), std::string::npos) << code;
    EXPECT_EQ(kernel.generated.final_entry, kernel.generated.entry + "_final");
    EXPECT_EQ(kernel.generated.reduced_slots, 1);
}

TEST(GradStrategies, DeterministicCpuRunsAreBitwiseIdentical) {
    call::UserModule m("strategies", kModule);
    const int64_t N = 200000;
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(N)), g(static_cast<size_t>(N)), table(32);
    std::vector<int32_t> idx(static_cast<size_t>(N));
    for (auto& v : x) v = u(rng);
    for (auto& v : g) v = u(rng);
    for (auto& v : table) v = u(rng);
    for (auto& v : idx) v = int32_t(rng() % 32);
    const DType f = DType::Float32;
    std::vector<float> a{0.25f};
    std::vector<uint32_t> first_a, first_table;
    for (int run = 0; run < 5; ++run) {
        Call q = bind(m, "quad",
                      {tensor_arg(tensor_info({N}, x.data(), f, false)), tensor_arg(tensor_info({1}, a.data(), f, true)),
                       tensor_arg(tensor_info({1}, a.data(), f, false)), tensor_arg(tensor_info({1}, a.data(), f, false))},
                      true);
        std::vector<std::vector<float>> qg{{}, std::vector<float>(1), {}, {}};
        run_backward(m, q, qg, g, {N});
        Call l = bind(m, "lut", {tensor_arg(tensor_info({N}, idx.data(), DType::Int32, false)),
                                 tensor_arg(tensor_info({32}, table.data(), f, true))},
                      true);
        std::vector<std::vector<float>> lg{{}, std::vector<float>(32)};
        run_backward(m, l, lg, g, {N});
        std::vector<uint32_t> bits_a(1), bits_t(32);
        std::memcpy(bits_a.data(), qg[1].data(), 4);
        std::memcpy(bits_t.data(), lg[1].data(), 32 * 4);
        if (run == 0) {
            first_a = bits_a;
            first_table = bits_t;
        }
        EXPECT_EQ(bits_a, first_a) << "run " << run;
        EXPECT_EQ(bits_t, first_table) << "run " << run;
    }
}

/// The CUDA of `c`'s backward compiles with NVRTC; returns the generated source.
std::string expect_backward_cuda(const call::UserModule& m, const Call& c, bool deterministic) {
    codegen::CodegenOptions base;
    base.call_rank = c.binding.call_rank;
    base.deterministic = deterministic;
    call::Glue glue = call::make_backward_glue(c.binding);
    const codegen::CodegenOptions options = call::kernel_options(base, glue);
    call::CompiledKernel k = call::generate(m, glue, DeviceType::CUDA, options);
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << k.generated.source.substr(k.generated.body_begin);
    return k.generated.source.substr(k.generated.body_begin);
}

TEST(GradStrategies, GeneratedCudaOfEveryStrategyCompiles) {
    call::UserModule m("strategies", kModule);
    const DType f = DType::Float32;
    auto t = cuda_tensor_arg;
    Call q = bind(m, "quad", {t({64, 64}, f, true), t({1}, f, true), t({1, 64}, f, true), t({64, 1}, f, true)}, false,
                  DeviceType::CUDA);
    const std::string fast = expect_backward_cuda(m, q, false);
    if (std::getenv("SG_DUMP_STRATEGY_CODE")) std::fprintf(stderr, "%s\n", fast.c_str());
    // Fast mode sums as a tree too: block sums in double to scratch, the last block adds them once.
    EXPECT_EQ(fast.find("sg_reduce_flush("), std::string::npos) << fast;
    EXPECT_NE(fast.find("sg_reduce_partial(params.header"), std::string::npos) << fast;
    EXPECT_NE(fast.find("sg_reduce_last_block(params.header)"), std::string::npos) << fast;
    EXPECT_NE(fast.find("sg_reduce_add(sg_acc_"), std::string::npos) << fast;
    // Deterministic: block sums to scratch, the last block adds them in order.
    Call qd = bind(m, "quad", {t({4096}, f, false), t({1}, f, true), t({}, f, true), t({1}, f, true)}, true,
                   DeviceType::CUDA);
    const std::string det = expect_backward_cuda(m, qd, true);
    if (std::getenv("SG_DUMP_STRATEGY_CODE")) std::fprintf(stderr, "%s\n", det.c_str());
    EXPECT_NE(det.find("sg_reduce_partial(params.header"), std::string::npos) << det;
    EXPECT_NE(det.find("sg_reduce_last_block(params.header)"), std::string::npos) << det;
    Call s = bind(m, "scale3", {t({4096, 3}, f, false), t({1, 3}, f, true)}, false, DeviceType::CUDA);
    EXPECT_EQ(strategy(s, 1), GradStrategy::Reduce);
    expect_backward_cuda(m, s, false);
    expect_backward_cuda(m, s, true);
    Call h = bind(m, "hquad", {t({4096}, DType::Float16, true), t({1}, DType::Float16, true)}, false, DeviceType::CUDA);
    expect_backward_cuda(m, h, false);
    expect_backward_cuda(m, h, true);
    Call d = bind(m, "dquad", {t({4096}, DType::Float64, true), t({1}, DType::Float64, true)}, false, DeviceType::CUDA);
    expect_backward_cuda(m, d, false);
    expect_backward_cuda(m, d, true);
    // Tables: a tree table (a double copy per block in shared memory, the blocks' copies summed
    // in double in scratch, rounded once by the last block; test_tree_tables.cpp), with the
    // block-private float copy where the double one does not fit.
    Call l = bind(m, "lut", {t({4096}, DType::Int32, false), t({256}, f, true)}, false, DeviceType::CUDA);
    const std::string table = expect_backward_cuda(m, l, false);
    if (std::getenv("SG_DUMP_STRATEGY_CODE")) std::fprintf(stderr, "%s\n", table.c_str());
    EXPECT_NE(table.find("sg_tree_begin(sg_tt_buf_"), std::string::npos) << table;
    EXPECT_NE(table.find("sg_grad_add_tree("), std::string::npos) << table;
    EXPECT_NE(table.find("sg_tree_flush(sg_tt_"), std::string::npos) << table;
    EXPECT_NE(table.find("sg_private_flush(params."), std::string::npos) << table;
    EXPECT_NE(table.find("sg_tree_final(params."), std::string::npos) << table;
    Call lv = bind(m, "lut3", {t({4096}, DType::Int32, false), t({64, 3}, DType::Float64, true)}, false, DeviceType::CUDA);
    expect_backward_cuda(m, lv, false);
    Call lh = bind(m, "luth", {t({4096}, DType::Int32, false), t({64}, DType::Float16, true)}, false, DeviceType::CUDA);
    const std::string half_table = expect_backward_cuda(m, lh, false);
    EXPECT_EQ(half_table.find("sg_private_begin("), std::string::npos) << "half tables stay in global memory";
    EXPECT_EQ(half_table.find("sg_tree_begin("), std::string::npos) << "half tables stay in global memory";
}

/// The generated CUDA of a deterministic backward: compiled by NVRTC (also with debug checks and
/// 64-bit indexing), without a float atomic on any gradient.
std::string expect_deterministic_cuda(const call::UserModule& m, const Call& c) {
    codegen::CodegenOptions base;
    base.call_rank = c.binding.call_rank;
    base.deterministic = true;
    call::Glue glue = call::make_backward_glue(c.binding);
    std::string body;
    for (int variant = 0; variant < 3; ++variant) {
        codegen::CodegenOptions options = base;
        options.debug_checks = variant == 1;
        options.index_64bit = variant == 2;
        call::CompiledKernel k = call::generate(m, call::make_backward_glue(c.binding, variant == 2), DeviceType::CUDA,
                                                call::kernel_options(options, glue));
        bool skipped = false;
        EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << k.generated.source.substr(k.generated.body_begin);
        const std::string code = k.generated.source.substr(k.generated.body_begin);
        EXPECT_EQ(code.find("sg_grad_add("), std::string::npos) << code;
        EXPECT_EQ(code.find("sg_tensor_atomic_add("), std::string::npos) << code;
        EXPECT_EQ(code.find("sg_reduce_flush("), std::string::npos) << code;
        if (variant == 0) body = code;
    }
    if (std::getenv("SG_DUMP_STRATEGY_CODE")) std::fprintf(stderr, "%s\n", body.c_str());
    return body;
}

TEST(GradStrategies, DeterministicCudaOrdersCollidingGradients) {
    call::UserModule m("strategies", kModule);
    const DType f = DType::Float32;
    auto t = cuda_tensor_arg;
    // Partial broadcasts (1, W) and (H, 1) beside a full one (a reduction) and an elementwise x.
    Call q = bind(m, "quad", {t({64, 64}, f, true), t({1}, f, true), t({1, 64}, f, true), t({64, 1}, f, true)}, true,
                  DeviceType::CUDA);
    EXPECT_EQ(strategy(q, 2), GradStrategy::Atomic);
    const std::string partial = expect_deterministic_cuda(m, q);
    EXPECT_NE(partial.find("sg_ordered_record(sg_or_"), std::string::npos) << partial;
    EXPECT_NE(partial.find("sg_ordered_flush_all(sg_ot_"), std::string::npos) << partial;
    EXPECT_NE(partial.find("sg_ordered_block_end(params.header"), std::string::npos) << partial;
    EXPECT_NE(partial.find("sg_reduce_partial(params.header"), std::string::npos) << partial;
    EXPECT_NE(partial.find("_final(const __grid_constant__"), std::string::npos) << partial;
    EXPECT_NE(partial.find("sg_ordered_final<float>("), std::string::npos) << partial;
    // Tables of float, double3 and half elements.
    Call l = bind(m, "lut", {t({4096}, DType::Int32, false), t({256}, f, true)}, true, DeviceType::CUDA);
    const std::string table = expect_deterministic_cuda(m, l);
    EXPECT_NE(table.find("sg_ordered_record(sg_or_"), std::string::npos) << table;
    EXPECT_EQ(table.find("sg_private_begin("), std::string::npos) << table;
    Call lv = bind(m, "lut3", {t({4096}, DType::Int32, false), t({64, 3}, DType::Float64, true)}, true, DeviceType::CUDA);
    EXPECT_NE(expect_deterministic_cuda(m, lv).find("sg_ordered_final<double>("), std::string::npos);
    Call lh = bind(m, "luth", {t({4096}, DType::Int32, false), t({64}, DType::Float16, true)}, true, DeviceType::CUDA);
    EXPECT_NE(expect_deterministic_cuda(m, lh).find("sg_ordered_rec<half>"), std::string::npos);
    // A vector partial broadcast, and half / double ones.
    Call s = bind(m, "scale3", {t({64, 32, 3}, f, false), t({1, 32, 3}, f, true)}, true, DeviceType::CUDA);
    EXPECT_EQ(strategy(s, 1), GradStrategy::Atomic);
    expect_deterministic_cuda(m, s);
    Call h = bind(m, "hquad", {t({64, 64}, DType::Float16, true), t({64, 1}, DType::Float16, true)}, true, DeviceType::CUDA);
    expect_deterministic_cuda(m, h);
    Call d = bind(m, "dquad", {t({64, 64}, DType::Float64, true), t({1, 64}, DType::Float64, true)}, true, DeviceType::CUDA);
    expect_deterministic_cuda(m, d);
    // An array broadcast over the call: one add site per element (no loop in the glue).
    Call a = bind(m, "asum", {t({64}, f, false), t({1, 4}, f, true)}, true, DeviceType::CUDA);
    EXPECT_EQ(strategy(a, 1), GradStrategy::Atomic);
    const std::string array = expect_deterministic_cuda(m, a);
    EXPECT_NE(array.find("sg_ordered_rec<float> (&sg_or_"), std::string::npos) << array;
    EXPECT_NE(array.find("[3], off"), std::string::npos) << array;
    // The fast mode sums its partial broadcasts in tree tables (test_tree_tables.cpp).
    EXPECT_NE(expect_backward_cuda(m, q, false).find("sg_tensor_atomic_add_tree("), std::string::npos);
}

TEST(GradStrategies, DeterministicCudaRefusesWhatItCannotOrderClearly) {
    call::UserModule m("strategies", kModule);
    auto t = cuda_tensor_arg;
    // A table read inside a loop: an add site that runs more than once per element.
    Call l = bind(m, "lutsum", {t({4096}, DType::Int32, false), t({256}, DType::Float32, true)}, true, DeviceType::CUDA);
    codegen::CodegenOptions options;
    options.call_rank = 1;
    options.deterministic = true;
    call::Glue glue = call::make_backward_glue(l.binding);
    try {
        call::generate(m, glue, DeviceType::CUDA, call::kernel_options(options, glue));
        FAIL() << "expected OrderingUnsupported";
    } catch (const codegen::OrderingUnsupported& e) {
        EXPECT_NE(std::string(e.what()).find("inside a loop"), std::string::npos) << e.what();
        ASSERT_GE(e.param, 0);
        EXPECT_EQ(l.binding.params[size_t(glue.params[size_t(e.param)].binding)].name, "table");
    }
    // The CPU backend runs it in order: no refusal there.
    Call lc = bind(m, "lutsum", {tensor_arg(tensor_info({16}, nullptr, DType::Int32, false)),
                                 tensor_arg(tensor_info({256}, nullptr, DType::Float32, true))}, true);
    codegen::CodegenOptions cpu = options;
    call::Glue cglue = call::make_backward_glue(lc.binding);
    EXPECT_NO_THROW(call::generate(m, cglue, DeviceType::CPU, call::kernel_options(cpu, cglue)));
    // Matrix elements have no ordered table: codegen sums them in fixed point instead.
    Call mt = bind(m, "mscale", {t({64}, DType::Float32, false), t({1, 2, 2}, DType::Float32, true)}, true,
                   DeviceType::CUDA);
    EXPECT_EQ(strategy(mt, 1), GradStrategy::Atomic);
    call::Glue mglue = call::make_backward_glue(mt.binding);
    call::CompiledKernel mk = call::generate(m, mglue, DeviceType::CUDA, call::kernel_options(options, mglue));
    ASSERT_EQ(mk.generated.fixed.size(), 1u);
    EXPECT_EQ(mt.binding.params[size_t(mglue.params[size_t(mk.generated.fixed[0].param)].binding)].name, "m");
    EXPECT_TRUE(mk.generated.ordered.empty());
}

}  // namespace
}  // namespace sg::test
