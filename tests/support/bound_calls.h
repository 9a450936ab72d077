// tests/support/bound_calls.h — calls bound for tests of the call layer without torch: tensor
// descriptions over host buffers (or none, for code generation only), a bound call, and the
// differentiable kernels the gradient tests bind (test_grad_strategies.cpp, test_fixed_point.cpp).
#pragma once

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "call/binder.h"
#include "call/resolve.h"
#include "call/user_module.h"

namespace sg::test {

using call::ArgInfo;
using call::GradStrategy;

inline TensorInfo tensor_info(std::vector<int64_t> shape, void* data, DType dtype, bool requires_grad,
                       DeviceType device = DeviceType::CPU) {
    TensorInfo t;
    std::memset(&t, 0, sizeof(t));
    t.data = data;
    t.ndim = int(shape.size());
    int64_t stride = 1, numel = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
        t.shape[d] = shape[size_t(d)];
        t.strides[d] = shape[size_t(d)] == 1 ? 0 : stride;
        stride *= shape[size_t(d)];
    }
    for (int64_t e : shape) numel *= e;
    t.numel = numel;
    t.dtype = dtype;
    t.device_type = device;
    t.device_index = device == DeviceType::CPU ? -1 : 0;
    t.requires_grad = requires_grad;
    return t;
}

inline ArgInfo tensor_arg(const TensorInfo& t) {
    ArgInfo a;
    a.kind = call::ArgKind::Tensor;
    a.tensor = t;
    return a;
}

/// A Python float argument.
inline ArgInfo float_arg(double v) {
    ArgInfo a;
    a.kind = call::ArgKind::Float;
    a.number = v;
    return a;
}

/// A Python int argument.
inline ArgInfo int_arg(int64_t v) {
    ArgInfo a;
    a.kind = call::ArgKind::Int;
    a.integer = v;
    a.number = double(v);
    return a;
}

/// A CUDA tensor argument without data: for generating (not running) kernels.
inline ArgInfo cuda_tensor_arg(std::vector<int64_t> shape, DType dtype, bool requires_grad) {
    return tensor_arg(tensor_info(std::move(shape), nullptr, dtype, requires_grad, DeviceType::CUDA));
}

/// One bound call: the arguments, the binding and (CPU) a plan to launch.
struct Call {
    std::vector<ArgInfo> args;
    call::Binding binding;
};

inline Call bind(const call::UserModule& m, const std::string& fn, std::vector<ArgInfo> args, bool deterministic = false,
          DeviceType device = DeviceType::CPU) {
    call::CallModifiers mods;
    mods.deterministic = deterministic;
    Call c{std::move(args), {}};
    c.binding = call::bind_call(m, fn, c.args.data(), c.args.size(), c.args.size(), {}, true, device, mods);
    return c;
}

inline GradStrategy strategy(const Call& c, int param) {
    for (const call::ParamBinding& p : c.binding.params)
        if (p.param == param) return p.grad_strategy;
    return GradStrategy::None;
}

/// Differentiable kernels whose gradients collide in every way the backward kernel handles: an
/// elementwise x with broadcast parameters (quad), tables read at computed indices in float,
/// half and double3 (lut, luth, lut3), a table read in a loop (lutsum) and matrix elements
/// (mscale). The tests append the kernels only they use.
inline constexpr const char* kGradientKernels = R"(
[Differentiable]
float quad(float x, float a, float b, float c) { return a * x * x + b * x + c; }
[Differentiable]
float lut(int i, IDiffTensor<float, 1> table) { return table[i] * table[i]; }
[Differentiable]
double3 lut3(int i, IDiffTensor<double3, 1> table) { return table[i] * 2.0; }
[Differentiable]
half luth(int i, IDiffTensor<half, 1> table) { return table[i] * table[i]; }
[Differentiable]
float lutsum(int i, IDiffTensor<float, 1> table) {
    float s = 0.0;
    for (int k = 0; k < 4; k++) s += table[(i + k) % 256];
    return s;
}
[Differentiable]
float mscale(float x, float2x2 m) { return (m[0][0] + m[1][1]) * x; }
)";

}  // namespace sg::test
