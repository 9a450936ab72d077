# tests/python/test_higher_order.py — higher-order derivatives through the call API, in float64:
# forward over forward (a function that calls fwd_diff, and fwd_diff(fwd_diff(f))), reverse over
# forward (bwd_diff(fwd_diff(f))) and forward over reverse, for scalars, vectors and a struct.
# Each second derivative is compared with finite differences of finite differences of the
# function itself (called through shadegrad) and with torch's analytic second derivative.
# Runs on the backend of SHADEGRAD_TEST_DEVICE.
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
double f(double x) { return x * x * x * x * sin(x); }
[Differentiable]
double df(double x) { return fwd_diff(f)(diffPair(x, 1.0)).d; }
double d2f_of_function(double x) { return fwd_diff(df)(diffPair(x, 1.0)).d; }
static const double one = 1.0;
static const double zero = 0.0;
double d2f_nested(double x) { return fwd_diff(fwd_diff(f))(diffPair(diffPair(x, one), diffPair(one, zero))).d.d; }
double d2f_reverse_over_forward(double x)
{
    var p = diffPair(diffPair(x, one), diffPair(zero, zero));
    bwd_diff(fwd_diff(f))(p, diffPair(zero, one));
    return p.d.p;
}
[Differentiable]
double df_by_reverse(double x)
{
    var p = diffPair(x);
    bwd_diff(f)(p, 1.0);
    return p.d;
}
double d2f_forward_over_reverse(double x) { return fwd_diff(df_by_reverse)(diffPair(x, 1.0)).d; }

[Differentiable]
double x4(double x) { return x * x * x * x; }
[Differentiable]
double d_x4(double x) { return fwd_diff(x4)(diffPair(x, 1.0)).d; }
double d2_x4(double x) { return fwd_diff(d_x4)(diffPair(x, 1.0)).d; }

[Differentiable]
double g(double3 v) { return exp(v.x * v.y) + v.z * v.z * v.x; }
// The Hessian of g times u, one directional second derivative at a time: u' H w.
double hvp(double3 v, double3 u, double3 w)
{
    return fwd_diff(fwd_diff(g))(diffPair(diffPair(v, u), diffPair(w, double3(0.0)))).d.d;
}

struct Body : IDifferentiable
{
    double m;
    double2 q;
};
[Differentiable]
double energy(Body b) { return b.m * dot(b.q, b.q) + sin(b.m * b.q.y); }
[Differentiable]
double denergy_dm(Body b)
{
    Body dm = { 1.0, double2(0.0) };
    return fwd_diff(energy)(diffPair(b, dm)).d;
}
double energy_at(double m, double2 q)
{
    Body b = { m, q };
    return energy(b);
}
// d/d(direction) of d(energy)/dm: one row of the Hessian.
double d2energy(double m, double2 q, double dmm, double2 dq)
{
    Body b = { m, q };
    Body d = { dmm, dq };
    return fwd_diff(denergy_dm)(diffPair(b, d)).d;
}
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "higher_order", SOURCE)


def t(values):
    return torch.tensor(values, dtype=torch.float64, device=TEST_DEVICE)


def f_torch(x):
    return x**4 * torch.sin(x)


def torch_second(fn, x):
    """d2 fn / dx2 elementwise, by torch autograd twice (the analytic form)."""
    x = x.detach().clone().requires_grad_(True)
    (d1,) = torch.autograd.grad(fn(x).sum(), x, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), x)
    return d2


def fd_second(fn, x, h=1e-4):
    """Central finite difference of central finite differences."""
    return (fn(x + h) - 2 * fn(x) + fn(x - h)) / (h * h)


@pytest.mark.parametrize("name", ["d2f_of_function", "d2f_nested", "d2f_reverse_over_forward", "d2f_forward_over_reverse"])
def test_scalar_second_derivative(m, name):
    x = t([-2.0, -0.5, 0.0, 0.3, 1.0, 4.0])
    got = getattr(m, name)(x)
    # Hand form: (x^4 sin x)'' = 12 x^2 sin x + 8 x^3 cos x - x^4 sin x; at 4: 192 sin 4 + 512 cos 4 - 256 sin 4
    hand = 12 * x**2 * torch.sin(x) + 8 * x**3 * torch.cos(x) - x**4 * torch.sin(x)
    torch.testing.assert_close(got, hand, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got, torch_second(f_torch, x), rtol=1e-12, atol=1e-12)
    fd = fd_second(lambda y: m.f(y), x)
    torch.testing.assert_close(got, fd, rtol=1e-5, atol=1e-5)


def test_x4_second_derivative_at_4_is_192(m):
    # The case, which gave a silent 0: (x^4)'' = 12 x^2, 192 at 4.
    x = t([4.0, -1.0, 0.5])
    torch.testing.assert_close(m.d2_x4(x), 12 * x**2, rtol=1e-12, atol=0)


def test_vector_hessian_entries(m):
    v = t([[0.5, -1.0, 2.0]])
    g = lambda y: torch.exp(y[..., 0] * y[..., 1]) + y[..., 2] ** 2 * y[..., 0]  # noqa: E731
    hess = torch.autograd.functional.hessian(lambda y: g(y).sum(), v[0])
    e = torch.eye(3, dtype=torch.float64, device=TEST_DEVICE)
    for i in range(3):
        for j in range(3):
            got = m.hvp(v, e[i].unsqueeze(0), e[j].unsqueeze(0))
            torch.testing.assert_close(got, hess[i, j].reshape(1), rtol=1e-12, atol=1e-12)
            # finite differences of finite differences of g itself
            h = 1e-4
            gi = lambda y: m.g(y)  # noqa: E731
            fd = (gi(v + h * e[i] + h * e[j]) - gi(v + h * e[i] - h * e[j]) - gi(v - h * e[i] + h * e[j])
                  + gi(v - h * e[i] - h * e[j])) / (4 * h * h)
            torch.testing.assert_close(got, fd, rtol=1e-5, atol=1e-5)


def test_struct_hessian_row(m):
    mass, q = 1.5, (0.5, -2.0)
    def energy(w):
        return w[0] * (w[1] ** 2 + w[2] ** 2) + torch.sin(w[0] * w[2])
    w0 = t([mass, *q])
    hess = torch.autograd.functional.hessian(energy, w0)
    e = torch.eye(3, dtype=torch.float64, device=TEST_DEVICE)
    for j in range(3):
        got = m.d2energy(t([mass]), t([q]), t([e[j][0].item()]), t([e[j][1:].tolist()]))
        torch.testing.assert_close(got, hess[0, j].reshape(1), rtol=1e-12, atol=1e-12)
        # finite differences of finite differences of energy itself, called through shadegrad
        h = 1e-4
        en = lambda w: m.energy_at(t([w[0].item()]), t([w[1:].tolist()]))  # noqa: E731
        de = lambda w: (en(w + h * e[0]) - en(w - h * e[0])) / (2 * h)  # noqa: E731
        fd = (de(w0 + h * e[j]) - de(w0 - h * e[j])) / (2 * h)
        torch.testing.assert_close(got, fd, rtol=1e-5, atol=1e-5)
