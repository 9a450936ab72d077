# tests/python/test_math_accuracy.py — precise float math against float64 torch, bit pattern by
# bit pattern: tanh within 2 ulp over every finite float on CUDA (shadegrad's own tanh there,
# prelude_math.inc) and over a strided sample of them on the CPU (the C library's), with the sign
# of zero kept and NaN and infinities right (the C library's tanhf: within 2.5 ulp by this measure). And the small elementwise kernels whose threads issue
# their elements' loads first (emit_prefetch.cpp): full blocks, partial last blocks and strided
# views give torch's values. Runs on the backend of SHADEGRAD_TEST_DEVICE.
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
float my_tanh(float x) { return tanh(x); }
float axpb(float a, float x, float b) { return a * x + b; }
[Differentiable]
float wave(float x, float k) { return sin(x * k) * tanh(x) + sqrt(x * x + 1.0); }
"""

ALL_FLOATS = 1 << 32


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "math_accuracy", SOURCE)


def ulp_error(got: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """|got - ref| in units of the float spacing at the float32 rounding of ref (float64)."""
    r32 = ref.float()
    spacing = (torch.nextafter(r32.abs(), torch.full_like(r32, float("inf"))) - r32.abs()).double()
    return (got.double() - ref).abs() / spacing


def test_tanh_within_two_ulp_of_float64(m):
    chunk = 1 << 28
    step = 1 if TEST_DEVICE == "cuda" else 4099  # every float on CUDA, a sample of 1M on the CPU
    # shadegrad's tanh on CUDA: 2 ulp; the C library's on the CPU (glibc documents 2 ulp, measured
    # here at the float32 rounding of the float64 value: 2.04)
    bound = 2.0 if TEST_DEVICE == "cuda" else 2.5
    worst = 0.0
    for start in range(0, ALL_FLOATS, chunk):
        bits = torch.arange(start, start + chunk, step, dtype=torch.int64, device=TEST_DEVICE)
        x = (bits - (1 << 32) * (bits >= (1 << 31))).to(torch.int32).view(torch.float32)
        finite = torch.isfinite(x)
        x = x[finite]
        got = m.my_tanh(x)
        err = ulp_error(got, torch.tanh(x.double()))
        worst = max(worst, err.max().item())
        assert err.max().item() <= bound, f"tanh({x[err.argmax()].item()!r}) = {got[err.argmax()].item()!r}"
    assert worst > 0.0  # it did compare something
    special = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 9.5, -9.5, 0.6, -0.6],
                           device=TEST_DEVICE)
    got = m.my_tanh(special)
    assert torch.equal(torch.signbit(got[:2]), torch.tensor([False, True], device=TEST_DEVICE))
    assert got[2:4].tolist() == [1.0, -1.0] and torch.isnan(got[4])
    assert got[5:7].tolist() == [1.0, -1.0]
    assert torch.allclose(got[7:], torch.tanh(special[7:].double()).float(), rtol=3e-7, atol=0)


@pytest.mark.parametrize("n", [1, 1023, 1024, 4096, 4097, 1 << 20, (1 << 20) + 777])
def test_elementwise_full_and_partial_blocks(m, n):
    # A CUDA block covers 4 * 256 elements: sizes below, at and past whole blocks.
    g = torch.Generator(device="cpu").manual_seed(n)
    a, x, b = (torch.rand(n, generator=g).to(TEST_DEVICE) for _ in range(3))
    ref = a.double() * x.double() + b.double()
    assert torch.allclose(m.axpb(a, x, b).double(), ref, rtol=2e-7, atol=1e-7)


def test_elementwise_strided_and_broadcast_views(m):
    base = torch.rand(3000, 4, device=TEST_DEVICE)
    x = base[:, 1]  # stride 4
    a = torch.rand(1, device=TEST_DEVICE).expand(3000)  # stride 0
    b = torch.rand(3000, device=TEST_DEVICE).flip(0)
    ref = a.double() * x.double() + b.double()
    assert torch.allclose(m.axpb(a, x, b).double(), ref, rtol=2e-7, atol=1e-7)


def test_differentiable_chain_values_and_gradients(m):
    n = 5000
    x = (torch.rand(n, device=TEST_DEVICE) * 4 - 2).requires_grad_(True)
    k = torch.full((n,), 1.5, device=TEST_DEVICE)
    out = m.wave(x, k)
    xd = x.detach().double().requires_grad_(True)
    ref = torch.sin(xd * 1.5) * torch.tanh(xd) + torch.sqrt(xd * xd + 1.0)
    assert torch.allclose(out.double(), ref, rtol=1e-6, atol=1e-6)
    g = torch.rand(n, device=TEST_DEVICE)
    out.backward(g)
    ref.backward(g.double())
    assert torch.allclose(x.grad.double(), xd.grad, rtol=1e-5, atol=1e-5)
