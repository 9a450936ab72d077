# tests/python/test_stored_grads.py — a table (IDiffTensor) read only at the call element's own
# index has its gradient stored, not added (src/codegen/stored_grads.cpp): the backward of
# mul2(grid, a, b) with the tensors shaped as the grid issues no zero fill (counted by
# _core._compile_stats()["gradient_fills"]) and gives torch's gradients bit for bit, and float64
# finite differences; a table larger than the grid is filled and stored where the grid reaches;
# reads that collide (twice at one entry, a neighbour, computed indices) still accumulate. Runs on
# the test device (SHADEGRAD_TEST_DEVICE), the warm-index case on the CPU in fresh processes.
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from conftest import TEST_DEVICE
from mul2_kernels import MUL2_SOURCE

EXTRA = """
[Differentiable]
double mul2d(no_diff int2 pix, IDiffTensor<double, 2> a, IDiffTensor<double, 2> b)
{
    return a[uint2(pix.x, pix.y)] * sin(b[uint2(pix.x, pix.y)]);
}
[Differentiable]
float twice(no_diff int2 pix, IDiffTensor<float, 2> a)
{
    return a[uint2(pix.x, pix.y)] * a[uint2(pix.x, pix.y)];
}
[Differentiable]
float neighbour(no_diff int2 pix, IDiffTensor<float, 2> a)
{
    return a[uint2(pix.x, pix.y)] + 2.0 * a[uint2(max(pix.x - 1, 0), pix.y)];
}
[Differentiable]
float lut(int i, IDiffTensor<float, 1> table)
{
    return table[i] * 3.0;
}
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "stored_grads", MUL2_SOURCE + EXTRA)


def fills():
    from shadegrad import _core

    return _core._compile_stats()["gradient_fills"]


def dev():
    return TEST_DEVICE


@pytest.mark.parametrize("grads", [(False, True), (True, False), (True, True)], ids=["mixed", "a-only", "both"])
def test_no_fill_and_torch_gradients(sg, m, grads):
    torch.manual_seed(0)
    shape = (37, 53)
    a = torch.randn(shape, device=dev()).requires_grad_(grads[0])
    b = torch.randn(shape, device=dev()).requires_grad_(grads[1])
    g = torch.randn(shape, device=dev())
    m.mul2(sg.grid(shape), a, b).backward(g)  # compiles the backward
    a.grad = b.grad = None
    before = fills()
    m.mul2(sg.grid(shape), a, b).backward(g)
    assert fills() == before, "a table read only at the call index needs no zero fill"
    ta, tb = a.detach().clone().requires_grad_(grads[0]), b.detach().clone().requires_grad_(grads[1])
    (ta * tb).backward(g)
    for ours, theirs in ((a.grad, ta.grad), (b.grad, tb.grad)):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert torch.equal(ours, theirs)


def test_float64_finite_differences(sg, m):
    torch.manual_seed(1)
    a = torch.randn(5, 7, dtype=torch.float64, device=dev()).requires_grad_()
    b = torch.randn(5, 7, dtype=torch.float64, device=dev()).requires_grad_()
    grid = sg.grid((5, 7))
    assert torch.autograd.gradcheck(lambda x, y: m.mul2d(grid, x, y), (a, b))
    frozen = a.detach()
    assert torch.autograd.gradcheck(lambda y: m.mul2d(grid, frozen, y), (b,))


def test_table_larger_than_the_grid_is_filled(sg, m):
    a = torch.rand(8, 8, device=dev())
    b = torch.rand(8, 8, device=dev()).requires_grad_()
    g = torch.randn(6, 5, device=dev())
    m.mul2(sg.grid((6, 5)), a, b).backward(g)
    b.grad = None
    before = fills()
    m.mul2(sg.grid((6, 5)), a, b).backward(g)
    assert fills() == before + 1
    expected = torch.zeros(8, 8, device=dev())
    expected[:6, :5] = g * a[:6, :5]
    assert torch.equal(b.grad, expected)


def test_colliding_reads_still_accumulate(sg, m):
    torch.manual_seed(2)
    a = torch.randn(9, 11, device=dev()).requires_grad_()
    g = torch.randn(9, 11, device=dev())
    grid = sg.grid((9, 11))
    before = fills()
    m.twice(grid, a).backward(g)
    assert fills() == before + 1
    torch.testing.assert_close(a.grad, 2 * a.detach() * g)
    a.grad = None
    m.neighbour(grid, a).backward(g)
    expected = g.clone()
    expected[:, :-1] += 2 * g[:, 1:]
    expected[:, 0] += 2 * g[:, 0]
    torch.testing.assert_close(a.grad, expected)
    table = torch.randn(16, device=dev()).requires_grad_()
    idx = torch.randint(0, 16, (1000,), device=dev(), dtype=torch.int32)
    gl = torch.randn(1000, device=dev())
    m.lut(idx, table).backward(gl)
    torch.testing.assert_close(table.grad, torch.zeros(16, device=dev()).index_add_(0, idx.long(), 3 * gl))


CHILD = textwrap.dedent(
    r'''
    import json, sys
    import torch
    import shadegrad as sg
    from shadegrad import _core
    sys.path.insert(0, sys.argv[1])
    from mul2_kernels import MUL2_SOURCE

    m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cpu), "stored_child", MUL2_SOURCE)
    a = torch.rand(6, 7)
    b = torch.rand(6, 7).requires_grad_()
    g = torch.randn(6, 7)
    before = _core._compile_stats()
    m.mul2(sg.grid((6, 7)), a, b).backward(g)
    after = _core._compile_stats()
    assert torch.equal(b.grad, g * a)
    print(json.dumps({k: after[k] - before[k] for k in after if k != "ms"}))
    '''
)


def test_warm_index_keeps_the_stores(tmp_path):
    """A later process finds the backward through the kernel index (no front end, no codegen),
    and the index entry still says which tables are stored: no fill there either."""
    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench")
    env = dict(os.environ, SHADEGRAD_CACHE_DIR=str(tmp_path / "cache"))
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", CHILD, bench], env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["codegen_runs"] > 0 and cold["gradient_fills"] == 0
    assert warm["codegen_runs"] == 0 and warm["front_end_runs"] == 0 and warm["index_hits"] >= 2
    assert warm["gradient_fills"] == 0


def test_one_tensor_as_both_tables(sg, m):
    """mul2(grid, x, x): each parameter's gradient has its own buffer, both stored; torch adds them."""
    torch.manual_seed(3)
    x = torch.randn(7, 9, device=dev()).requires_grad_()
    g = torch.randn(7, 9, device=dev())
    m.mul2(sg.grid((7, 9)), x, x).backward(g)
    tx = x.detach().clone().requires_grad_()
    (tx * tx).backward(g)
    assert torch.equal(x.grad, tx.grad)
