# tests/python/test_global_bindings.py — module parameters bound from Python with SlangPy's
# `fn.set(...)`: global buffers (`RWStructuredBuffer<float> g_buf;`, `Tensor<float, 2> g_t;`)
# and uniform globals (`float g_scale;`, `uniform float3 g_color;`, a struct), used directly or
# through callees; values and gradients of the other parameters against hand values, float64
# finite differences and torch; writes through a read-write global; which bindings change the
# call key; and every mistake as an exception naming the function and the global.
import pytest
import torch
from conftest import TEST_DEVICE, device_tensor as t

SOURCE = """
RWStructuredBuffer<float> g_table;
StructuredBuffer<float3> g_points;
Tensor<double, 2> g_weights;
RWTensor<float, 1> g_log;
float g_scale;
uniform float3 g_color;
struct Light { float3 dir; float power; }
Light g_light;
int g_count;

float lookup(int i) { return g_table[i]; }
float twice_lookup(int i) { return 2.0 * lookup(i); }
void store(int i, float v) { g_table[i] = v; }
float point_sum(int i) { float3 p = g_points[i]; return p.x + p.y + p.z; }
[Differentiable]
double weighted(double x, int r, int c) { return g_weights[r, c] * x * x; }
void log_value(int i, float v) { g_log[i] = v * g_scale; }

[Differentiable]
float scaled(float x) { return g_scale * x * x; }
[Differentiable]
float helper_scaled(float x) { return scaled(x) + 1.0; }
[Differentiable]
float3 tinted(float3 c) { return g_color * c; }
[Differentiable]
float lit(float3 n) { return g_light.power * max(dot(n, g_light.dir), 0.0); }
float repeat_sum(float x) { float s = 0; for (int i = 0; i < g_count; i++) s += x; return s; }
float plain(float x) { return x + 1.0; }
"""


@pytest.fixture
def m(sg, device):
    return sg.Module.load_from_source(device, "globals_from_python", SOURCE)


# ---------------------------------------------------------------- global buffers


def test_a_global_buffer_is_read_through_a_callee(m):
    table = t([1.0, 2.0, 3.0, 4.0])
    f = m.twice_lookup.set(g_table=table)
    assert f(torch.tensor([0, 3, 2], dtype=torch.int32, device=TEST_DEVICE)).tolist() == [2.0, 8.0, 6.0]
    assert f(1) == 4.0
    table[1] = 10.0  # the tensor, not a copy: a later call sees the new contents
    assert f(1) == 20.0


def test_set_forms_dict_callback_and_keywords_agree(m):
    table = t([5.0, 6.0])
    idx = torch.tensor([0, 1], dtype=torch.int32, device=TEST_DEVICE)
    expected = [5.0, 6.0]
    assert m.lookup.set(g_table=table)(idx).tolist() == expected
    assert m.lookup.set({"g_table": table})(idx).tolist() == expected
    assert m.lookup.set(lambda: {"g_table": table})(idx).tolist() == expected
    seen = []

    def hook(function):  # SlangPy's hooks take one argument
        seen.append(function)
        return {"g_table": table}

    assert m.lookup.set(hook)(idx).tolist() == expected
    assert len(seen) == 1


def test_writes_through_a_read_write_global_land_in_the_tensor(m):
    table = torch.zeros(4, device=TEST_DEVICE)
    m.store.set(g_table=table)(torch.arange(4, dtype=torch.int32, device=TEST_DEVICE), t([1.0, 2.0, 3.0, 4.0]))
    assert table.tolist() == [1.0, 2.0, 3.0, 4.0]
    log = torch.zeros(3, device=TEST_DEVICE)
    m.log_value.set(g_log=log, g_scale=0.5)(torch.arange(3, dtype=torch.int32, device=TEST_DEVICE), t([2.0, 4.0, 6.0]))
    assert log.tolist() == [1.0, 2.0, 3.0]


def test_a_vector_buffer_and_a_shadegrad_tensor(sg, m, device):
    pts = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert m.point_sum.set(g_points=pts)(torch.tensor([1, 0], dtype=torch.int32, device=TEST_DEVICE)).tolist() == [15.0, 6.0]
    as_tensor = sg.Tensor.from_torch(pts, "float3")
    assert m.point_sum.set(g_points=as_tensor)(1) == 15.0


