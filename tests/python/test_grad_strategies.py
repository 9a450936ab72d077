# tests/python/test_grad_strategies.py — each way a backward kernel writes a gradient (plain
# store, reduction of a broadcast input, atomics of a partial broadcast, collisions by data) against
# float64 torch references: every broadcast pattern (0-d, (1,), (1, W), (H, 1), expanded views),
# tables of 1, 32, 256 and 1M entries with uniform and random indices, float16/32/64; and
# deterministic mode (module option and fn.deterministic()): bitwise-identical gradients over 10
# runs. Runs on the backend of SHADEGRAD_TEST_DEVICE (cpu here; cuda in the GPU suite).
import pytest
import torch

from conftest import TEST_DEVICE
from gradient_cases import DTYPE_IDS, GRADIENT_KERNELS, LUTS, QUADS, RTOL, bits, close

H, W = 256, 300  # several CPU pool chunks, several CUDA blocks


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "grad_strategies", GRADIENT_KERNELS)


@pytest.fixture(scope="module")
def m_det(sg, device):
    return sg.Module.load_from_source(device, "grad_strategies_det", GRADIENT_KERNELS, options={"deterministic": True})


def quad_reference(x, a, b, c, g):
    xd, ad, bd, cd = (t.detach().double().requires_grad_(True) for t in (x, a, b, c))
    (ad * xd * xd + bd * xd + cd).backward(g.double())
    return xd.grad, ad.grad, bd.grad, cd.grad


# (shape of a, b and c): every broadcast pattern of a call of shape (H, W).
PATTERNS = {
    "0-d": ((), (1,), (H, 1)),
    "(1,)": ((1,), (1, W), (H, 1)),
    "(1,1)": ((1, 1), (W,), (1,)),
    "(1,W)": ((1, W), (H, 1), ()),
    "(H,1)": ((H, 1), (1,), (1, W)),
}


@pytest.mark.parametrize("dtype", list(QUADS), ids=DTYPE_IDS)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_broadcast_gradients_match_float64(m, dtype, pattern):
    gen = torch.Generator().manual_seed(1)
    x = (torch.rand(H, W, generator=gen) - 0.5).to(dtype).to(TEST_DEVICE).requires_grad_(True)
    params = [(torch.rand(s, generator=gen) - 0.5).to(dtype).to(TEST_DEVICE).requires_grad_(True) for s in PATTERNS[pattern]]
    g = (torch.rand(H, W, generator=gen) - 0.5).to(dtype).to(TEST_DEVICE)
    out = getattr(m, QUADS[dtype])(x, *params)
    assert out.shape == (H, W) and out.dtype == dtype
    out.backward(g)
    want = quad_reference(x, *params, g)
    for got, ref in zip([x.grad] + [p.grad for p in params], want):
        assert got.shape == ref.shape and got.dtype == dtype
        close(got, ref, RTOL[dtype])


def test_expanded_views_and_zero_d_scalars(m):
    gen = torch.Generator().manual_seed(2)
    x = (torch.rand(H, W, generator=gen) - 0.5).to(TEST_DEVICE).requires_grad_(True)
    a0 = torch.tensor(0.75, device=TEST_DEVICE, requires_grad=True)  # a Python scalar that requires grad
    b0 = (torch.rand(1, W, generator=gen)).to(TEST_DEVICE).requires_grad_(True)
    c0 = (torch.rand(H, 1, generator=gen)).to(TEST_DEVICE).requires_grad_(True)
    # expand(): stride-0 views of the full call shape; torch reduces their gradients to the leaves.
    b, c = b0.expand(H, W), c0.expand(H, W)
    g = (torch.rand(H, W, generator=gen) - 0.5).to(TEST_DEVICE)
    m.quad(x, a0, b, c).backward(g)
    want = quad_reference(x, a0, b0, c0, g)
    for got, ref in zip([x.grad, a0.grad, b0.grad, c0.grad], want):
        close(got, ref, 1e-4)


