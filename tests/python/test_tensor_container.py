# tests/python/test_tensor_container.py — sg.Tensor, SlangPy's container over torch storage:
# creation from every kind of dtype, numpy and torch interop (zero copy to torch), shapes, strides,
# slicing, cursors, binding to every parameter kind a torch tensor binds to, results as Tensors,
# gradients with with_grads() and fn.bwds (checked against float64 finite differences and
# torch), and the errors, each naming the function and parameter.
import numpy as np
import pytest
import torch

SOURCE = """
import slangpy;
struct Pixel { float r; float g; float b; };
struct Particle { float3 pos; float2 vel; float mass; };
struct Mixed { float a; int b; };
Pixel add(Pixel a, Pixel b) { Pixel p; p.r = a.r + b.r; p.g = a.g + b.g; p.b = a.b + b.b; return p; }
Pixel scale_pixel(Pixel a, float k) { Pixel p; p.r = a.r * k; p.g = a.g * k; p.b = a.b * k; return p; }
float brightness(Pixel p) { return p.r + p.g + p.b; }
float speed(Particle p) { return length(p.vel) * p.mass + p.pos.y; }
[Differentiable] float mul(float a, float b) { return a * b; }
[Differentiable] float poly(float x, float y) { return x * x * y + sin(x) * y; }
float3 addv(float3 a, float3 b) { return a + b; }
float2x2 twice(float2x2 m) { return m * 2.0; }
int inc_int(int x) { return x + 1; }
float total(Tensor<float, 1> t) { float s = 0; for (int i = 0; i < 4; i++) s += t[i]; return s; }
void fill(int i, RWTensor<float, 1> t) { t[i] = float(i) * 10.0; }
void split(float x, out float lo, out float hi) { lo = x - 1; hi = x + 1; }
float sum_pixels(Tensor<Pixel, 1> t, int n) { float s = 0; for (int i = 0; i < n; i++) s += t[i].r + t[i].g; return s; }
[Differentiable] void scale_inout(float k, inout float v) { v = v * k + k; }
[Differentiable] float3 mad3(float3 a, float3 b) { return a * b + a; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "tensor_container", SOURCE)


def tdev(device, sg):
    return torch.device("cpu") if device.type == sg.DeviceType.cpu else torch.device("cuda", max(device.index, 0))


# ---------------------------------------------------------------- creation and dtypes


@pytest.mark.parametrize("dtype, scalar, elem", [
    ("float", torch.float32, ()), ("int", torch.int32, ()), ("double", torch.float64, ()), ("half", torch.float16, ()),
    ("float3", torch.float32, (3,)), ("float2x3", torch.float32, (2, 3)), ("float[4]", torch.float32, (4,)),
    ("float3[2]", torch.float32, (2, 3)), (np.float32, torch.float32, ()), (np.dtype("int32"), torch.int32, ()),
    (torch.float64, torch.float64, ()), (float, torch.float32, ()), (int, torch.int32, ()),
])
def test_empty_and_zeros_take_every_kind_of_dtype(sg, device, dtype, scalar, elem):
    t = sg.Tensor.zeros(device, (4, 5), dtype)
    assert t.shape == (4, 5) and t.shape.as_tuple() == (4, 5)
    assert t.to_torch().shape == (4, 5) + elem and t.to_torch().dtype == scalar
    assert t.dtype.shape.as_tuple() == elem
    assert t.element_count == 20
    assert t.strides == (5, 1)
    assert np.all(t.to_numpy() == 0)
    e = sg.Tensor.empty(device, shape=(3,), dtype=dtype)
    assert e.shape == (3,) and e.to_torch().shape == (3,) + elem


def test_value_types_and_module_value_types_are_dtypes(sg, device, m):
    for dtype in (sg.float3, m.float3, "float3", "vector<float,3>"):
        t = sg.Tensor.empty(device, (2,), dtype)
        assert t.dtype.name == "float3" and t.to_torch().shape == (2, 3)
    assert m.float3 is sg.float3


def test_struct_dtype_lays_fields_out_in_declaration_order(sg, device, m):
    t = sg.Tensor.zeros(device, (2,), m.Particle)
    assert t.dtype.name == "Particle"
    assert [(name, d.name, off) for name, d, off in t.dtype.fields] == [("pos", "float3", 0), ("vel", "float2", 3),
                                                                         ("mass", "float", 5)]
    assert t.to_torch().shape == (2, 6) and t.dtype.shape == (6,)
    assert t.strides == (1,)


def test_like_constructors_copy_shape_dtype_and_device(sg, device, m):
    t = sg.Tensor.from_numpy(device, np.arange(6, dtype=np.float32).reshape(2, 3))
    e, z = sg.Tensor.empty_like(t), sg.Tensor.zeros_like(t)
    for x in (e, z):
        assert x.shape == (2, 3) and x.dtype == t.dtype and x.to_torch().device == t.to_torch().device
        assert x.to_torch().data_ptr() != t.to_torch().data_ptr()
    assert np.all(z.to_numpy() == 0)


def test_numpy_round_trip_and_copy_from_numpy(sg, device):
    a = np.random.default_rng(1).random((3, 4)).astype(np.float32)
    t = sg.Tensor.from_numpy(device, a)
    assert t.shape == (3, 4) and t.dtype.name == "float"
    np.testing.assert_array_equal(t.to_numpy(), a)
    a[0, 0] = 99  # from_numpy copies
    assert t.to_numpy()[0, 0] != 99
    v = sg.Tensor.empty(device, (4,), "float3")
    v.copy_from_numpy(np.arange(12, dtype=np.float32))  # any shape with as many values
    np.testing.assert_array_equal(v.to_numpy(), np.arange(12, dtype=np.float32).reshape(4, 3))
    v.storage.copy_from_numpy(np.ones(12, np.float32))
    np.testing.assert_array_equal(v.storage.to_numpy(), np.ones((4, 3), np.float32))


def test_torch_interop_is_zero_copy(sg, device):
    x = torch.arange(12.0, device=tdev(device, sg)).reshape(4, 3)
    t = sg.Tensor.from_torch(x, "float3")
    assert t.shape == (4,) and t.to_torch() is x
    x[1, 2] = -5.0
    assert t.to_numpy()[1, 2] == -5.0
    s = sg.Tensor.from_torch(x)
    assert s.shape == (4, 3) and s.dtype.name == "float"


def test_slicing_views_share_storage(sg, device):
    t = sg.Tensor.from_numpy(device, np.arange(24, dtype=np.float32).reshape(4, 6))
    row = t[1]
    assert row.shape == (6,)
    np.testing.assert_array_equal(row.to_numpy(), np.arange(6, 12))
    sub = t[1:3, ::2]
    assert sub.shape == (2, 3) and sub.strides == (6, 2)
    np.testing.assert_array_equal(sub.to_numpy(), np.arange(24).reshape(4, 6)[1:3, ::2])
    sub.to_torch().fill_(-1.0)
    assert t.to_numpy()[1, 0] == -1 and t.to_numpy()[1, 1] == 7
    v = sg.Tensor.zeros(device, (5,), "float3")
    assert v[2:].shape == (3,) and v[2:].to_torch().shape == (3, 3) and v[...].shape == (5,)
    b = sg.Tensor.from_numpy(device, np.arange(3, dtype=np.float32)).broadcast_to((2, 3))
    assert b.shape == (2, 3) and b.strides == (0, 1)


def test_cursor_reads_and_writes_structs_vectors_and_scalars(sg, device, m):
    t = sg.Tensor.empty(device, dtype=m.Pixel, shape=(2, 3))
    c = t.cursor()
    for i in range(6):
        c[i].write({"r": i, "g": 2 * i, "b": -i})
    c.apply()
    np.testing.assert_array_equal(t.to_numpy()[1, 2], [5, 10, -5])
    c2 = t.cursor()
    assert c2[4].read() == {"r": 4.0, "g": 8.0, "b": -4.0}
    assert c2[4]["g"].read() == 8.0
    c2[4]["g"] = 1.5
    c2.apply()
    assert t.to_numpy()[1, 1, 1] == 1.5
    v = sg.Tensor.zeros(device, (2,), "float3")
    cv = v.cursor()
    cv[1].write(sg.float3(1, 2, 3))
    cv.apply()
    assert v.cursor()[1].read() == sg.float3(1, 2, 3)
    p = sg.Tensor.zeros(device, (1,), m.Particle)
    cp = p.cursor()
    cp[0].write({"pos": [1, 2, 3], "vel": sg.float2(3, 4), "mass": 2.0})
    cp.apply()
    assert p.cursor()[0].read() == {"pos": sg.float3(1, 2, 3), "vel": sg.float2(3, 4), "mass": 2.0}


# ---------------------------------------------------------------- calls


def test_tensor_arguments_return_a_tensor(sg, device, m):
    a = sg.Tensor.from_numpy(device, np.arange(4, dtype=np.float32))
    b = sg.Tensor.from_numpy(device, np.full(4, 2.0, np.float32))
    r = m.mul(a, b)
    assert isinstance(r, sg.Tensor) and r.shape == (4,) and r.dtype.name == "float"
    np.testing.assert_array_equal(r.to_numpy(), [0, 2, 4, 6])
    # A torch tensor argument makes the result a torch tensor (mixed calls).
    x = torch.ones(4, device=tdev(device, sg))
    assert isinstance(m.mul(a, x), torch.Tensor)
    np.testing.assert_array_equal(m.mul(a, x).cpu().numpy(), [0, 1, 2, 3])


def test_result_modes(sg, device, m):
    a = torch.arange(4.0, device=tdev(device, sg))
    r = m.mul(a, a, _result="tensor")
    assert isinstance(r, sg.Tensor)
    np.testing.assert_array_equal(r.to_numpy(), [0, 1, 4, 9])
    assert isinstance(m.mul.return_type(sg.Tensor)(a, a), sg.Tensor)
    A = sg.Tensor.from_torch(a)
    assert isinstance(m.mul(A, A, _result="torch"), torch.Tensor)
    out = sg.Tensor.zeros(device, (4,), "float")
    assert m.mul(A, A, _result=out) is out
    np.testing.assert_array_equal(out.to_numpy(), [0, 1, 4, 9])
    v = sg.Tensor.from_numpy(device, np.arange(6, dtype=np.float32).reshape(2, 3), "float3")
    r3 = m.addv(v, v)
    assert r3.shape == (2,) and r3.dtype.name == "float3"
    np.testing.assert_array_equal(r3.to_numpy(), 2 * np.arange(6).reshape(2, 3))
    mat = m.twice(sg.Tensor.from_numpy(device, np.ones((3, 2, 2), np.float32), "float2x2"))
    assert mat.shape == (3,) and mat.dtype.name == "float2x2" and np.all(mat.to_numpy() == 2)
    ints = m.inc_int(sg.Tensor.from_numpy(device, np.array([1, 2], np.int32)))
    assert ints.dtype.name == "int" and ints.to_numpy().tolist() == [2, 3]


def test_struct_tensors_bind_field_by_field_and_come_back_as_struct_tensors(sg, device, m):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.random((4, 5, 3)).astype(np.float32), rng.random((4, 5, 3)).astype(np.float32)
    a = sg.Tensor.empty(device, dtype=m.Pixel, shape=(4, 5))
    b = sg.Tensor.empty(device, dtype=m.Pixel, shape=(4, 5))
    a.copy_from_numpy(a_np)
    b.copy_from_numpy(b_np)
    r = m.add(a, b)
    assert isinstance(r, sg.Tensor) and r.dtype.name == "Pixel" and r.shape == (4, 5)
    np.testing.assert_allclose(r.to_numpy(), a_np + b_np, rtol=1e-6)
    out = sg.Tensor.empty(device, dtype=m.Pixel, shape=(4, 5))
    assert m.scale_pixel(a, 2.0, _result=out) is out
    np.testing.assert_allclose(out.to_numpy(), 2 * a_np, rtol=1e-6)
    np.testing.assert_allclose(m.brightness(a).to_numpy(), a_np.sum(-1), rtol=1e-5)
    p = sg.Tensor.zeros(device, (2,), m.Particle)
    c = p.cursor()
    c[0].write({"pos": [0, 1, 0], "vel": [3, 4], "mass": 2})
    c[1].write({"pos": [0, -1, 0], "vel": [0, 1], "mass": 1})
    c.apply()
    np.testing.assert_allclose(m.speed(p).to_numpy(), [11.0, 0.0])


def test_tensor_binds_to_tensor_parameters_and_out_parameters(sg, device, m):
    t = sg.Tensor.from_numpy(device, np.array([1, 2, 3, 4], np.float32))
    assert m.total(t) == pytest.approx(10.0)
    w = sg.Tensor.zeros(device, (4,), "float")
    m.fill(sg.grid((4,)), w)
    np.testing.assert_array_equal(w.to_numpy(), [0, 10, 20, 30])
    lo, hi = sg.Tensor.zeros(device, (3,), "float"), sg.Tensor.zeros(device, (3,), "float")
    m.split(sg.Tensor.from_numpy(device, np.arange(3, dtype=np.float32)), lo, hi)
    np.testing.assert_array_equal(lo.to_numpy(), [-1, 0, 1])
    np.testing.assert_array_equal(hi.to_numpy(), [1, 2, 3])
    # A slice is a view: the call writes into the parent's storage.
    big = sg.Tensor.zeros(device, (2, 4), "float")
    m.fill(sg.grid((4,)), big[1])
    np.testing.assert_array_equal(big.to_numpy(), [[0, 0, 0, 0], [0, 10, 20, 30]])


# ---------------------------------------------------------------- gradients


def test_with_grads_attaches_one_zeroed_gradient(sg, device):
    t = sg.Tensor.from_numpy(device, np.ones(3, np.float32))
    g = t.with_grads()
    assert g.grad_in is g.grad_out and g.grad is g.grad_out
    assert g.to_torch() is t.to_torch() and np.all(g.grad.to_numpy() == 0)
    assert g.detach().grad_in is None and g.detach().to_torch() is t.to_torch()
    with pytest.raises(ValueError, match="has no gradient"):
        t.grad
    gi, go = sg.Tensor.zeros_like(t), sg.Tensor.zeros_like(t)
    both = t.with_grads(grad_in=gi, grad_out=go)
    assert both.grad_in is gi and both.grad_out is go
    sliced = g[1:]
    assert sliced.grad.shape == (2,)
    sliced.grad.to_torch().fill_(4.0)
    np.testing.assert_array_equal(g.grad.to_numpy(), [0, 4, 4])


def _fd(f, x, y, eps=1e-6):
    return (f(x + eps, y) - f(x - eps, y)) / (2 * eps), (f(x, y + eps) - f(x, y - eps)) / (2 * eps)


def test_bwds_writes_gradients_into_grad_matching_finite_differences(sg, device, m):
    rng = np.random.default_rng(3)
    xs, ys = rng.random(16) * 2 - 1, rng.random(16) * 2 - 1
    x = sg.Tensor.from_numpy(device, xs.astype(np.float32)).with_grads()
    y = sg.Tensor.from_numpy(device, ys.astype(np.float32)).with_grads()
    r = m.poly(x, y).with_grads()
    dr = rng.random(16).astype(np.float32)
    r.grad_in.copy_from_numpy(dr)
    m.poly.bwds(x, y, r)
    fx, fy = _fd(lambda a, b: a * a * b + np.sin(a) * b, xs, ys)
    np.testing.assert_allclose(x.grad.to_numpy(), dr * fx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(y.grad.to_numpy(), dr * fy, rtol=1e-4, atol=1e-5)
    # Gradients accumulate, as SlangPy's do (with_grads(zero=True) clears them).
    m.poly.bwds(x, y, r)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * dr * fx, rtol=1e-4, atol=1e-5)


def test_bwds_of_broadcast_tensors_matches_torch(sg, device, m):
    rng = np.random.default_rng(4)
    a_np, b_np = rng.random((5, 3)).astype(np.float32), rng.random(3).astype(np.float32)
    a = sg.Tensor.from_numpy(device, a_np, "float3").with_grads()
    b = sg.Tensor.from_numpy(device, b_np.reshape(1, 3), "float3").broadcast_to((5,)).with_grads()
    r = m.mad3(a, b)
    assert r.shape == (5,) and r.dtype.name == "float3"
    r = r.with_grads()
    g = rng.random((5, 3)).astype(np.float32)
    r.grad_in.copy_from_numpy(g)
    m.mad3.bwds(a, b, r)
    ta, tb = torch.tensor(a_np, requires_grad=True), torch.tensor(b_np, requires_grad=True)
    (ta * tb + ta).backward(torch.tensor(g).reshape(5, 3) if False else torch.tensor(g))
    np.testing.assert_allclose(a.grad.to_numpy(), ta.grad.numpy(), rtol=1e-5)
    # b's Tensor is broadcast: its gradient Tensor has one element per call element.
    np.testing.assert_allclose(b.grad.to_numpy().sum(0), tb.grad.numpy(), rtol=1e-5)


def test_bwds_of_inout_tensor_reads_grad_in_and_writes_grad_out(sg, device, m):
    k = sg.Tensor.from_numpy(device, np.array([2.0, 3.0], np.float32)).with_grads()
    v = sg.Tensor.from_numpy(device, np.array([5.0, 7.0], np.float32))
    gin = sg.Tensor.from_numpy(device, np.array([1.0, 0.5], np.float32))
    gout = sg.Tensor.zeros(device, (2,), "float")
    vv = v.with_grads(grad_in=gin, grad_out=gout, zero=False)
    m.scale_inout.bwds(k, vv)
    # v' = v * k + k: dv'/dk = v + 1, dv'/dv = k.
    np.testing.assert_allclose(k.grad.to_numpy(), [1.0 * 6.0, 0.5 * 8.0])
    np.testing.assert_allclose(gout.to_numpy(), [2.0, 1.5])
    with pytest.raises(ValueError, match=r"scale_inout.bwds\(\): parameter 'v' is an inout param"):
        m.scale_inout.bwds(k, v.with_grads())
    with pytest.raises(TypeError, match=r"parameter 'v' is inout: its Tensor needs grad_in"):
        m.scale_inout.bwds(k, v)


def test_bwds_result_tensor_needs_grad_in(sg, device, m):
    x = sg.Tensor.from_numpy(device, np.ones(2, np.float32)).with_grads()
    r = m.mul(x, x)
    with pytest.raises(TypeError, match=r"mul.bwds\(\): the result Tensor has no grad_in"):
        m.mul.bwds(x, x, r)


# ---------------------------------------------------------------- errors


def test_errors_name_the_function_and_parameter(sg, device, m):
    with pytest.raises(TypeError, match=r"Tensor.empty\(\): 'nosuch' is not a type a Tensor can hold"):
        sg.Tensor.empty(device, (2,), "nosuch")
    with pytest.raises(TypeError, match=r"Tensor.zeros\(\): parameter 'dtype' takes"):
        sg.Tensor.zeros(device, (2,), object())
    with pytest.raises(TypeError, match=r"Tensor.empty\(\): struct Mixed mixes float and int fields"):
        sg.Tensor.empty(device, (2,), m.Mixed)
    with pytest.raises(ValueError, match=r"Tensor.zeros\(\): parameter 'shape' has a negative extent"):
        sg.Tensor.zeros(device, (2, -1), "float")
    with pytest.raises(TypeError, match=r"Tensor.empty\(\): parameter 'device' takes a shadegrad Device"):
        sg.Tensor.empty("cpu", (2,), "float")
    t = sg.Tensor.zeros(device, (4,), "float")
    with pytest.raises(ValueError, match=r"Tensor.copy_from_numpy\(\): parameter 'array' has 3 values, the Tensor 4"):
        t.copy_from_numpy(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"Tensor.with_grads\(\): parameter 'grad_in' takes a shadegrad Tensor"):
        t.with_grads(grad_in=np.zeros(4))
    with pytest.raises(TypeError, match=r"Tensor.empty_like\(\): parameter 'other' takes a shadegrad Tensor"):
        sg.Tensor.empty_like(torch.zeros(2))
    with pytest.raises(IndexError, match=r"Tensor\[\]: 2 indices for a Tensor of 1 dims"):
        t[0, 0]
    with pytest.raises(TypeError, match="has no gradient"):
        sg.Tensor.zeros(device, (2,), "int").with_grads()
    with pytest.raises(KeyError, match="struct Pixel has no field 'x'"):
        sg.Tensor.zeros(device, (1,), m.Pixel).cursor()[0].write({"x": 1})
    # A call's errors name the parameter, as for the torch tensor behind it.
    with pytest.raises(TypeError, match=r"mul\(\): parameter 'a'.*needs a float32 tensor"):
        m.mul(sg.Tensor.zeros(device, (4,), "int"), t)
    with pytest.raises(TypeError, match=r"addv\(\): parameter 'a'"):
        m.addv(t, t)


def test_ndbuffer_is_slangpy_older_container(sg, device):
    b = sg.NDBuffer(device, dtype="float3", shape=(4,))
    assert b.shape == (4,) and b.dtype.name == "float3" and np.all(b.to_numpy() == 0)
    assert sg.NDBuffer(device, float, element_count=3).shape == (3,)
    with pytest.raises(TypeError, match=r"NDBuffer\(\): give parameter 'shape' or 'element_count'"):
        sg.NDBuffer(device, float)
    with pytest.raises(TypeError, match="an NDBuffer has no gradients"):
        b.with_grads()
    assert isinstance(sg.NDBuffer.zeros(device, (2,), "float"), sg.NDBuffer)


# ---------------------------------------------------------------- struct elements from one tensor

STRUCT_SOURCE = """
import slangpy;
struct Pixel { float r; float g; float b; };
struct Q : IDifferentiable { float a; float2 b; };
float sum_pixels(Tensor<Pixel, 1> t, int n) { float s = 0; for (int i = 0; i < n; i++) s += t[i].r + t[i].g; return s; }
[Differentiable] float qf(Q q, float k) { return q.a * q.a * k + q.b.x * q.b.y; }
[Differentiable] Q qscale(Q q, float k) { Q r; r.a = q.a * k; r.b = q.b * k * q.a; return r; }
[Differentiable] void qstep(inout Q q, float k) { q.a = q.a * k + q.b.y; q.b = q.b * q.a; }
"""


@pytest.fixture(scope="module")
def ms(sg, device):
    return sg.Module.load_from_source(device, "struct_elements", STRUCT_SOURCE)


def test_struct_tensor_binds_to_tensor_parameters(sg, device, ms):
    p = sg.Tensor.from_numpy(device, np.arange(12, dtype=np.float32).reshape(4, 3), ms.Pixel)
    assert ms.sum_pixels(p, 4) == pytest.approx(sum(6 * i + 1 for i in range(4)))


def test_struct_element_gradients_match_float64_torch(sg, device, ms):
    x = torch.tensor([[1.0, 2.0, 3.0], [2.0, -1.0, 5.0]], device=tdev(device, sg), requires_grad=True)
    k = torch.tensor([2.0, 3.0], device=tdev(device, sg), requires_grad=True)
    y = ms.qf(x, k)
    y.backward(torch.tensor([1.0, 0.5], device=x.device))
    xd, kd = x.detach().double().requires_grad_(True), k.detach().double().requires_grad_(True)
    ((xd[:, 0] ** 2 * kd + xd[:, 1] * xd[:, 2]) * torch.tensor([1.0, 0.5], dtype=torch.float64, device=x.device)).sum().backward()
    torch.testing.assert_close(x.grad.double(), xd.grad)
    torch.testing.assert_close(k.grad.double(), kd.grad)


def test_struct_tensor_bwds_and_inout_struct_elements(sg, device, ms):
    q_np = np.array([[1.0, 2.0, 3.0], [2.0, -1.0, 0.5]], np.float32)
    q = sg.Tensor.from_numpy(device, q_np, ms.Q).with_grads()
    r = ms.qscale(q, 2.0)
    assert r.dtype.name == "Q"
    np.testing.assert_allclose(r.to_numpy(), np.c_[q_np[:, :1] * 2, q_np[:, 1:] * 2 * q_np[:, :1]])
    r = r.with_grads()
    r.grad_in.copy_from_numpy(np.ones((2, 3), np.float32))
    ms.qscale.bwds(q, 2.0, r)
    qd = torch.tensor(q_np, dtype=torch.float64, requires_grad=True)
    out = torch.cat([qd[:, :1] * 2, qd[:, 1:] * 2 * qd[:, :1]], dim=1)
    out.sum().backward()
    np.testing.assert_allclose(q.grad.to_numpy(), qd.grad.numpy(), rtol=1e-6)
    # inout struct elements under autograd: the old value's gradient.
    x = torch.tensor(q_np, device=tdev(device, sg), requires_grad=True)
    v = x.clone()
    ms.qstep(v, 2.0)
    v.sum().backward()
    xd = torch.tensor(q_np, dtype=torch.float64, requires_grad=True)
    a = xd[:, 0] * 2 + xd[:, 2]
    (a + (xd[:, 1:] * a[:, None]).sum(1)).sum().backward()
    torch.testing.assert_close(x.grad.double().cpu(), xd.grad)


# ---------------------------------------------------------------- SlangPy's own Tensor cases

SLANGPY_CASES = """
import slangpy;
int add_ints(int a, int b) { return a + b; }
float2 add_vectors(float2 a, float2 b) { return a + b; }
void add_buffers(float a, float b, out float c) { c = a + b; }
void bucket_values(int i, RWStructuredBuffer<int> buckets, float v) { buckets[i] = int(v * 100.0); }
"""


@pytest.fixture(scope="module")
def mc(sg, device):
    return sg.Module.load_from_source(device, "slangpy_cases", SLANGPY_CASES)


def test_slangpy_simple_call_through_storage(sg, device, mc):
    rng = np.random.default_rng(5)
    a = sg.Tensor.empty(device, shape=(32, 8), dtype=int)
    a.storage.copy_from_numpy(rng.integers(0, 100, a.element_count, dtype=np.int32))
    b = sg.Tensor.empty(device, shape=(32, 8), dtype=int)
    b.storage.copy_from_numpy(rng.integers(0, 100, b.element_count, dtype=np.int32))
    out = sg.Tensor.empty(device, shape=(32, 8), dtype=int)
    mc.add_ints(a, b, _result=out)
    expected = a.storage.to_numpy().view(np.int32) + b.storage.to_numpy().view(np.int32)
    np.testing.assert_array_equal(out.storage.to_numpy().view(np.int32), expected)


def test_slangpy_vector_call_with_scalar_and_vector_tensors(sg, device, mc):
    rng = np.random.default_rng(6)
    a_data = rng.random((100, 2)).astype(np.float32)
    b_data = rng.random((100, 2)).astype(np.float32)
    a = sg.Tensor.empty(device=device, shape=(100, 2), dtype=float)
    a.storage.copy_from_numpy(a_data)
    b = sg.Tensor.empty(device=device, shape=(100,), dtype=sg.float2)
    b.storage.copy_from_numpy(b_data)
    res = sg.Tensor.empty(device=device, shape=(100,), dtype=sg.float2)
    mc.add_vectors(a, b, _result=res)
    actual = res.storage.to_numpy().view(np.float32).reshape(-1, 2)
    np.testing.assert_allclose(actual, a_data + b_data, rtol=1e-6)


def test_slangpy_storage_binds_as_a_buffer(sg, device, mc):
    buckets = sg.Tensor.zeros(device, shape=(4,), dtype=int)
    mc.bucket_values(sg.grid((4,)), buckets.storage, 0.5)
    assert buckets.to_numpy().view("int32").tolist() == [50] * 4


def test_slangpy_mixed_torch_and_tensor_arguments(sg, device, mc):
    a = torch.tensor([1.0, 2.0, 3.0, 4.0], device=tdev(device, sg))
    b = sg.Tensor.from_numpy(device, np.array([10.0, 20.0, 30.0, 40.0], dtype=np.float32))
    c = sg.Tensor.zeros(device, shape=(4,), dtype="float")
    mc.add_buffers(a, b, c)
    assert np.allclose(c.to_numpy(), [11.0, 22.0, 33.0, 44.0])
    a2 = sg.Tensor.from_numpy(device, np.array([1.0, 2.0, 3.0], dtype=np.float32))
    c2 = torch.zeros(3, device=tdev(device, sg))
    mc.add_buffers(a2, torch.tensor([10.0, 20.0, 30.0], device=c2.device), c2)
    assert c2.tolist() == [11.0, 22.0, 33.0]


ARRAY_SOURCE = """
import slangpy;
half[N] doubled<let N : int>(half[N] x) { half[N] r; for (int i = 0; i < N; i++) r[i] = x[i] * half(2.0); return r; }
float2[6] vector_array(int c) { float2 r[6]; for (int i = 0; i < 6; ++i) r[i] = float2(c, c + i); return r; }
[Differentiable] float2[4] scale_array(float2[4] v, float k) { float2 r[4]; for (int i = 0; i < 4; ++i) r[i] = v[i] * k; return r; }
"""


@pytest.fixture(scope="module")
def ma(sg, device):
    return sg.Module.load_from_source(device, "array_results", ARRAY_SOURCE)


def test_array_results_with_tensors(sg, device, ma):
    # A Tensor whose shape is the parameter's element: call dimensionality 0, a Python list back.
    one = ma.find_function("doubled<8>")(sg.Tensor.from_numpy(device, np.ones(8, np.float16)))
    assert one == [2.0] * 8
    x_np = np.linspace(-1, 1, 128).astype(np.float16).reshape(4, 4, 8)
    y = ma.find_function("doubled<8>").return_type(sg.Tensor)(sg.Tensor.from_numpy(device, x_np))
    assert isinstance(y, sg.Tensor) and y.to_numpy().shape == (4, 4, 8) and y.dtype.name == "half[8]"
    np.testing.assert_allclose(y.to_numpy().astype(np.float32), 2 * x_np.astype(np.float32), atol=1e-3)
    out = sg.Tensor.empty(device, shape=(13, 6, 2), dtype=float)
    assert ma.vector_array(c=sg.grid((13,)), _result=out) is out
    expected = np.array([[[c, c + i] for i in range(6)] for c in range(13)], np.float32)
    np.testing.assert_array_equal(out.to_numpy(), expected)


def test_bwds_takes_the_result_tensor_as_result(sg, device, ma):
    f = ma.scale_array.return_type(sg.Tensor)
    x = sg.Tensor.from_numpy(device, np.full((8, 4, 2), 2.0, np.float32)).with_grads()
    r = f(v=x, k=3.0)
    np.testing.assert_array_equal(r.to_numpy(), np.full((8, 4, 2), 6.0))
    rg = r.with_grads()
    rg.grad.storage.copy_from_numpy(np.ones((8, 4, 2), np.float32))
    f.bwds(v=x, k=3.0, _result=rg)
    np.testing.assert_array_equal(x.grad.to_numpy(), np.full((8, 4, 2), 3.0))
