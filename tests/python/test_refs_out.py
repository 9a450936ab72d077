# tests/python/test_refs_out.py — out / inout parameters: tensors and numpy arrays written in
# place, value references (ValueRef, floatRef, intRef), and autograd through `out` tensors,
# `_result=` tensors, inout tensors and writable differentiable tensor parameters.
import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
[Differentiable]
void polar(float r, float th, out float2 p) { p = r * float2(cos(th), sin(th)); }
[Differentiable]
void mac(inout float acc, float x, float w) { acc = acc * x + w; }
void incr(inout int n) { n = n + 1; }
void fill3(float x, out float v[3]) { v[0] = x; v[1] = 2 * x; v[2] = 3 * x; }
[Differentiable]
float sq(float x) { return x * x; }
[Differentiable]
void wsq(int i, IDiffTensor<float, 1> x, IWDiffTensor<float, 1> y) { y[i] = x[i] * x[i]; }
[Differentiable]
void wsq2(int i, DiffTensor<float, 1> x, WDiffTensor<float, 1> y) { y[i] = x[i] * x[i]; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "refs", SOURCE)


def test_out_and_inout_tensors_are_written_in_place(m):
    r = torch.tensor([2.0, 1.0], device=TEST_DEVICE)
    th = torch.tensor([0.5, 0.0], device=TEST_DEVICE)
    p = torch.zeros(2, 2, device=TEST_DEVICE)
    assert m.polar(r, th, p) is None
    torch.testing.assert_close(p.cpu(), torch.tensor([[1.7551651, 0.9588511], [1.0, 0.0]]))
    acc = torch.tensor([2.0, 1.0], device=TEST_DEVICE)
    m.mac(acc, 3.0, 0.5)
    assert acc.tolist() == [6.5, 3.5]
    n = torch.tensor([1, 41], dtype=torch.int32, device=TEST_DEVICE)
    m.incr(n)
    assert n.tolist() == [2, 42]
    v = torch.zeros(2, 3, device=TEST_DEVICE)
    m.fill3(torch.tensor([1.0, 2.0], device=TEST_DEVICE), v)
    assert v.tolist() == [[1, 2, 3], [2, 4, 6]]


def test_numpy_arrays_are_written_back(m):
    p = np.zeros((1, 2), dtype=np.float32)
    m.polar(np.array([2.0], dtype=np.float32), np.array([0.5], dtype=np.float32), p)
    np.testing.assert_allclose(p, [[1.7551651, 0.9588511]], rtol=1e-6)
    acc = np.array([2.0, 1.0], dtype=np.float32)
    m.mac(acc, 3.0, 0.5)
    assert acc.tolist() == [6.5, 3.5]


def test_value_refs(sg, m):
    p = sg.ValueRef(sg.float2(0, 0))
    m.polar(2.0, 0.5, p)
    assert isinstance(p.value, sg.float2)
    assert p.value.x == pytest.approx(1.7551651) and p.value.y == pytest.approx(0.9588511)
    acc = sg.floatRef(2.0)
    m.mac(acc, 3.0, 0.5)
    assert acc.value == 6.5
    n = sg.intRef(41)
    m.incr(n)
    assert n.value == 42 and type(n.value) is int
    v = sg.ValueRef(2.5)
    m.mac(v, 2.0, 0.0)
    assert v.value == 5.0


def test_a_ref_cannot_be_broadcast(sg, m):
    with pytest.raises(ValueError, match="out parameter 'p' is broadcast"):
        m.polar(torch.ones(3, device=TEST_DEVICE), 0.5, sg.ValueRef(sg.float2(0, 0)))


