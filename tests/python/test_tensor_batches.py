# tests/python/test_tensor_batches.py — a batch of tensors passed to a tensor parameter: a
# tensor with more dims than the parameter's rank (plus its element's) vectorizes over the extra
# leading dims (docs/calling.md: tensor (B, H, W) into ITensor<float, 2> has dims 1), each thread
# seeing its (H, W) slice; broadcast like any argument, read and written, with gradients for the
# differentiable kinds (against torch in float64 and finite differences).
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
float rsum(ITensor<float, 1> t) { float s = 0; for (int i = 0; i < 3; i++) s += t[i] * float(i + 1); return s; }
float csum(Tensor<float, 2> t) { return t[0, 0] + 10 * t[0, 1] + 100 * t[1, 0]; }
uint extent(ITensor<float, 2> t) { return t.shape[0] * 10 + t.shape[1]; }
float vlen(ITensor<float3, 1> t, int i) { return length(t[i]); }
void fill(IWTensor<float, 1> o, float v) { o[0] = v; o[1] = 2 * v; }
[Differentiable]
float wdot(IDiffTensor<float, 1> t, float w) { return (t[0] * t[1] + t[2]) * w; }
[Differentiable]
float det(DiffTensor<float, 2> t) { return t[0, 0] * t[1, 1] - t[0, 1] * t[1, 0]; }
[Differentiable]
void sq(IDiffTensor<float, 1> x, IWDiffTensor<float, 1> y) { y[0] = x[0] * x[0]; y[1] = x[0] * x[1]; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "batches", SOURCE)


def test_batch_of_1d_tensors(m):
    t = torch.arange(12.0, device=TEST_DEVICE).reshape(4, 3)
    w = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE)
    torch.testing.assert_close(m.rsum(t), (t * w).sum(1))
    # Two batch dims, and a non-contiguous batch.
    t2 = torch.arange(24.0, device=TEST_DEVICE).reshape(2, 4, 3)
    torch.testing.assert_close(m.rsum(t2), (t2 * w).sum(-1))
    tt = torch.arange(12.0, device=TEST_DEVICE).reshape(3, 4).T
    torch.testing.assert_close(m.rsum(tt), (tt * w).sum(1))


def test_batch_of_2d_tensors_concrete_type_and_shape(m):
    t = torch.arange(2 * 2 * 3.0, device=TEST_DEVICE).reshape(2, 2, 3)
    torch.testing.assert_close(m.csum(t), t[:, 0, 0] + 10 * t[:, 0, 1] + 100 * t[:, 1, 0])
    assert m.extent(torch.zeros(5, 2, 7, device=TEST_DEVICE)).tolist() == [27] * 5


def test_batch_of_vector_tensors(m):
    t = torch.tensor([[[3.0, 4.0, 0.0], [1.0, 0.0, 0.0]], [[0.0, 0.0, 2.0], [0.0, 6.0, 8.0]]], device=TEST_DEVICE)
    assert m.vlen(t, 1).tolist() == [1.0, 10.0]
    assert m.vlen(t, torch.tensor([0, 1], dtype=torch.int32, device=TEST_DEVICE)).tolist() == [5.0, 10.0]


def test_batches_broadcast_with_other_arguments(m):
    t = torch.tensor([[1.0, 2.0, 3.0]], device=TEST_DEVICE, requires_grad=True)  # one slice, shared
    w = torch.tensor([1.0, 2.0, 3.0, 4.0], device=TEST_DEVICE, requires_grad=True)
    y = m.wdot(t, w)
    assert y.tolist() == [5.0, 10.0, 15.0, 20.0]
    y.sum().backward()
    assert t.grad.tolist() == [[2.0 * 10, 1.0 * 10, 10.0]] and w.grad.tolist() == [5.0] * 4
    with pytest.raises(ValueError, match=r"wdot\(\): parameter '.*' of shape .* does not broadcast"):
        m.wdot(torch.ones(3, 3, device=TEST_DEVICE), torch.ones(4, device=TEST_DEVICE))


def test_writable_batches(m):
    o = torch.zeros(3, 2, device=TEST_DEVICE)
    m.fill(o, torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE))
    assert o.tolist() == [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]
    with pytest.raises(ValueError, match=r"fill\(\): writable tensor parameter 'o' is broadcast"):
        m.fill(torch.zeros(1, 2, device=TEST_DEVICE), torch.tensor([1.0, 2.0], device=TEST_DEVICE))


def test_batch_gradients_against_torch(m):
    torch.manual_seed(3)
    t = torch.randn(5, 3, device=TEST_DEVICE, requires_grad=True)
    w = torch.randn(5, device=TEST_DEVICE, requires_grad=True)
    g = torch.randn(5, device=TEST_DEVICE)
    (m.wdot(t, w) * g).sum().backward()
    td, wd = t.detach().double().requires_grad_(True), w.detach().double().requires_grad_(True)
    ((td[:, 0] * td[:, 1] + td[:, 2]) * wd * g.double()).sum().backward()
    torch.testing.assert_close(t.grad.double(), td.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(w.grad.double(), wd.grad, rtol=1e-5, atol=1e-6)


def test_batch_gradients_against_finite_differences(m):
    torch.manual_seed(4)
    t = torch.randn(3, 2, 2, device=TEST_DEVICE, requires_grad=True)
    m.det(t).sum().backward()
    # The determinant is linear in each element: central differences are exact up to rounding.
    fd = torch.zeros(3, 2, 2, dtype=torch.float64)
    eps = 0.125
    with torch.no_grad():
        for idx in [(b, i, j) for b in range(3) for i in range(2) for j in range(2)]:
            hi, lo = t.detach().clone(), t.detach().clone()
            hi[idx] += eps
            lo[idx] -= eps
            fd[idx] = float((m.det(hi).sum() - m.det(lo).sum()) / (2 * eps))
    torch.testing.assert_close(t.grad.double().cpu(), fd, rtol=1e-5, atol=1e-5)


def test_writable_differentiable_batches(m):
    x = torch.tensor([[1.0, 2.0], [3.0, -1.0]], device=TEST_DEVICE, requires_grad=True)
    y = torch.zeros(2, 2, device=TEST_DEVICE)
    m.sq(x, y)
    assert y.tolist() == [[1.0, 2.0], [9.0, -3.0]] and y.grad_fn is not None
    y.backward(torch.tensor([[1.0, 1.0], [2.0, 0.5]], device=TEST_DEVICE))
    # y0 = x0^2, y1 = x0 x1: dx0 = 2 x0 g0 + x1 g1, dx1 = x0 g1.
    assert x.grad.tolist() == [[2 + 2, 1.0], [12 - 0.5, 1.5]]
