// tests/cpp/test_coop_view_methods.cpp — Slang's TensorView methods beyond load and store and
// slangtorch's DiffTensorView spellings, on the CPU backend (and compiled for CUDA with NVRTC):
// `v.InterlockedAdd/Min/Max/And/Or/Xor/Exchange(index, value, out original)` and
// `v.InterlockedCompareExchange(index, compare, value)` with every thread of several blocks
// hitting one element; a TensorView<double>'s add and a TensorView<float>'s bitwise
// compare-exchange; `.diff.diff` (the gradient view, as slangtorch writes it); and `loadOnce`,
// whose backward stores the gradient (no atomics) where `load`'s adds it.
#include "coop_harness.h"
#include "lang/half_float.h"

namespace sg::test {
namespace {

TEST(CoopViewMethods, InterlockedMethodsUnderContention) {
    auto k = build_coop(R"(
[CUDAKernel]
void hammer(TensorView<int> acc, TensorView<uint> bits, TensorView<int> seen, TensorView<int64_t> wide)
{
    uint t = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    int old;
    acc.InterlockedAdd(0, 2, old);              // 2 per thread
    acc.InterlockedMin(1, int(t) - 7, old);     // the smallest
    acc.InterlockedMax(uint2(2, 0).x, int(t) * 3, old);
    uint ob;
    bits.InterlockedOr(0, 1u << (t % 32), ob);
    bits.InterlockedAnd(1, ~(1u << (t % 32)), ob);
    bits.InterlockedXor(2, 1u << (t % 5), ob);  // each bit flipped once per thread of its residue
    int got;
    seen.InterlockedExchange(int(t), int(t) + 100, got);
    seen.InterlockedCompareExchange(int(t) + 200, 0, int(t));  // first (and only) writer wins
    int64_t ow;
    wide.InterlockedAdd(0, int64_t(1) << 33, ow);
}
)", "hammer");
    const int threads = 3 * 64;
    std::vector<int32_t> acc = {0, 1 << 20, -1}, seen(400, 0);
    std::vector<uint32_t> bits = {0u, 0xffffffffu, 0u};
    std::vector<int64_t> wide = {5};
    const auto fault = k->launch({64, 1, 1}, {3, 1, 1},
                                 {CoopArg::view(acc, {3}), CoopArg::view(bits, {3}), CoopArg::view(seen, {400}),
                                  CoopArg::view(wide, {1})});
    EXPECT_EQ(fault.code, 0u);
    EXPECT_EQ(acc[0], 2 * threads);
    EXPECT_EQ(acc[1], -7);
    EXPECT_EQ(acc[2], 3 * (threads - 1));
    EXPECT_EQ(bits[0], 0xffffffffu);
    EXPECT_EQ(bits[1], 0u);
    uint32_t x = 0;
    for (int t = 0; t < threads; ++t) x ^= 1u << (t % 5);
    EXPECT_EQ(bits[2], x);
    for (int t = 0; t < threads; ++t) {
        EXPECT_EQ(seen[size_t(t)], t + 100) << t;
        if (t + 200 < 400) EXPECT_EQ(seen[size_t(t + 200)], t) << t;
    }
    EXPECT_EQ(wide[0], 5 + int64_t(threads) * (int64_t(1) << 33));
}

TEST(CoopViewMethods, FloatAndDoubleMethods) {
    auto k = build_coop(R"(
[CUDAKernel]
void floats(TensorView<double> sum, TensorView<float> slot, TensorView<int> wins)
{
    uint t = cudaThreadIdx().x;
    double od;
    sum.InterlockedAdd(0, 0.25, od);
    float of;
    slot.InterlockedExchange(1, 2.0, of);
    // compare-exchange on the bits: the thread that finds 0.0 writes its own number and wins
    float before = slot[0];
    slot.InterlockedCompareExchange(0, 0.0, float(t + 1));
    if (slot[0] == float(t + 1)) InterlockedAdd(wins[0], 1);
}
)", "floats");
    std::vector<double> sum = {1.0};
    std::vector<float> slot = {0.0f, 0.0f};
    std::vector<int32_t> wins = {0};
    const auto fault = k->launch({100, 1, 1}, {1, 1, 1},
                                 {CoopArg::view(sum, {1}), CoopArg::view(slot, {2}), CoopArg::view(wins, {1})});
    EXPECT_EQ(fault.code, 0u);
    EXPECT_EQ(sum[0], 26.0);
    EXPECT_EQ(slot[1], 2.0f);
    EXPECT_GE(slot[0], 1.0f);
    EXPECT_EQ(wins[0], 1);
}

TEST(CoopViewMethods, DiffDiffIsTheGradientView) {
    // slangtorch's inline MLP adds into `weights.diff.diff` by hand inside a custom backward.
    auto k = build_coop(R"(
[CUDAKernel]
void grads(DiffTensorView<float> w, TensorView<float> out)
{
    uint t = cudaThreadIdx().x;
    float old;
    w.diff.diff.InterlockedAdd(t % 2, 1.5, old);
    if (t == 0) out[0] = w.diff.diff.load(2) + w.diff[2] + w.primal[1];
    TensorView<float> g = w.diff.diff;
    if (t == 1) out[1] = float(g.size(0));
}
)", "grads");
    std::vector<float> w = {1.0f, 2.0f, 3.0f}, gw = {0.0f, 0.0f, 10.0f}, out(2, 0.0f);
    const auto fault = k->launch({8, 1, 1}, {1, 1, 1}, {CoopArg::diff_view(w, &gw, {3}), CoopArg::view(out, {2})});
    EXPECT_EQ(fault.code, 0u);
    EXPECT_EQ(gw[0], 6.0f);
    EXPECT_EQ(gw[1], 6.0f);
    EXPECT_EQ(out[0], 22.0f);
    EXPECT_EQ(out[1], 3.0f);
}

const char* kLoadOnce = R"(
[Differentiable]
[CUDAKernel]
void scale(DiffTensorView<float> x, DiffTensorView<float> y, DiffTensorView<float> z)
{
    uint i = cudaThreadIdx().x;
    if (i >= y.size(0)) return;
    float v = x.loadOnce(uint2(i, 0).x);  // each element of x loaded once (a second loadOnce of it
    y.storeOnce(i, 3.0 * v * v);           // would store its own gradient over the first's)
    z.store(i, x.load(0));                                              // x[0] read by every thread
}
)";

TEST(CoopViewMethods, LoadOnceStoresItsGradient) {
    auto k = build_coop(std::string(kLoadOnce) +
                            "[CUDAKernel]\nvoid bwd(DiffTensorView<float> x, DiffTensorView<float> y, "
                            "DiffTensorView<float> z) { bwd_diff(scale)(x, y, z); }\n"
                            "[CUDAKernel]\nvoid fwd(DiffTensorView<float> x, DiffTensorView<float> y, "
                            "DiffTensorView<float> z) { fwd_diff(scale)(x, y, z); }\n",
                        "bwd");
    std::vector<float> x = {1.0f, 2.0f, -1.5f, 0.5f}, gy = {1.0f, 2.0f, 3.0f, 4.0f}, gz = {1.0f, 1.0f, 1.0f, 1.0f};
    std::vector<float> y(4, 0.0f), z(4, 0.0f);
    // A stale value in the gradient: loadOnce's backward stores over it, load's adds to it.
    std::vector<float> gx = {100.0f, 100.0f, 100.0f, 100.0f};
    const auto fault = k->launch({4, 1, 1}, {1, 1, 1},
                                 {CoopArg::diff_view(x, &gx, {4}), CoopArg::diff_view(y, &gy, {4}),
                                  CoopArg::diff_view(z, &gz, {4})});
    EXPECT_EQ(fault.code, 0u);
    // d(3 x^2)/dx = 6x, stored once; x[0] also gets the 4 gradients of z (added after the store,
    // or before it and overwritten: Slang leaves the order to the threads, so test the others).
    for (size_t i = 1; i < 4; ++i) EXPECT_FLOAT_EQ(gx[i], 6.0f * x[i] * float(i + 1)) << i;
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(gy[i], float(i + 1)) << "storeOnce's backward reads, never clears";

    auto f = build_coop(std::string(kLoadOnce) +
                            "[CUDAKernel]\nvoid fwd(DiffTensorView<float> x, DiffTensorView<float> y, "
                            "DiffTensorView<float> z) { fwd_diff(scale)(x, y, z); }\n",
                        "fwd");
    std::vector<float> dx = {1.0f, 0.5f, 2.0f, 1.0f}, dy(4, 0.0f), dz(4, 0.0f);
    EXPECT_EQ(f->launch({4, 1, 1}, {1, 1, 1},
                        {CoopArg::diff_view(x, &dx, {4}), CoopArg::diff_view(y, &dy, {4}),
                         CoopArg::diff_view(z, &dz, {4})})
                  .code,
              0u);
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_FLOAT_EQ(dy[i], 6.0f * x[i] * dx[i]) << i;  // loadOnce's tangent is read as load's
        EXPECT_FLOAT_EQ(dz[i], dx[0]) << i;
    }
}

