# tests/python/test_view_function_forms.py — more forms of SlangPy's calls of functions that take
# views (docs/calling.md, "Functions that take views"): matrix results (values and gradients),
# out and inout parameters bound to tensors (values and gradients), fn.set() of parameter values, the modifiers that are refused, and Interlocked operations on
# components of a view's vector elements from many calls at once. On SHADEGRAD_TEST_DEVICE.
import pytest
import torch

import shadegrad as sg
from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
double2x3 outer(DiffTensorView<double> a, double2 u, no_diff int i)
{
    double v = a[i];
    return double2x3(u.x * v, u.x * v * v, 1.0, u.y, u.y * v, u.x * u.y);
}

int2x2 counts(TensorView<int> x, int i) { return int2x2(x[i], 0, 1, x[i] * 2); }

float scaled(TensorView<float> x, int i, float k) { return x[i] * k; }

uniform float g_gain;
float gained(TensorView<float> x, int i) { return x[i]; }

void split(TensorView<float> t, int i, out float lo, out float2 hi) { lo = t[i] - 1.0; hi = float2(t[i], t[i] + 1.0); }

[Differentiable]
void sq_out(DiffTensorView<double> x, no_diff int i, out double y, inout double acc)
{
    double v = x[i];
    y = v * v;
    acc = acc * v + sin(acc);
}

