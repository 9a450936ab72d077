# tests/python/test_view_function_forms.py — more forms of SlangPy's calls of functions that take
# views (docs/calling.md, "Functions that take views"): matrix results (values and gradients),
# struct results (dicts of tensors, their gradients), out and inout parameters bound to tensors
# (values and gradients), fn.set() of parameter values, the modifiers that are refused, and Interlocked operations on
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

struct Hit { float t; float3 normal; int id; };
Hit probe(TensorView<float> depth, int i) { Hit h; h.t = depth[i]; h.normal = float3(0.0, float(i), 1.0); h.id = i * 7; return h; }

struct Inner { int2 cell; float w; };
struct Outer { Inner inner; float4x4 m; };
Outer nest(TensorView<float> x, int i) { Outer o; o.inner.cell = int2(i, -i); o.inner.w = x[i]; o.m = float4x4(x[i]); return o; }

struct Shade : IDifferentiable { double lum; double2 uv; no_diff double raw; };
[Differentiable]
Shade shade2(DiffTensorView<double> w, double x)
{
    Shade s;
    s.lum = w[0] * x * x;
    s.uv = double2(x, w[1] * sin(x));
    s.raw = detach(x) * 2.0;
    return s;
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


def test_fast_math(m):
    # approximate float intrinsics on CUDA; the same values here
    x = t([1.0, 2.0], torch.float32)
    assert m.scaled.fast_math()(x, sg.grid((2,)), 3.0).cpu().tolist() == [3.0, 6.0]


def test_set_gives_a_parameter_its_value(m):
    x = t([1.0, 2.0, 4.0], torch.float32)
    f = m.scaled.set(k=0.5)
    assert f(x, sg.grid((3,))).cpu().tolist() == [0.5, 1.0, 2.0]
    assert f(x, sg.grid((3,)), k=2.0).cpu().tolist() == [2.0, 4.0, 8.0]  # the call's own wins


def test_set_of_a_global_is_refused(m):
    with pytest.raises(TypeError, match="gained\\(\\): set\\(\\) gives the module's global 'g_gain' a value"):
        m.gained.set(g_gain=2.0)(t([1.0], torch.float32), 0)


def test_deterministic_is_refused(m):
    with pytest.raises(TypeError, match="scaled\\(\\) takes a TensorView: deterministic\\(\\) is not supported for a "
                                        "function that takes views yet"):
        m.scaled.deterministic()(t([1.0], torch.float32), sg.grid((1,)), 1.0)


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


def test_an_inout_tensor_without_grad_is_read_before_the_call_in_the_backward(m):
    # acc is overwritten by the call; x's gradient reads acc's values before it (d(acc v)/dv = acc)
    x = t([0.5, -1.5, 2.0]).requires_grad_()
    i = torch.tensor([2, 0], dtype=torch.int32, device=TEST_DEVICE)
    acc = t([0.3, -0.2])
    y = torch.zeros(2, dtype=torch.float64, device=TEST_DEVICE)
    m.sq_out(x, i, y, acc)
    (acc * t([1.0, 2.0])).sum().backward()
    want = torch.zeros(3, dtype=torch.float64)
    want[2], want[0] = 0.3 * 1.0, -0.2 * 2.0
    torch.testing.assert_close(x.grad.cpu(), want, rtol=1e-12, atol=1e-12)


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


# ---- struct results

def test_a_struct_result_is_a_dict_of_tensors(m):
    depth = t([0.5, 1.5, 2.5], torch.float32)
    got = m.probe(depth, sg.grid((3,)))
    assert sorted(got) == ["id", "normal", "t"]
    assert got["t"].cpu().tolist() == [0.5, 1.5, 2.5]
    assert got["normal"].shape == (3, 3) and got["normal"][:, 1].cpu().tolist() == [0.0, 1.0, 2.0]
    assert got["id"].dtype == torch.int32 and got["id"].cpu().tolist() == [0, 7, 14]
    one = m.probe(depth, 2)
    assert one["t"].shape == () and float(one["t"]) == 2.5 and one["normal"].shape == (3,)


def test_a_nested_struct_result(m):
    x = t([1.0, 3.0], torch.float32)
    got = m.nest(x, sg.grid((2,)))
    assert got["inner"]["cell"].cpu().tolist() == [[0, 0], [1, -1]]
    assert got["inner"]["w"].cpu().tolist() == [1.0, 3.0]
    assert got["m"].shape == (2, 4, 4) and torch.equal(got["m"][1].cpu(), torch.full((4, 4), 3.0))


def shade2_torch(w, x):
    return {"lum": w[0] * x * x, "uv": torch.stack([x, w[1] * torch.sin(x)], -1), "raw": x.detach() * 2.0}


def test_struct_result_gradients_in_autograd(m):
    w = t([1.5, -0.5]).requires_grad_()
    x = t([0.2, -1.0, 0.7]).requires_grad_()
    out = m.shade2(w, x)
    assert out["lum"].grad_fn is not None and not out["raw"].requires_grad
    wr, xr = w.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
    want = shade2_torch(wr, xr)
    for key in ("lum", "uv", "raw"):
        torch.testing.assert_close(out[key].detach(), want[key].detach(), rtol=1e-12, atol=1e-12)
    g1, g2 = t([1.0, 2.0, 3.0]), t([[0.5, 1.0], [-1.0, 2.0], [0.25, 0.0]])
    ((out["lum"] * g1).sum() + (out["uv"] * g2).sum()).backward()
    ((want["lum"] * g1).sum() + (want["uv"] * g2).sum()).backward()
    torch.testing.assert_close(w.grad, wr.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-12, atol=1e-12)


def test_struct_result_gradients_through_bwds(m):
    w, x = t([1.5, -0.5]), t([0.2, -1.0])
    gw, gx = torch.zeros_like(w), torch.zeros_like(x)
    g1, g2 = t([1.0, 2.0]), t([[0.5, 1.0], [-1.0, 2.0]])
    m.shade2.bwds(sg.diff_pair(w, gw), sg.diff_pair(x, gx), {"lum": g1, "uv": g2})
    wr, xr = w.clone().requires_grad_(), x.clone().requires_grad_()
    want = shade2_torch(wr, xr)
    ((want["lum"] * g1).sum() + (want["uv"] * g2).sum()).backward()
    torch.testing.assert_close(gw, wr.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gx, xr.grad, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="shade2.bwds\\(\\): the gradient of the result's field 'uv' is missing"):
        m.shade2.bwds(sg.diff_pair(w, gw), sg.diff_pair(x, gx), {"lum": g1})


# ---- struct parameters from dicts

STRUCTS = """
struct Light : IDifferentiable { float3 dir; float power; no_diff int id; };
struct Material : IDifferentiable { Light light; double rough; };
struct Plain { double a; };

struct Gauge : IDifferentiable
{
    double k;
    static double total(TensorView<double> x) { double s = 0.0; for (uint i = 0; i < x.size(0); ++i) s += x[i]; return s; }
    [Differentiable]
    double scaled(DiffTensorView<double> x, no_diff int i) { return k * x[i] * x[i]; }
};

[Differentiable]
double plain_field(DiffTensorView<double> w, Plain p) { return w[0] * p.a; }

float lit(TensorView<float> albedo, Light l, int i) { return albedo[i] * l.power * l.dir.z + float(l.id); }

[Differentiable]
double brdf(DiffTensorView<double> w, Material m, no_diff int i)
{
    double v = w[i];
    return v * m.rough * m.rough + double(m.light.power) * sin(v);
}
"""


@pytest.fixture(scope="module")
def ms(device):
    return sg.Module.load_from_source(device, "view_function_structs", STRUCTS)


def test_a_struct_from_a_dict_of_numbers_and_tensors(ms):
    albedo = t([1.0, 2.0, 3.0], torch.float32)
    light = {"dir": sg.float3(0.0, 0.0, 0.5), "power": 4.0, "id": 10}
    assert float(ms.lit(albedo, light, 2)) == 3.0 * 4.0 * 0.5 + 10
    # a field per call: power from a tensor broadcast against the grid
    light = {"dir": [0.0, 0.0, 1.0], "power": t([1.0, 10.0, 100.0], torch.float32), "id": 0}
    assert ms.lit(albedo, light, sg.grid((3,))).cpu().tolist() == [1.0, 20.0, 300.0]


def brdf_torch(w, rough, power, i):
    v = w[i.long()]
    return v * rough * rough + power * torch.sin(v)


def test_struct_field_gradients_in_autograd_and_bwds(ms):
    w = t([0.5, -1.0, 2.0]).requires_grad_()
    rough = t([0.2, 0.7, 1.3, 0.4]).requires_grad_()
    i = torch.tensor([2, 0, 1, 2], dtype=torch.int32, device=TEST_DEVICE)
    mat = {"light": {"dir": [0.0, 0.0, 1.0], "power": 1.5, "id": 0}, "rough": rough}
    out = ms.brdf(w, mat, i)
    wr, rr = w.detach().clone().requires_grad_(), rough.detach().clone().requires_grad_()
    want = brdf_torch(wr, rr, 1.5, i)
    torch.testing.assert_close(out.detach(), want.detach(), rtol=1e-12, atol=1e-12)
    g = t([1.0, -2.0, 0.5, 3.0])
    (out * g).sum().backward()
    (want * g).sum().backward()
    torch.testing.assert_close(w.grad, wr.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(rough.grad, rr.grad, rtol=1e-12, atol=1e-12)
    gw, grough = torch.zeros(3, dtype=torch.float64, device=TEST_DEVICE), torch.zeros(4, dtype=torch.float64,
                                                                                      device=TEST_DEVICE)
    mat = {"light": {"dir": [0.0, 0.0, 1.0], "power": 1.5, "id": 0}, "rough": sg.diff_pair(rough.detach(), grough)}
    ms.brdf.bwds(sg.diff_pair(w.detach(), gw), mat, i, g)
    torch.testing.assert_close(gw, wr.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grough, rr.grad, rtol=1e-12, atol=1e-12)


def test_struct_dict_errors(ms):
    albedo = t([1.0], torch.float32)
    with pytest.raises(TypeError, match="lit\\(\\): parameter 'l' \\(Light\\): the dict has no field 'power'"):
        ms.lit(albedo, {"dir": [0.0, 0.0, 1.0], "id": 1}, 0)
    with pytest.raises(TypeError, match="lit\\(\\): parameter 'l' \\(Light\\): the dict names 'colour', which is no "
                                        "field of Light"):
        ms.lit(albedo, {"dir": [0.0, 0.0, 1.0], "power": 1.0, "id": 1, "colour": 2.0}, 0)
    with pytest.raises(TypeError, match="lit\\(\\): parameter 'l' \\(Light\\) takes a dict of its fields or a tensor of them beside views"):
        ms.lit(albedo, 1.0, 0)


def test_a_field_of_a_struct_that_is_no_idifferentiable_carries_no_gradient(ms):
    w = t([2.0]).requires_grad_()
    a = t([1.0, 3.0]).requires_grad_()
    out = ms.plain_field(w, {"a": a})
    out.sum().backward()
    assert w.grad.cpu().tolist() == [4.0] and a.grad is None


# ---- struct methods that take views

def test_static_and_instance_methods_and_bind(ms):
    x = t([1.0, 2.0, 3.0])
    assert float(ms.Gauge.total(x)) == 6.0
    i = torch.tensor([2, 0], dtype=torch.int32, device=TEST_DEVICE)
    assert ms.Gauge.scaled({"k": 2.0}, x, i).cpu().tolist() == [18.0, 2.0]
    assert ms.Gauge.scaled.bind({"k": 0.5})(x, i).cpu().tolist() == [4.5, 0.5]
    xr = x.clone().requires_grad_()
    k = t([2.0, 3.0]).requires_grad_()
    ms.Gauge.scaled({"k": k}, xr, i).sum().backward()
    assert xr.grad.cpu().tolist() == [2 * 3.0 * 1.0, 0.0, 2 * 2.0 * 3.0]
    assert k.grad.cpu().tolist() == [9.0, 1.0]


# ---- out and inout structs

STRUCT_OUT = """
struct Body : IDifferentiable { double2 pos; double mass; };

[Differentiable]
void step(DiffTensorView<double> force, no_diff int i, inout Body b, out Body next)
{
    double f = force[i];
    next.pos = b.pos + double2(f, f * f) / b.mass;
    next.mass = b.mass;
    b.mass = b.mass * 0.5;
}
"""


@pytest.fixture(scope="module")
def mo(device):
    return sg.Module.load_from_source(device, "view_function_struct_out", STRUCT_OUT)


def step_torch(force, i, pos, mass):
    f = force[i.long()]
    return pos + torch.stack([f, f * f], -1) / mass[:, None], mass, mass * 0.5


def test_out_and_inout_structs_from_dicts_of_tensors(mo):
    force = t([0.5, -1.0, 2.0])
    i = torch.tensor([2, 0], dtype=torch.int32, device=TEST_DEVICE)
    pos, mass = t([[0.0, 1.0], [2.0, 3.0]]), t([2.0, 4.0])
    npos, nmass = torch.zeros(2, 2, dtype=torch.float64, device=TEST_DEVICE), torch.zeros(2, dtype=torch.float64,
                                                                                          device=TEST_DEVICE)
    mo.step(force, i, {"pos": pos, "mass": mass}, {"pos": npos, "mass": nmass})
    want_pos, want_mass, halved = step_torch(force, i, t([[0.0, 1.0], [2.0, 3.0]]), t([2.0, 4.0]))
    torch.testing.assert_close(npos, want_pos)
    torch.testing.assert_close(nmass, want_mass)
    torch.testing.assert_close(mass, halved)  # inout: written back


def test_out_struct_gradients_in_autograd(mo):
    force = t([0.5, -1.0, 2.0]).requires_grad_()
    i = torch.tensor([2, 0], dtype=torch.int32, device=TEST_DEVICE)
    p0 = t([[0.0, 1.0], [2.0, 3.0]]).requires_grad_()
    pos = p0 * 1.0  # written in place (inout): not a leaf
    mass = t([2.0, 4.0])
    npos, nmass = torch.zeros(2, 2, dtype=torch.float64, device=TEST_DEVICE), torch.zeros(2, dtype=torch.float64,
                                                                                          device=TEST_DEVICE)
    mo.step(force, i, {"pos": pos, "mass": mass}, {"pos": npos, "mass": nmass})
    assert npos.grad_fn is not None
    g = t([[1.0, 2.0], [-1.0, 0.5]])
    (npos * g).sum().backward()
    fr, pr = force.detach().clone().requires_grad_(), p0.detach().clone().requires_grad_()
    want_pos, _, _ = step_torch(fr, i, pr, t([2.0, 4.0]))
    (want_pos * g).sum().backward()
    torch.testing.assert_close(force.grad, fr.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(p0.grad, pr.grad, rtol=1e-12, atol=1e-12)


def test_an_out_struct_field_that_is_no_tensor(mo):
    with pytest.raises(TypeError, match="step\\(\\): parameter 'next' \\(Body\\): field 'mass' \\(double\\) is in an out "
                                        "struct and is given float"):
        mo.step(t([1.0]), 0, {"pos": t([[0.0, 0.0]]), "mass": t([1.0])},
                {"pos": torch.zeros(1, 2, dtype=torch.float64, device=TEST_DEVICE), "mass": 1.0})


# ---- a struct per call from a tensor of its fields (SlangPy's form)

STRUCT_TENSOR = """
struct Ray : IDifferentiable { float3 origin; float t; no_diff float id; };

[Differentiable]
float march(DiffTensorView<float> scale, Ray r) { return (r.origin.x + r.origin.y * r.t) * scale[0] + r.id; }

[Differentiable]
void advance(inout Ray r, DiffTensorView<float> speed) { r.t = r.t + speed[0] * r.origin.z; }

struct Mixed { float a; int b; };
float mixed(TensorView<float> x, Mixed m) { return x[0] + m.a; }
"""


@pytest.fixture(scope="module")
def mt(device):
    return sg.Module.load_from_source(device, "view_function_struct_tensor", STRUCT_TENSOR)


def test_a_struct_per_call_from_a_tensor(mt):
    rays = torch.tensor([[1.0, 2.0, 0.5, 3.0, 10.0], [0.0, -1.0, 2.0, 0.5, 20.0]], device=TEST_DEVICE)
    scale = torch.tensor([2.0], device=TEST_DEVICE)
    got = mt.march(scale, rays)
    assert got.cpu().tolist() == [(1.0 + 2.0 * 3.0) * 2.0 + 10.0, (0.0 - 0.5) * 2.0 + 20.0]
    mt.advance(rays, torch.tensor([4.0], device=TEST_DEVICE))
    assert rays[:, 3].cpu().tolist() == [3.0 + 4.0 * 0.5, 0.5 + 4.0 * 2.0]


def test_gradients_of_a_struct_from_a_tensor(mt):
    rays = torch.tensor([[1.0, 2.0, 0.5, 3.0, 10.0], [0.0, -1.0, 2.0, 0.5, 20.0]], device=TEST_DEVICE,
                        dtype=torch.float32).requires_grad_()
    scale = torch.tensor([2.0], device=TEST_DEVICE).requires_grad_()
    (mt.march(scale, rays) * torch.tensor([1.0, 3.0], device=TEST_DEVICE)).sum().backward()
    r = rays.detach()
    want = torch.zeros(2, 5)
    for k, w in enumerate([1.0, 3.0]):
        want[k, 0] = 2.0 * w
        want[k, 1] = float(r[k, 3]) * 2.0 * w
        want[k, 3] = float(r[k, 1]) * 2.0 * w  # the no_diff id gets none
    torch.testing.assert_close(rays.grad.cpu(), want)
    assert float(scale.grad) == (1.0 + 2.0 * 3.0) * 1.0 + (0.0 - 0.5) * 3.0


def test_a_struct_from_a_tensor_errors(mt):
    with pytest.raises(TypeError, match="mixed\\(\\): parameter 'm' \\(Mixed\\) is given a tensor, which holds a "
                                        "struct's fields in its last dimension: its fields are not all of one scalar"):
        mt.mixed(torch.ones(1, device=TEST_DEVICE), torch.ones(3, 2, device=TEST_DEVICE))
    with pytest.raises(ValueError, match="march\\(\\): parameter 'r' \\(Ray\\) takes a tensor whose last dimension "
                                         "holds the 5 components"):
        mt.march(torch.ones(1, device=TEST_DEVICE), torch.ones(3, 4, device=TEST_DEVICE))


# ---- call groups (SlangPy's fn.call_group_shape) on functions that take views

GROUPS = """
import slangpy;
groupshared float tile[4];
groupshared float block_sum[1];

// each element reads its right neighbour's value within its group
float rotate(int i, TensorView<float> x, int n)
{
    int g = CallShapeInfo::get_call_group_id().shape[0];
    int t = CallShapeInfo::get_call_group_thread_id().shape[0];
    tile[t] = x[i];
    GroupMemoryBarrierWithGroupSync();
    int live = min(4, n - g * 4);
    return tile[(t + 1) % live];
}

// a 2-D group's sum, through an atomic on groupshared memory
float group_total(int2 c, TensorView<float> image)
{
    int ty = CallShapeInfo::get_call_group_thread_id().shape[0];
    int tx = CallShapeInfo::get_call_group_thread_id().shape[1];
    if (tx == 0 && ty == 0) block_sum[0] = 0.0;
    GroupMemoryBarrierWithGroupSync();
    InterlockedAdd(block_sum[0], image[c.y, c.x]);
    GroupMemoryBarrierWithGroupSync();
    return block_sum[0];
}

[Differentiable]
float weighted(int i, DiffTensorView<float> x)
{
    no_diff float t = float(CallShapeInfo::get_call_group_thread_id().shape[0]);
    return x[i] * x[i] * (t + 1.0);
}
"""


@pytest.fixture(scope="module")
def mg(device):
    return sg.Module.load_from_source(device, "view_function_groups", GROUPS)


@pytest.mark.parametrize("n", [8, 10, 3])
def test_call_groups_share_groupshared_memory(mg, n):
    x = torch.arange(float(n), device=TEST_DEVICE)
    got = mg.rotate.call_group_shape((4,))(sg.grid((n,)), x, n).cpu().tolist()
    want = []
    for g in range(0, n, 4):
        part = list(range(g, min(n, g + 4)))
        want += [float(part[(k + 1) % len(part)]) for k in range(len(part))]
    assert got == want


def test_two_dimensional_call_groups(mg):
    image = torch.arange(24.0, device=TEST_DEVICE).reshape(4, 6) / 4  # exact sums
    got = mg.group_total.call_group_shape((2, 3))(sg.grid((4, 6)), image)
    want = image.reshape(2, 2, 2, 3).sum(dim=(1, 3))  # per 2 x 3 tile
    torch.testing.assert_close(got, want.repeat_interleave(2, 0).repeat_interleave(3, 1))


def test_call_group_gradients(mg):
    x = torch.tensor([1.0, -2.0, 0.5, 3.0, 1.5], device=TEST_DEVICE).requires_grad_()
    out = mg.weighted.call_group_shape((2,))(sg.grid((5,)), x)
    rank = torch.tensor([1.0, 2.0, 1.0, 2.0, 1.0], device=TEST_DEVICE)  # thread id in the group, plus 1
    torch.testing.assert_close(out.detach(), x.detach() ** 2 * rank)
    out.sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach() * rank)
    gx = torch.zeros(5, device=TEST_DEVICE)
    mg.weighted.call_group_shape((2,)).bwds(sg.grid((5,)), sg.diff_pair(x.detach(), gx), torch.ones(5, device=TEST_DEVICE))
    torch.testing.assert_close(gx, 2 * x.detach() * rank)


def test_a_call_group_of_more_dimensions_than_the_call(mg):
    with pytest.raises(ValueError, match="rotate\\(\\): call_group_shape\\(\\): parameter 'shape' \\(2, 2\\) has 2 "
                                         "dimensions, the call's shape 1 \\(call_group_shape dimensionality \\(2\\) "
                                         "must be <= call_shape dimensionality \\(1\\)"):
        mg.rotate.call_group_shape((2, 2))(sg.grid((4,)), torch.zeros(4, device=TEST_DEVICE), 4)


# ---- matrices: per call from a tensor (rows and columns last), or one value for every call

MATRICES = """
[Differentiable]
float2 apply(DiffTensorView<float> scale, float2x2 m, float2 v) { return mul(m, v) * scale[0]; }

[Differentiable]
void transpose_into(TensorView<float> unused, float2x3 m, out float3x2 t) { t = transpose(m); }
"""


@pytest.fixture(scope="module")
def mm(device):
    return sg.Module.load_from_source(device, "view_function_matrices", MATRICES)


def test_matrices_per_call_and_uniform(mm):
    scale = torch.tensor([2.0], device=TEST_DEVICE)
    ms = torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[0.0, 1.0], [-1.0, 0.0]]], device=TEST_DEVICE)
    got = mm.apply(scale, ms, sg.float2(1.0, 1.0))
    torch.testing.assert_close(got, ms.sum(-1) * 2.0)
    uniform = mm.apply(scale, sg.float2x2(1.0, 2.0, 3.0, 4.0), torch.eye(2, device=TEST_DEVICE))
    torch.testing.assert_close(uniform, torch.tensor([[1.0, 3.0], [2.0, 4.0]], device=TEST_DEVICE) * 2.0)
    rows = mm.apply(scale, [[1.0, 2.0], [3.0, 4.0]], torch.eye(2, device=TEST_DEVICE))
    torch.testing.assert_close(rows, uniform)
    m23 = torch.arange(12.0, device=TEST_DEVICE).reshape(2, 2, 3)
    t = torch.zeros(2, 3, 2, device=TEST_DEVICE)
    mm.transpose_into(torch.zeros(1, device=TEST_DEVICE), m23, t)
    torch.testing.assert_close(t, m23.transpose(1, 2))