def test_float3_function_with_a_broadcast_vector(m):
    gen = torch.Generator().manual_seed(3)
    n = 100_000
    p = (torch.rand(n, 3, generator=gen) - 0.5).to(TEST_DEVICE).requires_grad_(True)
    k = (torch.rand(1, 3, generator=gen) + 0.5).to(TEST_DEVICE).requires_grad_(True)
    g = (torch.rand(n, 3, generator=gen) - 0.5).to(TEST_DEVICE)
    m.shade(p, k).backward(g)
    pd, kd = (t.detach().double().requires_grad_(True) for t in (p, k))
    (pd * kd * kd + torch.sin(pd * kd)).backward(g.double())
    close(p.grad, pd.grad, 1e-5)
    close(k.grad, kd.grad, 1e-4)
    # Only p requires grad: no gradient buffer for k.
    p.grad = None
    k2 = k.detach()
    m.shade(p, k2).backward(g)
    pd.grad = None
    (pd * k2.double() * k2.double() + torch.sin(pd * k2.double())).backward(g.double())
    close(p.grad, pd.grad, 1e-5)


@pytest.mark.parametrize("dtype", list(LUTS), ids=DTYPE_IDS)
@pytest.mark.parametrize("entries", [1, 32, 256, 1 << 20])
@pytest.mark.parametrize("indices", ["uniform", "random"])
def test_table_gradients_match_float64(m, dtype, entries, indices):
    gen = torch.Generator().manual_seed(4)
    n = 1 << 16 if entries < (1 << 20) else 1 << 20
    if dtype == torch.float16:
        n = min(n, 64 if indices == "uniform" else 64 * entries)  # about 64 adds per element: sums half can hold
    table = (torch.rand(entries, generator=gen) + 0.5).to(dtype).to(TEST_DEVICE).requires_grad_(True)
    if indices == "uniform":
        idx = torch.full((n,), entries // 2, dtype=torch.int32)
    else:
        idx = torch.randint(0, entries, (n,), generator=gen, dtype=torch.int32)
    idx = idx.to(TEST_DEVICE)
    g = torch.rand(n, generator=gen).to(dtype).to(TEST_DEVICE)
    out = getattr(m, LUTS[dtype])(idx, table)
    assert torch.equal(out.detach().cpu(), (table.detach()[idx] * table.detach()[idx]).cpu())
    out.backward(g)
    td = table.detach().double()
    want = torch.zeros(entries, dtype=torch.float64, device=TEST_DEVICE).index_add_(
        0, idx.long(), 2.0 * td[idx.long()] * g.double()
    )
    assert table.grad.dtype == dtype
    rtol = RTOL[dtype]
    if dtype == torch.float16:
        # Every add into a half element rounds to half: no better than torch's own half backward
        # (measured here), and within a few percent.
        tt = table.detach().cpu().requires_grad_(True)
        (tt[idx.cpu().long()] * tt[idx.cpu().long()]).backward(g.cpu())
        torch_err = ((tt.grad.double() - want.cpu()).abs().max() / want.abs().max().cpu()).item()
        rtol = max(5e-2, 2.0 * torch_err)
    close(table.grad, want, rtol)


def test_debug_code_names_each_strategy(m):
    x = torch.rand(8, 6, device=TEST_DEVICE, requires_grad=True)
    a = torch.rand(1, device=TEST_DEVICE, requires_grad=True)
    b = torch.rand(1, 6, device=TEST_DEVICE, requires_grad=True)
    c = torch.rand(8, 6, device=TEST_DEVICE)
    code = m.quad.debug_code(x, a, b, c)
    assert "// gradient of 'x': store (one thread per element" in code
    assert "// gradient of 'a': reduce (broadcast along every call dimension" in code
    assert "// gradient of 'b': atomic (broadcast along some call dimensions" in code
    assert "gradient of 'c'" not in code
    # Each thread adds into its own accumulator; the CPU flushes it per chunk (sg_reduce_flush),
    # CUDA writes a block's partial sum for the second pass (sg_reduce_partial).
    assert "sg_reduce_add(sg_acc_" in code
    assert ("sg_reduce_partial(" if TEST_DEVICE == "cuda" else "sg_reduce_flush(") in code
    table = torch.rand(32, device=TEST_DEVICE, requires_grad=True)
    idx = torch.zeros(8, dtype=torch.int32, device=TEST_DEVICE)
    assert "// gradient of 'table': collide (colliding by data" in m.lut.debug_code(idx, table)


def test_deterministic_is_part_of_the_call_key(m):
    x = torch.rand(16, device=TEST_DEVICE)
    a = torch.rand(1, device=TEST_DEVICE, requires_grad=True)
    fast, det = m.quad.call_key(x, a, a, a), m.quad.deterministic().call_key(x, a, a, a)
    assert fast != det
    assert m.quad.deterministic().deterministic(False).call_key(x, a, a, a) == fast
    assert "deterministic" in m.quad.deterministic().debug_code(x, a, a, a)


def repeated_grads(fn, make_args, runs=10):
    """The gradient bits of every input that requires grad, for `runs` fresh calls."""
    results = []
    for _ in range(runs):
        args = make_args()
        out = fn(*args)
        out.backward(torch.full_like(out.detach(), 0.37))
        results.append([bits(t.grad) for t in args if isinstance(t, torch.Tensor) and t.requires_grad])
    return results


@pytest.mark.parametrize("how", ["module option", "fn.deterministic()"])
def test_deterministic_broadcast_gradients_are_bitwise_identical(m, m_det, how):
    fn = m_det.quad if how == "module option" else m.quad.deterministic()
    n = 1 << 20
    gen = torch.Generator().manual_seed(5)
    x = (torch.rand(n, generator=gen) * 3.0 - 1.5).to(TEST_DEVICE)

    def make_args():
        a = torch.full((1,), 0.3, device=TEST_DEVICE, requires_grad=True)
        b = torch.tensor(0.2, device=TEST_DEVICE, requires_grad=True)
        c = torch.full((1,), 0.1, device=TEST_DEVICE, requires_grad=True)
        return x, a, b, c

    runs = repeated_grads(fn, make_args)
    for r in runs[1:]:
        for got, first in zip(r, runs[0]):
            assert torch.equal(got, first)
    # ...and equal to the float64 sum up to float32 rounding.
    _, a, b, c = make_args()
    fn(x, a, b, c).backward(torch.full((n,), 0.37, device=TEST_DEVICE))
    xd = x.double()
    close(a.grad, (0.37 * xd * xd).sum().reshape(1), 1e-5)
    close(b.grad, (0.37 * xd).sum(), 1e-5)


def test_deterministic_partial_broadcasts_and_tables(m):
    gen = torch.Generator().manual_seed(6)
    x = torch.rand(H, W, generator=gen).to(TEST_DEVICE)
    idx = torch.randint(0, 32, (1 << 18,), generator=gen, dtype=torch.int32).to(TEST_DEVICE)
    quad = m.quad.deterministic()
    lut = m.lut.deterministic()

    def partial_args():
        return (x, torch.full((1, W), 0.5, device=TEST_DEVICE, requires_grad=True),
                torch.full((H, 1), 0.25, device=TEST_DEVICE, requires_grad=True), torch.zeros(1, device=TEST_DEVICE))

    def table_args():
        return idx, torch.linspace(0.5, 1.5, 32, device=TEST_DEVICE).requires_grad_(True)

    # CUDA: ordered tables (test_deterministic.py has every pattern, size and dtype).
    for fn, make in ((quad, partial_args), (lut, table_args)):
        runs = repeated_grads(fn, make)
        for r in runs[1:]:
            for got, first in zip(r, runs[0]):
                assert torch.equal(got, first)
