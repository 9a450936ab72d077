// tests/cpp/test_coop_fibers.cpp — the CPU backend's fibers (prelude_fiber.inc): a block's threads
// switched at barriers by the user-space switch. Blocks of growing and shrinking sizes on one OS
// thread (the kept stacks are reused and grown), barriers inside loops and inside called
// functions with live locals in registers and on the stack across every switch, and many blocks
// through the thread pool.
#include "coop_harness.h"

namespace sg::test {
namespace {

// Each thread keeps eight values live across each barrier (in callee-saved registers or its
// stack) while the block rotates a value through groupshared memory: any register or stack the
// switch failed to keep would change the sums.
const char* kRotate = R"(
groupshared int ring[1024];

int step(int v, uint t, uint n)
{
    ring[t] = v;
    GroupMemoryBarrierWithGroupSync();
    int next = ring[(t + 1) % n];
    GroupMemoryBarrierWithGroupSync();
    return next;
}

[CUDAKernel]
void rotate(TensorView<int> out, int rounds)
{
    uint t = cudaThreadIdx().x;
    uint n = cudaBlockDim().x;
    int a = int(t) * 3, b = int(t) + 7, c = int(t) * int(t), d = 11 - int(t);
    int e = int(t) ^ 5, f = int(t) * 13, g = int(t) + 1000, h = int(t) % 7;
    int v = int(cudaBlockIdx().x * n + t);
    for (int r = 0; r < rounds; ++r)
    {
        v = step(v, t, n);
        a += 1; b += 2; c += 3; d += 4; e += 5; f += 6; g += 7; h += 8;
    }
    out[cudaBlockIdx().x * n + t] = v * 1000 + (a + b + c + d + e + f + g + h) % 1000;
}
)";

int want_rotate(int block, int n, int t, int rounds) {
    const int v = block * n + (t + rounds) % n;
    const int a = t * 3 + rounds, b = t + 7 + 2 * rounds, c = t * t + 3 * rounds, d = 11 - t + 4 * rounds;
    const int e = (t ^ 5) + 5 * rounds, f = t * 13 + 6 * rounds, g = t + 1000 + 7 * rounds, h = t % 7 + 8 * rounds;
    return v * 1000 + (a + b + c + d + e + f + g + h) % 1000;
}

TEST(CoopFibers, BlocksOfChangingSizesReuseTheKeptStacks) {
    auto k = build_coop(kRotate, "rotate");
    for (int n : {32, 1024, 64, 1000, 7}) {
        const int blocks = 3, rounds = 5;
        std::vector<int> out(size_t(blocks * n), -1);
        EXPECT_EQ(k->launch({n, 1, 1}, {blocks, 1, 1}, {CoopArg::view(out, {blocks * n}), CoopArg::scalar(rounds)}, true)
                      .code,
                  0u);
        for (int b = 0; b < blocks; ++b)
            for (int t = 0; t < n; ++t) ASSERT_EQ(out[size_t(b * n + t)], want_rotate(b, n, t, rounds)) << n << " " << b << " " << t;
    }
}

TEST(CoopFibers, ManyBlocksOnThePool) {
    auto k = build_coop(kRotate, "rotate");
    const int n = 128, blocks = 200, rounds = 9;
    std::vector<int> out(size_t(blocks * n), -1);
    EXPECT_EQ(k->launch({n, 1, 1}, {blocks, 1, 1}, {CoopArg::view(out, {blocks * n}), CoopArg::scalar(rounds)}).code, 0u);
    for (int b = 0; b < blocks; ++b)
        for (int t = 0; t < n; ++t) ASSERT_EQ(out[size_t(b * n + t)], want_rotate(b, n, t, rounds)) << b << " " << t;
}

}  // namespace
}  // namespace sg::test
