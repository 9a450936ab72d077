# tests/python/test_spy_sample.py — `t.sample(float2 uv)` on 2-D tensors as SlangPy defines it
# (bilinear, (W, H) = (shape[1], shape[0]), p = uv * (W, H), texels int(p) clamped and the next
# one, weights frac(p), no half-texel offset), on read-only, writable and differentiable tensors,
# scalar and vector elements; the gradient to a differentiable tensor (and to uv) against a
# float64 reference and torch's grid_sample; and `uniform` on parameters.
import math

import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
float s(Tensor<float, 2> t, float2 uv) { return t.sample(uv); }
float si(ITensor<float, 2> t, float2 uv) { return t.sample(uv); }
float3 s3(RWTensor<float3, 2> t, float2 uv) { return t.sample(uv); }
[Differentiable] float ds(IDiffTensor<float, 2> t, float2 uv) { return t.sample(uv); }
[Differentiable] float2 ds2(DiffTensor<float2, 2> t, float2 uv) { return t.sample(uv); }
[Differentiable] double dsd(IDiffTensor<double, 2> t, float2 uv) { return t.sample(uv); }
float u(uniform float a, float b) { return a + b; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "spy_sample", SOURCE)


def reference(t, uv):
    """SlangPy's bilinear sample in float64: t (H, W, ...) and uv (N, 2) -> (N, ...)."""
    t = t.double()
    h, w = t.shape[0], t.shape[1]
    out = []
    for u, v in uv.double().tolist():
        px, py = u * w, v * h
        tx, ty = int(px), int(py)  # truncation toward zero, as int(x) in the kernel
        fx, fy = px - math.floor(px), py - math.floor(py)
        x0, y0 = min(max(tx, 0), w - 1), min(max(ty, 0), h - 1)
        # SlangPy: min(t + 1, last); clamped at 0 too (SlangPy reads out of bounds for p <= -1).
        x1, y1 = min(max(tx + 1, 0), w - 1), min(max(ty + 1, 0), h - 1)
        top = t[y0, x0] + (t[y0, x1] - t[y0, x0]) * fx
        bottom = t[y1, x0] + (t[y1, x1] - t[y1, x0]) * fx
        out.append(top + (bottom - top) * fy)
    return torch.stack(out)


UV = torch.tensor([[0.0, 0.0], [0.3, 0.5], [0.9, 0.9], [0.999, 0.01], [-0.2, 1.5], [0.5, 0.25], [1.2, -0.7]])


def test_scalar_sample_matches_slangpys_definition(sg, m):
    t = torch.arange(12.0, device=TEST_DEVICE).reshape(3, 4) ** 1.5
    got = m.s(t, UV.to(TEST_DEVICE)).cpu()
    torch.testing.assert_close(got.double(), reference(t.cpu(), UV), rtol=1e-6, atol=1e-5)
    # By hand: uv (0.3, 0.5) on a 3x4 grid is p = (1.2, 1.5) between t[1][1], t[1][2], t[2][1], t[2][2].
    plain = torch.arange(12.0, device=TEST_DEVICE).reshape(3, 4)
    assert m.s(plain, sg.float2(0.3, 0.5)).item() == pytest.approx(0.5 * (5.2 + 9.2))
    assert m.si(plain, sg.float2(0.0, 0.0)).item() == 0.0
    assert m.s(plain, sg.float2(0.999, 0.999)).item() == pytest.approx(11.0)  # the last texel, clamped


def test_vector_sample_on_a_writable_tensor(sg, m):
    t = torch.randn(5, 6, 3, device=TEST_DEVICE)
    got = m.s3(t, UV.to(TEST_DEVICE)).cpu()
    assert got.shape == (len(UV), 3)
    torch.testing.assert_close(got.double(), reference(t.cpu(), UV), rtol=1e-5, atol=1e-5)


def test_sample_matches_grid_sample_inside_the_texel_grid(sg, m):
    # SlangPy's p = uv * (W, H) is grid_sample's align_corners=True coordinate in [0, W-1] x [0, H-1].
    h, w = 6, 9
    t = torch.randn(h, w, dtype=torch.float64)
    uv = torch.rand(40, 2, dtype=torch.float64) * torch.tensor([(w - 1) / w, (h - 1) / h], dtype=torch.float64)
    grid = torch.stack([uv[:, 0] * w / (w - 1), uv[:, 1] * h / (h - 1)], dim=-1) * 2 - 1
    ref = torch.nn.functional.grid_sample(t[None, None], grid[None, None], mode="bilinear", align_corners=True)[0, 0, 0]
    got = m.dsd(t.to(TEST_DEVICE), uv.float().to(TEST_DEVICE)).cpu()
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5)


