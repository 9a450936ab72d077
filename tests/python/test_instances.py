# tests/python/test_instances.py — SlangPy's instances: calling a struct type to construct
# values (its `__init` overloads, vectorized; find_function_in_struct(..., "__init")), a struct
# without a constructor taking its fields, InstanceTensor / InstanceBuffer / InstanceList
# (struct of arrays, subclassable), methods called over many instances with [mutating] ones
# writing back (a dict's tensor fields and ValueRefs), the get_this() / update_this() protocol,
# and the errors.
import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
struct Particle
{
    float3 position;
    float3 velocity;
    __init(float3 p, float3 v) { position = p; velocity = v; }
    __init(float3 p) { position = p; velocity = float3(0, 0, 1); }
    [mutating] void update(float dt) { position += velocity * dt; }
    [mutating] void scale(float k) { velocity = velocity * k; }
    float speed() { return length(velocity); }
    static float3 origin() { return float3(0); }
};
struct Plain { float a; float2 b; };
struct Counter { float count; [mutating] void bump(float by) { count += by; } };
float3 position_of(Particle p) { return p.position; }
float plain_sum(Plain p) { return p.a + p.b.x + p.b.y; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "instances", SOURCE)


def t(v, **kw):
    return torch.tensor(v, device=TEST_DEVICE, **kw)


# ---------------------------------------------------------------- constructing structs


def test_calling_a_struct_type_runs_its_constructor(sg, m):
    assert m.Particle(sg.float3(1, 2, 3), sg.float3(4, 5, 6)) == {"position": sg.float3(1, 2, 3),
                                                                    "velocity": sg.float3(4, 5, 6)}
    # The other overload, chosen by the arguments; by keyword too.
    assert m.Particle(sg.float3(1, 2, 3)) == {"position": sg.float3(1, 2, 3), "velocity": sg.float3(0, 0, 1)}
    assert m.Particle(p=sg.float3(0), v=sg.float3(1)) == {"position": sg.float3(0), "velocity": sg.float3(1)}
    assert m.Particle.__init(sg.float3(2), sg.float3(3))["velocity"] == sg.float3(3)


def test_construction_is_vectorized_like_any_call(sg, m):
    p = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    r = m.Particle(p, t([0.0, 0.0, 2.0]))
    assert set(r) == {"position", "velocity"}
    assert r["position"].tolist() == p.tolist()
    assert r["velocity"].tolist() == [[0.0, 0.0, 2.0]] * 2
    # From Tensors: a struct Tensor.
    P = sg.Tensor.from_torch(p, "float3")
    rt = m.Particle(P)
    assert isinstance(rt, sg.Tensor) and rt.dtype.name == "Particle" and rt.shape == (2,)
    np.testing.assert_array_equal(rt.to_numpy(), [[1, 2, 3, 0, 0, 1], [4, 5, 6, 0, 0, 1]])
    # The constructed values bind where a Particle goes.
    assert m.position_of(r).tolist() == p.tolist()


def test_find_function_in_struct_init_calls_the_constructor(sg, m):
    init = m.find_function_in_struct("Particle", "__init")
    assert init is not None
    assert init(sg.float3(1), sg.float3(2)) == {"position": sg.float3(1), "velocity": sg.float3(2)}
    assert "return Particle(" in init.debug_code(sg.float3(1), sg.float3(2))


def test_a_struct_without_constructor_takes_its_fields(sg, m):
    v = m.Plain(a=1.0, b=sg.float2(2, 3))
    assert v == {"_type": "Plain", "a": 1.0, "b": sg.float2(2, 3)}
    assert m.plain_sum(v) == 6.0
    with pytest.raises(TypeError, match=r"Plain\(\): field 'b' of struct Plain is not specified"):
        m.Plain(a=1.0)
    with pytest.raises(TypeError, match=r"Plain\(\): struct Plain has no field 'c' \(its fields: a, b\)"):
        m.Plain(a=1.0, b=sg.float2(0), c=2)
    with pytest.raises(TypeError, match=r"Plain\(\): struct Plain has no __init; pass its fields by keyword"):
        m.Plain(1.0, sg.float2(0))


def test_as_struct_and_constructor_errors(sg, m):
    s = m.Particle
    assert s.as_struct() is s and s.module is m
    with pytest.raises(TypeError, match=r"Particle.__init\(\)"):
        m.Particle(1.0, 2.0, 3.0)


# ---------------------------------------------------------------- instance containers


