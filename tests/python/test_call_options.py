# tests/python/test_call_options.py — facts about a call's tensors that select a different kernel
# (src/call/call_options.h), on the backend under test (SHADEGRAD_TEST_DEVICE).
#
# CUDA kernels load read-only tensors through the read-only path, which lets the compiler issue
# those loads ahead of stores; a call whose tensors share memory must get a kernel without that
# (option bit 2 of the call key), or a thread would not see its own write through an alias.
import pytest
import torch

from conftest import TEST_DEVICE

ALIAS_SRC = """
void write_then_read(int i, Tensor<float, 1> src, RWTensor<float, 1> dst)
{
    dst[i] = 5.0;
    float v = src[i];  // src may be dst: then this reads the 5 just written
    dst[i] = v + 1.0;
}
"""


@pytest.fixture(scope="module")
def fn(sg, device):
    return sg.Module.load_from_source(device, "call_options", ALIAS_SRC).write_then_read


def test_overlap_is_part_of_the_key(sg, fn):
    n = 64
    grid = sg.grid((n,))
    x = torch.zeros(n, device=TEST_DEVICE)
    y = torch.zeros(n, device=TEST_DEVICE)
    z = torch.zeros(2 * n, device=TEST_DEVICE)
    assert " opt=0 " in fn.call_key(grid, x, y)
    assert " opt=2 " in fn.call_key(grid, x, x)  # the same tensor twice
    assert " opt=2 " in fn.call_key(grid, z[:n], z[n // 2:n // 2 + n])  # overlapping views
    assert " opt=0 " in fn.call_key(grid, z[:n], z[n:])  # disjoint views of one storage
    assert " opt=2 " in fn.call_key(grid, z[::2], z[1::2])  # interleaved: ranges overlap
    assert " opt=0 " in fn.call_key(grid, torch.zeros(0, device=TEST_DEVICE), x)  # empty


def test_a_thread_sees_its_own_write_through_an_alias(sg, fn):
    n = 1 << 16
    grid = sg.grid((n,))
    x = torch.zeros(n, device=TEST_DEVICE)
    y = torch.zeros(n, device=TEST_DEVICE)
    fn(grid, x, y)  # apart: reads x (0), writes 1
    torch.testing.assert_close(y, torch.ones(n, device=TEST_DEVICE), rtol=0, atol=0)
    fn(grid, x, x)  # the same tensor: reads the 5 it wrote
    torch.testing.assert_close(x, torch.full((n,), 6.0, device=TEST_DEVICE), rtol=0, atol=0)
    z = torch.zeros(n + 8, device=TEST_DEVICE)
    fn(sg.grid((n,)), z[:n], z[:n])  # views of one storage
    torch.testing.assert_close(z[:n], torch.full((n,), 6.0, device=TEST_DEVICE), rtol=0, atol=0)
