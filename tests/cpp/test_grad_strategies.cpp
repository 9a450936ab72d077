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

#include "../support/cuda_compile_check.h"
#include "call/binder.h"
#include "call/call_key.h"
#include "call/call_plan.h"
#include "call/resolve.h"
#include "call/errors.h"
#include "call/compile_kernel.h"
#include "call/resolve.h"
#include "call/user_module.h"

namespace sg::test {
namespace {

using call::ArgInfo;
using call::GradStrategy;

const char* kModule = R"(
[Differentiable]
float quad(float x, float a, float b, float c) { return a * x * x + b * x + c; }
[Differentiable]
float3 scale3(float3 p, float3 s) { return p * s * s; }
[Differentiable]
float lut(int i, IDiffTensor<float, 1> table) { return table[i] * table[i]; }
[Differentiable]
half hquad(half x, half a) { return a * x * x; }
[Differentiable]
double dquad(double x, double a) { return a * x * x; }
[Differentiable]
double3 lut3(int i, IDiffTensor<double3, 1> table) { return table[i] * 2.0; }
[Differentiable]
half luth(int i, IDiffTensor<half, 1> table) { return table[i] * table[i]; }
[Differentiable]
float lutsum(int i, IDiffTensor<float, 1> table) {
    float s = 0.0;
    for (int k = 0; k < 4; k++) s += table[(i + k) % 256];
    return s;
}
[Differentiable]
float mscale(float x, float2x2 m) { return (m[0][0] + m[1][1]) * x; }
[Differentiable]
float asum(float x, float w[4]) { return x * (w[0] + w[1] * x + w[2] * x * x + w[3]); }
)";

TensorInfo tensor_info(std::vector<int64_t> shape, void* data, DType dtype, bool requires_grad,
                       DeviceType device = DeviceType::CPU) {
    TensorInfo t;
    std::memset(&t, 0, sizeof(t));
    t.data = data;
    t.ndim = int(shape.size());
    int64_t stride = 1, numel = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
        t.shape[d] = shape[size_t(d)];
        t.strides[d] = shape[size_t(d)] == 1 ? 0 : stride;
        stride *= shape[size_t(d)];
    }
    for (int64_t e : shape) numel *= e;
    t.numel = numel;
    t.dtype = dtype;
    t.device_type = device;
    t.device_index = device == DeviceType::CPU ? -1 : 0;
    t.requires_grad = requires_grad;
    return t;
}

ArgInfo tensor_arg(const TensorInfo& t) {
    ArgInfo a;
    a.kind = call::ArgKind::Tensor;
    a.tensor = t;
    return a;
}

/// One bound call: the arguments, the binding and (CPU) a plan to launch.
struct Call {
    std::vector<ArgInfo> args;
    call::Binding binding;
};

Call bind(const call::UserModule& m, const std::string& fn, std::vector<ArgInfo> args, bool deterministic = false,
          DeviceType device = DeviceType::CPU) {
    call::CallModifiers mods;
    mods.deterministic = deterministic;
    Call c{std::move(args), {}};
    c.binding = call::bind_call(m, fn, c.args.data(), c.args.size(), c.args.size(), {}, true, device, mods);
    return c;
}

GradStrategy strategy(const Call& c, int param) {
    for (const call::ParamBinding& p : c.binding.params)
        if (p.param == param) return p.grad_strategy;
    return GradStrategy::None;
}

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
    call::CallPlan::pack(bw.kernel, bw.glue, bw.binding, data, block);
    call::CallPlan::launch(bw.kernel, block, nullptr, c.binding.function);
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
    call::CompiledKernel k = call::generate(m, glue, codegen::Target::Cuda, options);
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << k.generated.source.substr(k.generated.body_begin);
    return k.generated.source.substr(k.generated.body_begin);
}

