# tests/python/test_view_function_derivatives.py — derivatives of SlangPy's calls of functions
# that take views (docs/calling.md, "Functions that take views"): `.bwds` with the result's
# gradient, torch autograd through a result and through per-element tensors that require grad
# beside DiffTensorViews, broadcast per-element arguments and their gradients. Values on
# SHADEGRAD_TEST_DEVICE; gradients against torch and float64 finite differences.
import pytest
import torch

import shadegrad as sg
from conftest import TEST_DEVICE
from finite_differences import central

SOURCE = """
[Differentiable]
float read_square(DiffTensorView<float> x, int i) { return x[i] * x[i]; }

[Differentiable]
double cube_at(DiffTensorView<double> x, no_diff int i, double s) { double v = x.load(i); return s * v * v * v; }

[Differentiable]
float3 spread(DiffTensorView<double> x, int i)
{
    float v = float(x[i]);
    return float3(v, 2.0 * v, v * v);
}

// SlangPy's ppisp form: parameters in DiffTensorViews, a per-pixel colour and coordinate.
[Differentiable]
double3 shade(DiffTensorView<double> gain, double3 rgb, no_diff int cam, double bias)
{
    double3 g = double3(gain[cam, 0], gain[cam, 1], gain[cam, 2]);
    return rgb * g * g + sin(rgb.x) * bias;
}

[Differentiable]
double total_sq(DiffTensorView<double> x)
{
    double s = 0.0;
    [MaxIters(64)]
    for (uint k = 0; k < x.size(0); ++k) s += x[k] * x[k];
    return s;
}

[Differentiable]
double mix(double a, double b, DiffTensorView<double> w) { return a * w[0] + b * b * w[1]; }

[Differentiable]
double weigh(int2 c, double v, DiffTensorView<double> w) { return v * w[c.y, c.x]; }

// a result that carries no gradient, and one written beside a view
[Differentiable]
int count_positive(DiffTensorView<float> x)
{
    int n = 0;
    [MaxIters(64)]
    for (uint k = 0; k < x.size(0); ++k) if (x[k] > 0.0) n += 1;
    return n;
}

[Differentiable]
double square_and_store(DiffTensorView<double> x, DiffTensorView<double> y, int i)
{
    double v = x[i];
    y.store(i, 3.0 * v);
    return v * v;
}

float plain_read(TensorView<float> x, int i) { return x[i]; }
"""


@pytest.fixture(scope="module")
def m(device):
    return sg.Module.load_from_source(device, "view_function_derivatives", SOURCE)


def t(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, device=TEST_DEVICE)


def ints(values):
    return torch.tensor(values, dtype=torch.int32, device=TEST_DEVICE)


# ---- .bwds with the result's gradient

def test_bwds_of_a_scalar_result(m):
    x = t([1.0, -2.0, 3.0], torch.float32)
    idx = ints([2, 0, 2, 1])  # element 2 read twice: its gradients add
    dres = t([1.0, 2.0, 3.0, 4.0], torch.float32)
    gx = torch.zeros_like(x)
    m.read_square.bwds(sg.diff_pair(x, gx), idx, dres)
    assert gx.cpu().tolist() == [2 * 1.0 * 2.0, 2 * -2.0 * 4.0, 2 * 3.0 * (1.0 + 3.0)]
    assert dres.cpu().tolist() == [1.0, 2.0, 3.0, 4.0]  # the caller's gradient is not consumed
    gx2 = torch.zeros_like(x)
    m.read_square.bwds(sg.diff_pair(x, gx2), idx, _result_grad=dres)
    assert torch.equal(gx, gx2)


def test_bwds_of_a_single_call_against_finite_differences(m):
    x = t([0.3, -0.7, 1.1])
    gx = torch.zeros_like(x)
    m.cube_at.bwds(sg.diff_pair(x, gx), 1, 2.0, 0.5)
    assert abs(float(gx[1]) - 0.5 * 2.0 * 3 * 0.49) < 1e-12 and float(gx[0]) == 0.0

    def f(v):
        xs = x.clone()
        xs[1] = v
        return float(m.cube_at(xs, 1, 2.0))
    assert abs(central(f, float(x[1])) * 0.5 - float(gx[1])) < 1e-7


def test_bwds_without_the_result_gradient_is_an_error(m):
    x = t([1.0], torch.float32)
    with pytest.raises(TypeError, match="read_square.bwds\\(\\): the gradient of the result is missing"):
        m.read_square.bwds(sg.diff_pair(x, torch.zeros_like(x)), 0)


