# tests/python/test_modifiers.py — function modifiers (map, set, return_type, call, bwds,
# debug_code) and module lookup (m["f"], find/require_function, find/require_struct, m.nosuch,
# strict_broadcasting). Each modifier returns a new function object; those that change the
# kernel are part of the call key, and every object of one function shares its plan cache.
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
struct Particle : IDifferentiable { float3 pos; float3 vel; no_diff float mass; };
float add(float a, float b) { return a + b; }
float lin(float a, float b, float c) { return a * 100 + b * 10 + c; }
int2 ij(int2 c) { return c; }
[Differentiable]
float mul(float a, float b) { return a * b; }
[Differentiable]
float energy(Particle p, float dt) { float3 q = p.pos + p.vel * dt; return 0.5f * p.mass * dot(p.vel, p.vel) + dot(q, q); }
[Differentiable]
void grow(inout float x, float k) { x = x * x * k; }
[Differentiable]
void spin(inout float2 v, out float r, float k) { r = v.x * k; v = float2(v.y * k, v.x * v.y); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "modifiers", SOURCE)


def test_map_by_position_and_keyword(sg, m):
    a = torch.arange(6.0, device=TEST_DEVICE).reshape(2, 3)
    b = torch.arange(6.0, device=TEST_DEVICE).reshape(3, 2)
    out = m.add.map((0, 1), (1, 0))(a, b)
    torch.testing.assert_close(out, a + b.T)
    out = m.add.map(b=(1, 0))(a, b)
    torch.testing.assert_close(out, a + b.T)
    # An outer product: a over call dim 0, b over call dim 1.
    x = torch.tensor([1.0, 2.0], device=TEST_DEVICE)
    y = torch.tensor([10.0, 20.0, 30.0], device=TEST_DEVICE)
    torch.testing.assert_close(m.add.map((0,), (1,))(x, y), x[:, None] + y[None, :])
    with pytest.raises(ValueError, match="map\\(\\) names 1 dimension but the argument has 2 call dimensions"):
        m.add.map((0,), (0, 1))(a, a)
    with pytest.raises(TypeError, match="map\\(\\) names no parameter 'z'"):
        m.add.map(z=(0,))
    with pytest.raises(TypeError, match="map\\(\\) of 'a' takes dimension tuples or a type name"):
        m.add.map(float)  # a type by name: test_map_types.py


def test_map_gradients(m):
    x = torch.tensor([1.0, 2.0], device=TEST_DEVICE, requires_grad=True)
    y = torch.tensor([10.0, 20.0, 30.0], device=TEST_DEVICE, requires_grad=True)
    out = m.mul.map((0,), (1,))(x, y)
    out.backward(torch.ones(2, 3, device=TEST_DEVICE))
    torch.testing.assert_close(x.grad, y.detach().sum().expand(2))
    torch.testing.assert_close(y.grad, x.detach().sum().expand(3))


def test_modifiers_make_new_objects_that_share_the_plan_cache(m):
    a = torch.ones(4, device=TEST_DEVICE)
    base = m.add
    mapped = base.map((0,), (0,))
    assert mapped is not base and type(mapped) is type(base)
    before = base.plan_count
    base(a, a)
    mapped(a, a)
    mapped(a, a)
    m.add.map((0,), (0,))(a, a)  # a fresh object with the same map: the same plan
    assert base.plan_count == before + 2  # plain and mapped calls have different keys
    assert "modifiers" in mapped.call_key(a, a) and "modifiers" not in base.call_key(a, a)


def test_set_supplies_values_for_parameters_not_passed(m):
    t = torch.tensor([1.0, 2.0], device=TEST_DEVICE)
    f = m.lin.set({"b": 2.0, "c": 3.0})
    assert f(t).tolist() == [123.0, 223.0]
    assert f(t, c=5.0).tolist() == [125.0, 225.0]  # a passed value wins
    calls = []

    def values():
        calls.append(1)
        return {"c": float(len(calls))}

    g = m.lin.set(values)
    assert g(1.0, 2.0) == 121.0
    assert g(1.0, 2.0) == 122.0
    with pytest.raises(TypeError, match="set\\(\\) needs a dict or a callback"):
        m.lin.set(3)


def test_return_type_and_call(m):
    import numpy as np

    t = torch.ones(3, device=TEST_DEVICE)
    assert isinstance(m.add.return_type("numpy")(t, t), np.ndarray)
    assert m.add.call(t, t).tolist() == [2.0, 2.0, 2.0]
    assert m.add.call(1.0, 2.0) == 3.0


