// tests/cpp/test_coop_diff.cpp — differentiable cooperative kernels on the CPU backend, each
// also compiled for CUDA (NVRTC): DiffTensorView load / store / storeOnce / [] / .primal /
// .diff, as parameters of [Differentiable] helpers; the backward of a [Differentiable]
// [CUDAKernel] function (bwd_diff of it, launched with the same block and grid) against float64
// finite differences; a backward that must rebuild groupshared memory behind its barriers; and a
// [BackwardDerivative] with a hand-written reverse loop (a compositing rasterizer's).
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "coop_harness.h"

namespace sg::test {
namespace {

/// Central differences of `loss(x)` in every component of `x`.
std::vector<double> finite_differences(std::vector<double> x, const std::function<double(std::vector<double>&)>& loss,
                                       double h = 1e-6) {
    std::vector<double> g(x.size());
    for (size_t j = 0; j < x.size(); ++j) {
        const double keep = x[j];
        x[j] = keep + h;
        const double up = loss(x);
        x[j] = keep - h;
        const double down = loss(x);
        x[j] = keep;
        g[j] = (up - down) / (2 * h);
    }
    return g;
}

const char* kLoadStore = R"(
[Differentiable]
double term(DiffTensorView<double> x, uint i) { return x.load(i) * x[i + 1]; }

[Differentiable]
[AutoPyBindCUDA]
[CUDAKernel]
void k(DiffTensorView<double> x, DiffTensorView<double> y, DiffTensorView<double> z)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i + 1 >= x.size(0)) return;
    double a = term(x, i);
    y.store(i, sin(a));
    z.storeOnce(i, a * x.load(i) + x.primal[i]);
    if (i == 0) y.primal[x.size(0) - 1] = double(x.dims() * 10 + x.stride(0));
}

[CUDAKernel]
void k_bwd(DiffTensorView<double> x, DiffTensorView<double> y, DiffTensorView<double> z) { bwd_diff(k)(x, y, z); }
)";

TEST(CoopDiff, DiffTensorViewLoadStoreStoreOnceGradientsMatchFiniteDifferences) {
    auto fwd = build_coop(kLoadStore, "k");
    auto bwd = build_coop(kLoadStore, "k_bwd");
    const int64_t n = 9;
    std::vector<double> x(n), wy(n), wz(n);
    for (int64_t i = 0; i < n; ++i) {
        x[size_t(i)] = 0.3 + 0.17 * double(i) - 0.02 * double(i * i);
        wy[size_t(i)] = 1.0 + 0.5 * double(i % 3);
        wz[size_t(i)] = -0.7 + 0.25 * double(i);
    }
    // The loss: sum(wy * y) + sum(wz * z) over the elements the kernel writes (the first n-1).
    auto loss = [&](std::vector<double>& xs) {
        std::vector<double> y(n, 0.0), z(n, 0.0);
        EXPECT_EQ(fwd->launch({4, 1, 1}, {3, 1, 1},
                              {CoopArg::diff_view(xs, nullptr, {n}), CoopArg::diff_view(y, nullptr, {n}),
                               CoopArg::diff_view(z, nullptr, {n})}).code, 0u);
        double l = 0;
        for (int64_t i = 0; i + 1 < n; ++i) l += wy[size_t(i)] * y[size_t(i)] + wz[size_t(i)] * z[size_t(i)];
        return l;
    };
    // Values, by hand; the queries through .primal.
    {
        std::vector<double> y(n, 0.0), z(n, 0.0);
        fwd->launch({4, 1, 1}, {3, 1, 1}, {CoopArg::diff_view(x, nullptr, {n}), CoopArg::diff_view(y, nullptr, {n}),
                                           CoopArg::diff_view(z, nullptr, {n})});
        for (int64_t i = 0; i + 1 < n; ++i) {
            const double a = x[size_t(i)] * x[size_t(i + 1)];
            EXPECT_DOUBLE_EQ(y[size_t(i)], std::sin(a)) << i;
            EXPECT_DOUBLE_EQ(z[size_t(i)], a * x[size_t(i)] + x[size_t(i)]) << i;
        }
        EXPECT_EQ(y[size_t(n - 1)], 11.0);  // dims() 1, stride(0) 1
    }
    std::vector<double> want = finite_differences(x, loss);
    // x.primal[i] is a value without derivative (as in Slang): its term wz[i] * x[i] of the
    // loss gives no gradient.
    for (int64_t i = 0; i + 1 < n; ++i) want[size_t(i)] -= wz[size_t(i)];
    std::vector<double> y(n, 0.0), z(n, 0.0), gx(n, 0.0), gy = wy, gz = wz;
    loss(x);
    EXPECT_EQ(bwd->launch({4, 1, 1}, {3, 1, 1},
                          {CoopArg::diff_view(x, &gx, {n}), CoopArg::diff_view(y, &gy, {n}),
                           CoopArg::diff_view(z, &gz, {n})}).code, 0u);
    for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(gx[size_t(j)], want[size_t(j)], 1e-7 * (1 + std::abs(want[size_t(j)]))) << j;
    // store's backward takes the output gradient (reads and clears it); storeOnce's reads it.
    for (int64_t i = 0; i + 1 < n; ++i) {
        EXPECT_EQ(gy[size_t(i)], 0.0) << i;
        EXPECT_EQ(gz[size_t(i)], wz[size_t(i)]) << i;
    }
    EXPECT_EQ(gy[size_t(n - 1)], wy[size_t(n - 1)]);
    // A launch that binds no gradient for x: its adds go nowhere (no fault), the others still run.
    std::vector<double> gy2 = wy, gz2 = wz;
    EXPECT_EQ(bwd->launch({4, 1, 1}, {3, 1, 1},
                          {CoopArg::diff_view(x, nullptr, {n}), CoopArg::diff_view(y, &gy2, {n}),
                           CoopArg::diff_view(z, &gz2, {n})}).code, 0u);
    EXPECT_EQ(gy2[0], 0.0);
}

