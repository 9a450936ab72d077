# tests/python/test_scalar_types.py — tensors of every scalar dtype bind to kernel parameters of the
# matching scalar type (and their vectors): float16 <-> half, int8 <-> int8_t, ... Results come back
# in the dtype of the function's result type; gradients of half parameters come back as float16
# and are checked against float64 torch and central differences, those of double ones with
# torch.autograd.gradcheck.
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
half add_h(half a, half b) { return a + b; }
half3 scale_h3(half3 v, half s) { return v * s; }
int8_t mad_i8(int8_t a, int8_t b) { return a * b + int8_t(1); }
int16_t mad_i16(int16_t a, int16_t b) { return a * b - int16_t(7); }
int mad_i32(int a, int b) { return a * b + 3; }
int64_t mad_i64(int64_t a, int64_t b) { return a * b + 1ll; }
int64_t2 swap_i64(int64_t2 v) { return v.yx; }
uint8_t add_u8(uint8_t a, uint8_t b) { return a + b; }
bool xor_b(bool a, bool b) { return a != b; }
uint popcount(int64_t a) { return countbits(a); }
float widen(half h) { return float(h) * 3.0; }

[Differentiable]
half cube_h(half x) { return x * x * x; }

[Differentiable]
half3 poly_h3(half3 v, half k) { return v * v * k + sin(v); }

[Differentiable]
double smooth_d(double x, double y) { return sin(x) * y + x * x * exp(-y); }

