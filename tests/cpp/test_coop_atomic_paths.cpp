// tests/cpp/test_coop_atomic_paths.cpp — Interlocked operations on a field of a groupshared
// struct (also inside an array of them) and on one component of a groupshared vector, which
// slangc accepts: every thread of a block hits the same few scalars, and the block's totals are
// written out after a barrier; on one component of a TensorView's vector element, and a
// TensorView's InterlockedAdd on vector elements (componentwise). CPU runs (fibers) and NVRTC
// compiles. A field of a buffer's element: tests/lang/interlocked/buffer_element_paths.slang.
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

TEST(CoopAtomicPaths, ComponentsOfViewElementsAndVectorMethods) {
    // Every thread of several blocks (the last partial) adds into the same few vector elements of
    // TensorViews: one component through the free form (`InterlockedAdd(v[i].y, 1)`), all of them
    // through the method (`v.InterlockedAdd(i, vec, out original)`); a view whose elements are apart.
    auto k = build_coop(R"(
[CUDAKernel]
void scatter(TensorView<int> at, TensorView<int2> hits, TensorView<float2> sums, TensorView<uint3> wide,
             TensorView<int> firsts)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i >= at.size(0)) return;
    uint j = uint(at[i]);
    InterlockedAdd(hits[j].y, 1);
    InterlockedMax(hits[j].x, int(i));
    float2 before;
    sums.InterlockedAdd(j, float2(0.5, 2.0), before);
    uint3 old;
    wide.InterlockedAdd(uint(j), uint3(1u, 2u, 3u), old);
    if (old.x == 0u) firsts[j] = int(old.y + old.z) + 1;   // the one thread that came first
}
)", "scatter");
    const int n = 150, block = 64, blocks = 3;
    std::vector<int32_t> at(n), hits(3 * 2, 0), firsts(3, 0);
    for (int i = 0; i < n; ++i) at[size_t(i)] = (i * 5 + i / 7) % 3;
    std::vector<float> sums(3 * 4, -7.0f);  // elements 4 apart: (x, y, pad, pad)
    for (int e = 0; e < 3; ++e) sums[size_t(4 * e)] = sums[size_t(4 * e + 1)] = 0.0f;
    std::vector<uint32_t> wide(3 * 3, 0u);
    CoopArg s = CoopArg::view(sums, {3}, 2);
    s.strides = {4};
    const auto fault = k->launch({block, 1, 1}, {blocks, 1, 1},
                                 {CoopArg::view(at, {n}), CoopArg::view(hits, {3}, 2), s, CoopArg::view(wide, {3}, 3),
                                  CoopArg::view(firsts, {3})});
    EXPECT_EQ(fault.code, 0u);
    for (int e = 0; e < 3; ++e) {
        int count = 0, last = -1;
        for (int i = 0; i < n; ++i)
            if (at[size_t(i)] == e) ++count, last = i;
        EXPECT_EQ(hits[size_t(2 * e + 1)], count) << e;
        EXPECT_EQ(hits[size_t(2 * e)], last) << e;
        EXPECT_EQ(sums[size_t(4 * e)], 0.5f * float(count)) << e;
        EXPECT_EQ(sums[size_t(4 * e + 1)], 2.0f * float(count)) << e;
        EXPECT_EQ(sums[size_t(4 * e + 2)], -7.0f) << e;  // the padding is not written
        EXPECT_EQ(sums[size_t(4 * e + 3)], -7.0f) << e;
        EXPECT_EQ(wide[size_t(3 * e)], uint32_t(count)) << e;
        EXPECT_EQ(wide[size_t(3 * e + 1)], uint32_t(2 * count)) << e;
        EXPECT_EQ(wide[size_t(3 * e + 2)], uint32_t(3 * count)) << e;
        EXPECT_EQ(firsts[size_t(e)], 1) << e;
    }
}

}  // namespace
}  // namespace sg::test
