// tests/cpp/test_coop_kernels.cpp — cooperative kernels ([CUDAKernel]) on the CPU backend, each
// also compiled for CUDA: thread and block ids over 1-, 2- and 3-D launches with partial
// blocks, TensorView access (indices, vectors as indices and elements, load/store, size,
// stride, dims), groupshared memory of every shape behind barriers that matter, Interlocked
// atomics under contention, and the faults of out-of-range view accesses.
#include <numeric>

#include "coop_harness.h"

namespace sg::test {
namespace {

TEST(CoopKernels, ThreadIdsOneDimensionPartialBlock) {
    auto k = build_coop(R"(
[AutoPyBindCUDA]
[CUDAKernel]
void ids(TensorView<int> out, int n)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i >= n) return;
    out[i] = int(cudaThreadIdx().x * 1000 + cudaBlockIdx().x * 10 + cudaGridDim().x);
}
)", "ids");
    std::vector<int> out(10, -1);
    const auto fault = k->launch({4, 1, 1}, {3, 1, 1}, {CoopArg::view(out, {10}), CoopArg::scalar(10)});
    EXPECT_EQ(fault.code, 0u);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(out[size_t(i)], (i % 4) * 1000 + (i / 4) * 10 + 3) << i;
}


TEST(CoopKernels, TwoAndThreeDimensionalLaunchesWithPartialBlocks) {
    auto k2 = build_coop(R"(
[CUDAKernel]
void grid2(TensorView<uint> out)
{
    uint2 p = cudaBlockIdx().xy * cudaBlockDim().xy + cudaThreadIdx().xy;
    if (p.x >= out.size(0) || p.y >= out.size(1)) return;
    out[p] = p.x * 100 + p.y;          // a uint2 index: .x is dimension 0
}
)", "grid2");
    std::vector<uint32_t> out(7 * 5, 0);
    EXPECT_EQ(k2->launch({4, 2, 1}, {2, 3, 1}, {CoopArg::view(out, {7, 5})}).code, 0u);
    for (uint32_t x = 0; x < 7; ++x)
        for (uint32_t y = 0; y < 5; ++y) EXPECT_EQ(out[x * 5 + y], x * 100 + y) << x << "," << y;

    auto k3 = build_coop(R"(
[CUDAKernel]
void grid3(TensorView<int> out)
{
    uint3 p = cudaBlockIdx() * cudaBlockDim() + cudaThreadIdx();
    if (p.x >= out.size(0) || p.y >= out.size(1) || p.z >= out.size(2)) return;
    uint3 g = cudaGridDim();
    out[p.x, p.y, p.z] = int(p.x * 10000 + p.y * 100 + p.z + g.x * g.y * g.z * 1000000);
}
)", "grid3");
    std::vector<int> out3(3 * 5 * 2, 0);
    EXPECT_EQ(k3->launch({2, 2, 2}, {2, 3, 1}, {CoopArg::view(out3, {3, 5, 2})}).code, 0u);
    for (int x = 0; x < 3; ++x)
        for (int y = 0; y < 5; ++y)
            for (int z = 0; z < 2; ++z)
                EXPECT_EQ(out3[size_t((x * 5 + y) * 2 + z)], x * 10000 + y * 100 + z + 6000000) << x << y << z;
}

// Reverses each block's slice through groupshared memory: thread t reads what thread N-1-t
// wrote, which without the barrier it has not written yet (the CPU runs a block's threads in
// order until they meet).
const char* kReverse = R"(
groupshared float tile[64];
[CUDAKernel]
void reverse(TensorView<float> data, TensorView<float> out)
{
    uint t = cudaThreadIdx().x;
    uint i = cudaBlockIdx().x * 64 + t;
    tile[t] = data[i];
    SYNC
    out[i] = tile[63 - t];
}
)";

std::string with_sync(const char* text, const std::string& sync) {
    std::string s = text;
    s.replace(s.find("SYNC"), 4, sync);
    return s;
}

