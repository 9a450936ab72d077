# tests/python/test_values.py — Python values in and out of calls (docs/calling.md, "Arguments"):
# value types, lists and tuples for arrays and vectors, dicts for structs, numpy arrays,
# nn.Parameter, and results as Python values (call dimensionality 0), tensors and arrays.
import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
struct Inner { float2 uv; int id; };
struct Outer { Inner inner; float w; float arr[3]; };
struct Particle : IDifferentiable { float3 pos; float3 vel; no_diff float mass; };

float sum5(float a[5]) { float s = 0; for (int i = 0; i < 5; i++) s += a[i]; return s; }
float3 scale3(float3 v, float s) { return v * s; }
int3 iscale(int3 v, int s) { return v * s; }
bool4 flip(bool4 b) { return !b; }
float2x2 mtrans(float2x2 m) { return transpose(m); }
float2x3 mid(float2x3 m) { return m; }
float outer(Outer o) { return o.inner.uv.x * 10 + o.inner.uv.y + float(o.inner.id) * 100 + o.w * 1000 + o.arr[0] + o.arr[1] + o.arr[2]; }
Particle step(Particle p, float dt) { Particle q = p; q.pos = p.pos + p.vel * dt; return q; }
Inner make_inner(float u, int id) { Inner r; r.uv = float2(u, 2 * u); r.id = id; return r; }
float[3] triple(float x) { float r[3] = {x, 2 * x, 3 * x}; return r; }
float3[2] pair3(float x) { float3 r[2] = {float3(x, x, x), float3(1, 2, 3)}; return r; }
int iadd(int a, int b) { return a + b; }
bool both(bool a, bool b) { return a && b; }
double dmul(double a, double b) { return a * b; }
float add(float a, float b) { return a + b; }
[Differentiable]
float wsum(float3 v, float3 w) { return dot(v, w); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "values", SOURCE)


# ---------------------------------------------------------------- value types


def test_value_types_construct_index_and_compare(sg):
    v = sg.float3(1, 2, 3)
    assert (v.x, v.y, v.z) == (1.0, 2.0, 3.0)
    assert v[0] == 1.0 and v[-1] == 3.0 and len(v) == 3 and list(v) == [1.0, 2.0, 3.0]
    v.y = 5
    assert v == sg.float3(1, 5, 3) and v != sg.float3(1, 2, 3) and v == [1, 5, 3]
    assert repr(v) == "float3(1, 5, 3)"
    assert sg.int2(7) == sg.int2(7, 7)
    assert sg.uint4(1, 2, 3, 4).w == 4 and isinstance(sg.int2(1.9, 2).x, int)
    assert sg.bool2(True, False).to_numpy().dtype == np.bool_
    np.testing.assert_array_equal(sg.float3(1, 2, 3).to_numpy(), np.array([1, 2, 3], dtype=np.float32))
    mat = sg.float2x3(1, 2, 3, 4, 5, 6)
    assert mat[1] == sg.float3(4, 5, 6) and mat.to_numpy().shape == (2, 3)
    assert sg.float4x4() == sg.float4x4([0] * 16)
    with pytest.raises(ValueError, match="float3 takes 3 components, got 2"):
        sg.float3(1, 2)
    with pytest.raises(AttributeError):
        sg.float2(1, 2).z


def test_value_types_in_and_out(sg, m):
    assert m.scale3(sg.float3(1, 2, 3), 2.0) == sg.float3(2, 4, 6)
    assert isinstance(m.scale3(sg.float3(1, 2, 3), 2.0), sg.float3)
    assert m.iscale(sg.int3(1, -2, 3), 3) == sg.int3(3, -6, 9)
    assert m.flip(sg.bool4(True, False, True, False)) == sg.bool4(False, True, False, True)
    assert m.mtrans(sg.float2x2(1, 2, 3, 4)) == sg.float2x2(1, 3, 2, 4)
    assert m.mid(sg.float2x3(1, 2, 3, 4, 5, 6)) == sg.float2x3(1, 2, 3, 4, 5, 6)


def test_lists_and_tuples_bind_to_arrays_vectors_and_matrices(m):
    assert m.sum5([1, 2, 3, 4, 5.5]) == 15.5
    assert m.sum5((1.0, 2.0, 3.0, 4.0, 5.0)) == 15.0
    assert m.scale3([1, 2, 3], 0.5).to_list() == [0.5, 1.0, 1.5]
    assert m.mid([[1, 2, 3], [4, 5, 6]]).to_list() == [[1, 2, 3], [4, 5, 6]]


