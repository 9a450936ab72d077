# tests/python/test_inout_autograd.py — autograd through tensors a call writes: inout parameters
# (the old value's gradient through the inout's derivative, the written tensor's history rebased
# onto the call like a torch in-place op) and write-only parameters (their tensor becomes an
# output of the call; a leaf that requires grad is refused, as torch refuses in-place writes). Gradients against torch float64
# references and finite differences (gradcheck), on both torch bridges.
import pytest
import torch

from conftest import TEST_DEVICE, run_python

SOURCE = """
import slangpy;
[Differentiable]
void mac(inout float acc, float x, float w) { acc = acc * x + w; }
[Differentiable]
void macd(inout double acc, double x) { acc = acc * acc * x + sin(acc); }
[Differentiable]
void reflect3(inout float3 v, float3 n) { v = v - 2.0f * dot(v, n) * n; }
[Differentiable]
float bump(inout int n, float x) { n = n + 1; return x * float(n); }
[Differentiable]
void polar(float r, float th, out float2 p) { p = r * float2(cos(th), sin(th)); }
[Differentiable]
void wsq(int i, IDiffTensor<float, 1> x, IWDiffTensor<float, 1> y) { y[i] = x[i] * x[i]; }
[Differentiable]
void wsq2(int i, DiffTensor<float, 1> x, WDiffTensor<float, 1> y) { y[i] = x[i] * x[i]; }
[Differentiable]
void rwsq(int i, DiffTensor<float, 1> x, RWDiffTensor<float, 1> y) { y[i] = y[i] + x[i] * x[i]; }
[Differentiable]
void fill3(float x, out float v[3]) { v[0] = x; v[1] = x * x; v[2] = 3 * x; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "inout_ad", SOURCE)


def t(values, **kw):
    return torch.tensor(values, device=TEST_DEVICE, **kw)


def test_inout_gradients_reach_the_old_value_and_the_other_inputs(m):
    a = t([2.0, -1.0, 0.5], requires_grad=True)
    x = t([3.0, 0.5, -2.0], requires_grad=True)
    w = t([0.25, 1.0, 2.0], requires_grad=True)
    acc = a * 1.0  # not a leaf: it can be written in place
    version = acc._version
    assert m.mac(acc, x, w) is None
    assert acc._version > version and acc.grad_fn is not None
    (acc * acc).sum().backward()
    # Against torch in float64.
    ad, xd, wd = (v.detach().double().requires_grad_(True) for v in (a, x, w))
    ref = ad * xd + wd
    torch.testing.assert_close(acc.detach().double(), ref.detach())
    (ref * ref).sum().backward()
    for got, want in ((a, ad), (x, xd), (w, wd)):
        torch.testing.assert_close(got.grad.double(), want.grad, rtol=1e-5, atol=1e-6)


def test_inout_tensor_without_grad_still_carries_the_others(m):
    acc = t([2.0, 4.0])
    x = t([3.0, 0.5], requires_grad=True)
    m.mac(acc, x, 0.5)
    assert acc.tolist() == [6.5, 2.5] and acc.grad_fn is not None
    (acc * acc).sum().backward()
    # d/dx (old * x + w)^2 = 2 * new * old: the backward reads the value before the write.
    assert x.grad.tolist() == [2 * 6.5 * 2.0, 2 * 2.5 * 4.0]


def test_inout_vector_against_torch(m):
    torch.manual_seed(1)
    v0 = torch.randn(5, 3, device=TEST_DEVICE, requires_grad=True)
    n = torch.nn.functional.normalize(torch.randn(5, 3, device=TEST_DEVICE), dim=1).requires_grad_(True)
    v = v0.clone()
    m.reflect3(v, n)
    g = torch.randn(5, 3, device=TEST_DEVICE)
    (v * g).sum().backward()
    vd, nd = v0.detach().double().requires_grad_(True), n.detach().double().requires_grad_(True)
    ref = vd - 2 * (vd * nd).sum(-1, keepdim=True) * nd
    torch.testing.assert_close(v.detach().double(), ref.detach(), rtol=1e-5, atol=1e-6)
    (ref * g.double()).sum().backward()
    torch.testing.assert_close(v0.grad.double(), vd.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(n.grad.double(), nd.grad, rtol=1e-5, atol=1e-5)


def test_inout_gradcheck_float64(m):
    def f(a, x):
        acc = a.clone()
        m.macd(acc, x)
        return acc

    a = torch.tensor([0.3, -0.7, 1.2], dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    x = torch.tensor([1.5, 0.25, -0.5], dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    assert torch.autograd.gradcheck(f, (a, x))
    # Used twice in a row: the second call's old value is the first call's result.
    def g(a, x):
        acc = a.clone()
        m.macd(acc, x)
        m.macd(acc, x)
        return acc * 2

    assert torch.autograd.gradcheck(g, (a, x))


def test_non_differentiable_inout_reads_its_old_value_in_backward(m):
    n = torch.tensor([1, 4], dtype=torch.int32, device=TEST_DEVICE)
    x = t([2.0, 3.0], requires_grad=True)
    y = m.bump(n, x)
    assert n.tolist() == [2, 5] and y.tolist() == [4.0, 15.0]
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 5.0]


def test_inout_write_is_seen_by_earlier_uses(m):
    acc = t([2.0, 1.0], requires_grad=True) * 1.0
    y = acc * acc  # saves acc
    m.mac(acc, t([3.0, 3.0], requires_grad=True), 0.5)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inout_leaf_that_requires_grad_is_refused_naming_the_parameter(m):
    acc = t([2.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"mac\(\): parameter 'acc' is inout and got a leaf tensor that requires grad"):
        m.mac(acc, t([3.0], requires_grad=True), 0.5)
    assert acc.tolist() == [2.0]  # refused before the kernel ran
    with torch.no_grad():
        m.mac(acc, 3.0, 0.5)  # outside autograd it is an ordinary write
    assert acc.tolist() == [6.5]


@pytest.mark.parametrize("fn", ["wsq", "wsq2"])
def test_a_written_tensor_becomes_an_output(sg, m, fn):
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.zeros(3, device=TEST_DEVICE)
    getattr(m, fn)(sg.grid((3,)), x, y)
    assert y.tolist() == [1.0, 4.0, 9.0]
    assert y.grad_fn is not None and y.requires_grad
    (y * t([1.0, 0.5, 2.0])).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 12.0]


@pytest.mark.parametrize("fn", ["wsq", "wsq2"])
def test_a_leaf_that_requires_grad_is_not_written(sg, m, fn):
    # torch's in-place rule: a leaf that requires grad is refused (naming the parameter), as an
    # inout one is; under no_grad the call writes it like any tensor.
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.zeros(3, device=TEST_DEVICE, requires_grad=True)
    with pytest.raises(ValueError, match=fn + r"\(\): parameter 'y' is written and got a leaf tensor that requires grad; "
                                              r"torch does not allow writing such a tensor in place"):
        getattr(m, fn)(sg.grid((3,)), x, y)
    assert y.tolist() == [0.0, 0.0, 0.0]
    with torch.no_grad():
        getattr(m, fn)(sg.grid((3,)), x, y)
    assert y.tolist() == [1.0, 4.0, 9.0] and y.is_leaf and y.grad_fn is None


def test_out_parameters_become_outputs(m):
    r = t([2.0, 1.5], requires_grad=True)
    th = t([0.5, 0.25], requires_grad=True)
    p = torch.zeros(2, 2, device=TEST_DEVICE)
    m.polar(r, th, p)
    assert p.grad_fn is not None
    (p * p * t([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    rd, thd = r.detach().double().requires_grad_(True), th.detach().double().requires_grad_(True)
    ref = torch.stack([rd * torch.cos(thd), rd * torch.sin(thd)], dim=-1)
    (ref * ref * torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, device=TEST_DEVICE)).sum().backward()
    torch.testing.assert_close(r.grad.double(), rd.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(th.grad.double(), thd.grad, rtol=1e-5, atol=1e-6)
    # An out array.
    x = t([1.0, 2.0], requires_grad=True)
    v = torch.zeros(2, 3, device=TEST_DEVICE)
    m.fill3(x, v)
    assert v.tolist() == [[1, 1, 3], [2, 4, 6]] and v.grad_fn is not None
    v.sum().backward()
    assert x.grad.tolist() == [1 + 2 + 3, 1 + 4 + 3]
    with pytest.raises(ValueError, match=r"polar\(\): parameter 'p' is out and got a leaf tensor that requires grad"):
        m.polar(r, th, torch.zeros(2, 2, device=TEST_DEVICE, requires_grad=True))


def test_an_earlier_use_of_an_overwritten_tensor_raises_instead_of_a_wrong_gradient(sg, m):
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.zeros(3, device=TEST_DEVICE, requires_grad=True).clone()
    z = (y * y).sum()  # uses the tensor before the call overwrites it
    m.wsq(sg.grid((3,)), x, y)
    with pytest.raises(RuntimeError):
        z.backward()


def test_read_write_differentiable_tensor_under_autograd_is_refused(sg, m):
    x = t([1.0, 2.0], requires_grad=True)
    y = t([1.0, 1.0])
    with pytest.raises(TypeError, match=r"rwsq\(\): gradients through read-write tensor parameter 'y' .* not supported yet"):
        m.rwsq(sg.grid((2,)), x, y)
    with torch.no_grad():
        m.rwsq(sg.grid((2,)), x, y)
    assert y.tolist() == [2.0, 5.0]


BOTH_BRIDGES = """
import torch, shadegrad as sg
m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.{device}), "inout_b", '''{source}''')
a = torch.tensor([2.0, -1.0], device="{device}", requires_grad=True)
x = torch.tensor([3.0, 0.5], device="{device}", requires_grad=True)
acc = a.clone()
m.mac(acc, x, 0.25)
(acc * acc).sum().backward()
ref = a.detach() * x.detach() + 0.25
assert torch.allclose(a.grad, 2 * ref * x.detach()), a.grad
assert torch.allclose(x.grad, 2 * ref * a.detach()), x.grad
y = torch.zeros(3, device="{device}")
xs = torch.tensor([1.0, 2.0, 3.0], device="{device}", requires_grad=True)
v = y._version
m.wsq(sg.grid((3,)), xs, y)
assert y._version > v and y.grad_fn is not None and not y.is_leaf
y.sum().backward()
assert xs.grad.tolist() == [2.0, 4.0, 6.0], xs.grad
print("ok")
"""


@pytest.mark.parametrize("bridge", ["native", "fallback"])
def test_written_tensors_through_both_bridges(bridge):
    proc = run_python(BOTH_BRIDGES.format(device=TEST_DEVICE, source=SOURCE), bridge)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