TEST(CoopKernels, BarrierMakesABlockReversalCorrect) {
    std::vector<float> data(128), out(128, 0.f);
    std::iota(data.begin(), data.end(), 0.f);
    for (const char* barrier : {"GroupMemoryBarrierWithGroupSync();", "AllMemoryBarrierWithGroupSync();",
                                "DeviceMemoryBarrierWithGroupSync();"}) {
        auto k = build_coop(with_sync(kReverse, barrier), "reverse");
        EXPECT_EQ(k->launch({64, 1, 1}, {2, 1, 1}, {CoopArg::view(data, {128}), CoopArg::view(out, {128})}).code, 0u);
        for (int i = 0; i < 128; ++i) EXPECT_EQ(out[size_t(i)], float((i / 64) * 64 + 63 - i % 64)) << barrier << " " << i;
    }
    // Without the barrier (a fence does not wait), the first half of each block reads tiles
    // that were not written yet: the barrier is what makes it right.
    auto k = build_coop(with_sync(kReverse, "GroupMemoryBarrier();"), "reverse");
    std::fill(out.begin(), out.end(), -1.f);
    k->launch({64, 1, 1}, {2, 1, 1}, {CoopArg::view(data, {128}), CoopArg::view(out, {128})}, true);
    EXPECT_NE(out[0], 63.f);
}

TEST(CoopKernels, BlockReductionInGroupsharedMemory) {
    auto k = build_coop(R"(
groupshared double partial[128];
[CUDAKernel]
void block_sum(TensorView<double> x, TensorView<double> sums)
{
    uint t = cudaThreadIdx().x;
    uint i = cudaBlockIdx().x * cudaBlockDim().x + t;
    partial[t] = i < x.size(0) ? x[i] : 0.0;
    GroupMemoryBarrierWithGroupSync();
    for (uint stride = cudaBlockDim().x / 2; stride > 0; stride /= 2)
    {
        if (t < stride) partial[t] += partial[t + stride];
        GroupMemoryBarrierWithGroupSync();
    }
    if (t == 0) sums[cudaBlockIdx().x] = partial[0];
}
)", "block_sum");
    std::vector<double> x(300), sums(3, 0.0);
    for (size_t i = 0; i < x.size(); ++i) x[i] = double(i) * 0.5 + 1.0;
    EXPECT_EQ(k->launch({128, 1, 1}, {3, 1, 1}, {CoopArg::view(x, {300}), CoopArg::view(sums, {3})}).code, 0u);
    for (int b = 0; b < 3; ++b) {
        double want = 0;
        for (int i = b * 128; i < std::min(300, b * 128 + 128); ++i) want += x[size_t(i)];
        EXPECT_DOUBLE_EQ(sums[size_t(b)], want) << b;
    }
}

TEST(CoopKernels, GroupsharedScalarsVectorsStructsAndArrays) {
    auto k = build_coop(R"(
struct Particle { float3 pos; int id; };
groupshared int counter;
groupshared float2 pair;
groupshared Particle one;
groupshared Particle many[8];
groupshared float grid[4][8];
[CUDAKernel]
void shapes(TensorView<float> out)
{
    uint t = cudaThreadIdx().x;
    if (t == 0) { counter = 5; pair = float2(1.5, 2.5); one.pos = float3(1, 2, 3); one.id = 7; }
    many[t].pos = float3(t, 2 * t, 3 * t);
    many[t].id = int(t) + 100;
    for (int r = 0; r < 4; r++) grid[r][t] = float(r * 10 + t);
    GroupMemoryBarrierWithGroupSync();
    Particle p = many[7 - t];
    float4 row = float4(grid[t % 4][0], grid[t % 4][1], grid[t % 4][7], 0);
    float v = counter + pair.y + one.pos.z + one.id;   // 5 + 2.5 + 3 + 7
    out[t, 0] = v;
    out[t, 1] = p.pos.y + p.id;
    out[t, 2] = row.x + row.y + row.z;
    float copy[8] = grid[1];                            // a whole row at once
    out[t, 3] = copy[t];
}
)", "shapes");
    std::vector<float> out(8 * 4, 0.f);
    EXPECT_EQ(k->launch({8, 1, 1}, {1, 1, 1}, {CoopArg::view(out, {8, 4})}).code, 0u);
    for (int t = 0; t < 8; ++t) {
        EXPECT_EQ(out[size_t(t * 4)], 17.5f);
        EXPECT_EQ(out[size_t(t * 4 + 1)], float(2 * (7 - t) + 107 - t)) << t;
        const int r = t % 4;
        EXPECT_EQ(out[size_t(t * 4 + 2)], float(3 * r * 10 + 0 + 1 + 7)) << t;
        EXPECT_EQ(out[size_t(t * 4 + 3)], float(10 + t)) << t;
    }
}

