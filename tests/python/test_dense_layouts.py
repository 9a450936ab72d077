# tests/python/test_dense_layouts.py — dense launches of small CUDA kernels (emit_dense.cpp): a
# launch whose call-shaped views are all laid out as the call (contiguous, of the call's rank) and
# aligned runs its full blocks with four consecutive elements a thread and vector loads and
# stores; any other layout (transposed, sliced, broadcast, expanded, misaligned, a view of lower
# rank), and the partial last block, run the generic instantiation. Both must give torch's values
# and gradients (and each other's bits), for one and for several elements per thread, full and
# partial blocks, scalar and vector elements, half, float, double and integers, forward and
# backward (whose incoming gradient may itself be expanded). Runs on the backend of
# SHADEGRAD_TEST_DEVICE (the CPU has one instantiation: the same cases check it too).
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
float blend(float x, float y) { return x * 2.0 + sin(y) * x; }
[Differentiable]
float3 shade(float3 p, float3 q) { return p * q + sin(p); }
[Differentiable]
half hblend(half x, half y) { return x * half(2.0) + y * x; }
[Differentiable]
double dblend(double x, double y) { return x * 2.0 + sin(y) * x; }
int iaxpy(int x, int y) { return x * 3 + y; }
int64_t laxpy(int64_t x, int64_t y) { return x * 3 + y; }
[Differentiable]
float looped(float x, float y)
{
    float s = 0.0;
    for (int i = 0; i < 3; i++) s = s + x * y + float(i);
    return s;
}
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "dense_layouts", SOURCE)


def blend_torch(x, y):
    return x * 2.0 + torch.sin(y) * x


def same(t):
    return t


def layouts(h, w):
    """(name, x leaf shape, x view of its leaf, y leaf shape, y view): inputs of call shape (h, w)
    in assorted layouts, each a view of a leaf (so that the leaf's gradient checks the view's)."""
    return [
        ("contiguous", (h, w), same, (h, w), same),
        ("x transposed", (w, h), lambda t: t.t(), (h, w), same),
        ("y sliced", (h, w), same, (h, 2 * w), lambda t: t[:, ::2]),
        ("x column broadcast", (h, 1), same, (h, w), same),
        ("y row broadcast", (h, w), same, (1, w), same),
        ("y lower rank", (h, w), same, (w,), same),
        ("x expanded", (1, w), lambda t: t.expand(h, w), (h, w), same),
        ("x misaligned", (h * w + 1,), lambda t: t[1:].view(h, w), (h, w), same),
    ]


def leaves(shape_x, shape_y, dtype=torch.float32):
    x = (torch.rand(shape_x, device=TEST_DEVICE, dtype=dtype) - 0.5).requires_grad_(True)
    y = (torch.rand(shape_y, device=TEST_DEVICE, dtype=dtype) + 0.25).requires_grad_(True)
    xr = x.detach().double().requires_grad_(True)
    yr = y.detach().double().requires_grad_(True)
    return x, y, xr, yr


@pytest.mark.parametrize("fn_name", ["blend", "looped"])  # four elements a thread, and one
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (64, 257), (1, 4096), (4, 4096), (1000, 3), (3, 4097)])
def test_scalar_layouts_forward_and_backward(m, fn_name, shape):
    h, w = shape
    fn = getattr(m, fn_name)
    ref_fn = blend_torch if fn_name == "blend" else (lambda x, y: 3.0 * x * y + 3.0)
    for name, sx, fx, sy, fy in layouts(h, w):
        x, y, xr, yr = leaves(sx, sy)
        out = fn(fx(x), fy(y))
        ref = ref_fn(fx(xr), fy(yr))
        assert out.shape == ref.shape, name
        torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-6, msg=name)
        # A contiguous incoming gradient, then an expanded one (what .sum() sends back).
        g = torch.rand(ref.shape, device=TEST_DEVICE, dtype=torch.float32) + 0.5
        out.backward(g)
        ref.backward(g.double())
        torch.testing.assert_close(x.grad.double(), xr.grad, rtol=1e-5, atol=1e-5, msg=name)
        torch.testing.assert_close(y.grad.double(), yr.grad, rtol=1e-5, atol=1e-5, msg=name)
        x.grad = y.grad = xr.grad = yr.grad = None
        fn(fx(x), fy(y)).sum().backward()
        ref_fn(fx(xr), fy(yr)).sum().backward()
        torch.testing.assert_close(x.grad.double(), xr.grad, rtol=1e-5, atol=1e-4, msg=name + " (sum)")
        torch.testing.assert_close(y.grad.double(), yr.grad, rtol=1e-5, atol=1e-4, msg=name + " (sum)")