def test_matrix_gradients_in_autograd(mm):
    scale = torch.tensor([1.5], device=TEST_DEVICE).requires_grad_()
    ms = torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[0.0, 1.0], [-1.0, 0.0]]], device=TEST_DEVICE).requires_grad_()
    v = torch.tensor([[1.0, -1.0], [0.5, 2.0]], device=TEST_DEVICE).requires_grad_()
    g = torch.tensor([[1.0, 2.0], [3.0, -1.0]], device=TEST_DEVICE)
    (mm.apply(scale, ms, v) * g).sum().backward()
    sr, mr, vr = (x.detach().clone().requires_grad_() for x in (scale, ms, v))
    (torch.einsum("nij,nj->ni", mr, vr) * sr * g).sum().backward()
    for got, want in ((scale.grad, sr.grad), (ms.grad, mr.grad), (v.grad, vr.grad)):
        torch.testing.assert_close(got, want)


def test_a_matrix_of_the_wrong_shape(mm):
    with pytest.raises(ValueError, match="apply\\(\\): parameter 'm' \\(float2x2\\) takes a tensor whose last two "
                                         "dimensions hold the 2 x 2 components"):
        mm.apply(torch.ones(1, device=TEST_DEVICE), torch.ones(3, 2, 3, device=TEST_DEVICE), sg.float2(1.0, 1.0))
    with pytest.raises(TypeError, match="apply\\(\\): parameter 'm' \\(float2x2\\) takes a float2x2 value \\(2 rows of 2 "
                                        "numbers\\)"):
        mm.apply(torch.ones(1, device=TEST_DEVICE), [1.0, 2.0], sg.float2(1.0, 1.0))