TEST(CoopKernels, TiledTransposeThroughATwoDimensionalGroupsharedTile) {
    auto k = build_coop(R"(
groupshared float tile[8][9];            // padded, as on the GPU
groupshared float2x2 mats[4];
[CUDAKernel]
void transpose(TensorView<float> a, TensorView<float> t, TensorView<float> m)
{
    uint2 local = cudaThreadIdx().xy;
    uint2 base = cudaBlockIdx().xy * 8;
    uint2 p = base + local;
    if (p.x < a.size(0) && p.y < a.size(1)) tile[local.y][local.x] = a[p.x, p.y];
    if (local.y == 0 && local.x < 4) mats[local.x] = float2x2(local.x, 1, 2, 3);
    GroupMemoryBarrierWithGroupSync();
    uint2 q = uint2(base.y, base.x) + local;  // the transposed block
    if (q.x < a.size(1) && q.y < a.size(0)) t[q.x, q.y] = tile[local.x][local.y];
    if (local.x == 0 && local.y == 0 && cudaBlockIdx().x == 0 && cudaBlockIdx().y == 0)
        for (int i = 0; i < 4; i++) m[i] = mul(mats[i], float2(1, 10)).x;   // i + 10
}
)", "transpose");
    const int64_t rows = 13, cols = 10;
    std::vector<float> a(size_t(rows * cols)), t(size_t(rows * cols), -1.f), m(4, 0.f);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i);
    EXPECT_EQ(k->launch({8, 8, 1}, {2, 2, 1}, {CoopArg::view(a, {rows, cols}), CoopArg::view(t, {cols, rows}),
                                              CoopArg::view(m, {4})})
                  .code,
              0u);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) EXPECT_EQ(t[size_t(c * rows + r)], a[size_t(r * cols + c)]) << r << "," << c;
    EXPECT_EQ(m, (std::vector<float>{10, 11, 12, 13}));
}

TEST(CoopKernels, TensorViewMethodsAndVectorElements) {
    auto k = build_coop(R"(
[CUDAKernel]
void views(TensorView<float2> xy, TensorView<float4> rgba, TensorView<uint> info)
{
    uint i = cudaThreadIdx().x;
    float2 p = xy.load(i);
    rgba.store(i, float4(p, p.x + p.y, 1.0));
    rgba[i].w = 2.0;                   // a component of an element
    xy[uint1(i)] = p * 2;
    if (i == 0) {
        info[0] = rgba.dims();
        info[1] = rgba.size(0);
        info[2] = xy.stride(0);
        info[3] = info.size(0);
    }
}
)", "views");
    std::vector<float> xy = {1, 2, 3, 4, 5, 6}, rgba(12, 0.f);
    std::vector<uint32_t> info(4, 0);
    EXPECT_EQ(k->launch({3, 1, 1}, {1, 1, 1},
                        {CoopArg::view(xy, {3}, 2), CoopArg::view(rgba, {3}, 4), CoopArg::view(info, {4})})
                  .code,
              0u);
    EXPECT_EQ(xy, (std::vector<float>{2, 4, 6, 8, 10, 12}));
    EXPECT_EQ(rgba, (std::vector<float>{1, 2, 3, 2, 3, 4, 7, 2, 5, 6, 11, 2}));
    EXPECT_EQ(info, (std::vector<uint32_t>{1, 3, 2, 4}));
}

TEST(CoopKernels, AtomicsUnderContention) {
    auto k = build_coop(R"(
groupshared uint hits;
groupshared int low;
[CUDAKernel]
void atomics(TensorView<int> total, TensorView<uint> bits, TensorView<float> fsum, TensorView<int> firsts)
{
    uint t = cudaThreadIdx().x;
    uint g = cudaBlockIdx().x * cudaBlockDim().x + t;
    if (t == 0) { hits = 0; low = 1 << 30; }
    GroupMemoryBarrierWithGroupSync();
    InterlockedAdd(hits, 1);
    InterlockedMin(low, int(g) - 50);
    InterlockedAdd(total[0], int(g));
    InterlockedMax(total[1], int(g));
    InterlockedMin(total[2], -int(g));
    InterlockedOr(bits[0], 1u << (g % 32));
    InterlockedXor(bits[1], 1u << (g % 32));
    InterlockedAnd(bits[2], ~(1u << (g % 16)));
    InterlockedAdd(fsum[0], 0.5);
    int before;
    InterlockedCompareExchange(total[3], 0, int(g) + 1, before);   // exactly one thread wins
    if (before == 0) InterlockedAdd(total[4], 1);
    uint old;
    InterlockedExchange(bits[3], g, old);
    InterlockedAdd(bits[4], old == 1234567u ? 1u : 0u);               // the first exchange saw the start
    GroupMemoryBarrierWithGroupSync();
    if (t == 0) { firsts[cudaBlockIdx().x * 2] = int(hits); firsts[cudaBlockIdx().x * 2 + 1] = low; }
}
)", "atomics");
    for (bool sequential : {true, false}) {
        std::vector<int> total = {0, -1, 0, 0, 0}, firsts(32, 0);
        std::vector<uint32_t> bits = {0, 0, 0xffffffffu, 1234567u, 0};
        std::vector<float> fsum = {0};
        EXPECT_EQ(k->launch({96, 1, 1}, {16, 1, 1},
                            {CoopArg::view(total, {5}), CoopArg::view(bits, {5}), CoopArg::view(fsum, {1}),
                             CoopArg::view(firsts, {32})},
                            sequential)
                      .code,
                  0u);
        const int n = 96 * 16;
        EXPECT_EQ(total[0], n * (n - 1) / 2);
        EXPECT_EQ(total[1], n - 1);
        EXPECT_EQ(total[2], -(n - 1));
        EXPECT_GE(total[3], 1);
        EXPECT_EQ(total[4], 1);
        EXPECT_EQ(bits[0], 0xffffffffu);
        EXPECT_EQ(bits[1], 0u);  // each bit flipped 48 times
        EXPECT_EQ(bits[2], 0xffff0000u);
        EXPECT_EQ(bits[4], 1u);
        EXPECT_EQ(fsum[0], float(n) * 0.5f);
        for (int b = 0; b < 16; ++b) {
            EXPECT_EQ(firsts[size_t(b * 2)], 96) << b;
            EXPECT_EQ(firsts[size_t(b * 2 + 1)], b * 96 - 50) << b;
        }
    }
}