// The backward recomputes the forward, groupshared memory included: each thread reads what
// another wrote behind a barrier, in a loop whose iterations reuse the shared array. Without the
// rebuild (or the barriers) in the backward kernel, the gradients would be wrong.
const char* kShared = R"(
groupshared double w[32];

[Differentiable]
[CUDAKernel]
void mix(TensorView<double> weights, DiffTensorView<double> x, DiffTensorView<double> y)
{
    uint t = cudaThreadIdx().x;
    uint i = cudaBlockIdx().x * 32 + t;
    double acc = 0.0;
    [MaxIters(4)]
    for (int r = 0; r < 3; r++)
    {
        w[t] = weights[i] * (r + 1) + x.primal[i];
        GroupMemoryBarrierWithGroupSync();
        double v = x.load(i);
        acc += v * v * w[(t + 7 * (r + 1)) % 32] + v * acc;
        GroupMemoryBarrierWithGroupSync();
    }
    y.store(i, acc);
}

[CUDAKernel]
void mix_bwd(TensorView<double> weights, DiffTensorView<double> x, DiffTensorView<double> y) { bwd_diff(mix)(weights, x, y); }
)";

TEST(CoopDiff, BackwardRebuildsGroupsharedMemoryBehindItsBarriers) {
    auto fwd = build_coop(kShared, "mix");
    auto bwd = build_coop(kShared, "mix_bwd");
    const int64_t n = 64;
    std::vector<double> weights(n), x(n), wy(n);
    for (int64_t i = 0; i < n; ++i) {
        weights[size_t(i)] = 0.5 + 0.01 * double((i * 37) % 50);
        x[size_t(i)] = -0.4 + 0.013 * double(i);
        wy[size_t(i)] = 1.0 - 0.02 * double(i);
    }
    // The reference in plain C++ (x.primal[i] in w is the primal value: no derivative).
    auto reference = [&](const std::vector<double>& xs, const std::vector<double>& xprimal) {
        std::vector<double> y(n);
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t t = 0; t < 32; ++t) {
                double acc = 0;
                for (int r = 0; r < 3; ++r) {
                    const int64_t o = b * 32 + (t + 7 * (r + 1)) % 32;
                    const double wv = weights[size_t(o)] * (r + 1) + xprimal[size_t(o)];
                    const double v = xs[size_t(b * 32 + t)];
                    acc += v * v * wv + v * acc;
                }
                y[size_t(b * 32 + t)] = acc;
            }
        return y;
    };
    std::vector<double> y(n, 0.0);
    EXPECT_EQ(fwd->launch({32, 1, 1}, {2, 1, 1},
                          {CoopArg::view(weights, {n}), CoopArg::diff_view(x, nullptr, {n}),
                           CoopArg::diff_view(y, nullptr, {n})}).code, 0u);
    const std::vector<double> want_y = reference(x, x);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[size_t(i)], want_y[size_t(i)], 1e-12) << i;
    const std::vector<double> want = finite_differences(x, [&](std::vector<double>& xs) {
        const std::vector<double> ys = reference(xs, x);
        double l = 0;
        for (int64_t i = 0; i < n; ++i) l += wy[size_t(i)] * ys[size_t(i)];
        return l;
    });
    std::vector<double> gx(n, 0.0), gy = wy;
    EXPECT_EQ(bwd->launch({32, 1, 1}, {2, 1, 1},
                          {CoopArg::view(weights, {n}), CoopArg::diff_view(x, &gx, {n}),
                           CoopArg::diff_view(y, &gy, {n})}).code, 0u);
    for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(gx[size_t(j)], want[size_t(j)], 1e-6 * (1 + std::abs(want[size_t(j)]))) << j;
}

// A rasterizer's pattern: a [BackwardDerivative] whose hand-written backward walks the
// primitives in reverse, recovering the transmittance, and adds into the gradient views.
const char* kComposite = R"(
[BackwardDerivative(composite_bwd)]
float composite(DiffTensorView<float> c, DiffTensorView<float> a, uint r)
{
    float T = 1.0, C = 0.0;
    for (uint j = 0; j < c.size(1); j++)
    {
        float al = a[r, j];
        C += c[r, j] * al * T;
        T *= 1.0 - al;
    }
    return C;
}

