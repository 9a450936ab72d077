# tests/python/gradient_cases.py — what the gradient tests share (test_grad_strategies.py,
# test_deterministic.py): the kernels by dtype, the tolerances of summed gradients, and the
# float64 and bitwise comparisons.
import torch

# quad (elementwise, broadcast parameters), shade (float3) and lut (a table read at computed
# indices) in float16/32/64. test_deterministic.py adds the kernels only it uses.
GRADIENT_KERNELS = """
import slangpy;
[Differentiable]
float quad(float x, float a, float b, float c) { return a * x * x + b * x + c; }
[Differentiable]
half quad_h(half x, half a, half b, half c) { return a * x * x + b * x + c; }
[Differentiable]
double quad_d(double x, double a, double b, double c) { return a * x * x + b * x + c; }
[Differentiable]
float3 shade(float3 p, float3 k) { return p * k * k + sin(p * k); }
[Differentiable]
float lut(no_diff int i, IDiffTensor<float, 1> table) { return table[i] * table[i]; }
[Differentiable]
half lut_h(no_diff int i, IDiffTensor<half, 1> table) { return table[i] * table[i]; }
[Differentiable]
double lut_d(no_diff int i, IDiffTensor<double, 1> table) { return table[i] * table[i]; }
"""

QUADS = {torch.float16: "quad_h", torch.float32: "quad", torch.float64: "quad_d"}
LUTS = {torch.float16: "lut_h", torch.float32: "lut", torch.float64: "lut_d"}
DTYPE_IDS = ["f16", "f32", "f64"]
# Relative tolerance of a gradient that sums many terms, per dtype (float16 results round once;
# float: up to 1M adds in one element).
RTOL = {torch.float16: 2e-2, torch.float32: 1e-3, torch.float64: 1e-10}


def close(got, want, rtol):
    assert got is not None
    got = got.double().cpu()
    want = want.double().cpu()
    scale = want.abs().max().item() + 1e-30
    err = (got - want).abs().max().item() / scale
    assert err <= rtol, f"max relative error {err:.3e} > {rtol:.1e}"


def bits(t):
    as_int = {torch.float16: torch.int16, torch.float32: torch.int32, torch.float64: torch.int64}[t.dtype]
    return t.detach().cpu().contiguous().view(as_int).clone()