void tally(int at, TensorView<int2> hits, TensorView<float2> sums)
{
    InterlockedAdd(hits[at].y, 1);
    InterlockedMax(hits[at].x, at * 10);
    float2 before;
    sums.InterlockedAdd(uint(at), float2(0.5, 0.25), before);
}
"""


@pytest.fixture(scope="module")
def m(device):
    return sg.Module.load_from_source(device, "view_function_forms", SOURCE)


def t(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, device=TEST_DEVICE)


def outer_torch(a, u, i):
    v = a[i.long()]
    ux, uy = u[..., 0], u[..., 1]
    one = torch.ones_like(v)
    return torch.stack([torch.stack([ux * v, ux * v * v, one], -1), torch.stack([uy, uy * v, ux * uy], -1)], -2)


def test_a_matrix_result_and_its_gradients(m):
    a = t([0.5, -1.0, 2.0]).requires_grad_()
    u = t([[1.0, 2.0], [-0.5, 0.25], [3.0, 1.0], [0.0, 4.0]]).requires_grad_()
    i = torch.tensor([2, 0, 1, 2], dtype=torch.int32, device=TEST_DEVICE)
    out = m.outer(a, u, i)
    assert out.shape == (4, 2, 3) and out.dtype == torch.float64 and out.grad_fn is not None
    ar, ur = a.detach().clone().requires_grad_(), u.detach().clone().requires_grad_()
    want = outer_torch(ar, ur, i)
    torch.testing.assert_close(out.detach(), want.detach(), rtol=1e-12, atol=1e-12)
    g = torch.arange(24.0, dtype=torch.float64, device=TEST_DEVICE).reshape(4, 2, 3) / 7
    (out * g).sum().backward()
    (want * g).sum().backward()
    torch.testing.assert_close(a.grad, ar.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(u.grad, ur.grad, rtol=1e-12, atol=1e-12)


def test_a_matrix_result_of_a_single_call_and_bwds(m):
    a = t([0.5, -1.0])
    got = m.outer(a, sg.double2(2.0, 3.0), 1)
    assert got.shape == (2, 3)
    assert got.cpu().tolist() == [[-2.0, 2.0, 1.0], [3.0, -3.0, 6.0]]
    ga = torch.zeros_like(a)
    m.outer.bwds(sg.diff_pair(a, ga), sg.double2(2.0, 3.0), 1, t([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    # d/dv (u.x v + u.y v) = u.x + u.y
    assert ga.cpu().tolist() == [0.0, 5.0]


def test_an_integer_matrix_result(m):
    x = torch.tensor([3, 5], dtype=torch.int32, device=TEST_DEVICE)
    got = m.counts(x, sg.grid((2,)))
    assert got.shape == (2, 2, 2) and got.dtype == torch.int32
    assert got.cpu().tolist() == [[[3, 0], [1, 6]], [[5, 0], [1, 10]]]


def test_set_gives_a_parameter_its_value(m):
    x = t([1.0, 2.0, 4.0], torch.float32)
    f = m.scaled.set(k=0.5)
    assert f(x, sg.grid((3,))).cpu().tolist() == [0.5, 1.0, 2.0]
    assert f(x, sg.grid((3,)), k=2.0).cpu().tolist() == [2.0, 4.0, 8.0]  # the call's own wins


def test_set_of_a_global_is_refused(m):
    with pytest.raises(TypeError, match="gained\\(\\): set\\(\\) gives the module's global 'g_gain' a value"):
        m.gained.set(g_gain=2.0)(t([1.0], torch.float32), 0)


@pytest.mark.parametrize("modifier,name", [
    (lambda f: f.map((0,), (0,)), "map\\(\\)"),
    (lambda f: f.call_group_shape((2,)), "call_group_shape\\(\\)"),
])
def test_kernel_modifiers_are_refused(m, modifier, name):
    with pytest.raises(TypeError, match="scaled\\(\\) takes a TensorView: " + name + " is not supported for a function "
                                        "that takes views yet"):
        modifier(m.scaled)(t([1.0], torch.float32), sg.grid((1,)), 1.0)


def test_interlocked_on_components_of_view_elements_under_contention(m):
    gen = torch.Generator().manual_seed(3)
    at = torch.randint(0, 5, (4000,), generator=gen, dtype=torch.int32)
    hits = torch.zeros(5, 2, dtype=torch.int32, device=TEST_DEVICE)
    sums = torch.zeros(5, 2, device=TEST_DEVICE)
    m.tally(at.to(TEST_DEVICE), hits, sums)
    n = torch.bincount(at.long(), minlength=5)
    present = n > 0
    assert hits[:, 1].cpu().tolist() == n.tolist()
    assert hits[:, 0].cpu().tolist() == torch.where(present, torch.arange(5) * 10, 0).tolist()
    assert sums.cpu().tolist() == torch.stack([0.5 * n, 0.25 * n], -1).tolist()


# ---- out and inout parameters

def test_out_parameters_are_written_per_call(m):
    x = t([1.0, 2.0, 4.0], torch.float32)
    lo, hi = torch.zeros(2, device=TEST_DEVICE), torch.zeros(2, 2, device=TEST_DEVICE)
    assert m.split(x, torch.tensor([2, 0], dtype=torch.int32, device=TEST_DEVICE), lo, hi) is None
    assert lo.cpu().tolist() == [3.0, 0.0] and hi.cpu().tolist() == [[4.0, 5.0], [1.0, 2.0]]


def sq_out_torch(x, i, acc):
    v = x[i.long()]
    return v * v, acc * v + torch.sin(acc)


def test_out_and_inout_gradients_in_autograd(m):
    x = t([0.5, -1.5, 2.0]).requires_grad_()
    i = torch.tensor([2, 0, 1, 2], dtype=torch.int32, device=TEST_DEVICE)
    a0 = t([0.3, -0.2, 1.1, 0.7]).requires_grad_()
    acc = a0 * 1.0  # not a leaf: written in place
    y = torch.zeros(4, dtype=torch.float64, device=TEST_DEVICE)
    m.sq_out(x, i, y, acc)
    assert y.grad_fn is not None and acc.grad_fn is not None
    xr, ar = x.detach().clone().requires_grad_(), a0.detach().clone().requires_grad_()
    yr, accr = sq_out_torch(xr, i, ar)
    torch.testing.assert_close(y.detach(), yr.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(acc.detach(), accr.detach(), rtol=1e-12, atol=1e-12)
    gy, ga = t([1.0, 2.0, -1.0, 0.5]), t([0.25, -3.0, 1.0, 2.0])
    ((y * gy).sum() + (acc * ga).sum()).backward()
    ((yr * gy).sum() + (accr * ga).sum()).backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(a0.grad, ar.grad, rtol=1e-12, atol=1e-12)


def test_out_gradients_through_bwds(m):
    x = t([0.5, -1.5, 2.0])
    gx = torch.zeros_like(x)
    i = torch.tensor([2, 1], dtype=torch.int32, device=TEST_DEVICE)
    acc, gacc = t([0.3, 0.9]), t([1.0, -2.0])
    m.sq_out.bwds(sg.diff_pair(x, gx), i, sg.diff_pair(torch.zeros(2, dtype=torch.float64, device=TEST_DEVICE),
                                                      t([1.0, 1.0])), sg.diff_pair(acc, gacc))
    # d/dv (v^2 + acc v + sin(acc)) per call: 2v + acc * gacc; acc's gradient: (v + cos(acc)) * gacc
    want = torch.zeros(3, dtype=torch.float64)
    want[2] += 2 * 2.0 + 0.3 * 1.0
    want[1] += 2 * -1.5 + 0.9 * -2.0
    torch.testing.assert_close(gx.cpu(), want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gacc.cpu(), torch.tensor([(2.0 + torch.cos(torch.tensor(0.3, dtype=torch.float64))) * 1.0,
                                                         (-1.5 + torch.cos(torch.tensor(0.9, dtype=torch.float64))) * -2.0]),
                               rtol=1e-12, atol=1e-12)


def test_out_parameter_errors(m):
    x = t([1.0, 2.0], torch.float32)
    with pytest.raises(TypeError, match="split\\(\\): parameter 'lo' \\(float\\) is out and is given float: beside "
                                        "views it takes a tensor"):
        m.split(x, 0, 1.5, torch.zeros(2, device=TEST_DEVICE))
    with pytest.raises(ValueError, match="split\\(\\): parameter 'lo' \\(float\\) is out: its tensor's call shape "
                                         "\\(1,\\) is not the call's \\(3,\\)"):
        m.split(x, torch.tensor([0, 1, 1], dtype=torch.int32, device=TEST_DEVICE), torch.zeros(1, device=TEST_DEVICE),
                torch.zeros(3, 2, device=TEST_DEVICE))