def test_dicts_bind_to_structs_nested_with_optional_type(sg, m):
    o = {"inner": {"uv": sg.float2(1, 2), "id": 3}, "w": 4.0, "arr": [0.25, 0.5, 0.125]}
    assert m.outer(o) == pytest.approx(4312.875)
    o["_type"] = "Outer"
    o["inner"]["_type"] = "Inner"
    assert m.outer(o) == pytest.approx(4312.875)


def test_list_elements_may_be_tensors(sg, m):
    # Leaves of a composite vectorize like plain arguments.
    x = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE)
    out = m.scale3([x, 0.0, x * 2], 1.0)
    assert out.shape == (3, 3)
    torch.testing.assert_close(out.cpu(), torch.tensor([[1.0, 0, 2], [2, 0, 4], [3, 0, 6]]))


def test_results_at_call_dimensionality_zero_are_python_values(sg, m):
    assert m.iadd(2, 3) == 5 and type(m.iadd(2, 3)) is int
    assert m.both(True, False) is False
    assert type(m.add(1.0, 2.0)) is float
    assert m.dmul(0.1, 3.0) == pytest.approx(0.3, rel=1e-15)
    assert m.triple(2.0) == [2.0, 4.0, 6.0]
    assert m.pair3(1.5) == [sg.float3(1.5, 1.5, 1.5), sg.float3(1, 2, 3)]
    assert m.make_inner(0.5, 7) == {"uv": sg.float2(0.5, 1.0), "id": 7}
    p = m.step({"pos": sg.float3(1, 0, 2), "vel": [1, 1, 1], "mass": 2}, 0.5)
    assert p == {"pos": sg.float3(1.5, 0.5, 2.5), "vel": sg.float3(1, 1, 1), "mass": 2.0}


def test_vectorized_struct_results_are_dicts_of_tensors(sg, m):
    u = torch.tensor([1.0, 2.0], device=TEST_DEVICE)
    r = m.make_inner(u, 4)
    assert set(r) == {"uv", "id"}
    torch.testing.assert_close(r["uv"].cpu(), torch.tensor([[1.0, 2.0], [2.0, 4.0]]))
    assert r["id"].dtype == torch.int32 and r["id"].tolist() == [4, 4]


def test_vectorized_results_have_call_shape_plus_element_shape(m):
    x = torch.ones(4, 5, device=TEST_DEVICE)
    assert m.triple(x).shape == (4, 5, 3)
    assert m.pair3(x).shape == (4, 5, 2, 3)
    v = torch.ones(6, 3, device=TEST_DEVICE)
    assert m.scale3(v, 2.0).shape == (6, 3)


def test_numpy_arrays_in_and_out(sg, m):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones((2, 3), dtype=np.float32)
    out = m.add(a, b)
    assert isinstance(out, np.ndarray) and out.shape == (2, 3)
    np.testing.assert_array_equal(out, a + 1)
    # Non-contiguous views work too (read through a copy where torch cannot view them).
    np.testing.assert_array_equal(m.add(a[:, ::2], b[:, ::2]), a[:, ::2] + 1)
    np.testing.assert_array_equal(m.add(a[::-1], 1.0), a[::-1] + 1)
    v = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(m.scale3(v, 2.0), v * 2)


def test_numpy_with_torch_returns_torch(m):
    a = np.ones(3, dtype=np.float32)
    out = m.add(a, torch.ones(3, device=TEST_DEVICE))
    assert isinstance(out, torch.Tensor)


def test_result_selection(sg, m):
    a = np.arange(3, dtype=np.float32)
    assert isinstance(m.add(a, a, _result="torch"), torch.Tensor)
    assert isinstance(m.add.return_type(torch.Tensor)(a, a), torch.Tensor)
    t = torch.arange(3.0, device=TEST_DEVICE)
    assert isinstance(m.add(t, t, _result="numpy"), np.ndarray)
    assert isinstance(m.add.return_type("numpy")(t, t), np.ndarray)
    assert isinstance(m.add.return_type(np.ndarray)(t, t), np.ndarray)
    out = torch.zeros(3, device=TEST_DEVICE)
    assert m.add(t, t, _result=out) is out
    assert out.tolist() == [0.0, 2.0, 4.0]
    arr = np.zeros(3, dtype=np.float32)
    assert m.add(a, a, _result=arr) is arr
    assert arr.tolist() == [0.0, 2.0, 4.0]
    with pytest.raises(TypeError, match="'list' is not"):
        m.add(t, t, _result="list")