void composite_bwd(DiffTensorView<float> c, DiffTensorView<float> a, uint r, float dOut)
{
    uint n = c.size(1);
    float T = 1.0;
    for (uint j = 0; j < n; j++) T *= 1.0 - a[r, j];
    float behind = 0.0;
    for (int j = int(n) - 1; j >= 0; j--)
    {
        float al = a[r, j];
        T /= 1.0 - al;
        InterlockedAdd(c.diff[r, j], dOut * al * T);
        InterlockedAdd(a.diff[r, j], dOut * (c[r, j] * T - behind / (1.0 - al)));
        behind += c[r, j] * al * T;
    }
}

[Differentiable]
[CUDAKernel]
void render(DiffTensorView<float> c, DiffTensorView<float> a, DiffTensorView<float> out)
{
    uint r = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (r >= out.size(0)) return;
    out.storeOnce(r, composite(c, a, r));
}

[CUDAKernel]
void render_bwd(DiffTensorView<float> c, DiffTensorView<float> a, DiffTensorView<float> out)
{
    bwd_diff(render)(c, a, out);
}
)";

TEST(CoopDiff, BackwardDerivativeWithAReverseLoopOverViews) {
    auto fwd = build_coop(kComposite, "render");
    auto bwd = build_coop(kComposite, "render_bwd");
    const int64_t rows = 5, n = 6;
    std::vector<float> c(static_cast<size_t>(rows * n)), a(static_cast<size_t>(rows * n));
    std::vector<float> out(static_cast<size_t>(rows), 0.f), wout(static_cast<size_t>(rows));
    for (int64_t k = 0; k < rows * n; ++k) {
        c[size_t(k)] = 0.2f + 0.1f * float(k % 7);
        a[size_t(k)] = 0.1f + 0.05f * float((k * 3) % 11);
    }
    for (int64_t r = 0; r < rows; ++r) wout[size_t(r)] = 1.0f + 0.5f * float(r);
    // The reference in double: C_r = sum_j c a T_j; the loss sum_r wout_r C_r.
    auto loss = [&](std::vector<double>& ca) {  // c then a
        double l = 0;
        for (int64_t r = 0; r < rows; ++r) {
            double T = 1, C = 0;
            for (int64_t j = 0; j < n; ++j) {
                const double al = ca[size_t(rows * n + r * n + j)];
                C += ca[size_t(r * n + j)] * al * T;
                T *= 1 - al;
            }
            l += wout[size_t(r)] * C;
        }
        return l;
    };
    std::vector<double> ca;
    for (float v : c) ca.push_back(v);
    for (float v : a) ca.push_back(v);
    EXPECT_EQ(fwd->launch({4, 1, 1}, {2, 1, 1},
                          {CoopArg::diff_view(c, nullptr, {rows, n}), CoopArg::diff_view(a, nullptr, {rows, n}),
                           CoopArg::diff_view(out, nullptr, {rows})}).code, 0u);
    double l = 0;
    for (int64_t r = 0; r < rows; ++r) l += wout[size_t(r)] * out[size_t(r)];
    EXPECT_NEAR(l, loss(ca), 1e-5);
    const std::vector<double> want = finite_differences(ca, loss);
    std::vector<float> gc(c.size(), 0.f), ga(a.size(), 0.f), gout = wout;
    EXPECT_EQ(bwd->launch({4, 1, 1}, {2, 1, 1},
                          {CoopArg::diff_view(c, &gc, {rows, n}), CoopArg::diff_view(a, &ga, {rows, n}),
                           CoopArg::diff_view(out, &gout, {rows})}).code, 0u);
    for (size_t k = 0; k < c.size(); ++k) {
        EXPECT_NEAR(gc[k], want[k], 1e-4 * (1 + std::abs(want[k]))) << "c " << k;
        EXPECT_NEAR(ga[k], want[c.size() + k], 1e-4 * (1 + std::abs(want[c.size() + k]))) << "a " << k;
    }
}

// The tiled rasterizer of examples/tiled_splatting.slang: its forward kernel and its backward
// (bwd_diff of it, which calls the hand-written reverse walk) compile for the CPU and for CUDA.
TEST(CoopDiff, TiledRasterizerForwardAndBackwardCompileForBothTargets) {
    std::ifstream in(std::string(SG_SOURCE_DIR) + "/examples/tiled_splatting.slang");
    ASSERT_TRUE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str() + R"(
[CUDAKernel]
void rasterize_bwd(DiffTensorView<float> means, DiffTensorView<float> conics, DiffTensorView<float> opacities,
                   DiffTensorView<float> colors, TensorView<int> order, TensorView<int> ranges,
                   DiffTensorView<float> image, TensorView<float> final_T, int size, float3 background)
{
    bwd_diff(rasterize)(means, conics, opacities, colors, order, ranges, image, final_T, size, background);
}
)";
    EXPECT_NE(build_coop(source, "rasterize"), nullptr);
    EXPECT_NE(build_coop(source, "rasterize_bwd"), nullptr);
}

}  // namespace
}  // namespace sg::test