def test_a_cuda_kernel_takes_a_matrix_value(device):
    mk = sg.Module.load_from_source(device, "kernel_matrix", """
[CUDAKernel]
void pick(float2x3 m, TensorView<float> out)
{
    uint i = cudaThreadIdx().x;
    if (i < 6) out[i] = m[i / 3][i % 3];
}
""")
    out = torch.zeros(6, device=TEST_DEVICE)
    mk.pick(sg.float2x3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0), out, _thread_count=6)
    assert out.cpu().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_map_to_a_half_vector(mm):
    # float16 (N, 2) tensors read into a float2 parameter
    v = torch.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=torch.float16, device=TEST_DEVICE)
    got = mm.apply.map(v="half2")(torch.tensor([1.0], device=TEST_DEVICE), sg.float2x2(1.0, 0.0, 0.0, 1.0), v)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, v.float())


# ---- matrix fields of struct parameters

XFORMS = """
struct Xform : IDifferentiable { float2x2 m; float2 t; };

[Differentiable]
float2 place(DiffTensorView<float> s, Xform x, float2 p) { return (mul(x.m, p) + x.t) * s[0]; }
"""


@pytest.fixture(scope="module")
def mx(device):
    return sg.Module.load_from_source(device, "view_function_xforms", XFORMS)


