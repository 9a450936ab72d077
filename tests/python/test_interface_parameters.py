# tests/python/test_interface_parameters.py — functions with parameters of interface type
# (`float area_of(IShape s)`, docs/language.md "Parameters of interface type") called from
# Python: the struct is named by a dict's `_type` (or by explicit arguments, m["f<Sq>"]), each
# struct gets its own specialization, gradients flow through the other parameters, and an
# argument whose struct cannot be known is a TypeError naming the parameter and the interface.
import pytest
import torch

from conftest import TEST_DEVICE, device_tensor as t

SOURCE = """
import slangpy;

interface IShape { float area(); }
struct Sq : IShape { float s; float area() { return s * s; } };
struct Rect : IShape { float w; float h; float area() { return w * h; } };

float area_of(IShape shape) { return shape.area(); }

interface IScale { [Differentiable] float scale(float x); }
struct Quad : IScale { float k; [Differentiable] float scale(float x) { return k * x * x; } };

[Differentiable]
float scaled(IScale s, float x) { return s.scale(x); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "interface_parameters", SOURCE)


def test_struct_named_by_dict_type(m):
    assert m.area_of({"_type": "Sq", "s": 3.0}) == pytest.approx(9.0)
    assert m.area_of({"_type": "Rect", "w": 2.0, "h": 2.5}) == pytest.approx(5.0)


def test_struct_fields_vectorized(m):
    out = m.area_of({"_type": "Sq", "s": t([1.0, 2.0, 3.0])})
    assert out.tolist() == pytest.approx([1.0, 4.0, 9.0])


def test_explicit_specialization(m):
    assert m["area_of<Rect>"]({"w": 3.0, "h": 4.0}) == pytest.approx(12.0)


def test_struct_without_type_is_named(m):
    with pytest.raises(TypeError, match=r"area_of\(\): parameter 'shape' has interface type 'IShape': pass a dict whose '_type' names the struct"):
        m.area_of({"s": 2.0})


def test_struct_not_conforming_is_refused(m):
    with pytest.raises((TypeError, ValueError), match=r"area_of"):
        m.area_of({"_type": "Quad", "k": 2.0})


def test_gradient_through_other_parameter(m):
    # d/dx k x^2 = 2 k x: the interface parameter carries no derivative (IScale does not extend
    # IDifferentiable), x's gradient is the hand value and agrees with float64 finite differences.
    x = t([1.0, -2.0, 0.5]).requires_grad_(True)
    y = m.scaled({"_type": "Quad", "k": 3.0}, x)
    assert y.tolist() == pytest.approx([3.0, 12.0, 0.75])
    y.backward(torch.ones(3, device=TEST_DEVICE))
    assert x.grad.tolist() == pytest.approx([6.0, -12.0, 3.0])
    f = lambda v: 3.0 * v * v  # noqa: E731
    h = 1e-6
    for v, g in zip([1.0, -2.0, 0.5], x.grad.tolist()):
        assert g == pytest.approx((f(v + h) - f(v - h)) / (2 * h), rel=1e-4)
