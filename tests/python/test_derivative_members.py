# tests/python/test_derivative_members.py — structs whose Differential is another struct, with
# [DerivativeMember] fields (docs/language.md), called from Python: a dict argument's field
# gradients and a struct result's incoming gradients go through the Differential's own field
# names; the values agree with float64 finite differences.
import pytest
import torch

from conftest import TEST_DEVICE, device_tensor as t
from finite_differences import central

SOURCE = """
import slangpy;

struct VD : IDifferentiable { float b; float a; typedef VD Differential; };
struct V : IDifferentiable
{
    typedef VD Differential;
    [DerivativeMember(VD.a)] float x;
    [DerivativeMember(VD.b)] float y;
};

[Differentiable] float energy(V v) { return v.x * v.x * v.y + 3.0 * v.y; }
[Differentiable] V scaled(V v, float k) { V r = { v.x * k, v.y * k * k }; return r; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "derivative_members", SOURCE)


XS, YS = [1.0, -2.0, 0.5], [2.0, 0.25, -1.5]


def test_dict_argument_gradients_by_field(m):
    x = t(XS).requires_grad_(True)
    y = t(YS).requires_grad_(True)
    e = m.energy({"x": x, "y": y})
    assert e.tolist() == pytest.approx([a * a * b + 3 * b for a, b in zip(XS, YS)])
    e.backward(torch.ones(3, device=TEST_DEVICE))
    for a, b, gx, gy in zip(XS, YS, x.grad.tolist(), y.grad.tolist()):
        assert gx == pytest.approx(central(lambda u: u * u * b + 3 * b, a), rel=1e-4)
        assert gy == pytest.approx(central(lambda u: a * a * u + 3 * u, b), rel=1e-4)


def test_struct_result_gradients(m):
    x = t(XS).requires_grad_(True)
    y = t(YS).requires_grad_(True)
    r = m.scaled({"x": x, "y": y}, 2.0)
    assert r["x"].tolist() == pytest.approx([2 * a for a in XS])
    assert r["y"].tolist() == pytest.approx([4 * b for b in YS])
    (r["x"] * 3.0 + r["y"]).sum().backward()
    assert x.grad.tolist() == pytest.approx([6.0] * 3)
    assert y.grad.tolist() == pytest.approx([4.0] * 3)