def place_torch(s, m, t, p):
    return (torch.einsum("...ij,...j->...i", m, p) + t) * s[0]


def test_matrix_fields_from_numbers_and_tensors(mx):
    s = torch.tensor([2.0], device=TEST_DEVICE)
    p = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], device=TEST_DEVICE)
    got = mx.place(s, {"m": [[1.0, 2.0], [3.0, 4.0]], "t": sg.float2(0.5, -0.5)}, p)
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=TEST_DEVICE)
    torch.testing.assert_close(got, place_torch(s, m, torch.tensor([0.5, -0.5], device=TEST_DEVICE), p))


def test_matrix_field_gradients_from_a_dict_and_from_a_tensor(mx):
    s = torch.tensor([1.5], device=TEST_DEVICE).requires_grad_()
    m = torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[0.0, -1.0], [1.0, 0.5]]], device=TEST_DEVICE).requires_grad_()
    p = torch.tensor([[1.0, -2.0], [0.5, 1.0]], device=TEST_DEVICE)
    g = torch.tensor([[1.0, 2.0], [-1.0, 0.5]], device=TEST_DEVICE)
    (mx.place(s, {"m": m, "t": sg.float2(0.25, 0.75)}, p) * g).sum().backward()
    sr, mr = s.detach().clone().requires_grad_(), m.detach().clone().requires_grad_()
    (place_torch(sr, mr, torch.tensor([0.25, 0.75], device=TEST_DEVICE), p) * g).sum().backward()
    torch.testing.assert_close(s.grad, sr.grad)
    torch.testing.assert_close(m.grad, mr.grad)
    # one struct per call from a tensor: m row-major, then t
    packed = torch.cat([m.detach().reshape(2, 4), torch.tensor([[0.25, 0.75]] * 2, device=TEST_DEVICE)], 1)
    packed.requires_grad_()
    (mx.place(s.detach(), packed, p) * g).sum().backward()
    torch.testing.assert_close(packed.grad[:, :4].reshape(2, 2, 2), mr.grad / 1.0)
    torch.testing.assert_close(packed.grad[:, 4:], g * 1.5)