def test_instance_tensor_constructs_updates_and_binds(sg, m):
    particles = sg.InstanceTensor(struct=m.Particle.as_struct(), shape=(10,))
    particles.construct(p=sg.float3(0), v=sg.rand_float(-1, 1, 3))
    a = particles.to_numpy().reshape(-1, 6)
    assert np.all(a[:, :3] == 0)
    assert np.all(np.abs(a[:, 3:]) <= 1) and len({tuple(r) for r in a[:, 3:]}) == 10  # one random vector each
    particles.update(0.1)
    b = particles.to_numpy().reshape(-1, 6)
    np.testing.assert_allclose(b[:, :3], 0.1 * a[:, 3:], rtol=1e-6)
    np.testing.assert_array_equal(b[:, 3:], a[:, 3:])
    np.testing.assert_allclose(particles.speed().to_numpy(), np.linalg.norm(a[:, 3:], axis=1), rtol=1e-6)
    # It binds like the struct Tensor it is.
    np.testing.assert_allclose(m.position_of(particles).to_numpy(), b[:, :3])
    assert particles.buffer.cursor()[3].read()["velocity"] == sg.float3(a[3, 3:])
    # A static method is called as it is.
    assert particles.origin() == sg.float3(0)


def test_instance_buffer_takes_a_count(sg, m):
    b = sg.InstanceBuffer(m.Particle, 4)
    assert b.shape == (4,) and isinstance(b, sg.InstanceTensor)
    b.construct(sg.float3(1, 2, 3), sg.float3(1, 0, 0))
    b.scale(2.0)
    np.testing.assert_array_equal(b.to_numpy()[:, 3:], [[2, 0, 0]] * 4)


def test_instance_list_is_struct_of_arrays(sg, device, m):
    particles = sg.InstanceList(struct=m.Particle.as_struct(), data={
        "position": sg.Tensor.empty(device, shape=(10,), dtype=m.float3),
        "velocity": sg.Tensor.empty(device, shape=(10,), dtype=m.float3),
    })
    particles.construct(p=sg.float3(0), v=sg.rand_float(-1, 1, 3))
    v = particles.velocity.to_numpy()
    assert np.all(particles.position.to_numpy() == 0) and np.all(np.abs(v) <= 1)
    particles.update(0.1)
    np.testing.assert_allclose(particles.position.to_numpy(), 0.1 * v, rtol=1e-6)
    np.testing.assert_allclose(particles.speed().to_numpy(), np.linalg.norm(v, axis=1), rtol=1e-6)
    np.testing.assert_allclose(m.position_of(particles).to_numpy(), 0.1 * v, rtol=1e-6)


def test_instance_list_over_one_struct_tensor(sg, device, m):
    buffer = sg.Tensor.empty(device, dtype=m.Particle, shape=(3,))
    instance = sg.InstanceList(m.Particle, buffer)
    instance.construct(sg.float3(1, 2, 3), sg.float3(0, 1, 0))
    instance.update(2.0)
    np.testing.assert_array_equal(buffer.to_numpy(), [[1, 4, 3, 0, 1, 0]] * 3)


def test_instance_list_fields_may_be_torch_tensors_and_refs(sg, m):
    count = sg.floatRef(1.0)
    c = sg.InstanceList(m.Counter, {"count": count})
    c.bump(2.5)
    assert count.value == 3.5
    pos, vel = torch.zeros(4, 3, device=TEST_DEVICE), t([[1.0, 0.0, 0.0]] * 4)
    soa = sg.InstanceList(m.Particle, {"position": pos, "velocity": vel})
    soa.update(0.5)
    assert pos.tolist() == [[0.5, 0.0, 0.0]] * 4


def test_instance_list_subclass_keeps_python_attributes_apart(sg, device, m):
    class MyParticles(sg.InstanceList):
        def __init__(self, name, count):
            super().__init__(m.Particle.as_struct())
            self.name = name
            self.position = sg.Tensor.empty(device, shape=(count,), dtype=m.float3)
            self.velocity = sg.Tensor.empty(device, shape=(count,), dtype=m.float3)

        def total_x(self):
            return float(self.position.to_numpy()[:, 0].sum())

    p = MyParticles("mine", 5)
    p.construct(p=sg.float3(1, 0, 0), v=sg.float3(2, 0, 0))
    p.update(0.5)
    assert p.name == "mine" and "name" not in p.get_this()
    assert p.total_x() == pytest.approx(5 * 2.0)