def test_gradient_to_a_differentiable_tensor(sg, m):
    t = torch.randn(4, 5, dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    uv = UV.to(TEST_DEVICE)
    dy = torch.randn(len(UV), dtype=torch.float64, device=TEST_DEVICE)
    m.dsd(t, uv).backward(dy)
    ref_t = t.detach().cpu().clone().requires_grad_(True)
    reference(ref_t, UV).backward(dy.cpu())
    # The weights are float (uv is a float2, as in SlangPy): float rounding, not double.
    torch.testing.assert_close(t.grad.cpu(), ref_t.grad, rtol=1e-6, atol=1e-6)
    # float: the same weights, and matching grid_sample's gradient inside the grid.
    tf = t.detach().float().requires_grad_(True)
    m.ds(tf, uv).backward(dy.float())
    torch.testing.assert_close(tf.grad.cpu().double(), ref_t.grad, rtol=1e-5, atol=1e-5)
    # Finite differences in float64 (the gradient to the tensor is exact: sample is linear in it).
    assert torch.autograd.gradcheck(lambda x: m.dsd(x, uv), (t.detach().clone().requires_grad_(True),))


def test_gradient_to_uv_and_vector_elements(sg, m):
    t = torch.randn(4, 5, 2, device=TEST_DEVICE, requires_grad=True)
    uv = torch.tensor([[0.31, 0.47], [0.62, 0.13]], device=TEST_DEVICE, requires_grad=True)
    y = m.ds2(t, uv)
    dy = torch.randn_like(y)
    y.backward(dy)
    ref_t = t.detach().cpu().double().requires_grad_(True)
    ref_uv = uv.detach().cpu().double().requires_grad_(True)
    # Inside texels the reference is smooth in uv: its autograd gives d/duv (frac has slope 1).
    w, h = 5, 4
    px, py = ref_uv[:, 0] * w, ref_uv[:, 1] * h
    x0, y0 = px.detach().floor().long(), py.detach().floor().long()
    fx, fy = (px - x0)[:, None], (py - y0)[:, None]
    c = lambda yy, xx: ref_t[yy.clamp(0, h - 1), xx.clamp(0, w - 1)]
    top = c(y0, x0) + (c(y0, x0 + 1) - c(y0, x0)) * fx
    bottom = c(y0 + 1, x0) + (c(y0 + 1, x0 + 1) - c(y0 + 1, x0)) * fx
    (top + (bottom - top) * fy).backward(dy.cpu().double())
    torch.testing.assert_close(t.grad.cpu().double(), ref_t.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(uv.grad.cpu().double(), ref_uv.grad, rtol=1e-4, atol=1e-4)


def test_sample_errors_are_located(sg, device):
    with pytest.raises(sg.CompileError, match=r"sample\(float2 uv\) needs a 2-D tensor of float, half or double scalars or "
                                              r"vectors, not Tensor<float, 1>"):
        sg.Module.load_from_source(device, "bad", "import slangpy;\nfloat f(Tensor<float, 1> t) { return t.sample(float2(0, 0)); }")
    with pytest.raises(sg.CompileError, match=r"cannot sample write-only"):
        sg.Module.load_from_source(device, "bad", "import slangpy;\nfloat f(WTensor<float, 2> t) { return t.sample(float2(0, 0)); }")
    with pytest.raises(sg.CompileError, match=r"sample takes one argument \(float2 uv\), got 2"):
        sg.Module.load_from_source(device, "bad", "import slangpy;\nfloat f(Tensor<float, 2> t) { return t.sample(1.0, 2.0); }")


def test_uniform_parameters(sg, m, device):
    assert m.u(1.0, 2.0) == 3.0
    assert m.u(torch.ones(3, device=TEST_DEVICE), 2.0).cpu().tolist() == [3.0] * 3
    # On a global it declares a uniform global (tests/python/test_global_bindings.py); on a local
    # it is Slang's 31201.
    assert sg.Module.load_from_source(device, "ok", "uniform float g;\nfloat f() { return g; }").f.set(g=2.0)() == 2.0
    with pytest.raises(sg.CompileError, match=r"modifier 'uniform' is not allowed on a local variable"):
        sg.Module.load_from_source(device, "bad", "float f() { uniform float y = 1; return y; }")