def test_bwds_with_diff_pairs_and_tensors(sg, m):
    a = sg.diffPair(3.0)
    b = sg.floatDiffPair(4.0)
    m.mul.bwds(a, b, 2.0)
    assert a.grad == 8.0 and b.grad == 6.0 and a.d == 8.0
    x = torch.tensor([1.0, 2.0], device=TEST_DEVICE, requires_grad=True)
    y = torch.tensor([3.0, 5.0], device=TEST_DEVICE, requires_grad=True)
    m.mul.bwds(x, y, torch.tensor([1.0, 10.0], device=TEST_DEVICE))
    assert x.grad.tolist() == [3.0, 50.0] and y.grad.tolist() == [1.0, 20.0]
    # A pair that needs no gradient keeps its primal and gets none written.
    p = sg.diffPair(3.0, needs_grad=False)
    q = sg.diffPair(4.0)
    m.mul.bwds(p, q, 1.0)
    assert q.grad == 3.0 and p.grad == 0.0


def test_bwds_through_a_struct_dict(sg, m):
    pos, vel, dt = sg.diffPair(sg.float3(1, 0, 2)), sg.diffPair(sg.float3(0.5, -1, 0)), sg.diffPair(0.1)
    m.energy.bwds({"pos": pos, "vel": vel, "mass": 2}, dt, 1.0)
    assert list(pos.grad) == pytest.approx([2.1, -0.2, 4.0], rel=1e-5)
    assert list(vel.grad) == pytest.approx([1.21, -2.02, 0.40], rel=1e-5)
    assert dt.grad == pytest.approx(1.25, rel=1e-5)
    with pytest.raises(TypeError, match="gradient of the result is missing"):
        m.energy.bwds()


def test_bwds_through_inout_parameters(sg, m):
    # x' = x*x*k: d is the gradient of x' and becomes that of x: 2*x*k*d; k gets x*x*d.
    x, k = sg.diffPair(3.0, 0.5), sg.diffPair(2.0)
    assert m.grow.bwds(x, k) is None
    assert x.grad == pytest.approx(6.0) and k.grad == pytest.approx(4.5) and x.primal == 3.0
    # v' = (v.y*k, v.x*v.y), r = v.x*k, with incoming gradients dv' = (1, 2), dr = 3:
    # dv.x = 2*v.y + 3*k, dv.y = k + 2*v.x, dk = v.y + 3*v.x.
    v, r, k = sg.diffPair(sg.float2(2.0, 5.0), sg.float2(1.0, 2.0)), sg.diffPair(d=3.0), sg.diffPair(4.0)
    m.spin.bwds(v, r, k)
    assert list(v.grad) == pytest.approx([10.0 + 12.0, 4.0 + 4.0]) and k.grad == pytest.approx(5.0 + 6.0)
    # A pair that needs no gradient is only read; an inout pair without d is an error.
    k2 = sg.diffPair(2.0)
    m.grow.bwds(sg.diffPair(3.0, needs_grad=False), k2)
    assert k2.grad == 0.0
    with pytest.raises(TypeError, match=r"grow.bwds\(\): an inout parameter's diffPair needs d"):
        m.grow.bwds(sg.diffPair(3.0), sg.diffPair(2.0))


def test_debug_code_shows_the_glue(sg, m):
    code = m.energy.debug_code({"pos": sg.float3(1, 0, 2), "vel": sg.float3(0, 0, 0), "mass": 1.0}, 0.5)
    assert "Particle _v_p;" in code and "_v_p.pos = float3(" in code


# ---------------------------------------------------------------- module lookup


def test_lookup(sg, m):
    assert m["add"] is m.add and m.find_function("add") is m.add and m.require_function("add") is m.add
    assert m.find_function("nosuch") is None
    with pytest.raises(ValueError, match="has no function 'nosuch'"):
        m.require_function("nosuch")
    with pytest.raises(AttributeError, match="has no function or type named 'nosuch'"):
        m.nosuch
    with pytest.raises(KeyError, match="nosuch"):
        m["nosuch"]
    s = m.require_struct("Particle")
    assert s.name == "Particle" and s.fields == {"pos": "float3", "vel": "float3", "mass": "float"}
    assert m.find_struct("Nope") is None and m.Particle.name == "Particle" and m["Particle"].name == "Particle"
    with pytest.raises(ValueError, match="has no struct 'Nope'"):
        m.require_struct("Nope")
    assert "Particle" in m.struct_names() and "energy" in m.function_names()


def test_strict_broadcasting(sg, device):
    strict = sg.Module.load_from_source(device, "strict", SOURCE, options={"strict_broadcasting": True})
    assert strict.strict_broadcasting
    a = torch.ones(2, 3, device=TEST_DEVICE)
    b = torch.ones(3, device=TEST_DEVICE)
    with pytest.raises(ValueError, match="parameter 'b' has 1 call dimension but the call has 2 .strict_broadcasting"):
        strict.add(a, b)
    assert strict.add(a, torch.ones(1, 3, device=TEST_DEVICE)).shape == (2, 3)  # extent 1 still broadcasts
    assert strict.add(a, 1.0).shape == (2, 3)  # so do scalars
    loose = sg.Module.load_from_source(device, "loose", SOURCE)
    assert loose.add(a, b).shape == (2, 3)
    with pytest.raises(ValueError, match="unknown module option 'strict'"):
        sg.Module.load_from_source(device, "bad", SOURCE, options={"strict": True})
