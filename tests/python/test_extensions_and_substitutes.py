# tests/python/test_extensions_and_substitutes.py — the sixth tier-3 slice through the call API
# (docs/language.md, tier 3): a method an extension gives one instance of a generic struct, a
# method an extension gives `float`, a struct declared in a generic struct, a [PrimalSubstitute]
# method and generic, a function with a custom backward derivative that reads a uniform global
# bound with `fn.set`, an interface's default implementation, an extension of every conforming
# type, and the memory of a column_major field in a buffer. Values are the primal's; gradients agree with float64 finite
# differences of what each derivative differentiates.
import math

import pytest
import torch

from conftest import TEST_DEVICE, device_tensor as t
from finite_differences import central

SOURCE = """
struct Box<T : IDifferentiable> : IDifferentiable { T k; };
extension Box<float> { [Differentiable] float scaled_sin(float x) { return k * sin(x); } }
[Differentiable] float box_wave(float k, float x) { Box<float> b = { k }; return b.scaled_sin(x); }

extension float { [Differentiable] float softsq() { return this * this / (1.0 + this * this); } }
[Differentiable] float soft_square(float x) { return x.softsq(); }

struct Pair<T : IDifferentiable> { struct Item : IDifferentiable { T a; T b; }; };
[Differentiable] float item_product(float a, float b) { Pair<float>.Item i = { a, b }; return i.a * i.b * i.b; }

struct Ramp {
    float k;
    [PrimalSubstitute(smooth)] float hard(float x) { return k * max(x, 0.0); }
    [Differentiable] float smooth(float x) { return k * log(1.0 + exp(x)); }
};
[Differentiable] float ramp(float x) { Ramp r = { 3.0 }; return r.hard(x); }

[PrimalSubstitute(quart_ref)] T quart<T : IFloat>(T x) { return x * x * x * x; }
[Differentiable] T quart_ref<T : IFloat>(T x) { return x * x * x * x + x; }
[Differentiable] float quarted(float x) { return quart(x); }

interface IK { float k(); [Differentiable] float curve(float x) { return k() * x * x * x; } }
struct Cubic : IK { float c; float k() { return c; } };
[Differentiable] float default_curve(float x) { Cubic q = { 0.5 }; return q.curve(x); }

interface IBase { float base(); }
extension<T : IBase> T { [Differentiable] float lifted(float x) { return base() * exp(x); } }
struct Lift : IBase { float b; float base() { return b; } };
[Differentiable] float lifted_exp(float x) { Lift l = { 1.5 }; return l.lifted(x); }

float g_gain;
void gained_bwd(inout DifferentialPair<float> x, float d) { x = diffPair(x.p, d * g_gain * 2.0 * x.p); }
[BackwardDerivative(gained_bwd)]
float gained(float x) { return g_gain * x * x; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "extensions_and_substitutes", SOURCE)


XS = [-1.25, 0.3, 0.9, 2.0]
ONES = torch.ones(len(XS), device=TEST_DEVICE)


def test_method_of_one_instance_matches_finite_differences(m):
    k = t([0.5, 1.0, -2.0, 1.5]).requires_grad_(True)
    x = t(XS).requires_grad_(True)
    y = m.box_wave(k, x)
    want = [kv * math.sin(xv) for kv, xv in zip(k.tolist(), XS)]
    assert y.tolist() == pytest.approx(want, rel=1e-5, abs=1e-6)
    y.backward(ONES)
    for kv, xv, gk, gx in zip(k.tolist(), XS, k.grad.tolist(), x.grad.tolist()):
        assert gk == pytest.approx(central(lambda u: u * math.sin(xv), kv), rel=1e-4, abs=1e-6)
        assert gx == pytest.approx(central(lambda u: kv * math.sin(u), xv), rel=1e-4, abs=1e-6)


def test_method_of_float_matches_finite_differences(m):
    x = t(XS).requires_grad_(True)
    y = m.soft_square(x)
    assert y.tolist() == pytest.approx([v * v / (1 + v * v) for v in XS], rel=1e-5)
    y.backward(ONES)
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: u * u / (1 + u * u), v), rel=1e-4, abs=1e-6)


def test_struct_declared_in_a_generic_struct(m):
    a = t([1.0, 2.0]).requires_grad_(True)
    b = t([3.0, -1.0]).requires_grad_(True)
    y = m.item_product(a, b)
    assert y.tolist() == pytest.approx([9.0, 2.0])
    y.backward(torch.ones(2, device=TEST_DEVICE))
    assert a.grad.tolist() == pytest.approx([9.0, 1.0])  # b^2
    assert b.grad.tolist() == pytest.approx([6.0, -4.0])  # 2 a b


def test_method_primal_substitute(m):
    x = t(XS).requires_grad_(True)
    y = m.ramp(x)
    # The call runs hard (3 relu(x)); the derivative is smooth's (3 sigmoid(x)).
    assert y.tolist() == pytest.approx([3.0 * max(v, 0.0) for v in XS], rel=1e-6, abs=1e-6)
    y.backward(ONES)
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: 3.0 * math.log1p(math.exp(u)), v), rel=1e-4, abs=1e-6)


def test_generic_primal_substitute(m):
    x = t(XS).requires_grad_(True)
    y = m.quarted(x)
    assert y.tolist() == pytest.approx([v ** 4 for v in XS], rel=1e-5)
    y.backward(ONES)
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: u ** 4 + u, v), rel=1e-4, abs=1e-5)


def test_custom_derivative_reads_a_uniform_global(m):
    x = t(XS).requires_grad_(True)
    f = m.gained.set(g_gain=2.5)
    y = f(x)
    assert y.tolist() == pytest.approx([2.5 * v * v for v in XS], rel=1e-5)
    y.backward(ONES)
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: 2.5 * u * u, v), rel=1e-4, abs=1e-5)
    with pytest.raises(TypeError, match="g_gain"):
        m.gained(t(XS))  # nobody bound the global the function (and its derivative) reads


def test_interface_default_implementation(m):
    x = t(XS).requires_grad_(True)
    y = m.default_curve(x)
    assert y.tolist() == pytest.approx([0.5 * v ** 3 for v in XS], rel=1e-5)
    y.backward(ONES)
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: 0.5 * u ** 3, v), rel=1e-4, abs=1e-5)


def test_extension_of_every_conforming_type(m):
    x = t(XS).requires_grad_(True)
    y = m.lifted_exp(x)
    assert y.tolist() == pytest.approx([1.5 * math.exp(v) for v in XS], rel=1e-5)
    y.backward(ONES)
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: 1.5 * math.exp(u), v), rel=1e-4, abs=1e-5)


# ---------------------------------------------------------------- column_major fields in buffers

LAYOUT_SOURCE = """
struct C { column_major float2x3 m; float w; };
float read_c(int i, StructuredBuffer<C> b) { return b[i].m[0][2] * 10 + b[i].m[1][0]; }
void write_c(int i, RWStructuredBuffer<C> b, float2x3 m) { b[i].m = m; b[i].w = -1; }
void bump_c(int i, RWTensor<C, 1> t) { C c = t[i]; c.m[1][2] += 100; t[i] = c; }
"""


@pytest.fixture(scope="module")
def layout(sg, device):
    return sg.Module.load_from_source(device, "column_major_layout", LAYOUT_SOURCE)


def test_column_major_field_is_read_column_by_column(layout):
    # Element 0's memory: m's columns (m00, m10), (m01, m11), (m02, m12), then w.
    b = t([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]])
    assert layout.read_c(torch.tensor([0, 1], dtype=torch.int32, device=TEST_DEVICE), b).tolist() == [52.0, 520.0]


def test_column_major_field_is_written_column_by_column(layout):
    b = torch.zeros(2, 7, device=TEST_DEVICE)
    m = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])  # rows of the float2x3
    layout.write_c(1, b, m)
    assert b[1].tolist() == [1.0, 4.0, 2.0, 5.0, 3.0, 6.0, -1.0]
    assert b[0].tolist() == [0.0] * 7
    tensor = b.clone()
    layout.bump_c(1, tensor)
    assert tensor[1].tolist() == [1.0, 4.0, 2.0, 5.0, 3.0, 106.0, -1.0]