def test_a_result_gradient_of_the_wrong_shape_is_an_error(m):
    x = t([1.0, 2.0], torch.float32)
    with pytest.raises(ValueError, match="read_square.bwds\\(\\): _result takes a tensor of shape \\(3,\\), got \\(2,\\)"):
        m.read_square.bwds(sg.diff_pair(x, torch.zeros_like(x)), ints([0, 1, 1]), t([1.0, 1.0], torch.float32))
    with pytest.raises(TypeError, match="read_square.bwds\\(\\): _result takes a float32 tensor, got float64"):
        m.read_square.bwds(sg.diff_pair(x, torch.zeros_like(x)), ints([0, 1]), t([1.0, 1.0]))


# ---- torch autograd through a result

def test_autograd_through_a_scalar_result(m):
    x = t([0.5, -1.5, 2.0]).requires_grad_()
    idx = ints([2, 2, 0, 1, 2])
    x32 = x.float().detach().requires_grad_()
    y = m.read_square(x32, idx)
    assert y.grad_fn is not None and y.shape == (5,)
    w = torch.arange(1.0, 6.0, device=TEST_DEVICE)
    (y * w).sum().backward()
    xr = x.detach().float().clone().requires_grad_()
    (xr[idx.long()] ** 2 * w).sum().backward()
    torch.testing.assert_close(x32.grad, xr.grad)


def test_autograd_through_a_vector_result(m):
    x = t([0.5, -1.5, 2.0]).requires_grad_()
    out = m.spread(x, sg.grid((3,)))
    assert out.shape == (3, 3) and out.dtype == torch.float32
    gout = torch.arange(9.0, device=TEST_DEVICE).reshape(3, 3)
    (out * gout).sum().backward()
    xr = x.detach().clone().requires_grad_()
    v = xr.float()
    (torch.stack([v, 2 * v, v * v], -1) * gout).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad)


def test_autograd_through_a_single_call(m):
    x = t([0.5, -1.5, 2.0, 0.25]).requires_grad_()
    s = m.total_sq(x)
    assert s.shape == () and abs(float(s.detach()) - float((x.detach() ** 2).sum())) < 1e-12
    (3.0 * s).backward()
    torch.testing.assert_close(x.grad, 6.0 * x.detach())


def test_a_result_without_a_gradient_under_autograd(m):
    x = t([1.0, -1.0, 2.0], torch.float32).requires_grad_()
    n = m.count_positive(x)
    assert int(n) == 2 and n.grad_fn is None and not n.requires_grad


def test_a_result_beside_a_written_view(m):
    x = t([0.5, -1.5, 2.0]).requires_grad_()
    y = torch.zeros(3, dtype=torch.float64, device=TEST_DEVICE)
    r = m.square_and_store(x, y, sg.grid((3,)))
    assert y.grad_fn is not None and r.grad_fn is not None
    torch.testing.assert_close(y, 3.0 * x.detach())
    (r * t([1.0, 2.0, 3.0])).sum().add((y * t([5.0, 7.0, 11.0])).sum()).backward()
    torch.testing.assert_close(x.grad, 2 * x.detach() * t([1.0, 2.0, 3.0]) + 3.0 * t([5.0, 7.0, 11.0]))


def test_result_into_a_given_tensor(m):
    x = t([1.0, 2.0, 3.0], torch.float32)
    out = torch.full((2,), -1.0, device=TEST_DEVICE)
    assert m.read_square(x, ints([2, 0]), _result=out) is out
    assert out.cpu().tolist() == [9.0, 1.0]


# ---- per-element tensors that require grad beside views

def shade_torch(gain, rgb, cam, bias):
    g = gain[cam.long()]
    return rgb * g * g + torch.sin(rgb[..., 0:1]) * bias


