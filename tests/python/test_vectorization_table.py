# tests/python/test_vectorization_table.py — every row of docs/calling.md's vectorization table: the
# argument's dimensionality against its parameter type, the call shape it gives, the values,
# and the gradients where the row is differentiable (against float64 central differences and
# against torch's own expression); generators follow the call shape.
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
[Differentiable]
float fsq(float x, float k) { return k * x * x; }
[Differentiable]
double dsq(double x, double k) { return k * x * x; }
int iadd(int a, int b) { return a + b; }
[Differentiable]
float vnorm2(float3 v) { return dot(v, v); }
[Differentiable]
double vnorm2d(double3 v) { return dot(v, v); }
[Differentiable]
float mtr(float2x3 m) { return m[0][0] * m[1][2] + m[0][1]; }
[Differentiable]
float asum(float a[5]) { float s = 0; [MaxIters(5)] for (int i = 0; i < 5; i++) s += a[i] * float(i + 1); return s; }
[Differentiable]
float asum2(float a[5], no_diff float s) { return asum(a) * s; }
[Differentiable]
double asumd(double a[5]) { double s = 0; [MaxIters(5)] for (int i = 0; i < 5; i++) s += a[i] * double(i + 1); return s; }
[Differentiable]
float tsum(IDiffTensor<float, 2> t) { float s = 0; for (int i = 0; i < 2; i++) for (int j = 0; j < 3; j++) s += t[i, j] * t[i, j]; return s; }
int2 pix(int2 p) { return p; }
int2 cid2(int2 c, float x) { return c; }
int tid(int t, float x) { return t; }
uint hsh(uint h, float x) { return h; }
float rnd(float r, float x) { return r + x; }
int arr2(int p[2]) { return p[0] * 10 + p[1]; }
struct S : IDifferentiable { float a; float3 b; };
[Differentiable]
float sfun(S s, float w[2]) { return s.a * w[0] + dot(s.b, s.b) * w[1]; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "vtable", SOURCE)


def central_difference(f, x, eps=1e-6):
    """d sum(f(x)) / dx elementwise, in float64."""
    g = torch.zeros_like(x)
    flat, gflat = x.view(-1), g.view(-1)
    for i in range(flat.numel()):
        old = flat[i].item()
        flat[i] = old + eps
        hi = f(x).sum().item()
        flat[i] = old - eps
        lo = f(x).sum().item()
        flat[i] = old
        gflat[i] = (hi - lo) / (2 * eps)
    return g


def test_python_scalars_have_dims_zero(m):
    assert m.fsq(3.0, 2.0) == 18.0
    assert m.iadd(2, 40) == 42
    x = torch.ones(4, device=TEST_DEVICE)
    assert m.fsq(x, 2.0).shape == (4,)  # a scalar broadcasts over the call


def test_tensor_hw_to_float_has_dims_two(m):
    x = torch.randn(3, 4, device=TEST_DEVICE, requires_grad=True)
    y = m.fsq(x, 1.5)
    assert y.shape == (3, 4)
    torch.testing.assert_close(y, 1.5 * x * x)
    y.sum().backward()
    torch.testing.assert_close(x.grad, 3.0 * x.detach())
    xd = torch.randn(3, 4, dtype=torch.float64, device=TEST_DEVICE)
    fd = central_difference(lambda t: m.dsq(t, 1.5), xd.clone())
    xd.requires_grad_(True)
    m.dsq(xd, 1.5).sum().backward()
    torch.testing.assert_close(xd.grad, fd, rtol=1e-6, atol=1e-6)


def test_tensor_n3_to_float3_has_dims_one(m):
    v = torch.randn(5, 3, device=TEST_DEVICE, requires_grad=True)
    y = m.vnorm2(v)
    assert y.shape == (5,)
    torch.testing.assert_close(y, (v * v).sum(-1))
    y.sum().backward()
    torch.testing.assert_close(v.grad, 2 * v.detach())
    vd = torch.randn(5, 3, dtype=torch.float64, device=TEST_DEVICE)
    fd = central_difference(lambda t: m.vnorm2d(t), vd.clone())
    vd.requires_grad_(True)
    m.vnorm2d(vd).sum().backward()
    torch.testing.assert_close(vd.grad, fd, rtol=1e-6, atol=1e-6)
    with pytest.raises(TypeError, match=r"vnorm2\(\): parameter 'v' of type float3 needs a tensor whose last dims are \(3,\), got a float32 tensor of shape \(5, 4\)"):
        m.vnorm2(torch.ones(5, 4, device=TEST_DEVICE))


def test_tensor_n23_to_float2x3_has_dims_one(m):
    t = torch.randn(4, 2, 3, device=TEST_DEVICE, requires_grad=True)
    y = m.mtr(t)
    assert y.shape == (4,)
    ref_t = t.detach().clone().requires_grad_(True)
    ref = ref_t[:, 0, 0] * ref_t[:, 1, 2] + ref_t[:, 0, 1]
    torch.testing.assert_close(y, ref)
    y.sum().backward()
    ref.sum().backward()
    torch.testing.assert_close(t.grad, ref_t.grad)


