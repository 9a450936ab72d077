# tests/python/test_fast_math.py — fast math (module option "fast_math" and fn.fast_math()) and
# the optimizing passes under it (common subexpressions, sin/cos pairing, the sqrt derivative
# reusing the primal sqrt), on a chain of ten elementwise operations (bench row 8) and a float3
# function: values and gradients against float64 torch, the option in the call key and the
# generated code. Precise mode is within 1e-5 everywhere. Fast math on CUDA is within the
# tolerance docs/performance.md gives for the chain (2e-3 relative); on the CPU it has no effect
# (bitwise the precise results). Runs on the backend of SHADEGRAD_TEST_DEVICE.
import pytest
import torch

from conftest import TEST_DEVICE
from mul2_kernels import CHAIN10_SOURCE, chain10_torch  # bench/, put on sys.path by conftest.py

SOURCE = "\nimport slangpy;" + CHAIN10_SOURCE + """[Differentiable]
float trig(float x, float k) { return sin(x * k) * cos(x * k) + sqrt(x) / (k + 2.0); }
[Differentiable]
float3 shade3(float3 p, float3 light) { float3 q = p * light; return q * q + sin(q) * 0.5; }
"""

# Relative error (norm-wise) of fast math against float64 torch on the chain: tanh.approx.f32
# (relative error about 2^-11) dominates.
FAST_RTOL = 2e-3


def trig_torch(x, k):
    return torch.sin(x * k) * torch.cos(x * k) + torch.sqrt(x) / (k + 2.0)


def rel_err(x, ref):
    return float((x.double() - ref.double()).norm() / ref.double().norm())


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "fast_math", SOURCE)


@pytest.fixture(scope="module")
def m_fast(sg, device):
    return sg.Module.load_from_source(device, "fast_math_module", SOURCE, options={"fast_math": True})


def value_and_grad(fn, torch_fn, *inputs):
    """(result, gradients) of fn, and of torch_fn in float64, for an upstream gradient g."""
    args = [t.clone().requires_grad_(True) for t in inputs]
    out = fn(*args)
    g = torch.rand_like(out.detach()) + 0.5
    out.backward(g)
    ref_args = [t.detach().double().requires_grad_(True) for t in inputs]
    ref = torch_fn(*ref_args)
    ref.backward(g.double())
    return (out.detach(), [a.grad for a in args]), (ref.detach(), [a.grad for a in ref_args])


def inputs(n=4096):
    return (torch.rand(n, device=TEST_DEVICE) + 0.1,)


def test_precise_chain_matches_float64_torch(m):
    (out, grads), (ref, ref_grads) = value_and_grad(m.chain10, chain10_torch, *inputs())
    assert rel_err(out, ref) < 1e-5
    assert rel_err(grads[0], ref_grads[0]) < 1e-5


def test_precise_sin_cos_pair_and_sqrt_match_float64_torch(m):
    x = torch.rand(4096, device=TEST_DEVICE) + 0.05
    k = torch.rand(4096, device=TEST_DEVICE) * 3.0 - 1.0
    (out, grads), (ref, ref_grads) = value_and_grad(m.trig, trig_torch, x, k)
    assert rel_err(out, ref) < 1e-5
    assert rel_err(grads[0], ref_grads[0]) < 1e-5
    assert rel_err(grads[1], ref_grads[1]) < 1e-5


def test_precise_backward_pairs_sin_and_cos_and_reuses_the_sqrt(m):
    x = torch.rand(64, device=TEST_DEVICE, requires_grad=True)
    code = m.chain10.debug_code(x)
    backward = code[code.index("// ---- backward kernel"):]
    assert "sg_sincos(" in backward
    assert "sg_cos(" not in backward and "sg_sin(" not in backward
    assert backward.count("sg_sqrt(") == 1  # the primal's, reused by the derivative
    assert "sg_max(" not in backward


@pytest.mark.parametrize("how", ["module option", "fn.fast_math()"])
def test_fast_math_chain_within_tolerance(m, m_fast, how):
    fn = m_fast.chain10 if how == "module option" else m.chain10.fast_math()
    (out, grads), (ref, ref_grads) = value_and_grad(fn, chain10_torch, *inputs(1 << 16))
    assert rel_err(out, ref) < FAST_RTOL
    assert rel_err(grads[0], ref_grads[0]) < FAST_RTOL


def test_fast_math_on_the_cpu_changes_no_bits(m):
    if TEST_DEVICE != "cpu":
        pytest.skip("the CPU backend's property")
    x = (torch.rand(1000) + 0.1).requires_grad_(True)
    xf = x.detach().clone().requires_grad_(True)
    g = torch.rand(1000)
    m.chain10(x).backward(g)
    m.chain10.fast_math()(xf).backward(g)
    assert torch.equal(x.grad, xf.grad)
    p, light = torch.rand(1000, 3), torch.rand(1000, 3)
    assert torch.equal(m.shade3(p, light), m.shade3.fast_math()(p, light))


def test_fast_math_float3_function_within_tolerance(m):
    p = (torch.rand(2048, 3, device=TEST_DEVICE) * 2 - 1).requires_grad_(True)
    light = torch.rand(2048, 3, device=TEST_DEVICE) + 0.5
    out = m.shade3.fast_math()(p, light)
    g = torch.rand_like(out.detach())
    out.backward(g)
    pd = p.detach().double().requires_grad_(True)
    q = pd * light.double()
    ref = q * q + torch.sin(q) * 0.5
    ref.backward(g.double())
    assert rel_err(out.detach(), ref.detach()) < 1e-4
    assert rel_err(p.grad, pd.grad) < 1e-4


def test_fast_math_is_part_of_the_call_key_and_the_code(m, m_fast, sg, device):
    x = torch.rand(64, device=TEST_DEVICE, requires_grad=True)
    precise, fast = m.chain10.call_key(x), m.chain10.fast_math().call_key(x)
    assert precise != fast
    assert m.chain10.fast_math().fast_math(False).call_key(x) == precise
    # Two calls, one with fast math: two plans, two kernels; repeating them adds none.
    fresh = sg.Module.load_from_source(device, "fast_math_plans", SOURCE)
    fresh.chain10(x)
    assert fresh.chain10.plan_count == 1
    fresh.chain10.fast_math()(x)
    assert fresh.chain10.plan_count == 2
    fresh.chain10(x)
    fresh.chain10.fast_math()(x)
    assert fresh.chain10.plan_count == 2
    code = m.chain10.fast_math().debug_code(x)
    if TEST_DEVICE == "cuda":
        assert ", fast math ====" in code
    else:
        assert "fast math (no effect on the CPU)" in code
    assert "fast math" not in m.chain10.debug_code(x)
    # A module with the option: its functions' code says so; the property reads it back.
    assert m_fast.fast_math and not m.fast_math
    assert "fast math" in m_fast.chain10.debug_code(x)


def test_fast_math_and_deterministic_combine(sg, device):
    fresh = sg.Module.load_from_source(device, "fast_math_det", SOURCE)
    x = torch.rand(64, device=TEST_DEVICE, requires_grad=True)
    f = fresh.chain10
    for fn in (f, f.fast_math(), f.deterministic(), f.fast_math().deterministic(), f.deterministic().fast_math()):
        fn(x).sum().backward()
    assert f.plan_count == 4  # the last combination is the fourth's
    assert "fast math" in f.fast_math().deterministic().debug_code(x)


def test_unknown_module_option_lists_fast_math(sg, device):
    with pytest.raises(ValueError, match="fast_math"):
        sg.Module.load_from_source(device, "fast_math_bad", SOURCE, options={"fastmath": True})