[Differentiable]
half read_h(no_diff int i, IDiffTensor<half, 1> t) { return t[i] * t[i]; }
"""

N = 37


def dev():
    return TEST_DEVICE


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "scalar_types", SOURCE)


def _randint(dtype, lo, hi, shape=(N,)):
    return torch.randint(lo, hi, shape, dtype=dtype, device=dev())


def test_float16_binds_to_half(m):
    torch.manual_seed(0)
    a = (torch.rand(N, device=dev()) * 100).half()
    b = (torch.rand(N, device=dev()) * 100).half()
    out = m.add_h(a, b)
    assert out.dtype == torch.float16 and out.shape == (N,)
    # torch adds float16 in float and rounds once, as half arithmetic does
    assert torch.equal(out, a + b)


def test_half_vectors_and_uniform_scalar(m):
    v = torch.linspace(-3, 3, N * 3, device=dev()).reshape(N, 3).half()
    out = m.scale_h3(v, 0.1)  # the Python float is rounded to half once
    assert out.dtype == torch.float16 and out.shape == (N, 3)
    s = torch.tensor(0.1, dtype=torch.float16)
    assert torch.equal(out, v * s.to(dev()))


def test_half_result_matches_float32_within_half_precision(m):
    h = torch.linspace(-60000, 60000, N, device=dev()).half()
    out = m.widen(h)
    assert out.dtype == torch.float32
    assert torch.equal(out, h.float() * 3.0)
    # x^3 computed in half (two roundings) stays within two half ulps of the float32 value
    x = torch.linspace(-30, 30, N, device=dev()).half()
    with torch.no_grad():
        in_half = m.cube_h(x).float()
    in_float = x.float() ** 3
    assert torch.allclose(in_half, in_float, rtol=2 * 2**-11, atol=2**-24)


@pytest.mark.parametrize(
    "fn,dtype,lo,hi,expr",
    [
        ("mad_i8", torch.int8, -128, 128, lambda a, b: a * b + 1),
        ("mad_i16", torch.int16, -32768, 32768, lambda a, b: a * b - 7),
        ("mad_i32", torch.int32, -(2**31), 2**31, lambda a, b: a * b + 3),
        ("mad_i64", torch.int64, -(2**62), 2**62, lambda a, b: a * b + 1),
        ("add_u8", torch.uint8, 0, 256, lambda a, b: a + b),
    ],
)
def test_integer_dtypes_wrap_like_torch(m, fn, dtype, lo, hi, expr):
    torch.manual_seed(1)
    a = _randint(dtype, lo, hi)
    b = _randint(dtype, lo, hi)
    out = getattr(m, fn)(a, b)
    assert out.dtype == dtype and out.shape == (N,)
    assert torch.equal(out, expr(a, b).to(dtype))


def test_int64_exact_beyond_double(m):
    a = torch.tensor([2**53, -(2**62), 2**62 - 1], dtype=torch.int64, device=dev())
    b = torch.tensor([1, 1, 1], dtype=torch.int64, device=dev())
    out = m.mad_i64(a, b)
    assert out.tolist() == [2**53 + 1, -(2**62) + 1, 2**62]


def test_int64_vectors(m):
    v = torch.tensor([[1, 2**40], [-(2**50), 7]], dtype=torch.int64, device=dev())
    out = m.swap_i64(v)
    assert out.dtype == torch.int64
    assert torch.equal(out, v.flip(1))


def test_bool_binds_to_bool(m):
    a = torch.tensor([True, False, True, False], device=dev())
    b = torch.tensor([True, True, False, False], device=dev())
    out = m.xor_b(a, b)
    assert out.dtype == torch.bool
    assert torch.equal(out, a ^ b)


def test_countbits_of_int64(m):
    a = torch.tensor([0, -1, 2**40 + 3, -(2**63)], dtype=torch.int64, device=dev())
    out = m.popcount(a)
    assert out.tolist() == [0, 64, 3, 1]


def test_wrong_dtype_is_rejected(m):
    with pytest.raises(Exception, match="float16|half"):
        m.add_h(torch.ones(3, device=dev()), torch.ones(3, device=dev()))
    with pytest.raises(Exception, match="int8"):
        m.mad_i8(torch.ones(3, dtype=torch.int16, device=dev()), torch.ones(3, dtype=torch.int16, device=dev()))


def _central_difference(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def test_half_gradient(m):
    x64 = torch.linspace(-2, 2, N, dtype=torch.float64, device=dev())
    x = x64.half().requires_grad_(True)
    out = m.cube_h(x)
    assert out.dtype == torch.float16
    out.sum().backward()
    assert x.grad.dtype == torch.float16
    xh = x.detach().double()
    fd = _central_difference(lambda t: t**3, xh)
    t = xh.clone().requires_grad_(True)
    (t**3).sum().backward()
    # d/dx x^3 = 3x^2, computed in half: within a few half ulps of the float64 values
    assert torch.allclose(x.grad.double(), fd, rtol=4 * 2**-11, atol=1e-3)
    assert torch.allclose(x.grad.double(), t.grad, rtol=4 * 2**-11, atol=1e-3)


def test_half_vector_gradient_with_scalar_parameter(m):
    torch.manual_seed(2)
    v = (torch.rand(N, 3, device=dev()) * 2 - 1).half().requires_grad_(True)
    k = torch.full((N,), 1.5, dtype=torch.float16, device=dev()).requires_grad_(True)
    out = m.poly_h3(v, k)
    assert out.dtype == torch.float16 and out.shape == (N, 3)
    out.sum().backward()
    assert v.grad.dtype == torch.float16 and k.grad.dtype == torch.float16
    v64 = v.detach().double().requires_grad_(True)
    k64 = k.detach().double().requires_grad_(True)
    (v64 * v64 * k64[:, None] + torch.sin(v64)).sum().backward()
    assert torch.allclose(v.grad.double(), v64.grad, rtol=8 * 2**-11, atol=2e-3)
    assert torch.allclose(k.grad.double(), k64.grad, rtol=8 * 2**-11, atol=2e-3)


def test_half_tensor_gradient(m, sg):
    t = torch.linspace(-1, 1, N, device=dev()).half().requires_grad_(True)
    out = m.read_h(sg.grid((N,)), t)
    assert out.dtype == torch.float16
    out.sum().backward()
    assert t.grad.dtype == torch.float16
    assert torch.allclose(t.grad.double(), 2 * t.detach().double(), rtol=2**-10, atol=0)


def test_double_gradient(m):
    torch.manual_seed(3)
    x = torch.rand(N, dtype=torch.float64, device=dev()).requires_grad_(True)
    y = torch.rand(N, dtype=torch.float64, device=dev()).requires_grad_(True)
    out = m.smooth_d(x, y)
    assert out.dtype == torch.float64
    out.sum().backward()
    xr = x.detach().clone().requires_grad_(True)
    yr = y.detach().clone().requires_grad_(True)
    (torch.sin(xr) * yr + xr * xr * torch.exp(-yr)).sum().backward()
    assert torch.allclose(x.grad, xr.grad, rtol=1e-12, atol=1e-14)
    assert torch.allclose(y.grad, yr.grad, rtol=1e-12, atol=1e-14)
    xd, yd = x.detach(), y.detach()
    fd_x = _central_difference(lambda t: torch.sin(t) * yd + t * t * torch.exp(-yd), xd)
    assert torch.allclose(x.grad, fd_x, rtol=1e-7, atol=1e-9)
    assert torch.autograd.gradcheck(lambda a, b: m.smooth_d(a, b), (x.detach()[:5].clone().requires_grad_(True),
                                                                   y.detach()[:5].clone().requires_grad_(True)))


@pytest.mark.parametrize("bridge", ["native", "fallback"])
def test_half_and_int64_through_each_bridge(bridge):
    from conftest import run_python

    proc = run_python(
        f"""
        import torch, shadegrad as sg
        dev = sg.create_torch_device(type=sg.DeviceType.{TEST_DEVICE})
        m = sg.Module.load_from_source(dev, "b", {SOURCE!r})
        x = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float16, device="{TEST_DEVICE}", requires_grad=True)
        y = m.cube_h(x)
        assert y.dtype == torch.float16 and torch.equal(y, x.detach() ** 3), y
        y.sum().backward()
        assert x.grad.dtype == torch.float16 and torch.equal(x.grad, 3 * x.detach() ** 2), x.grad
        a = torch.tensor([2**62, -5], dtype=torch.int64, device="{TEST_DEVICE}")
        r = m.mad_i64(a, torch.ones_like(a))
        assert r.tolist() == [2**62 + 1, -4], r
        print(sg.torch_bridge_status()["active"])
        """,
        bridge=bridge,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == bridge