TEST(CoopKernels, OutOfRangeViewAccessIsAFault) {
    auto k = build_coop(R"(
[CUDAKernel]
void oob(TensorView<float> a, int shift)
{
    uint i = cudaThreadIdx().x;
    a[i + shift] = 1.0;
}
)", "oob");
    std::vector<float> a(4, 0.f);
    codegen::FaultRecord f = k->launch({4, 1, 1}, {1, 1, 1}, {CoopArg::view(a, {4}), CoopArg::scalar(2)});
    EXPECT_EQ(f.code, codegen::kErrorIndexOutOfBounds);
    EXPECT_EQ(f.param, 0);
    EXPECT_EQ(f.dim, 0);
    EXPECT_EQ(f.extent, 4);
    EXPECT_EQ(f.line, 6);
    EXPECT_EQ(a, (std::vector<float>{0, 0, 1, 1}));  // the faulting stores wrote nothing
    // Two indices into a rank-1 view: the count is checked against the bound rank.
    auto k2 = build_coop(R"(
[CUDAKernel]
void rank(TensorView<float> a) { a[0, cudaThreadIdx().x] = 2.0; }
)", "rank");
    f = k2->launch({1, 1, 1}, {1, 1, 1}, {CoopArg::view(a, {4})});
    EXPECT_EQ(f.code, codegen::kErrorIndexOutOfBounds);
    EXPECT_EQ(f.dim, -1);
    EXPECT_EQ(f.index, 2);
    EXPECT_EQ(f.extent, 1);
}

TEST(CoopKernels, EveryScalarElementType) {
    for (const char* t : {"int8_t", "int16_t", "int", "int64_t", "uint8_t", "uint16_t", "uint", "uint64_t", "half",
                          "float", "double"}) {
        const std::string src = std::string("[CUDAKernel]\nvoid copy(TensorView<") + t + "> a, TensorView<" + t +
                                "> b) { uint i = cudaThreadIdx().x; b[i] = a[i] + " + t + "(1); }\n";
        auto k = build_coop(src, "copy");
        const size_t bytes = std::string(t).find("64") != std::string::npos || std::string(t) == "double" ? 8
                             : std::string(t).find("8") != std::string::npos ? 1
                             : std::string(t).find("16") != std::string::npos || std::string(t) == "half" ? 2 : 4;
        std::vector<uint8_t> a(3 * bytes, 0), b(3 * bytes, 0);
        // Small integers and halves: the byte patterns of 0, 1, 2 differ per type; compare to a
        // second kernel's result instead of decoding: b must equal a + 1 element-wise, which for
        // zero-filled input is the pattern of 1.
        EXPECT_EQ(k->launch({3, 1, 1}, {1, 1, 1}, {CoopArg::view(a, {3}), CoopArg::view(b, {3})}).code, 0u) << t;
        EXPECT_NE(b, std::vector<uint8_t>(3 * bytes, 0)) << t;
        EXPECT_EQ(std::vector<uint8_t>(b.begin(), b.begin() + long(bytes)),
                  std::vector<uint8_t>(b.begin() + long(bytes), b.begin() + long(2 * bytes))) << t;
    }
}

}  // namespace
}  // namespace sg::test