TEST(GradStrategies, GeneratedCudaOfEveryStrategyCompiles) {
    call::UserModule m("strategies", kModule);
    const DType f = DType::Float32;
    auto t = [](std::vector<int64_t> shape, DType dt, bool grad) {
        return tensor_arg(tensor_info(shape, nullptr, dt, grad, DeviceType::CUDA));
    };
    Call q = bind(m, "quad", {t({64, 64}, f, true), t({1}, f, true), t({1, 64}, f, true), t({64, 1}, f, true)}, false,
                  DeviceType::CUDA);
    const std::string fast = expect_backward_cuda(m, q, false);
    if (std::getenv("SG_DUMP_STRATEGY_CODE")) std::fprintf(stderr, "%s\n", fast.c_str());
    EXPECT_NE(fast.find("sg_reduce_flush(params."), std::string::npos) << fast;
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
    // Tables: a block-private copy in shared memory when the gradient fits.
    Call l = bind(m, "lut", {t({4096}, DType::Int32, false), t({256}, f, true)}, false, DeviceType::CUDA);
    const std::string table = expect_backward_cuda(m, l, false);
    if (std::getenv("SG_DUMP_STRATEGY_CODE")) std::fprintf(stderr, "%s\n", table.c_str());
    EXPECT_NE(table.find("sg_private_begin(params."), std::string::npos) << table;
    EXPECT_NE(table.find("sg_grad_add_private("), std::string::npos) << table;
    EXPECT_NE(table.find("sg_private_flush(params."), std::string::npos) << table;
    Call lv = bind(m, "lut3", {t({4096}, DType::Int32, false), t({64, 3}, DType::Float64, true)}, false, DeviceType::CUDA);
    expect_backward_cuda(m, lv, false);
    Call lh = bind(m, "luth", {t({4096}, DType::Int32, false), t({64}, DType::Float16, true)}, false, DeviceType::CUDA);
    const std::string half_table = expect_backward_cuda(m, lh, false);
    EXPECT_EQ(half_table.find("sg_private_begin("), std::string::npos) << "half tables stay in global memory";
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
        call::CompiledKernel k = call::generate(m, call::make_backward_glue(c.binding, variant == 2), codegen::Target::Cuda,
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
    auto t = [](std::vector<int64_t> shape, DType dt, bool grad) {
        return tensor_arg(tensor_info(shape, nullptr, dt, grad, DeviceType::CUDA));
    };
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
    // The fast mode keeps its atomics.
    EXPECT_NE(expect_backward_cuda(m, q, false).find("sg_tensor_atomic_add("), std::string::npos);
}

TEST(GradStrategies, DeterministicCudaRefusesWhatItCannotOrderClearly) {
    call::UserModule m("strategies", kModule);
    auto t = [](std::vector<int64_t> shape, DType dt, bool grad) {
        return tensor_arg(tensor_info(shape, nullptr, dt, grad, DeviceType::CUDA));
    };
    // A table read inside a loop: an add site that runs more than once per element.
    Call l = bind(m, "lutsum", {t({4096}, DType::Int32, false), t({256}, DType::Float32, true)}, true, DeviceType::CUDA);
    codegen::CodegenOptions options;
    options.call_rank = 1;
    options.deterministic = true;
    call::Glue glue = call::make_backward_glue(l.binding);
    try {
        call::generate(m, glue, codegen::Target::Cuda, call::kernel_options(options, glue));
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
    EXPECT_NO_THROW(call::generate(m, cglue, codegen::Target::Cpu, call::kernel_options(cpu, cglue)));
    // Matrix elements have no ordered table: codegen sums them in fixed point instead.
    Call mt = bind(m, "mscale", {t({64}, DType::Float32, false), t({1, 2, 2}, DType::Float32, true)}, true,
                   DeviceType::CUDA);
    EXPECT_EQ(strategy(mt, 1), GradStrategy::Atomic);
    call::Glue mglue = call::make_backward_glue(mt.binding);
    call::CompiledKernel mk = call::generate(m, mglue, codegen::Target::Cuda, call::kernel_options(options, mglue));
    ASSERT_EQ(mk.generated.fixed.size(), 1u);
    EXPECT_EQ(mt.binding.params[size_t(mglue.params[size_t(mk.generated.fixed[0].param)].binding)].name, "m");
    EXPECT_TRUE(mk.generated.ordered.empty());
}

/// The kernel parameter of `c`'s backward glue that carries the gradient of binding `name`.
int gradient_param(const Call& c, const call::Glue& glue, const std::string& name) {
    for (size_t k = 0; k < glue.params.size(); ++k) {
        const call::GlueParam& g = glue.params[k];
        const bool grad = g.source == call::ParamSource::ArgGrad || (g.source == call::ParamSource::ArgTensor && g.grad_view);
        if (grad && g.binding >= 0 && c.binding.params[size_t(g.binding)].name == name) return int(k);
    }
    return -1;
}

/// The generated CUDA of a deterministic backward whose gradient of `table` is summed in fixed
/// point, both variants (scan and accumulate; also with debug checks and 64-bit indexing):
/// compiled by NVRTC, without a float atomic on any gradient. Returns {scan, accumulate}.
std::pair<std::string, std::string> expect_fixed_cuda(const call::UserModule& m, const Call& c, const std::string& table,
                                                      bool force = true) {
    std::pair<std::string, std::string> out;
    for (int variant = 0; variant < 3; ++variant) {
        codegen::CodegenOptions base;
        base.call_rank = c.binding.call_rank;
        base.deterministic = true;
        base.debug_checks = variant == 1;
        base.index_64bit = variant == 2;
        call::Glue glue = call::make_backward_glue(c.binding, variant == 2);
        codegen::CodegenOptions options = call::kernel_options(base, glue);
        const int param = gradient_param(c, glue, table);
        EXPECT_GE(param, 0) << table;
        if (force) options.fixed_params = uint64_t(1) << param;
        for (auto phase : {codegen::CodegenOptions::FixedPhase::Scan, codegen::CodegenOptions::FixedPhase::Accumulate}) {
            options.fixed_phase = phase;
            call::CompiledKernel k = call::generate(m, glue, codegen::Target::Cuda, options);
            bool skipped = false;
            const std::string code = k.generated.source.substr(k.generated.body_begin);
            EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << code;
            EXPECT_EQ(code.find("sg_grad_add("), std::string::npos) << code;
            EXPECT_EQ(code.find("sg_tensor_atomic_add("), std::string::npos) << code;
            EXPECT_EQ(code.find("sg_reduce_flush("), std::string::npos) << code;
            EXPECT_EQ(k.generated.fixed.size(), 1u) << code;
            if (!k.generated.fixed.empty()) EXPECT_EQ(k.generated.fixed[0].param, param);
            const bool scan = phase == codegen::CodegenOptions::FixedPhase::Scan;
            EXPECT_EQ(k.generated.fixed_entry.empty(), scan);
            EXPECT_NE(code.find(scan ? "sg_fixed_scan(sg_fx_" : "sg_fixed_add<"), std::string::npos) << code;
            if (scan) {  // every other gradient write is dropped
                EXPECT_EQ(code.find("sg_ordered_record("), std::string::npos) << code;
                EXPECT_EQ(code.find("sg_reduce_partial("), std::string::npos) << code;
                EXPECT_EQ(code.find("sg_grad_store("), std::string::npos) << code;
                EXPECT_EQ(code.find("sg_tensor_store("), std::string::npos) << code;
                EXPECT_NE(code.find("fixed-point scan (gradient writes dropped)"), std::string::npos) << code;
            } else {
                EXPECT_NE(code.find("_fixed(const __grid_constant__"), std::string::npos) << code;
                EXPECT_NE(code.find("sg_fixed_final<"), std::string::npos) << code;
            }
            if (variant == 0) (scan ? out.first : out.second) = code;
        }
    }
    if (std::getenv("SG_DUMP_STRATEGY_CODE")) std::fprintf(stderr, "%s\n%s\n", out.first.c_str(), out.second.c_str());
    return out;
}

TEST(GradStrategies, DeterministicCudaSumsInFixedPointWhatOrderedTablesCannotTake) {
    call::UserModule m("strategies", kModule);
    const DType f = DType::Float32;
    auto t = [](std::vector<int64_t> shape, DType dt, bool grad) {
        return tensor_arg(tensor_info(shape, nullptr, dt, grad, DeviceType::CUDA));
    };
    // A 1M-entry table (past the ordered tables' shared memory: the call layer picks it per launch)
    // in float, half and double3 (128-bit accumulators).
    Call l = bind(m, "lut", {t({1 << 20}, DType::Int32, false), t({1 << 20}, f, true)}, true, DeviceType::CUDA);
    const auto [scan, acc] = expect_fixed_cuda(m, l, "table");
    EXPECT_NE(acc.find("sg_fixed_final<1>("), std::string::npos) << acc;
    Call lh = bind(m, "luth", {t({4096}, DType::Int32, false), t({1 << 20}, DType::Float16, true)}, true, DeviceType::CUDA);
    expect_fixed_cuda(m, lh, "table");
    Call lv = bind(m, "lut3", {t({4096}, DType::Int32, false), t({1 << 20, 3}, DType::Float64, true)}, true,
                   DeviceType::CUDA);
    EXPECT_NE(expect_fixed_cuda(m, lv, "table").second.find("sg_fixed_add<2>("), std::string::npos);
    // A table read in a loop: fixed point is the only scheme (the call layer retries with it).
    Call ls = bind(m, "lutsum", {t({4096}, DType::Int32, false), t({256}, f, true)}, true, DeviceType::CUDA);
    expect_fixed_cuda(m, ls, "table");
    // A batch of tables: each call element adds to its own slice, rebased to the whole buffer.
    Call lb = bind(m, "lut", {t({8, 64}, DType::Int32, false), t({64, 256}, f, true)}, true, DeviceType::CUDA);
    EXPECT_NE(expect_fixed_cuda(m, lb, "table").second.find("sg_fixed_rebase("), std::string::npos);
    // Matrix elements (a partial broadcast): fixed point without being asked, beside an ordered one.
    Call mt = bind(m, "mscale", {t({64, 8}, f, false), t({1, 8, 2, 2}, f, true)}, true, DeviceType::CUDA);
    expect_fixed_cuda(m, mt, "m", /*force=*/false);
    // A fixed table beside reductions and an ordered table: the accumulate variant keeps them.
    Call q = bind(m, "quad", {t({64, 64}, f, true), t({1}, f, true), t({1, 64}, f, true), t({64, 1}, f, true)}, true,
                  DeviceType::CUDA);
    const std::string mixed = expect_fixed_cuda(m, q, "c").second;
    EXPECT_NE(mixed.find("sg_ordered_record(sg_or_"), std::string::npos) << mixed;
    EXPECT_NE(mixed.find("sg_reduce_partial(params.header"), std::string::npos) << mixed;
}

TEST(GradStrategies, DeterministicCudaPicksFixedPointForWhatCodegenCannotOrder) {
    call::UserModule m("strategies", kModule);
    auto t = [](std::vector<int64_t> shape, DType dt, bool grad) {
        return tensor_arg(tensor_info(shape, nullptr, dt, grad, DeviceType::CUDA));
    };
    codegen::CodegenOptions base;
    base.call_rank = 1;
    base.deterministic = true;
    // A loop and a batch of tables: the table becomes fixed point; a plain table stays ordered.
    Call ls = bind(m, "lutsum", {t({4096}, DType::Int32, false), t({256}, DType::Float32, true)}, true, DeviceType::CUDA);
    call::Glue gs = call::make_backward_glue(ls.binding);
    EXPECT_EQ(call::fixed_point_params(m, gs, call::kernel_options(base, gs), 0), uint64_t(1) << gradient_param(ls, gs, "table"));
    Call lb = bind(m, "lut", {t({64}, DType::Int32, false), t({64, 256}, DType::Float32, true)}, true, DeviceType::CUDA);
    call::Glue gb = call::make_backward_glue(lb.binding);
    EXPECT_EQ(call::fixed_point_params(m, gb, call::kernel_options(base, gb), 0), uint64_t(1) << gradient_param(lb, gb, "table"));
    Call l = bind(m, "lut", {t({4096}, DType::Int32, false), t({256}, DType::Float32, true)}, true, DeviceType::CUDA);
    call::Glue gl = call::make_backward_glue(l.binding);
    EXPECT_EQ(call::fixed_point_params(m, gl, call::kernel_options(base, gl), 0), 0u);
}

TEST(GradStrategies, FixedPointScratchHoldsEveryTablesRecordsBelowTheHeader) {
    call::UserModule m("strategies", kModule);
    auto t = [](std::vector<int64_t> shape, DType dt, bool grad) {
        return tensor_arg(tensor_info(shape, nullptr, dt, grad, DeviceType::CUDA));
    };
    struct Case {
        const char* fn;
        std::vector<int64_t> table;
        DType dtype;
        int64_t extent;
        int wide;
    };
    for (const Case& c : {Case{"lut", {1 << 20}, DType::Float32, 1 << 20, 1},
                          Case{"lut3", {1 << 16, 3}, DType::Float64, 3 << 16, 2}}) {
        Call call = bind(m, c.fn, {t({4096}, DType::Int32, false), t(c.table, c.dtype, true)}, true, DeviceType::CUDA);
        codegen::CodegenOptions base;
        base.call_rank = 1;
        base.deterministic = true;
        call::Glue glue = call::make_backward_glue(call.binding);
        codegen::CodegenOptions options = call::kernel_options(base, glue);
        options.fixed_params = uint64_t(1) << gradient_param(call, glue, "table");
        call::CompiledKernel k = call::generate(m, glue, codegen::Target::Cuda, options);
        k.target = codegen::Target::Cuda;
        std::vector<TensorInfo> grads(call.binding.params.size());
        std::vector<const TensorInfo*> grad_ptrs(call.binding.params.size(), nullptr);
        for (size_t i = 0; i < call.binding.params.size(); ++i)
            if (call.binding.params[i].requires_grad) {
                grads[i] = call.args[size_t(call.binding.params[i].arg)].tensor;
                grad_ptrs[i] = &grads[i];
            }
        std::vector<int64_t> shape{4096};
        TensorInfo rg = tensor_info(shape, nullptr, c.dtype, false, DeviceType::CUDA);
        call::LaunchData data;
        data.args = call.args.data();
        data.call_shape = shape.data();
        data.result_grad = &rg;
        data.binding_grads = grad_ptrs.data();
        std::vector<uint8_t> block;
        call::CallPlan::pack(k, glue, call.binding, data, block);
        const int param = k.generated.fixed.at(0).param;
        EXPECT_EQ(call::CallPlan::ordered_extent(k, block, param), c.extent) << c.fn;
        EXPECT_EQ(k.generated.fixed[0].wide, c.wide) << c.fn;
        const size_t prefix = call::CallPlan::scratch_prefix(k, block);
        EXPECT_EQ(prefix, codegen::fixed_table_bytes(c.extent, c.wide)) << c.fn;
        EXPECT_EQ(call::CallPlan::scratch_bytes(k, glue, call.binding, block), prefix + 16) << c.fn;
    }
}

TEST(GradStrategies, FixedPointTableBytesMatchTheDevice) {
    // The call layer's size of a table's records is the prelude's (exponents, counts, flags, sums).
    EXPECT_EQ(codegen::fixed_table_bytes(0, 1), 0u);
    EXPECT_EQ(codegen::fixed_table_bytes(1, 1), 16u + 16u + 16u + 16u);
    EXPECT_EQ(codegen::fixed_table_bytes(1 << 20, 1), size_t(1 << 20) * 24);
    EXPECT_EQ(codegen::fixed_table_bytes(1 << 20, 2), size_t(1 << 20) * 32);
    EXPECT_NE(std::string(codegen::device_prelude()).find("sg_fixed_round(e * 4u) + sg_fixed_round(e * 8u) + "
                                                          "sg_fixed_round(e * 4u) + sg_fixed_round(e * 8u * (size_t)wide)"),
              std::string::npos);
}

}  // namespace
}  // namespace sg::test
