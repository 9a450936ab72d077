# tests/python/test_collide_accuracy.py — colliding gradients summed as trees in fast mode: a
# partially broadcast parameter ((1, 1024) read by a (1024, 1024) call) and a 256-entry lookup
# table read by 1M call elements. On the CPU each chunk adds into a double copy of the gradient
# (CodegenOptions::chunk_table_params), the chunks' copies are summed pairwise and each entry is
# rounded once; on CUDA each block adds into a double copy in shared memory, the blocks' copies are
# added into a double table in scratch memory and the last block rounds each entry once. Either
# way the error against the exact sum of the same float32 terms is within 4x of torch's own
# float32 reduction of those terms (here: far below it). The accuracy cases run on the test device
# (SHADEGRAD_TEST_DEVICE=cuda: the GPU check). Deterministic mode keeps its order of adds: its
# gradients are bitwise the same from run to run.
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
float scaled(float x, float w) { return w * x; }

[Differentiable]
float lut(int i, IDiffTensor<float, 1> table)
{
    return table[i];
}
"""


def normwise(value: torch.Tensor, ref: torch.Tensor) -> float:
    return ((value.double() - ref).norm() / ref.norm()).item()


@pytest.fixture(scope="module")
def module(sg):
    dev = sg.create_torch_device(type=sg.DeviceType.cpu)
    return sg.Module.load_from_source(dev, "collide_accuracy", SOURCE)


@pytest.fixture(scope="module")
def device_module(sg, device):
    """The kernels on the test device (SHADEGRAD_TEST_DEVICE)."""
    return sg.Module.load_from_source(device, "collide_accuracy_dev", SOURCE)


@pytest.mark.parametrize("seed", range(3))
def test_partial_broadcast_gradient_within_4x_of_torch(device_module, seed):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(1024, 1024, generator=gen) + 0.5).to(TEST_DEVICE)  # positive terms: every sum only grows
    g = (torch.rand(1024, 1024, generator=gen) + 0.5).to(TEST_DEVICE)
    w = torch.full((1, 1024), 0.75, device=TEST_DEVICE, requires_grad=True)
    device_module.scaled(x, w).backward(g)
    terms = g * x  # the float32 terms both sides add
    ref = terms.double().sum(0, keepdim=True)
    ours, theirs = normwise(w.grad, ref), normwise(terms.sum(0, keepdim=True), ref)
    assert ours <= 4 * theirs, f"relative error {ours:.3e}, torch's float32 sum {theirs:.3e}"
    assert ours < 6e-8, ours  # rounded once: half an ulp


@pytest.mark.parametrize("seed", range(3))
def test_lookup_table_gradient_within_4x_of_torch(device_module, seed):
    gen = torch.Generator().manual_seed(seed)
    n, entries = 1 << 20, 256
    idx = torch.randint(0, entries, (n,), generator=gen, dtype=torch.int32).to(TEST_DEVICE)
    table = torch.rand(entries, generator=gen).to(TEST_DEVICE).requires_grad_()
    g = (torch.rand(n, generator=gen) + 0.5).to(TEST_DEVICE)
    device_module.lut(idx, table).backward(g)
    ref = torch.zeros(entries, dtype=torch.float64, device=TEST_DEVICE).index_add_(0, idx.long(), g.double())
    theirs = normwise(torch.zeros(entries, device=TEST_DEVICE).index_add_(0, idx.long(), g), ref)
    ours = normwise(table.grad, ref)
    assert ours <= 4 * theirs, f"relative error {ours:.3e}, torch's float32 index_add {theirs:.3e}"
    assert ours < 6e-8, ours


@pytest.mark.parametrize("entries", [3000, 5000], ids=["float-copy", "buffer"])
def test_large_tables_keep_adding_to_the_buffer(device_module, entries):
    # Beyond a chunk table's 4096 entries the adds go to the gradient buffer as before; on CUDA
    # beyond a block's 2048 doubles a float copy per block (up to 4096 floats), then the buffer.
    gen = torch.Generator().manual_seed(7)
    n = 1 << 16
    idx = torch.randint(0, entries, (n,), generator=gen, dtype=torch.int32).to(TEST_DEVICE)
    table = torch.rand(entries, generator=gen).to(TEST_DEVICE).requires_grad_()
    g = torch.rand(n, generator=gen).to(TEST_DEVICE)
    device_module.lut(idx, table).backward(g)
    ref = torch.zeros(entries, dtype=torch.float64, device=TEST_DEVICE).index_add_(0, idx.long(), g.double())
    assert normwise(table.grad, ref) < 1e-6


def test_partial_broadcast_larger_than_a_tree_table(device_module):
    # A (1, 3000) gradient: more than a CUDA block's 2048 doubles, so atomics to the buffer there.
    gen = torch.Generator().manual_seed(9)
    x = torch.rand(64, 3000, generator=gen).to(TEST_DEVICE)
    g = torch.rand(64, 3000, generator=gen).to(TEST_DEVICE)
    w = torch.full((1, 3000), 0.75, device=TEST_DEVICE, requires_grad=True)
    device_module.scaled(x, w).backward(g)
    ref = (g.double() * x.double()).sum(0, keepdim=True)
    assert normwise(w.grad, ref) < 1e-6


def test_deterministic_mode_keeps_its_bits(module):
    gen = torch.Generator().manual_seed(3)
    x = torch.rand(256, 1024, generator=gen) + 0.5
    g = torch.rand(256, 1024, generator=gen)
    f = module.scaled.deterministic()
    grads = []
    for _ in range(2):
        w = torch.full((1, 1024), 0.75, requires_grad=True)
        f(x, w).backward(g)
        grads.append(w.grad.clone())
    assert torch.equal(grads[0].view(torch.int32), grads[1].view(torch.int32))
    # A chain of float adds in call order, as before chunk tables.
    chain = torch.zeros(1, 1024)
    terms = g * x
    for row in range(256):
        chain += terms[row]
    assert torch.equal(grads[0].view(torch.int32), chain.view(torch.int32))


def test_generated_code_adds_into_chunk_tables_in_fast_mode_only(module):
    x = torch.rand(8, 16)
    w = torch.full((1, 16), 0.75, requires_grad=True)
    fast = module.scaled.debug_code(x, w)
    backward = fast[fast.index("---- backward kernel"):]
    assert "sg_tensor_atomic_add_chunk(P." in backward and "sg_chunk_table_final(P.header" in backward, backward
    det = module.scaled.deterministic().debug_code(x, w)
    assert "sg_ct_" not in det[det.index("---- backward kernel"):]
    table = torch.rand(256, requires_grad=True)
    idx = torch.randint(0, 256, (100,), dtype=torch.int32)
    code = module.lut.debug_code(idx, table)
    assert "sg_grad_add_chunk(P." in code[code.index("---- backward kernel"):]
