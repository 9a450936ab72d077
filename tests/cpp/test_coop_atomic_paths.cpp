// tests/cpp/test_coop_atomic_paths.cpp — Interlocked operations on a field of a groupshared
// struct (also inside an array of them) and on one component of a groupshared vector, which
// slangc accepts: every thread of a block hits the same few scalars, and the block's totals are
// written out after a barrier. CPU runs (fibers) and NVRTC compiles.
#include "coop_harness.h"

namespace sg::test {
namespace {

TEST(CoopAtomicPaths, FieldsAndComponentsOfGroupsharedVariables) {
    auto k = build_coop(R"(
struct Bin { int count; uint mask; float weight; int64_t wide; };
groupshared Bin bins[4];
groupshared uint2 pair;
groupshared Bin single;

[CUDAKernel]
void histogram(TensorView<int> values, TensorView<int> counts, TensorView<uint> masks, TensorView<float> weights,
               TensorView<uint> pairs, TensorView<int64_t> wides)
{
    uint t = cudaThreadIdx().x;
    uint b = cudaBlockIdx().x;
    if (t < 4) { bins[t].count = 0; bins[t].mask = 0u; bins[t].weight = 0.0; bins[t].wide = 0; }
    if (t == 0) { pair = uint2(0u, 100000u); single.count = 0; }
    GroupMemoryBarrierWithGroupSync();
    uint i = b * cudaBlockDim().x + t;
    if (i < values.size(0))
    {
        int v = values[i];
        int old;
        InterlockedAdd(bins[v].count, 1, old);
        InterlockedOr(bins[v].mask, 1u << (t % 32));
        InterlockedAdd(bins[v].weight, 0.5);
        InterlockedAdd(bins[v].wide, int64_t(1) << 34);
        InterlockedMax(pair.x, uint(v * 10 + 1));
        InterlockedMin(pair.y, i);
        InterlockedAdd(single.count, 2);
    }
    GroupMemoryBarrierWithGroupSync();
    if (t < 4)
    {
        counts[b, t] = bins[t].count;
        masks[b, t] = bins[t].mask;
        weights[b, t] = bins[t].weight;
        wides[b, t] = bins[t].wide;
    }
    if (t == 0) { pairs[b, 0] = pair.x; pairs[b, 1] = pair.y; pairs[b, 2] = uint(single.count); }
}
)", "histogram");
    const int block = 40, blocks = 3, n = 100;  // the last block partial
    std::vector<int32_t> values(n);
    for (int i = 0; i < n; ++i) values[size_t(i)] = (i * 7 + i / 3) % 4;
    std::vector<int32_t> counts(blocks * 4, -1);
    std::vector<uint32_t> masks(blocks * 4, 7), pairs(blocks * 3, 7);
    std::vector<float> weights(blocks * 4, -1.0f);
    std::vector<int64_t> wides(blocks * 4, -1);
    const auto fault = k->launch({block, 1, 1}, {blocks, 1, 1},
                                 {CoopArg::view(values, {n}), CoopArg::view(counts, {blocks, 4}),
                                  CoopArg::view(masks, {blocks, 4}), CoopArg::view(weights, {blocks, 4}),
                                  CoopArg::view(pairs, {blocks, 3}), CoopArg::view(wides, {blocks, 4})});
    EXPECT_EQ(fault.code, 0u);
    for (int b = 0; b < blocks; ++b) {
        int want[4] = {0, 0, 0, 0};
        uint32_t mask[4] = {0, 0, 0, 0}, max_x = 0, min_y = 100000;
        int live = 0;
        for (int t = 0; t < block; ++t) {
            const int i = b * block + t;
            if (i >= n) continue;
            const int v = values[size_t(i)];
            ++want[v];
            mask[v] |= 1u << (t % 32);
            max_x = std::max(max_x, uint32_t(v * 10 + 1));
            min_y = std::min(min_y, uint32_t(i));
            ++live;
        }
        for (int v = 0; v < 4; ++v) {
            EXPECT_EQ(counts[size_t(b * 4 + v)], want[v]) << b << "," << v;
            EXPECT_EQ(masks[size_t(b * 4 + v)], mask[v]) << b << "," << v;
            EXPECT_EQ(weights[size_t(b * 4 + v)], 0.5f * float(want[v])) << b << "," << v;
            EXPECT_EQ(wides[size_t(b * 4 + v)], int64_t(want[v]) << 34) << b << "," << v;
        }
        EXPECT_EQ(pairs[size_t(b * 3)], max_x) << b;
        EXPECT_EQ(pairs[size_t(b * 3 + 1)], min_y) << b;
        EXPECT_EQ(pairs[size_t(b * 3 + 2)], uint32_t(2 * live)) << b;
    }
}

}  // namespace
}  // namespace sg::test