def test_per_element_tensor_and_view_gradients_against_torch(m):
    gen = torch.Generator().manual_seed(11)
    gain = (torch.rand(3, 3, generator=gen, dtype=torch.float64) + 0.5).to(TEST_DEVICE).requires_grad_()
    rgb = torch.rand(7, 3, generator=gen, dtype=torch.float64).to(TEST_DEVICE).requires_grad_()
    cam = torch.randint(0, 3, (7,), generator=gen, dtype=torch.int32).to(TEST_DEVICE)
    out = m.shade(gain, rgb, cam, 0.25)
    assert out.shape == (7, 3) and out.grad_fn is not None
    gout = torch.rand(7, 3, generator=gen, dtype=torch.float64).to(TEST_DEVICE)
    (out * gout).sum().backward()
    gr, rr = gain.detach().clone().requires_grad_(), rgb.detach().clone().requires_grad_()
    expect = shade_torch(gr, rr, cam, 0.25)
    torch.testing.assert_close(out.detach(), expect.detach(), rtol=1e-12, atol=1e-12)
    (expect * gout).sum().backward()
    torch.testing.assert_close(gain.grad, gr.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(rgb.grad, rr.grad, rtol=1e-12, atol=1e-12)


def test_per_element_gradient_against_finite_differences(m):
    gain = t([[1.0, 2.0, 0.5], [0.7, 1.3, 0.9]])
    rgb = t([[0.2, 0.4, 0.6], [0.9, 0.1, 0.3]]).requires_grad_()
    cam = ints([1, 0])
    gout = t([[1.0, -2.0, 0.5], [0.25, 1.5, -1.0]])
    (m.shade(gain, rgb, cam, 0.75) * gout).sum().backward()
    for i in range(2):
        for c in range(3):
            def f(v):
                r = rgb.detach().clone()
                r[i, c] = v
                with torch.no_grad():
                    return float((m.shade(gain, r, cam, 0.75) * gout).sum())
            assert abs(central(f, float(rgb.detach()[i, c])) - float(rgb.grad[i, c])) < 1e-7


def test_per_element_gradients_through_bwds(m):
    gain = t([[1.0, 2.0, 0.5]])
    rgb = t([[0.2, 0.4, 0.6], [0.9, 0.1, 0.3]])
    cam = ints([0, 0])
    ggain, grgb = torch.zeros_like(gain), torch.zeros_like(rgb)
    gout = t([[1.0, 1.0, 1.0], [2.0, 0.0, 1.0]])
    m.shade.bwds(sg.diff_pair(gain, ggain), sg.diff_pair(rgb, grgb), cam, 0.5, gout)
    gr, rr = gain.clone().requires_grad_(), rgb.clone().requires_grad_()
    (shade_torch(gr, rr, cam, 0.5) * gout).sum().backward()
    torch.testing.assert_close(ggain, gr.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grgb, rr.grad, rtol=1e-12, atol=1e-12)


def test_the_same_tensor_for_two_parameters(m):
    w = t([2.0, 3.0])
    a = t([1.0, 2.0, 3.0]).requires_grad_()
    (m.mix(a, a, w) * t([1.0, 1.0, 2.0])).sum().backward()
    torch.testing.assert_close(a.grad, (2.0 + 2 * 3.0 * a.detach()) * t([1.0, 1.0, 2.0]))


# ---- broadcasting

def test_broadcast_per_element_tensors_and_their_gradients(m):
    a = t([[1.0], [2.0], [3.0]]).requires_grad_()   # (3, 1)
    b = t([0.5, -1.0, 2.0, 4.0]).requires_grad_()   # (4,): the call is (3, 4)
    w = t([2.0, 3.0]).requires_grad_()
    out = m.mix(a, b, w)
    assert out.shape == (3, 4)
    torch.testing.assert_close(out.detach(), (a * 2.0 + b * b * 3.0).detach())
    gout = torch.arange(12.0, dtype=torch.float64, device=TEST_DEVICE).reshape(3, 4)
    (out * gout).sum().backward()
    ar, br, wr = (v.detach().clone().requires_grad_() for v in (a, b, w))
    ((ar * wr[0] + br * br * wr[1]) * gout).sum().backward()
    for got, want in ((a.grad, ar.grad), (b.grad, br.grad), (w.grad, wr.grad)):
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_a_grid_broadcasts_against_a_tensor(m):
    w = t([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    out = m.weigh(sg.grid((2, 3)), t([1.0, -1.0, 0.5]), w)   # grid (2, 3), v (3,): the call is (2, 3)
    torch.testing.assert_close(out, w * t([1.0, -1.0, 0.5]))
    out = m.weigh(sg.grid((1, 3)), t([[1.0], [2.0]]), w)       # grid row 0 for both rows of v
    torch.testing.assert_close(out, torch.stack([w[0], 2.0 * w[0]]))


def test_shapes_that_do_not_broadcast_are_an_error(m):
    with pytest.raises(ValueError, match="mix\\(\\): parameter 'b' \\(double\\): its call shape \\(4,\\) does not "
                                         "broadcast with \\(3,\\) of parameter 'a' \\(dimension 0 of the call: 4 "
                                         "against 3\\)"):
        m.mix(t([1.0, 2.0, 3.0]), t([1.0, 2.0, 3.0, 4.0]), t([1.0, 1.0]))


def test_a_plain_function_ignores_requires_grad(m):
    x = t([1.0, 2.0], torch.float32)
    got = m.plain_read(x, ints([1, 0]))
    assert got.cpu().tolist() == [2.0, 1.0]


# ---- fn.map(): a per-element tensor's dims to named call dims

def test_map_places_tensor_dims_and_their_gradients(m):
    a = t([1.0, 2.0, 3.0]).requires_grad_()          # call dim 1
    b = t([0.5, -1.0, 2.0, 4.0]).requires_grad_()    # call dim 0: the call is (4, 3)
    w = t([2.0, 3.0])
    out = m.mix.map(a=(1,), b=(0,))(a, b, w)
    assert out.shape == (4, 3)
    want_fn = lambda a_, b_: a_[None, :] * 2.0 + (b_ * b_)[:, None] * 3.0
    torch.testing.assert_close(out.detach(), want_fn(a.detach(), b.detach()), rtol=1e-12, atol=1e-12)
    g = torch.arange(12.0, dtype=torch.float64, device=TEST_DEVICE).reshape(4, 3)
    (out * g).sum().backward()
    ar, br = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    (want_fn(ar, br) * g).sum().backward()
    torch.testing.assert_close(a.grad, ar.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(b.grad, br.grad, rtol=1e-12, atol=1e-12)
    # a transpose: the tensor's dim 0 to call dim 1
    x = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    got = m.mix.map(a=(1, 0))(x, 0.0, w)
    torch.testing.assert_close(got, x.t() * 2.0)


def test_map_errors(m):
    w = t([2.0, 3.0])
    with pytest.raises(TypeError, match="mix\\(\\): parameter 'w' \\(DiffTensorView<double>\\): map\\(\\) applies to "
                                        "a tensor read per element beside views, not to a view"):
        m.mix.map(w=(0,))(t([1.0]), 1.0, w)
    with pytest.raises(ValueError, match="mix\\(\\): parameter 'a' \\(double\\): map\\(\\) names 2 dimensions but "
                                         "the argument has 1 call dimension"):
        m.mix.map(a=(0, 1))(t([1.0]), 1.0, w)
    with pytest.raises(TypeError, match="mix\\(\\): parameter 'w' \\(DiffTensorView<double>\\): map\\(\\) to a type "
                                        "applies to a tensor read per element beside views"):
        m.mix.map(w="float")(t([1.0]), 1.0, w)
    with pytest.raises(TypeError, match="mix\\(\\): parameter 'a' \\(double\\): map\\(\\) reads its tensor as "
                                        "float3, which converts to double only as a scalar or vector of the same size"):
        m.mix.map(a="float3")(t([[1.0, 2.0, 3.0]]), 1.0, w)


def test_map_to_a_type_reads_and_converts_with_gradients(m):
    # a float32 tensor read into a double parameter: its gradient comes back as float32
    a = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE).requires_grad_()
    w = t([2.0, 3.0])
    out = m.mix.map(a="float")(a, 0.5, w)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, a.detach().double() * 2.0 + 0.25 * 3.0)
    out.sum().backward()
    assert a.grad.dtype == torch.float32 and a.grad.cpu().tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError, match="mix\\(\\): parameter 'a' \\(double\\) takes a float64 tensor, got float32"):
        m.mix(a.detach(), 0.5, w)


# ---- half per-element values: float32 gradients, handed to torch as float16

HALF = """
[Differentiable]
half twice_sq(half v, DiffTensorView<half> w) { return v * v * w[0]; }
"""


def test_half_per_element_gradients(device):
    mh = sg.Module.load_from_source(device, "view_function_half", HALF)
    v = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float16, device=TEST_DEVICE).requires_grad_()
    w = torch.tensor([3.0], dtype=torch.float16, device=TEST_DEVICE).requires_grad_()
    out = mh.twice_sq(v, w)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.detach().float(), (v.detach().float() ** 2) * 3.0)
    out.float().sum().backward()
    assert v.grad.dtype == torch.float16 and w.grad.dtype == torch.float16
    torch.testing.assert_close(v.grad.float(), 2 * v.detach().float() * 3.0)
    torch.testing.assert_close(w.grad.float(), (v.detach().float() ** 2).sum().reshape(1))