def test_a_global_tensor_is_a_constant_for_the_gradient(m):
    w = torch.tensor([[0.5, 2.0], [3.0, -1.0]], dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    x = torch.tensor([1.5, -2.0, 0.25], dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    r = torch.tensor([0, 1, 1], dtype=torch.int32, device=TEST_DEVICE)
    c = torch.tensor([1, 0, 1], dtype=torch.int32, device=TEST_DEVICE)
    f = m.weighted.set(g_weights=w)
    y = f(x, r, c)
    wv = w.detach()[r.long(), c.long()]
    assert torch.allclose(y.detach(), wv * x.detach() ** 2)
    y.sum().backward()
    assert torch.allclose(x.grad, 2 * wv * x.detach())
    assert w.grad is None  # a global holds no gradient
    eps = 1e-6
    fd = (f(x.detach() + eps, r, c) - f(x.detach() - eps, r, c)) / (2 * eps)
    assert torch.allclose(x.grad, fd, atol=1e-6)
    assert torch.autograd.gradcheck(lambda v: f(v, r, c), (x.detach().clone().requires_grad_(),))


# ---------------------------------------------------------------- uniform globals


def test_a_uniform_scalar_with_gradient_of_the_parameter(m):
    x = t([0.5, -1.0, 2.0]).requires_grad_()
    for fn, extra in ((m.scaled, 0.0), (m.helper_scaled, 1.0)):
        f = fn.set(g_scale=3.0)
        y = f(x)
        assert torch.allclose(y.detach(), 3.0 * x.detach() ** 2 + extra)
        (g,) = torch.autograd.grad(y.sum(), x)
        assert torch.allclose(g, 6.0 * x.detach())
    assert m.scaled.set(g_scale=-2.0)(3.0) == -18.0  # a new value, the same plan


def test_a_uniform_is_one_value_per_call_not_per_element(m):
    before = m.scaled.plan_count
    for s in (1.0, 2.5, -4.0):
        assert m.scaled.set(g_scale=s)(t([2.0])).tolist() == [4.0 * s]
    assert m.scaled.plan_count == before + 1  # the value is not in the key
    with pytest.raises(TypeError, match=r"scaled\(\): global 'g_scale' of type float takes one value per call"):
        m.scaled.set(g_scale=t([1.0, 2.0]))(t([1.0, 2.0]))
    # a 0-d tensor is one value
    assert m.scaled.set(g_scale=torch.tensor(2.0, device=TEST_DEVICE))(1.5) == 4.5


def test_uniform_vector_and_struct(sg, m):
    c = t([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]]).requires_grad_()
    f = m.tinted.set(g_color=sg.float3(2.0, 0.5, -1.0))
    y = f(c)
    assert torch.allclose(y.detach(), c.detach() * t([2.0, 0.5, -1.0]))
    y.sum().backward()
    assert torch.allclose(c.grad, t([[2.0, 0.5, -1.0]] * 2))
    assert m.tinted.set(g_color=[1.0, 2.0, 3.0])(sg.float3(1, 1, 1)) == sg.float3(1, 2, 3)
    n = t([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]).requires_grad_()
    light = {"dir": sg.float3(0.0, 0.6, 0.8), "power": 2.0}
    g = m.lit.set(g_light=light)
    y = g(n)
    assert torch.allclose(y.detach(), t([1.6, 1.2]))
    y.sum().backward()
    assert torch.allclose(n.grad, t([[0.0, 1.2, 1.6]] * 2))


def test_gradient_matches_torch_and_finite_differences(m):
    x = torch.linspace(-1.0, 2.0, 7, device=TEST_DEVICE).requires_grad_()
    s = 0.75
    y = m.helper_scaled.set(g_scale=s)(x)
    y.sum().backward()
    xr = x.detach().clone().requires_grad_()
    (s * xr * xr + 1.0).sum().backward()
    assert torch.allclose(x.grad, xr.grad)
    eps = 1e-3
    f = m.helper_scaled.set(g_scale=s)
    fd = (f(x.detach() + eps) - f(x.detach() - eps)) / (2 * eps)
    assert torch.allclose(x.grad, fd, atol=1e-3)


def test_bwds_with_a_uniform(sg, m):
    x = t([1.0, 2.0])
    grad = torch.zeros(2, device=TEST_DEVICE)
    y_grad = t([1.0, 1.0])
    f = m.scaled.set(g_scale=1.5)
    f.bwds(sg.diffPair(x, grad), y_grad)
    assert torch.allclose(grad, 3.0 * x)


def test_an_integer_uniform_and_later_sets_win(m):
    f = m.repeat_sum.set(g_count=2).set(g_count=5)
    assert f(1.5) == 7.5
    assert m.repeat_sum.set(g_count=0)(1.5) == 0.0


def test_key_changes_only_with_what_changes_the_kernel(m):
    idx = torch.tensor([0, 1], dtype=torch.int32, device=TEST_DEVICE)
    k1 = m.lookup.set(g_table=t([1.0] * 100)).call_key(idx)
    k2 = m.lookup.set(g_table=t([2.0] * 200)).call_key(idx)
    assert k1 == k2  # another tensor of the same dtype and rank: the same plan
    assert "@g_table" in k1
    with pytest.raises(TypeError, match=r"lookup\(\): global 'g_table' of type RWStructuredBuffer<float> needs a "
                                        r"float32 tensor, got a float64 tensor"):
        m.lookup.set(g_table=t([1.0, 2.0], torch.float64))(idx)


# ---------------------------------------------------------------- mistakes


def test_an_unbound_global_names_the_function_and_the_global(m):
    with pytest.raises(TypeError, match=r"twice_lookup\(\): it uses global buffer 'g_table' \(RWStructuredBuffer<float>, "
                                        r"line 2\), which the call does not bind; give its value with "
                                        r"twice_lookup.set\(g_table=...\)"):
        m.twice_lookup(1)
    with pytest.raises(TypeError, match=r"scaled\(\): it uses uniform global 'g_scale' \(float, line 6\)"):
        m.scaled(1.0)
    with pytest.raises(TypeError, match=r"log_value\(\): it uses .*'g_scale'"):
        m.log_value.set(g_log=torch.zeros(2, device=TEST_DEVICE))(0, 1.0)


def test_wrong_values_name_the_function_and_the_global(sg, m):
    idx = torch.tensor([0], dtype=torch.int32, device=TEST_DEVICE)
    with pytest.raises(TypeError, match=r"lookup\(\): global 'g_table' of type RWStructuredBuffer<float> needs a tensor of shape"):
        m.lookup.set(g_table=torch.zeros(2, 2, device=TEST_DEVICE))(idx)
    with pytest.raises(TypeError, match=r"lookup\(\): global 'g_table' of type RWStructuredBuffer<float> cannot take"):
        m.lookup.set(g_table=3.0)(idx)
    with pytest.raises(TypeError, match=r"tinted\(\): global 'g_color' of type float3"):
        m.tinted.set(g_color=[1.0, 2.0])(sg.float3(1, 1, 1))
    with pytest.raises(TypeError, match=r"lit\(\): global 'g_light.power' of type float"):
        m.lit.set(g_light={"dir": sg.float3(0, 0, 1), "power": "bright"})(sg.float3(0, 0, 1))
    with pytest.raises(TypeError, match=r"lit\(\): global 'g_light'.*field"):
        m.lit.set(g_light={"dir": sg.float3(0, 0, 1)})(sg.float3(0, 0, 1))
    with pytest.raises(TypeError, match=r"repeat_sum\(\): global 'g_count' of type int cannot take a Python float"):
        m.repeat_sum.set(g_count=2.5)(1.0)
    with pytest.raises(TypeError, match=r"scaled\(\): set\(\) names 'g_nosuch', which is neither a parameter of "
                                        r"scaled\(\) nor a global of module 'globals_from_python'"):
        m.scaled.set(g_nosuch=1.0)(1.0)
    with pytest.raises(TypeError, match=r"Set requires either keyword arguments or 1 dictionary / hook argument"):
        m.scaled.set(3)
    with pytest.raises(TypeError, match=r"not both"):
        m.scaled.set({"g_scale": 1.0}, g_scale=2.0)


@pytest.mark.skipif(TEST_DEVICE != "cpu", reason="a CPU tensor on a CUDA module is tested where both exist")
def test_a_tensor_on_another_device(sg):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    device = sg.create_torch_device(type=sg.DeviceType.cuda, index=0)
    m = sg.Module.load_from_source(device, "globals_cuda", SOURCE)
    with pytest.raises(ValueError, match=r"lookup\(\): global 'g_table' of type RWStructuredBuffer<float> got a tensor on cpu"):
        m.lookup.set(g_table=torch.zeros(2))(torch.zeros(1, dtype=torch.int32, device="cuda"))


def test_functions_without_globals_and_unused_values(m):
    assert m.plain(2.0) == 3.0
    assert m.plain.set(g_scale=2.0)(2.0) == 3.0  # a global the function does not use: ignored
    assert m.plain.set(x=5.0)() == 6.0  # a parameter's value, as before


def test_an_index_out_of_range_names_the_global(sg, m):
    with pytest.raises(RuntimeError, match=r"lookup\(\): global 'g_table': index 5 out of bounds"):
        m.lookup.set(g_table=torch.zeros(2, device=TEST_DEVICE))(5)
        sg.synchronize()  # on CUDA the fault is reported here, not at the launch
