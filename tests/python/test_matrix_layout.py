# tests/python/test_matrix_layout.py — matrices bound from tensors are read row by row: a
# `row_major float2x3` parameter (the qualifier changes nothing) reads the last two dims
# (..., 2, 3) as m[r][c] = t[..., r, c], like an unqualified one; a resizing cast inside the
# function keeps the top-left part, and its gradient goes to exactly those elements.
import torch
from conftest import TEST_DEVICE

SOURCE = """
float pick(row_major float2x3 m, int r, int c) { return m[r][c]; }
float pick_plain(float2x3 m, int r, int c) { return m[r][c]; }
[Differentiable]
float top_left_sum(float3x3 m)
{
    float2x2 s = (float2x2)m;
    return s[0][0] + 2.0 * s[0][1] + 3.0 * s[1][0] + 4.0 * s[1][1];
}
"""


def test_row_major_parameter_reads_rows(sg, device):
    m = sg.Module.load_from_source(device, "matrix_layout", SOURCE)
    t = torch.arange(12, dtype=torch.float32, device=TEST_DEVICE).reshape(2, 2, 3)
    for r in range(2):
        for c in range(3):
            assert torch.equal(m.pick(t, r, c), t[:, r, c])
            assert torch.equal(m.pick_plain(t, r, c), t[:, r, c])


def test_resize_gradient_reaches_the_top_left_block(sg, device):
    m = sg.Module.load_from_source(device, "matrix_layout", SOURCE)
    t = torch.randn(4, 3, 3, dtype=torch.float32, requires_grad=True, device=TEST_DEVICE)
    y = m.top_left_sum(t)
    expected = t[:, 0, 0] + 2 * t[:, 0, 1] + 3 * t[:, 1, 0] + 4 * t[:, 1, 1]
    assert torch.allclose(y, expected.detach())
    y.sum().backward()
    want = torch.zeros(3, 3, device=TEST_DEVICE)
    want[0, 0], want[0, 1], want[1, 0], want[1, 1] = 1, 2, 3, 4
    assert torch.equal(t.grad, want.expand(4, 3, 3))
