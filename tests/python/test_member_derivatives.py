# tests/python/test_member_derivatives.py — custom derivatives on member functions and generic
# functions (docs/language.md, "Custom derivatives on methods and generics") through the call
# API: torch autograd and fwd/bwd of a caller use the struct's own derivative methods and the
# generic derivative's instance; the gradients agree with float64 finite differences of the
# primal and with the analytic derivative the custom one implements.
import math

import pytest
import torch

from conftest import TEST_DEVICE, device_tensor as t
from finite_differences import central

SOURCE = """
import slangpy;

struct Wave
{
    float k;
    [BackwardDerivative(eval_bwd)]
    float eval(float x) { return sin(k * x); }
    void eval_bwd(inout DifferentialPair<float> x, float dout) { x = diffPair(x.p, k * cos(k * x.p) * dout); }
};

struct Spring : IDifferentiable
{
    float k;
    [BackwardDerivative(energy_bwd)]
    float energy(float x) { return 0.5 * k * x * x; }
    static void energy_bwd(inout DifferentialPair<Spring> s, inout DifferentialPair<float> x, float dout)
    {
        Spring.Differential ds = { 0.5 * x.p * x.p * dout };
        s = diffPair(s.p, ds);
        x = diffPair(x.p, s.p.k * x.p * dout);
    }
};

[BackwardDerivative(softplus_bwd)]
T softplus<T : __BuiltinFloatingPointType>(T x) { return log(T(1.0) + exp(x)); }
void softplus_bwd<T : __BuiltinFloatingPointType>(inout DifferentialPair<T> x, T.Differential dout)
{
    x = diffPair(x.p, T.Differential(dout * (T(1.0) / (T(1.0) + exp(-x.p)))));
}

[Differentiable] float wave(float k, float x) { Wave w = { k }; return w.eval(x); }
[Differentiable] float spring(float k, float x) { Spring s = { k }; return s.energy(x); }
[Differentiable] float soft(float x) { return softplus(x); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "member_derivatives", SOURCE)


XS = [-1.25, 0.3, 0.9, 2.0]


def test_method_backward_matches_finite_differences(m):
    x = t(XS).requires_grad_(True)
    y = m.wave(2.0, x)
    assert y.tolist() == pytest.approx([math.sin(2.0 * v) for v in XS], rel=1e-5, abs=1e-6)
    y.backward(torch.ones(len(XS), device=TEST_DEVICE))
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: math.sin(2.0 * u), v), rel=1e-4, abs=1e-6)
        assert g == pytest.approx(2.0 * math.cos(2.0 * v), rel=1e-5, abs=1e-6)


def test_differentiable_struct_method_gives_both_gradients(m):
    k = t([1.5, 2.0, 0.5, 3.0]).requires_grad_(True)
    x = t(XS).requires_grad_(True)
    y = m.spring(k, x)
    y.backward(torch.ones(len(XS), device=TEST_DEVICE))
    for kv, xv, gk, gx in zip(k.tolist(), XS, k.grad.tolist(), x.grad.tolist()):
        assert gk == pytest.approx(central(lambda u: 0.5 * u * xv * xv, kv), rel=1e-4, abs=1e-6)
        assert gx == pytest.approx(central(lambda u: 0.5 * kv * u * u, xv), rel=1e-4, abs=1e-6)


def test_generic_backward_matches_finite_differences(m):
    x = t(XS).requires_grad_(True)
    y = m.soft(x)
    assert y.tolist() == pytest.approx([math.log1p(math.exp(v)) for v in XS], rel=1e-5)
    y.backward(torch.ones(len(XS), device=TEST_DEVICE))
    for v, g in zip(XS, x.grad.tolist()):
        assert g == pytest.approx(central(lambda u: math.log1p(math.exp(u)), v), rel=1e-4)


def test_bwds_uses_the_method_derivative(sg, m):
    # The backward without a forward (fn.bwds) runs the same custom derivative.
    x = sg.diffPair(0.3)
    m.wave.bwds(2.0, x, 1.0)
    assert x.grad == pytest.approx(2.0 * math.cos(0.6), rel=1e-5)