const char* kHalfPeek = R"(
[CUDAKernel]
void peek(DiffTensorView<half> x, TensorView<float> out)
{
    float old;
    x.diff.diff.InterlockedAdd(1, 0.25, old);
    out[0] = x.diff.diff[1] + float(x.primal[1]);
}
)";

TEST(CoopViewMethods, HalfValuesWithFloatGradients) {
    // Slang's DiffTensorView<half>: half values, a float gradient view (`.diff.diff` is float).
    auto k = build_coop(R"(
[Differentiable]
[CUDAKernel]
void halves(DiffTensorView<half> x, DiffTensorView<half> y)
{
    uint i = cudaThreadIdx().x;
    if (i >= y.size(0)) return;
    half v = x.load(i);
    y.store(i, v * v + x[0]);
}
[CUDAKernel]
void halves_bwd(DiffTensorView<half> x, DiffTensorView<half> y) { bwd_diff(halves)(x, y); }
)", "halves_bwd");
    auto bits = [](float f) { return lang::half_bits_from_double(f); };
    std::vector<uint16_t> x = {bits(1.5f), bits(-2.0f), bits(0.5f)}, y(3, 0);
    std::vector<float> gx(3, 0.0f), gy = {1.0f, 2.0f, 4.0f};
    auto diff = [](std::vector<uint16_t>& v, std::vector<float>& g) {
        CoopArg a = CoopArg::view(v, {3});
        a.grad = g.data();
        return a;
    };
    const auto fault = k->launch({4, 1, 1}, {1, 1, 1}, {diff(x, gx), diff(y, gy)});
    EXPECT_EQ(fault.code, 0u);
    // d/dx_i (x_i^2) g_i, and x_0 also gets every g (the + x[0] of each element)
    EXPECT_FLOAT_EQ(gx[0], 2.0f * 1.5f * 1.0f + 7.0f);
    EXPECT_FLOAT_EQ(gx[1], 2.0f * -2.0f * 2.0f);
    EXPECT_FLOAT_EQ(gx[2], 2.0f * 0.5f * 4.0f);
    EXPECT_EQ(gy[0], 0.0f) << "store's backward takes the output gradient";

    auto peek = build_coop(kHalfPeek, "peek");
    std::vector<float> out(1, 0.0f);
    EXPECT_EQ(peek->launch({2, 1, 1}, {1, 1, 1}, {diff(x, gx), CoopArg::view(out, {1})}, true).code, 0u);
    EXPECT_FLOAT_EQ(gx[1], 2.0f * -2.0f * 2.0f + 0.5f);
    EXPECT_TRUE(out[0] == -2.0f + gx[1] || out[0] == -2.0f + gx[1] - 0.25f);  // after one or both adds
}

}  // namespace
}  // namespace sg::test
