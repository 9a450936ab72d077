# tests/python/test_struct_methods.py — struct methods called from Python: static methods as
# m.Struct.method, instance methods with `this` as the first argument or given by .bind(this),
# m.find_function_in_struct(...), differentiable methods under autograd and through .bwds.
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
struct Particle : IDifferentiable
{
    float3 pos;
    float3 vel;
    no_diff float mass;
    [Differentiable] static float3 advance(float3 p, float3 v, float dt) { return p + v * dt; }
    [Differentiable] float energy(float k) { return 0.5f * mass * dot(vel, vel) + k * dot(pos, pos); }
    float speed() { return length(vel); }
    [mutating] void stop() { vel = float3(0); }
};
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "methods", SOURCE)


def t(v, **kw):
    return torch.tensor(v, device=TEST_DEVICE, **kw)


def test_static_method(m):
    p = t([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    v = t([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    out = m.Particle.advance(p, v, 0.5)
    assert out.tolist() == [[0.5, 1.0, 2.0], [1.0, 2.0, 1.0]]
    assert m.Particle.advance is m.find_function("Particle.advance")
    assert m.find_function_in_struct("Particle", "advance") is m.Particle.advance
    assert m.find_function_in_struct("Particle", "nosuch") is None
    assert m.find_function_in_struct("NoStruct", "advance") is None


def test_instance_method_with_this_first_or_bound(sg, m):
    this = {"pos": sg.float3(1, 0, 0), "vel": sg.float3(3, 4, 0), "mass": 2.0}
    assert m.Particle.speed(this) == 5.0
    assert m.Particle.speed.bind(this)() == 5.0
    assert m.Particle.energy.bind(this)(2.0) == pytest.approx(0.5 * 2 * 25 + 2)
    assert m.Particle.energy(this=this, k=1.0) == pytest.approx(26.0)
    # Vectorized: a batch of instances from tensors.
    batch = {"pos": torch.zeros(3, 3, device=TEST_DEVICE), "vel": t([[3.0, 4.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]), "mass": 1.0}
    assert m.Particle.speed.bind(batch)().tolist() == [5.0, 1.0, 1.0]
    assert [p[0] for p in m.Particle.energy.parameters] == ["this", "k"]


def test_method_lookup_errors(m):
    with pytest.raises(AttributeError, match="struct 'Particle' has no method or sub-type named 'nosuch'"):
        m.Particle.nosuch
    with pytest.raises(TypeError, match=r"Particle.advance\(\): bind\(\) takes the `this` of an instance method"):
        m.Particle.advance.bind({})
    with pytest.raises(TypeError, match="bound already"):
        m.Particle.speed.bind({}).bind({})
    # An inout struct from a dict is written back field by field: each field that is written
    # must be a tensor or a ValueRef.
    with pytest.raises(TypeError, match=r"Particle.stop\(\): parameter 'this.pos' of type float3 is an out/inout parameter: a Python list of 3 items cannot be written back"):
        m.Particle.stop({"pos": [0.0] * 3, "vel": [1.0] * 3, "mass": 1.0})


def test_differentiable_methods_take_part_in_autograd(m):
    pos = t([[1.0, 2.0, 0.0], [0.0, 0.0, 1.0]], requires_grad=True)
    vel = t([[1.0, 0.0, 0.0], [2.0, 1.0, 0.0]], requires_grad=True)
    k = t([0.5, 2.0], requires_grad=True)
    e = m.Particle.energy({"pos": pos, "vel": vel, "mass": 3.0}, k)
    e.sum().backward()
    pd, vd, kd = (x.detach().double().requires_grad_(True) for x in (pos, vel, k))
    ref = 0.5 * 3.0 * (vd * vd).sum(-1) + kd * (pd * pd).sum(-1)
    torch.testing.assert_close(e.detach().double(), ref.detach())
    ref.sum().backward()
    for got, want in ((pos, pd), (vel, vd), (k, kd)):
        torch.testing.assert_close(got.grad.double(), want.grad)
    # A static method's gradients too.
    p = t([[0.0, 1.0, 2.0]], requires_grad=True)
    dt = t([0.25], requires_grad=True)
    m.Particle.advance(p, vel[:1].detach(), dt).sum().backward()
    assert p.grad.tolist() == [[1.0, 1.0, 1.0]] and dt.grad.tolist() == [1.0]


def test_method_debug_code_shows_the_wrapper(m):
    code = m.Particle.speed.debug_code({"pos": [0.0] * 3, "vel": [1.0] * 3, "mass": 1.0})
    assert "__sg_method_Particle_speed" in code and "__sg_self.speed()" in code
