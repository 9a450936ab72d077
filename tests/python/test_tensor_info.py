# tests/python/test_tensor_info.py — both torch bridges fill identical TensorInfo bytes, and a
# bridge with another ABI is refused with the reason shown while the fallback takes over.
import itertools

import pytest
import torch

from conftest import native_bridge_available, native_bridge_built, run_python

DTYPES = [torch.float16, torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8, torch.bool]


def generated_tensors():
    """At least 500 tensors: ranks 0..6, seven dtypes, contiguous / transposed / sliced with an
    offset / expanded with stride 0, requires_grad on and off (leaf and non-leaf)."""
    gen = torch.Generator().manual_seed(7)
    out = []
    for rank, dtype in itertools.product(range(7), DTYPES):
        shape = [int(x) for x in torch.randint(1, 5, (rank,), generator=gen)]
        base = (torch.rand(shape, generator=gen) * 10).to(dtype)
        variants = [base]
        if rank >= 2:
            variants.append(base.transpose(0, rank - 1))
        if rank >= 1:
            big = (torch.rand([s + 2 for s in shape], generator=gen) * 10).to(dtype)
            variants.append(big[tuple(slice(1, 1 + s) for s in shape)])  # offset into storage
            one = (torch.rand([1] + shape[1:], generator=gen) * 10).to(dtype)
            variants.append(one.expand([3] + shape[1:]))  # stride 0
        else:
            variants.append(torch.tensor(3, dtype=dtype))
        for v in variants:
            out.append(v)
            if dtype.is_floating_point:
                leaf = v.detach().clone().requires_grad_(True)
                out.append(leaf)
                out.append(leaf * 2)  # non-leaf
                out.append(v.detach().requires_grad_(True))
    while len(out) < 520:
        n = len(out)
        out.append(torch.arange(n % 13 + 1, dtype=torch.float32)[n % 3 :])
    return out


def test_identical_tensor_info_from_both_bridges(sg):
    if not native_bridge_built():
        pytest.skip("the native torch bridge is not built in this installation")
    if not native_bridge_available():
        pytest.fail("the native bridge is not active")
    tensors = generated_tensors()
    assert len(tensors) >= 500
    for t in tensors:
        native = sg._core._describe_native(t)
        fallback = sg._core._describe_fallback(t)
        assert len(native) == sg._core._tensor_info_size() == 176
        assert native == fallback, (t.shape, t.stride(), t.dtype, t.requires_grad)


def test_refused_bridge_falls_back_with_reason():
    proc = run_python(
        "import os; os.environ['SHADEGRAD_TEST_BRIDGE_API_VERSION'] = '99'\n"
        "import shadegrad as sg, torch\n"
        "s = sg.torch_bridge_status()\n"
        "print(s['active']); print(s['reason'])\n"
        "m = sg.Module.load_from_source(sg.create_device(), 'm', 'float f(float x) { return x + 1.0; }')\n"
        "assert torch.equal(m.f(torch.zeros(3)), torch.ones(3))\n"
    )
    assert proc.returncode == 0, proc.stderr
    active, reason = proc.stdout.strip().splitlines()
    assert active == "fallback"
    if native_bridge_available():
        assert reason == "native bridge reports api_version 99, the core needs 3"


def test_refusal_reasons(sg):
    assert sg._core._bridge_refusal_reason(3, 176) == ""
    assert sg._core._bridge_refusal_reason(1, 176) == "native bridge reports api_version 1, the core needs 3"
    assert sg._core._bridge_refusal_reason(3, 168) == (
        "native bridge reports sizeof(TensorInfo) = 168, the core's is 176"
    )


def test_forced_fallback_is_reported():
    proc = run_python("import shadegrad as sg; s = sg.torch_bridge_status(); print(s['active'], '|', s['reason'])", "fallback")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "fallback | forced by SHADEGRAD_TORCH_BRIDGE=fallback"
