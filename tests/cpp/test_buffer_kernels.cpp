// tests/cpp/test_buffer_kernels.cpp — kernels of calls with StructuredBuffer parameters and
// struct-element tensors: the binder's layout of each (a whole tensor, the element's trailing
// dims, the struct flattened), its refusals (batches of buffers, mixed structs, non-contiguous
// element dims), and the generated CUDA of the forward and backward glue, compiled by NVRTC
// (the Python tests run the same calls on the CPU backend and compare values and gradients).
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/bound_calls.h"
#include "../support/cuda_compile_check.h"
#include "call/binder.h"
#include "call/call_plan.h"
#include "call/compile_kernel.h"
#include "call/errors.h"
#include "call/glue.h"
#include "call/user_module.h"

namespace sg::test {
namespace {

const char* kModule = R"(
import slangpy;
struct P { float a; float b; };
struct Q : IDifferentiable { float2 p; float w[2]; };
struct Mixed { float a; int b; };
float read_p(int i, StructuredBuffer<P> b) { return b[i].a * 10 + b[i].b; }
void write_p(int i, RWStructuredBuffer<P> b) { b[i].b = b[i].a + 1.0; }
float read_m(int i, StructuredBuffer<float2x3> b) { return b[i][1][2]; }
float read_va(int i, StructuredBuffer<float2[2]> b) { return b[i][1].x; }
uint2 dims(StructuredBuffer<Q> b) { uint n, s; b.GetDimensions(n, s); return uint2(n, s); }
float read_mixed(StructuredBuffer<Mixed> b) { return b[0].a; }
void tswap_p(int2 ij, RWTensor<P, 2> t) { P p = t[ij.x, ij.y]; t[ij.x, ij.y] = { p.b, p.a }; }
[Differentiable]
float energy(int i, DiffTensor<Q, 1> t) { Q q = t[i]; return q.p.x * q.p.y + q.w[0] * q.w[0] + sin(q.w[1]); }
[Differentiable]
float energy_i(int i, IDiffTensor<Q, 1> t) { Q q = t[i]; return q.p.x * q.w[1]; }
[Differentiable]
void scatter(int i, DiffTensor<Q, 1> x, WDiffTensor<Q, 1> y) { Q q = x[i]; q.w[0] = q.p.y * 2.0; y[i] = q; }
)";

TensorInfo tensor(std::vector<int64_t> shape, DType dtype, bool requires_grad = false) {
    TensorInfo t;
    std::memset(&t, 0, sizeof(t));
    t.ndim = int(shape.size());
    int64_t stride = 1, numel = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
        t.shape[d] = shape[size_t(d)];
        t.strides[d] = stride;
        stride *= shape[size_t(d)];
    }
    for (int64_t e : shape) numel *= e;
    t.numel = numel;
    t.dtype = dtype;
    t.device_type = DeviceType::CUDA;
    t.device_index = 0;
    t.requires_grad = requires_grad;
    return t;
}

/// The calls here are bound for CUDA (their kernels are compiled by NVRTC, not run).
Call bind_cuda(const call::UserModule& m, const std::string& fn, std::vector<ArgInfo> args) {
    return bind(m, fn, std::move(args), /*deterministic=*/false, DeviceType::CUDA);
}

std::string bind_error(const call::UserModule& m, const std::string& fn, std::vector<ArgInfo> args) {
    try {
        bind_cuda(m, fn, std::move(args));
    } catch (const call::CallError& e) {
        return e.what();
    }
    return "(no error)";
}

void expect_cuda(const call::UserModule& m, const call::Binding& b, const call::Glue& glue) {
    codegen::CodegenOptions base;
    base.call_rank = b.call_rank;
    call::CompiledKernel k = call::generate(m, glue, DeviceType::CUDA, call::kernel_options(base, glue));
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << k.generated.source.substr(k.generated.body_begin);
}

const call::ParamBinding& param(const Call& c, int index) {
    for (const call::ParamBinding& p : c.binding.params)
        if (p.param == index) return p;
    throw std::runtime_error("no binding of that parameter");
}