def test_nn_parameter_is_a_tensor(sg, m):
    p = torch.nn.Parameter(torch.tensor([[1.0, 2.0, 3.0]], device=TEST_DEVICE))
    w = torch.tensor([[1.0, 0.5, 0.25]], device=TEST_DEVICE)
    y = m.wsum(p, w)
    assert y.grad_fn is not None
    y.sum().backward()
    torch.testing.assert_close(p.grad.cpu(), w.cpu())


BOTH_BRIDGES = """
import numpy as np, torch, shadegrad as sg
DEVICE = {device!r}
m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.{device}), "bridges", '''
struct P : IDifferentiable {{ float3 pos; no_diff float mass; }};
[Differentiable] float e(P p, float w[2]) {{ return dot(p.pos, p.pos) * w[0] + p.mass * w[1]; }}
[Differentiable] void polar(float r, float th, out float2 p) {{ p = r * float2(cos(th), sin(th)); }}
''')
assert m.e({{"pos": sg.float3(1, 2, 3), "mass": 2.0}}, [0.5, 1.0]) == 9.0
pos = torch.ones(4, 3, device=DEVICE, requires_grad=True)
y = m.e({{"pos": pos, "mass": 1.0}}, [2.0, 0.0])
y.sum().backward()
assert torch.equal(pos.grad.cpu(), torch.full((4, 3), 4.0)), pos.grad
r = sg.ValueRef(sg.float2(0, 0))
m.polar(1.0, 0.0, r)
assert r.value == sg.float2(1, 0), r.value
a = np.zeros((2, 2), dtype=np.float32)
m.polar(np.ones(2, dtype=np.float32), np.zeros(2, dtype=np.float32), a)
assert a.tolist() == [[1, 0], [1, 0]], a
q = sg.diffPair(sg.float3(1, 0, 0))
m.e.bwds({{"pos": q, "mass": 1.0}}, [1.0, 1.0], 1.0)
assert q.grad == sg.float3(2, 0, 0), q.grad
print("ok")
"""


@pytest.mark.parametrize("bridge", ["native", "fallback"])
def test_value_kinds_through_both_bridges(bridge):
    from conftest import run_python

    proc = run_python(BOTH_BRIDGES.format(device=TEST_DEVICE), bridge)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


ZERO_D_SOURCE = """
[Differentiable]
float mul(float a, float b) { return a * b; }
float sum(ITensor<float, 1> t) { return t[0] + t[1]; }
struct Pair { float a; float b; };
Pair pair(float a) { Pair p; p.a = a; p.b = 2 * a; return p; }
"""


def test_a_call_with_torch_tensors_returns_torch_tensors_at_call_dimensionality_0(sg, device):
    m = sg.Module.load_from_source(device, "zero_d", ZERO_D_SOURCE)
    a = torch.tensor(2.0, device=TEST_DEVICE, requires_grad=True)
    b = torch.tensor(3.0, device=TEST_DEVICE, requires_grad=True)
    r = m.mul(a, b)
    assert isinstance(r, torch.Tensor) and r.shape == () and r.item() == 6.0 and r.grad_fn is not None
    r.backward()
    assert a.grad.item() == 3.0 and b.grad.item() == 2.0
    # The same kind of result in grad mode or not, with or without requires_grad.
    with torch.no_grad():
        r = m.mul(a, b)
    assert isinstance(r, torch.Tensor) and r.shape == () and r.grad_fn is None
    r = m.mul(torch.tensor(2.0, device=TEST_DEVICE), 4.0)
    assert isinstance(r, torch.Tensor) and r.item() == 8.0
    r = m.sum(torch.tensor([1.0, 2.0], device=TEST_DEVICE))
    assert isinstance(r, torch.Tensor) and r.shape == () and r.item() == 3.0
    r = m.pair(torch.tensor(1.5, device=TEST_DEVICE))
    assert isinstance(r["a"], torch.Tensor) and r["a"].item() == 1.5 and r["b"].item() == 3.0
    # Python values in: Python values out.
    assert m.mul(2.0, 4.0) == 8.0 and type(m.mul(2.0, 4.0)) is float
    assert m.pair(1.5) == {"a": 1.5, "b": 3.0}
