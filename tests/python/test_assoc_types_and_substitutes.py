# tests/python/test_assoc_types_and_substitutes.py — the fifth tier-3 slice through the call API
# (docs/language.md, tier 3): a generic over an interface with an associated type (a nested
# struct), a [PrimalSubstitute] function, a subscript required by an interface and a derivative
# attribute with a qualified name. Values are the primal's; gradients agree with float64 finite
# differences of what each derivative differentiates.
import math

import pytest
import torch

from conftest import TEST_DEVICE, device_tensor as t
from finite_differences import central

SOURCE = """
import slangpy;

interface IModel { associatedtype Param : IDifferentiable; [Differentiable] float eval(Param p, float x); }
struct Wave : IModel {
    struct Param : IDifferentiable { float a; float b; };
    [Differentiable] float eval(Param p, float x) { return p.a * sin(x) + p.b * p.b * x; }
};
[Differentiable] float loss<M : IModel>(M m, M.Param p, no_diff float x) { return m.eval(p, x); }
[Differentiable] float wave_loss(float a, float b, no_diff float x) { Wave w; Wave.Param p = { a, b }; return loss(w, p, x); }

[PrimalSubstitute(soft_ref)]
float soft(float x) { return max(x, 0.0); }
[Differentiable] float soft_ref(float x) { return log(1.0 + exp(x)); }
[Differentiable] float act(float x) { return 2.0 * soft(x); }

interface IIdx : IDifferentiable { __subscript(int i) -> float { [Differentiable] get; } }
struct Three : IIdx {
    float v[3];
    __subscript(int i) -> float { [Differentiable] get { return v[i]; } }
};
[Differentiable] float prod<T : IIdx>(T t) { return t[0] * t[1] + t[2]; }
[Differentiable] float prod3(float a, float b, float c) { Three s = {{a, b, c}}; return prod(s); }

struct Rules { static void cube_bwd(inout DifferentialPair<float> x, float d) { x = diffPair(x.p, 3.0 * x.p * x.p * d); } };
[BackwardDerivative(Rules.cube_bwd)]
float cube(float x) { return x * x * x; }
[Differentiable] float cubed(float x) { return cube(x); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "assoc_types_and_substitutes", SOURCE)


XS = [-1.25, 0.3, 0.9, 2.0]


def test_generic_over_an_associated_type_matches_finite_differences(m):
    a = t([0.5, 1.0, -2.0, 1.5]).requires_grad_(True)
    b = t([1.0, -0.5, 0.25, 2.0]).requires_grad_(True)
    x = t(XS)
    y = m.wave_loss(a, b, x)
    want = [av * math.sin(xv) + bv * bv * xv for av, bv, xv in zip(a.tolist(), b.tolist(), XS)]
    assert y.tolist() == pytest.approx(want, rel=1e-5, abs=1e-6)
    y.backward(torch.ones(len(XS), device=TEST_DEVICE))
    for av, bv, xv, ga, gb in zip(a.tolist(), b.tolist(), XS, a.grad.tolist(), b.grad.tolist()):
        assert ga == pytest.approx(central(lambda u: u * math.sin(xv) + bv * bv * xv, av), rel=1e-4, abs=1e-6)
        assert gb == pytest.approx(central(lambda u: av * math.sin(xv) + u * u * xv, bv), rel=1e-4, abs=1e-6)


def test_primal_substitute_value_is_the_primal_and_gradient_the_substitute(m):
    x = t(XS).requires_grad_(True)
    y = m.act(x)
    # The call runs soft itself (2 relu(x)); the derivative is softplus's (2 sigmoid(x)).
    assert y.tolist() == pytest.approx([2.0 * max(v, 0.0) for v in XS], rel=1e-6, abs=1e-6)
    y.backward(torch.ones(len(XS), device=TEST_DEVICE))
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: 2.0 * math.log1p(math.exp(u)), v), rel=1e-4, abs=1e-6)
        assert g == pytest.approx(2.0 / (1.0 + math.exp(-v)), rel=1e-5)


def test_subscript_requirement_through_a_generic(m):
    a = t([1.0, 2.0]).requires_grad_(True)
    b = t([3.0, -1.0]).requires_grad_(True)
    c = t([0.5, 4.0]).requires_grad_(True)
    y = m.prod3(a, b, c)
    assert y.tolist() == pytest.approx([3.5, 2.0])
    y.backward(torch.ones(2, device=TEST_DEVICE))
    assert a.grad.tolist() == pytest.approx(b.tolist())
    assert b.grad.tolist() == pytest.approx(a.tolist())
    assert c.grad.tolist() == pytest.approx([1.0, 1.0])


def test_qualified_backward_derivative_attribute(m):
    x = t(XS).requires_grad_(True)
    y = m.cubed(x)
    assert y.tolist() == pytest.approx([v ** 3 for v in XS], rel=1e-5)
    y.backward(torch.ones(len(XS), device=TEST_DEVICE))
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: u ** 3, v), rel=1e-4)