TEST(BufferKernels, BuffersAreWholeTensorsWithTheElementsTrailingDims) {
    call::UserModule m("buffers", kModule);
    const DType f = DType::Float32;
    Call p = bind_cuda(m, "read_p", {tensor_arg(tensor({5}, DType::Int32)), tensor_arg(tensor({7, 2}, f))});
    EXPECT_EQ(p.binding.call_rank, 1);
    EXPECT_EQ(param(p, 1).kind, call::BindingKind::WholeTensor);
    EXPECT_EQ(param(p, 1).call_dims, 0);
    EXPECT_EQ(param(p, 1).elem_dims, 1);
    EXPECT_FALSE(param(p, 1).is_output);
    Call w = bind_cuda(m, "write_p", {tensor_arg(tensor({5}, DType::Int32)), tensor_arg(tensor({7, 2}, f))});
    EXPECT_TRUE(param(w, 1).is_output);
    Call mat = bind_cuda(m, "read_m", {tensor_arg(tensor({5}, DType::Int32)), tensor_arg(tensor({7, 2, 3}, f))});
    EXPECT_EQ(param(mat, 1).elem_dims, 2);
    Call va = bind_cuda(m, "read_va", {tensor_arg(tensor({5}, DType::Int32)), tensor_arg(tensor({7, 2, 2}, f))});
    EXPECT_EQ(param(va, 1).elem_dims, 2);
}

TEST(BufferKernels, BinderRefusesWhatNoBufferCanHold) {
    call::UserModule m("buffers", kModule);
    const DType f = DType::Float32;
    EXPECT_NE(bind_error(m, "read_p", {tensor_arg(tensor({5}, DType::Int32)), tensor_arg(tensor({3, 7, 2}, f))})
                  .find("read_p(): parameter 'b' of type StructuredBuffer<P> needs a tensor of shape (N, 2) (one "
                        "buffer per call)"),
              std::string::npos);
    EXPECT_NE(bind_error(m, "read_mixed", {tensor_arg(tensor({3, 2}, f))})
                  .find("parameter 'b' of type StructuredBuffer<Mixed>: struct Mixed mixes scalar types"),
              std::string::npos);
    TensorInfo transposed = tensor({7, 2, 2}, f);
    std::swap(transposed.strides[1], transposed.strides[2]);
    EXPECT_NE(bind_error(m, "read_va", {tensor_arg(tensor({5}, DType::Int32)), tensor_arg(transposed)})
                  .find("not contiguous among themselves"),
              std::string::npos);
    EXPECT_NE(
        bind_error(m, "read_p", {tensor_arg(tensor({5}, DType::Int32)), tensor_arg(tensor({7, 2}, DType::Float64))})
            .find("needs a float32 tensor, got a float64 tensor of shape (7, 2)"),
        std::string::npos);
}

TEST(BufferKernels, GeneratedCudaCompiles) {
    call::UserModule m("buffers", kModule);
    const DType f = DType::Float32, i32 = DType::Int32;
    for (const char* fn : {"read_p", "write_p"}) {
        Call c = bind_cuda(m, fn, {tensor_arg(tensor({64}, i32)), tensor_arg(tensor({64, 2}, f))});
        expect_cuda(m, c.binding, call::make_forward_glue(c.binding));
    }
    Call mat = bind_cuda(m, "read_m", {tensor_arg(tensor({64}, i32)), tensor_arg(tensor({8, 2, 3}, f))});
    expect_cuda(m, mat.binding, call::make_forward_glue(mat.binding));
    Call va = bind_cuda(m, "read_va", {tensor_arg(tensor({64}, i32)), tensor_arg(tensor({8, 2, 2}, f))});
    expect_cuda(m, va.binding, call::make_forward_glue(va.binding));
    Call d = bind_cuda(m, "dims", {tensor_arg(tensor({8, 4}, f))});
    expect_cuda(m, d.binding, call::make_forward_glue(d.binding));
    Call s = bind_cuda(m, "tswap_p", {tensor_arg(tensor({64, 2}, i32)), tensor_arg(tensor({8, 8, 2}, f))});
    expect_cuda(m, s.binding, call::make_forward_glue(s.binding));
    for (const char* fn : {"energy", "energy_i"}) {
        Call e = bind_cuda(m, fn, {tensor_arg(tensor({64}, i32)), tensor_arg(tensor({16, 4}, f, true))});
        expect_cuda(m, e.binding, call::make_forward_glue(e.binding));
        expect_cuda(m, e.binding, call::make_backward_glue(e.binding));
    }
    Call sc = bind_cuda(
        m, "scatter",
        {tensor_arg(tensor({16}, i32)), tensor_arg(tensor({16, 4}, f, true)), tensor_arg(tensor({16, 4}, f, true))});
    expect_cuda(m, sc.binding, call::make_forward_glue(sc.binding));
    expect_cuda(m, sc.binding, call::make_backward_glue(sc.binding));
}

}  // namespace
}  // namespace sg::test