def test_get_this_and_update_this_on_python_objects(sg, device, m):
    class This:
        def __init__(self, data):
            self.data = data
            self.got = self.updated = 0

        def get_this(self):
            self.got += 1
            return self.data

        def update_this(self, value):
            self.updated += 1

    buffer = sg.Tensor.zeros(device, dtype=m.Particle, shape=(2,))
    this = This(buffer)
    m.Particle.update.bind(this)(1.0)  # reads and writes: update_this is called once
    assert this.got == 1 and this.updated == 1
    m.Particle.speed(this)  # reads only: no update
    assert this.got == 2 and this.updated == 1
    soa = This({"position": sg.Tensor.zeros(device, (2,), "float3"), "velocity": sg.float3(0, 2, 0)})
    soa.data["velocity"] = torch.tensor([[0.0, 2.0, 0.0]] * 2, device=TEST_DEVICE)
    m.Particle.update(soa, 0.25)
    np.testing.assert_array_equal(soa.data["position"].to_numpy(), [[0, 0.5, 0]] * 2)


def test_instance_errors_name_the_call(sg, device, m):
    with pytest.raises(TypeError, match=r"InstanceTensor\(\): parameter 'shape' is not specified"):
        sg.InstanceTensor(m.Particle)
    with pytest.raises(TypeError, match=r"InstanceList\(\): struct Particle has no field 'mass'"):
        sg.InstanceList(m.Particle, {"mass": 1.0})
    with pytest.raises(TypeError, match=r"InstanceList: field 'velocity' of struct Particle is not specified"):
        sg.InstanceList(m.Particle, {"position": sg.Tensor.zeros(device, (2,), "float3")}).update(1.0)
    with pytest.raises(AttributeError, match=r"InstanceTensor.nosuch: struct Particle has no method or field 'nosuch'"):
        sg.InstanceTensor(m.Particle, (2,)).nosuch
    with pytest.raises(TypeError, match=r"InstanceList\(\): parameter 'data' is a Tensor of float3, not of Particle"):
        sg.InstanceList(m.Particle, sg.Tensor.zeros(device, (2,), "float3"))
    with pytest.raises(TypeError, match=r"InstanceTensor.construct\(\): needs an argument that is a plain value"):
        sg.InstanceTensor(m.Particle, (2,)).construct(sg.rand_float(), sg.rand_float())
    # A field a mutating method writes must be writable.
    with pytest.raises(TypeError, match=r"Particle.update\(\): parameter 'this.position' of type float3 is an "
                                        r"out/inout parameter"):
        sg.InstanceList(m.Particle, {"position": sg.float3(0), "velocity": sg.float3(1)}).update(1.0)


SOA_SOURCE = """
struct Material { float3 color; float3 emission; };
struct Particle
{
    float2 position;
    float2 velocity;
    float size;
    Material material;
    __init(float2 p, float2 v) { position = p; velocity = v; size = 0.5; material.color = float3(1); material.emission = float3(0); }
    [mutating] void reset(float2 p, float2 v) { position = p; velocity = v; }
    [mutating] void update_position(float dt) { position += velocity * dt; }
};
"""


def test_loose_instance_with_value_refs(sg, device):
    # SlangPy's test_loose_instance_soa: one instance, a Tensor for one field and refs for the rest.
    ms = sg.Module.load_from_source(device, "soa", SOA_SOURCE)
    instance = sg.InstanceList(ms.Particle, {
        "position": sg.Tensor.empty(device, dtype=sg.float2, shape=(1,)),
        "velocity": sg.ValueRef(sg.float2(9999)),
        "size": sg.floatRef(9999),
        "material": {"color": sg.ValueRef(sg.float3(9999)), "emission": sg.ValueRef(sg.float3(9999))},
    })
    instance.construct(sg.float2(1, 2), sg.float2(3, 4))
    assert instance.position.to_numpy().tolist() == [[1.0, 2.0]]
    assert instance.velocity.value == sg.float2(3, 4) and instance.size.value == 0.5
    assert instance.material["color"].value == sg.float3(1)
    instance.reset(sg.float2(0, 0), sg.float2(0, 1))
    instance.update_position(1.0)
    assert instance.position.to_numpy().tolist() == [[0.0, 1.0]]
    assert instance.velocity.value == sg.float2(0, 1)
    many = sg.InstanceList(ms.Particle, {
        "position": sg.Tensor.empty(device, dtype=sg.float2, shape=(3,)), "velocity": sg.ValueRef(sg.float2(0)),
        "size": sg.floatRef(0), "material": {"color": sg.ValueRef(sg.float3(0)), "emission": sg.ValueRef(sg.float3(0))}})
    with pytest.raises(ValueError, match=r"InstanceList.construct\(\): field '.*' is a ValueRef, which holds one value, "
                                         r"but there are 3 instances"):
        many.construct(sg.float2(1, 2), sg.float2(3, 4))
