// tests/cpp/test_spy_glue_cuda.cpp — the generated CUDA of SlangPy's call details compiles with
// NVRTC: the generators with SlangPy's numbers (wang_hash into uint and int vectors with warm-up,
// rand_float) and tensor sampling (`t.sample(uv)` on a read-only tensor, and forward and backward
// on a differentiable one, which differentiates it through its loads). The CPU backend runs the
// same code in tests/python (test_spy_generators.py, test_spy_sample.py).
#include <gtest/gtest.h>

#include "../support/bound_calls.h"
#include "../support/cuda_compile_check.h"
#include "call/call_plan.h"
#include "call/compile_kernel.h"
#include "call/glue.h"

namespace sg::test {
namespace {

const char* const kModule = R"(import slangpy;
uint2 hv(uint2 v) { return v; }
int3 iv(int3 v) { return v; }
float3 fv(float3 v) { return v; }
float look(Tensor<float, 2> t, float2 uv) { return t.sample(uv); }
float3 look3(RWTensor<float3, 2> t, float2 uv) { return t.sample(uv); }
[Differentiable] float dlook(IDiffTensor<float, 2> t, float2 uv) { return t.sample(uv); }
[Differentiable] half hlook(DiffTensor<half, 2> t, float2 uv) { return t.sample(uv); }
)";

ArgInfo generator(call::ArgKind kind, int dim, int64_t warmup) {
    ArgInfo a;
    a.kind = kind;
    a.rows = uint8_t(dim);
    a.integer = 12345;
    a.offset[0] = warmup;
    a.number = 0.0;
    a.number2 = 1.0;
    return a;
}

std::string expect_cuda(const call::UserModule& m, const Call& c, bool backward) {
    codegen::CodegenOptions base;
    base.call_rank = c.binding.call_rank;
    call::Glue glue = backward ? call::make_backward_glue(c.binding) : call::make_forward_glue(c.binding);
    call::CompiledKernel k = call::generate(m, glue, DeviceType::CUDA, call::kernel_options(base, glue));
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << k.generated.source.substr(k.generated.body_begin);
    return glue.source;
}

TEST(SpyGlueCuda, GeneratorsCompile) {
    call::UserModule m("spy_glue", kModule);
    for (int warmup : {0, 3}) {
        Call h = bind(m, "hv", {generator(call::ArgKind::WangHash, 2, warmup)}, false, DeviceType::CUDA);
        const std::string glue = expect_cuda(m, h, false);
        EXPECT_NE(glue.find("__sg_wang_warmup("), std::string::npos) << glue;
    }
    Call i = bind(m, "iv", {generator(call::ArgKind::WangHash, 0, 0)}, false, DeviceType::CUDA);
    EXPECT_NE(expect_cuda(m, i, false).find("int(_h_v_0)"), std::string::npos);
    Call f = bind(m, "fv", {generator(call::ArgKind::RandFloat, 3, 1)}, false, DeviceType::CUDA);
    EXPECT_NE(expect_cuda(m, f, false).find("__sg_unit_float("), std::string::npos);
}

TEST(SpyGlueCuda, TensorSampleCompilesForwardAndBackward) {
    call::UserModule m("spy_glue", kModule);
    const DType f = DType::Float32;
    Call r = bind(m, "look", {cuda_tensor_arg({4, 5}, f, false), cuda_tensor_arg({7, 2}, f, false)}, false,
                  DeviceType::CUDA);
    expect_cuda(m, r, false);
    Call v = bind(m, "look3", {cuda_tensor_arg({4, 5, 3}, f, false), cuda_tensor_arg({7, 2}, f, false)}, false,
                  DeviceType::CUDA);
    expect_cuda(m, v, false);
    Call d = bind(m, "dlook", {cuda_tensor_arg({4, 5}, f, true), cuda_tensor_arg({7, 2}, f, true)}, false,
                  DeviceType::CUDA);
    ASSERT_TRUE(d.binding.autograd);
    expect_cuda(m, d, false);
    expect_cuda(m, d, true);
    Call hh = bind(m, "hlook", {cuda_tensor_arg({4, 5}, DType::Float16, true), cuda_tensor_arg({7, 2}, f, false)}, false,
                   DeviceType::CUDA);
    expect_cuda(m, hh, true);
}

TEST(SpyGlueCuda, SampleChecksItsTensorAndArgument) {
    for (const char* bad : {"float f(Tensor<float, 1> t) { return t.sample(float2(0, 0)); }",
                            "float f(Tensor<int, 2> t) { return float(t.sample(float2(0, 0))); }",
                            "float f(WTensor<float, 2> t) { return t.sample(float2(0, 0)); }",
                            "float f(Tensor<float, 2> t) { return t.sample(1.0, 2.0); }"}) {
        EXPECT_THROW(call::UserModule("bad_sample", std::string("import slangpy;\n") + bad), lang::CompileError) << bad;
    }
}

}  // namespace
}  // namespace sg::test
