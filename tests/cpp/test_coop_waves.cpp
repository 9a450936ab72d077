// tests/cpp/test_coop_waves.cpp — the wave intrinsics in cooperative kernels on the CPU backend
// (each kernel's CUDA translation compiled with NVRTC too): every operation's values over full
// waves, partial waves (blocks whose size is not a multiple of 32, 2-D blocks by linear index)
// and lanes made inactive by an early return; divergent branches, reconvergence, loops with
// per-lane trip counts, wave results combined across a block through groupshared memory, and
// every value type (64-bit integers, double, vectors, bools).
#include <algorithm>
#include <numeric>

#include "coop_harness.h"

namespace sg::test {
namespace {

const char* kEveryOp = R"(
[CUDAKernel]
void waves(TensorView<int> vi, TensorView<float> vf, TensorView<uint> out, TensorView<float> outf, int skip)
{
    uint t = cudaThreadIdx().x + cudaThreadIdx().y * cudaBlockDim().x;
    uint g = cudaBlockIdx().x * (cudaBlockDim().x * cudaBlockDim().y) + t;
    if (skip > 0 && t % uint(skip) == 1) return;
    int v = vi[g];
    float x = vf[g];
    uint o = g * 16;
    out[o + 0] = WaveGetLaneIndex();
    out[o + 1] = WaveGetLaneCount();
    out[o + 2] = uint(WaveActiveSum(v));
    out[o + 3] = uint(WaveActiveProduct(v % 3 + 2));
    out[o + 4] = uint(WaveActiveMin(v));
    out[o + 5] = uint(WaveActiveMax(v));
    out[o + 6] = WaveActiveAllTrue(v > -50) ? 1 : 0;
    out[o + 7] = WaveActiveAnyTrue(v > 40) ? 1 : 0;
    uint4 b = WaveActiveBallot(v % 2 == 0);
    out[o + 8] = b.x;
    out[o + 9] = b.y | b.z | b.w;
    out[o + 10] = WaveActiveCountBits(v % 2 == 0);
    out[o + 11] = uint(WaveReadLaneAt(v, WaveActiveMax(WaveGetLaneIndex())));
    out[o + 12] = uint(WaveReadLaneFirst(v));
    out[o + 13] = uint(WavePrefixSum(v));
    out[o + 14] = WaveIsFirstLane() ? 1 : 0;
    out[o + 15] = WaveActiveAllTrue(v < 40) ? 1 : 0;
    outf[g * 4 + 0] = WaveActiveSum(x);
    outf[g * 4 + 1] = WavePrefixSum(x);
    float2 m = WaveActiveMin(float2(x, -x));
    outf[g * 4 + 2] = m.y;
    outf[g * 4 + 3] = WaveReadLaneFirst(x * 2.0);
}
)";

/// The expected outputs of kEveryOp for blocks of `bx` x `by` threads, `blocks` blocks, with
/// lanes t % skip == 1 returned early (skip > 0).
void check_every_op(int bx, int by, int blocks, int skip) {
    SCOPED_TRACE("block " + std::to_string(bx) + "x" + std::to_string(by) + " skip " + std::to_string(skip));
    auto k = build_coop(kEveryOp, "waves");
    const int n = bx * by, total = n * blocks;
    std::vector<int> vi(static_cast<size_t>(total));
    std::vector<float> vf(static_cast<size_t>(total));
    for (int g = 0; g < total; ++g) {
        vi[size_t(g)] = (g * 37) % 91 - 45;
        vf[size_t(g)] = 0.1f * float((g * 13) % 17) - 0.7f;
    }
    std::vector<uint32_t> out(size_t(total) * 16, 0xdeadbeefu);
    std::vector<float> outf(size_t(total) * 4, -999.f);
    EXPECT_EQ(k->launch({bx, by, 1}, {blocks, 1, 1},
                        {CoopArg::view(vi, {total}), CoopArg::view(vf, {total}), CoopArg::view(out, {total * 16}),
                         CoopArg::view(outf, {total * 4}), CoopArg::scalar(skip)})
                  .code,
              0u);
    for (int b = 0; b < blocks; ++b)
        for (int w = 0; w * 32 < n; ++w) {
            std::vector<int> lanes;  // active lanes of this wave
            for (int l = 0; l < 32 && w * 32 + l < n; ++l)
                if (!(skip > 0 && (w * 32 + l) % skip == 1)) lanes.push_back(l);
            if (lanes.empty()) continue;
            auto gi = [&](int l) { return b * n + w * 32 + l; };
            int32_t sum = 0, prod = 1, mn = 1 << 30, mx = -(1 << 30);
            uint32_t ballot = 0;
            bool all = true, any = false, all40 = true;
            float fsum = vf[size_t(gi(lanes[0]))];
            float fmin_neg = -vf[size_t(gi(lanes[0]))];
            for (size_t j = 0; j < lanes.size(); ++j) {
                const int v = vi[size_t(gi(lanes[j]))];
                sum = int32_t(uint32_t(sum) + uint32_t(v));
                prod = int32_t(uint32_t(prod) * uint32_t(v % 3 + 2));
                mn = std::min(mn, v);
                mx = std::max(mx, v);
                all = all && v > -50;
                any = any || v > 40;
                all40 = all40 && v < 40;
                if (v % 2 == 0) ballot |= 1u << lanes[j];
                if (j > 0) {
                    fsum = fsum + vf[size_t(gi(lanes[j]))];
                    fmin_neg = std::min(fmin_neg, -vf[size_t(gi(lanes[j]))]);
                }
            }
            int32_t prefix = 0;
            float fprefix = 0.f;
            for (int l : lanes) {
                const uint32_t* o = &out[size_t(gi(l)) * 16];
                const float* of = &outf[size_t(gi(l)) * 4];
                SCOPED_TRACE("block " + std::to_string(b) + " wave " + std::to_string(w) + " lane " + std::to_string(l));
                EXPECT_EQ(o[0], uint32_t(l));
                EXPECT_EQ(o[1], 32u);
                EXPECT_EQ(o[2], uint32_t(sum));
                EXPECT_EQ(o[3], uint32_t(prod));
                EXPECT_EQ(o[4], uint32_t(mn));
                EXPECT_EQ(o[5], uint32_t(mx));
                EXPECT_EQ(o[6], all ? 1u : 0u);
                EXPECT_EQ(o[7], any ? 1u : 0u);
                EXPECT_EQ(o[8], ballot);
                EXPECT_EQ(o[9], 0u);
                EXPECT_EQ(o[10], uint32_t(__builtin_popcount(ballot)));
                EXPECT_EQ(o[11], uint32_t(vi[size_t(gi(lanes.back()))]));
                EXPECT_EQ(o[12], uint32_t(vi[size_t(gi(lanes.front()))]));
                EXPECT_EQ(o[13], uint32_t(prefix));
                EXPECT_EQ(o[14], l == lanes.front() ? 1u : 0u);
                EXPECT_EQ(o[15], all40 ? 1u : 0u);
                EXPECT_EQ(of[0], fsum);
                EXPECT_EQ(of[1], fprefix);
                EXPECT_EQ(of[2], fmin_neg);
                EXPECT_EQ(of[3], vf[size_t(gi(lanes.front()))] * 2.0f);
                prefix = int32_t(uint32_t(prefix) + uint32_t(vi[size_t(gi(l))]));
                fprefix = fprefix + vf[size_t(gi(l))];
            }
            // Inactive lanes wrote nothing.
            for (int l = 0; l < 32 && w * 32 + l < n; ++l)
                if (std::find(lanes.begin(), lanes.end(), l) == lanes.end())
                    EXPECT_EQ(out[size_t(gi(l)) * 16], 0xdeadbeefu) << "inactive lane " << l;
        }
}

TEST(CoopWaves, EveryOperationOverFullWaves) { check_every_op(64, 1, 2, 0); }

TEST(CoopWaves, EveryOperationOverPartialWaves) {
    check_every_op(48, 1, 2, 0);  // the second wave has 16 lanes
    check_every_op(8, 5, 2, 0);   // 2-D blocks of 40: waves by linear index (x fastest)
    check_every_op(7, 1, 3, 0);   // a block smaller than a wave
}

TEST(CoopWaves, EveryOperationWithLanesReturnedEarly) {
    check_every_op(64, 1, 2, 3);  // lanes 1, 4, 7, ... returned
    check_every_op(40, 1, 2, 2);  // odd lanes returned, in a partial wave too
}

TEST(CoopWaves, DivergentBranchesLoopsAndReconvergence) {
    auto k = build_coop(R"(
[CUDAKernel]
void diverge(TensorView<uint> out)
{
    uint t = cudaThreadIdx().x;
    uint lane = WaveGetLaneIndex();
    uint a;
    if (lane < 10)
        a = WaveActiveSum(1u);          // the lanes of this branch only
    else
        a = WaveActiveSum(100u);        // the others
    uint b = WaveActiveCountBits(true); // every lane again
    uint c = 0;
    for (uint i = 0; i < lane % 4; ++i)
        c += WaveActiveCountBits(true) * 1000 + WavePrefixSum(1u);  // lanes still in the loop
    out[t * 3 + 0] = a;
    out[t * 3 + 1] = b;
    out[t * 3 + 2] = c;
}
)", "diverge");
    for (int n : {32, 45}) {
        std::vector<uint32_t> out(size_t(n) * 3, 0);
        EXPECT_EQ(k->launch({n, 1, 1}, {1, 1, 1}, {CoopArg::view(out, {n * 3})}).code, 0u);
        for (int t = 0; t < n; ++t) {
            const int lane = t % 32, w = t / 32;
            const int size = std::min(32, n - w * 32);
            const uint32_t low = uint32_t(std::min(size, 10));
            EXPECT_EQ(out[size_t(t) * 3], lane < 10 ? low : 100u * (uint32_t(size) - low)) << n << " " << t;
            EXPECT_EQ(out[size_t(t) * 3 + 1], uint32_t(size)) << n << " " << t;
            uint32_t c = 0;
            for (int i = 0; i < lane % 4; ++i) {
                uint32_t count = 0, below = 0;
                for (int l = 0; l < size; ++l)
                    if (l % 4 > i) {
                        ++count;
                        if (l < lane) ++below;
                    }
                c += count * 1000 + below;
            }
            EXPECT_EQ(out[size_t(t) * 3 + 2], c) << n << " " << t;
        }
    }
}

TEST(CoopWaves, WaveSumsCombinedThroughGroupsharedMemory) {
    auto k = build_coop(R"(
groupshared int partial[8];
[CUDAKernel]
void block_sum(TensorView<int> x, TensorView<int> sums)
{
    uint t = cudaThreadIdx().x;
    uint i = cudaBlockIdx().x * cudaBlockDim().x + t;
    int s = WaveActiveSum(i < x.size(0) ? x[i] : 0);
    if (WaveIsFirstLane()) partial[t / WaveGetLaneCount()] = s;
    GroupMemoryBarrierWithGroupSync();
    if (t == 0)
    {
        int total = 0;
        for (uint w = 0; w < (cudaBlockDim().x + 31) / 32; ++w) total += partial[w];
        sums[cudaBlockIdx().x] = total;
    }
}
)", "block_sum");
    const int n = 1000, block = 200, blocks = 5;
    std::vector<int> x(static_cast<size_t>(n)), sums(static_cast<size_t>(blocks), -1);
    std::iota(x.begin(), x.end(), -300);
    EXPECT_EQ(k->launch({block, 1, 1}, {blocks, 1, 1}, {CoopArg::view(x, {n}), CoopArg::view(sums, {blocks})}).code, 0u);
    for (int b = 0; b < blocks; ++b)
        EXPECT_EQ(sums[size_t(b)], std::accumulate(x.begin() + b * block, x.begin() + (b + 1) * block, 0)) << b;
}

// Every value type the wave operations take (also through NVRTC): 64-bit integers, double,
// vectors of them, bool and bool vectors for the lane reads.
TEST(CoopWaves, EveryValueType) {
    auto k = build_coop(R"(
[CUDAKernel]
void types(TensorView<int64_t> i64, TensorView<uint64_t> u64, TensorView<double> f64, TensorView<uint> u32)
{
    uint t = cudaThreadIdx().x;
    int64_t a = int64_t(t) * 4000000000 - 7;
    i64[t] = WaveActiveMin(a) + WaveActiveSum(a);
    u64[t] = WavePrefixSum(uint64_t(t) << 33) + WaveActiveMax(uint64_t(t));
    double3 d = double3(t, 0.5 * t, -1.0 * t);
    double3 s = WaveActiveSum(d);
    f64[t] = s.x + s.y * 10.0 + WaveActiveProduct(t < 4 ? 2.0 : 1.0) * 1000.0 + WaveReadLaneFirst(d).z;
    bool2 b = bool2(t % 2 == 0, t % 3 == 0);
    bool2 r = WaveReadLaneAt(b, 3);
    uint4 u = WaveActiveSum(uint4(t, 1, 2, 3));
    u32[t] = (r.x ? 1u : 0u) + (r.y ? 2u : 0u) + (WaveReadLaneFirst(t == 0) ? 4u : 0u) + u.x * 8 + u.y * 1000;
}
)", "types");
    const int n = 40;  // a full wave and one of 8 lanes
    std::vector<int64_t> i64(n, 0);
    std::vector<uint64_t> u64(n, 0);
    std::vector<double> f64(n, 0);
    std::vector<uint32_t> u32(n, 0);
    EXPECT_EQ(k->launch({n, 1, 1}, {1, 1, 1},
                        {CoopArg::view(i64, {n}), CoopArg::view(u64, {n}), CoopArg::view(f64, {n}), CoopArg::view(u32, {n})})
                  .code,
              0u);
    for (int t = 0; t < n; ++t) {
        const int w0 = t / 32 * 32, size = std::min(32, n - w0);
        int64_t mn = INT64_MAX, sum = 0;
        uint64_t prefix = 0, mx = 0;
        double sx = 0, sy = 0, prod = 1;
        uint32_t ux = 0;
        for (int l = w0; l < w0 + size; ++l) {
            const int64_t a = int64_t(l) * 4000000000LL - 7;
            mn = std::min(mn, a);
            sum += a;
            if (l < t) prefix += uint64_t(l) << 33;
            mx = std::max(mx, uint64_t(l));
            sx += l;
            sy += 0.5 * l;
            prod *= l < 4 ? 2.0 : 1.0;
            ux += uint32_t(l);
        }
        EXPECT_EQ(i64[size_t(t)], mn + sum) << t;
        EXPECT_EQ(u64[size_t(t)], prefix + mx) << t;
        EXPECT_DOUBLE_EQ(f64[size_t(t)], sx + sy * 10.0 + prod * 1000.0 - double(w0)) << t;
        const int src = w0 + 3;
        const uint32_t bits = (src % 2 == 0 ? 1u : 0u) + (src % 3 == 0 ? 2u : 0u) + (w0 == 0 ? 4u : 0u);
        EXPECT_EQ(u32[size_t(t)], bits + ux * 8 + uint32_t(size) * 1000) << t;
    }
}

}  // namespace
}  // namespace sg::test
