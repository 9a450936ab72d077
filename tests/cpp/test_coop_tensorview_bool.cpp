// tests/cpp/test_coop_tensorview_bool.cpp — TensorView<bool> (SlangPy's test_tensorview.py copies
// and negates torch.bool tensors through one): one byte an element, loads, stores, `[]` and `!`,
// run on the CPU backend over a partial block and compiled for CUDA with NVRTC (build_coop).
#include "coop_harness.h"

namespace sg::test {
namespace {

TEST(CoopTensorViewBool, CopyAndNegateOneByteElements) {
    auto k = build_coop(R"(
[CUDAKernel]
void copy_negate(TensorView<bool> input, TensorView<bool> copied, TensorView<bool> negated)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i >= input.size(0)) return;
    copied.store(i, input.load(i));
    negated[i] = !input[i];
}
)", "copy_negate");
    std::vector<uint8_t> in = {1, 0, 1, 1, 0, 0, 1}, copied(7, 2), negated(7, 2);
    const auto fault = k->launch({4, 1, 1}, {2, 1, 1},
                                 {CoopArg::view(in, {7}), CoopArg::view(copied, {7}), CoopArg::view(negated, {7})});
    EXPECT_EQ(fault.code, 0u);
    for (size_t i = 0; i < in.size(); ++i) {
        EXPECT_EQ(copied[i], in[i]) << i;
        EXPECT_EQ(negated[i], 1 - in[i]) << i;
    }
}

}  // namespace
}  // namespace sg::test