@pytest.mark.parametrize("n", [1, 7, 1024, 4099])
def test_vector_layouts(m, n):
    cases = [
        ("contiguous", (n, 3), same, (n, 3), same),
        ("p components strided", (3, n), lambda t: t.t(), (n, 3), same),  # (n, 3) with strides (1, n)
        ("q rows sliced", (n, 3), same, (2 * n, 3), lambda t: t[::2]),
        ("q broadcast", (n, 3), same, (1, 3), same),
    ]
    for name, sp, fp, sq, fq in cases:
        p, q, pr, qr = leaves(sp, sq)
        out = m.shade(fp(p), fq(q))
        ref = fp(pr) * fq(qr) + torch.sin(fp(pr))
        torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-6, msg=name)
        g = torch.rand(ref.shape, device=TEST_DEVICE) + 0.5
        out.backward(g)
        ref.backward(g.double())
        torch.testing.assert_close(p.grad.double(), pr.grad, rtol=1e-5, atol=1e-5, msg=name)
        torch.testing.assert_close(q.grad.double(), qr.grad, rtol=1e-5, atol=1e-5, msg=name)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
@pytest.mark.parametrize("n", [5, 4096, 3 * 4096 + 7])
def test_half_and_double_layouts(m, dtype, n):
    fn = m.hblend if dtype == torch.float16 else m.dblend
    ref_fn = (lambda x, y: x * 2.0 + y * x) if dtype == torch.float16 else blend_torch
    tol = dict(rtol=4e-3, atol=4e-3) if dtype == torch.float16 else dict(rtol=1e-12, atol=1e-12)
    cases = [
        ("contiguous", (n,), same, (n,), same),
        ("x misaligned", (n + 1,), lambda t: t[1:], (n,), same),
        ("y sliced", (n,), same, (2 * n,), lambda t: t[::2]),
    ]
    for name, sx, fx, sy, fy in cases:
        x, y, xr, yr = leaves(sx, sy, dtype)
        out = fn(fx(x), fy(y))
        ref = ref_fn(fx(xr), fy(yr))
        assert out.dtype == dtype
        torch.testing.assert_close(out.double(), ref, **tol, msg=name)
        g = torch.rand(n, device=TEST_DEVICE, dtype=dtype) + 0.5
        out.backward(g)
        ref.backward(g.double())
        torch.testing.assert_close(x.grad.double(), xr.grad, **tol, msg=name)
        torch.testing.assert_close(y.grad.double(), yr.grad, **tol, msg=name)


def test_layouts_agree_bitwise(m):
    # The same values through the vector accesses (contiguous and aligned) and the generic
    # instantiation (misaligned, transposed): the same bits, full blocks and a partial one.
    h, w = 7, 4096 + 33
    x = torch.rand(h, w, device=TEST_DEVICE) - 0.5
    y = torch.rand(h, w, device=TEST_DEVICE) + 0.25
    want = m.blend(x, y)
    shifted = torch.empty(h * w + 1, device=TEST_DEVICE)[1:].view(h, w)
    shifted.copy_(x)
    transposed = x.t().contiguous().t()
    for name, view in [("misaligned", shifted), ("transposed", transposed)]:
        assert torch.equal(m.blend(view, y), want), name
    xg = x.clone().requires_grad_(True)
    m.blend(xg, y).backward(torch.ones_like(x))
    xs = torch.empty(h * w + 1, device=TEST_DEVICE)
    xs[1:].copy_(x.flatten())
    xs.requires_grad_(True)
    m.blend(xs[1:].view(h, w), y).backward(torch.ones_like(x))
    assert torch.equal(xs.grad[1:].view(h, w), xg.grad)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_layouts(m, dtype):
    fn = m.iaxpy if dtype == torch.int32 else m.laxpy
    n = 3 * 4096 + 5
    x = torch.randint(-1000, 1000, (n,), dtype=dtype, device=TEST_DEVICE)
    y = torch.randint(-1000, 1000, (2 * n,), dtype=dtype, device=TEST_DEVICE)
    for name, a, b in [("contiguous", x, y[:n]), ("misaligned", x[1:], y[1:n]), ("sliced", x, y[::2])]:
        out = fn(a, b)
        assert out.dtype == dtype, name
        assert torch.equal(out, a * 3 + b), name


def test_result_into_a_strided_out_tensor(m):
    x = torch.rand(33, 65, device=TEST_DEVICE)
    y = torch.rand(33, 65, device=TEST_DEVICE)
    out = torch.zeros(65, 33, device=TEST_DEVICE).t()  # a transposed destination
    m.blend(x, y, _result=out)
    torch.testing.assert_close(out, blend_torch(x, y), rtol=1e-6, atol=1e-6)
    dense = torch.zeros(33, 65, device=TEST_DEVICE)
    m.blend(x, y, _result=dense)
    torch.testing.assert_close(dense, out, rtol=0, atol=0)