def test_tensor_n5_to_float_array_has_dims_one(m):
    a = torch.randn(6, 5, device=TEST_DEVICE, requires_grad=True)
    w = torch.arange(1.0, 6.0, device=TEST_DEVICE)
    y = m.asum(a)
    assert y.shape == (6,)
    torch.testing.assert_close(y, (a * w).sum(-1))
    y.sum().backward()
    torch.testing.assert_close(a.grad, w.expand(6, 5))
    ad = torch.randn(2, 5, dtype=torch.float64, device=TEST_DEVICE)
    fd = central_difference(lambda t: m.asumd(t), ad.clone())
    ad.requires_grad_(True)
    m.asumd(ad).sum().backward()
    torch.testing.assert_close(ad.grad, fd, rtol=1e-6, atol=1e-6)
    # A broadcast array argument reduces its gradient (atomics over the array elements too).
    b = torch.randn(1, 5, device=TEST_DEVICE, requires_grad=True)
    scale = torch.tensor([1.0, 2.0, 3.0, 4.0], device=TEST_DEVICE)
    y = m.asum2(b, scale)
    torch.testing.assert_close(y, (b * w).sum(-1) * scale)
    y.sum().backward()
    torch.testing.assert_close(b.grad, (w * scale.sum()).expand(1, 5))


def test_whole_tensor_has_dims_zero(m):
    t = torch.randn(2, 3, device=TEST_DEVICE, requires_grad=True)
    y = m.tsum(t)
    assert y.shape == ()  # call dimensionality 0 under autograd: a 0-d tensor with a grad_fn
    torch.testing.assert_close(y, (t * t).sum())
    y.backward()
    torch.testing.assert_close(t.grad, 2 * t.detach())
    with torch.no_grad():
        y = m.tsum(t)  # no autograd: still a 0-d torch tensor (a torch argument), without grad_fn
        assert y.shape == () and y.grad_fn is None and y.item() == pytest.approx((t * t).sum().item(), rel=1e-5)


def test_batch_of_whole_tensors_has_dims_one(m):
    # tensor (B, H, W) into ITensor<float, 2>: one slice per call index (more in test_tensor_batches.py).
    t = torch.randn(4, 2, 3, device=TEST_DEVICE, requires_grad=True)
    y = m.tsum(t)
    assert y.shape == (4,)
    torch.testing.assert_close(y, (t * t).sum((1, 2)))
    y.backward(torch.arange(4.0, device=TEST_DEVICE))
    torch.testing.assert_close(t.grad, 2 * t.detach() * torch.arange(4.0, device=TEST_DEVICE)[:, None, None])


def test_grid_defines_the_call_shape(sg, m):
    out = m.pix(sg.grid((2, 3))).cpu()
    assert out.shape == (2, 3, 2) and out[1, 2].tolist() == [2, 1]
    assert m.arr2(sg.grid((2, 3))).cpu().tolist() == [[0, 1, 2], [10, 11, 12]]


def test_generators_follow_the_call_shape(sg, m):
    x = torch.zeros(2, 3, device=TEST_DEVICE)  # the call shape (2, 3): generators set no extent
    c = m.cid2(sg.call_id(), x).cpu()
    assert c.shape == (2, 3, 2) and c[1, 2].tolist() == [2, 1]  # .x is the last call dimension
    assert m.tid(sg.thread_id(), x).cpu().tolist() == [[0, 1, 2], [3, 4, 5]]
    h = m.hsh(sg.wang_hash(seed=7), x)
    assert h.shape == (2, 3) and len(set(h.flatten().tolist())) == 6
    assert torch.equal(h, m.hsh(sg.wang_hash(seed=7), x)) and not torch.equal(h, m.hsh(sg.wang_hash(seed=8), x))
    r = m.rnd(sg.rand_float(min=2.0, max=3.0, seed=1), x)
    assert r.shape == (2, 3) and bool(((r >= 2.0) & (r < 3.0)).all())


def test_lists_and_dicts_bind_element_wise(sg, m):
    n = 4
    a = torch.randn(n, device=TEST_DEVICE, requires_grad=True)
    b = torch.randn(n, 3, device=TEST_DEVICE, requires_grad=True)
    w0 = torch.randn(n, device=TEST_DEVICE, requires_grad=True)
    y = m.sfun({"a": a, "b": b}, [w0, 2.0])
    ref_a, ref_b, ref_w0 = (t.detach().clone().requires_grad_(True) for t in (a, b, w0))
    ref = ref_a * ref_w0 + (ref_b * ref_b).sum(-1) * 2.0
    torch.testing.assert_close(y, ref)
    y.sum().backward()
    ref.sum().backward()
    torch.testing.assert_close(a.grad, ref_a.grad)
    torch.testing.assert_close(b.grad, ref_b.grad)
    torch.testing.assert_close(w0.grad, ref_w0.grad)


def test_extents_must_match_or_be_one(m):
    with pytest.raises(ValueError, match=r"fsq\(\): parameter 'k' of shape \(3,\) does not broadcast with 'x' of shape \(4,\)"):
        m.fsq(torch.ones(4, device=TEST_DEVICE), torch.ones(3, device=TEST_DEVICE))
    out = m.fsq(torch.ones(2, 4, device=TEST_DEVICE), torch.ones(2, 1, device=TEST_DEVICE))
    assert out.shape == (2, 4)


def test_zero_size_call_returns_empty(m):
    out = m.fsq(torch.ones(0, 3, device=TEST_DEVICE), 1.0)
    assert out.shape == (0, 3)