def test_out_tensor_of_a_differentiable_call_gets_a_grad_fn(m):
    r = torch.tensor([2.0, 1.5], device=TEST_DEVICE, requires_grad=True)
    th = torch.tensor([0.5, 0.25], device=TEST_DEVICE, requires_grad=True)
    p = torch.zeros(2, 2, device=TEST_DEVICE)
    m.polar(r, th, p)
    assert p.grad_fn is not None
    p.backward(torch.ones(2, 2, device=TEST_DEVICE))
    rd, thd = r.detach().double(), th.detach().double()
    torch.testing.assert_close(r.grad.double().cpu(), (torch.cos(thd) + torch.sin(thd)).cpu(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(th.grad.double().cpu(), (rd * (torch.cos(thd) - torch.sin(thd))).cpu(), rtol=1e-5, atol=1e-6)
    # The values match torch's own expression, and so do the gradients.
    r2 = r.detach().clone().requires_grad_(True)
    th2 = th.detach().clone().requires_grad_(True)
    ref = torch.stack([r2 * torch.cos(th2), r2 * torch.sin(th2)], dim=-1)
    torch.testing.assert_close(p.detach(), ref.detach())
    ref.backward(torch.ones(2, 2, device=TEST_DEVICE))
    torch.testing.assert_close(r.grad, r2.grad)
    torch.testing.assert_close(th.grad, th2.grad)


def test_result_tensor_gets_a_grad_fn(m):
    x = torch.tensor([1.0, -2.0, 3.0], device=TEST_DEVICE, requires_grad=True)
    out = torch.empty(3, device=TEST_DEVICE)
    y = m.sq(x, _result=out)
    assert y is out and out.grad_fn is not None
    out.sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach())


@pytest.mark.parametrize("fn", ["wsq", "wsq2"])
def test_writable_differentiable_tensor_parameters_take_part_in_autograd(sg, m, fn):
    x = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE, requires_grad=True)
    y = torch.zeros(3, device=TEST_DEVICE)
    getattr(m, fn)(sg.grid((3,)), x, y)
    assert y.tolist() == [1.0, 4.0, 9.0] and y.grad_fn is not None
    y.backward(torch.tensor([1.0, 0.5, 2.0], device=TEST_DEVICE))
    assert x.grad.tolist() == [2.0, 2.0, 12.0]


def test_concrete_diff_tensor_without_grad_behaves_as_its_primal_kind(sg, m):
    # The mixed-requires_grad case: DiffTensor given a tensor without grad reads like a Tensor.
    x = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE)
    y = torch.zeros(3, device=TEST_DEVICE)
    m.wsq2(sg.grid((3,)), x, y)
    assert y.tolist() == [1.0, 4.0, 9.0] and y.grad_fn is None


def test_inout_tensors_take_part_in_autograd(m):
    # More in test_inout_autograd.py.
    acc = torch.tensor([2.0], device=TEST_DEVICE)
    x = torch.tensor([3.0], device=TEST_DEVICE, requires_grad=True)
    m.mac(acc, x, 0.5)
    assert acc.tolist() == [6.5] and acc.grad_fn is not None
    acc.sum().backward()
    assert x.grad.tolist() == [2.0]


STRUCT_SOURCE = """
struct Particle : IDifferentiable { float3 pos; float3 vel; no_diff float mass; };
[Differentiable]
Particle step(Particle p, float dt) { Particle q = p; q.vel = p.vel * 0.5f; q.pos = p.pos + q.vel * dt; return q; }
"""


def test_struct_results_take_part_in_autograd(sg, device):
    m = sg.Module.load_from_source(device, "struct_result", STRUCT_SOURCE)
    pos = torch.ones(4, 3, device=TEST_DEVICE, requires_grad=True)
    vel = torch.full((4, 3), 2.0, device=TEST_DEVICE, requires_grad=True)
    dt = torch.full((4,), 0.5, device=TEST_DEVICE, requires_grad=True)
    r = m.step({"pos": pos, "vel": vel, "mass": 1.0}, dt)
    assert set(r) == {"pos", "vel", "mass"} and r["pos"].grad_fn is not None
    torch.testing.assert_close(r["pos"].detach(), torch.full((4, 3), 1.5, device=TEST_DEVICE))
    # Against torch's own expression of the same update.
    rp, rv, rdt = (t.detach().clone().requires_grad_(True) for t in (pos, vel, dt))
    qv = rv * 0.5
    qp = rp + qv * rdt[:, None]
    (r["pos"].sum() + 3 * r["vel"].sum()).backward()
    (qp.sum() + 3 * qv.sum()).backward()
    torch.testing.assert_close(pos.grad, rp.grad)
    torch.testing.assert_close(vel.grad, rv.grad)
    torch.testing.assert_close(dt.grad, rdt.grad)
    # Only one field's gradient given: the others count as zero.
    pos.grad = vel.grad = dt.grad = None
    r = m.step({"pos": pos, "vel": vel, "mass": 1.0}, dt)
    r["vel"].sum().backward()
    assert pos.grad.abs().sum() == 0 and torch.equal(vel.grad.cpu(), torch.full((4, 3), 0.5))
