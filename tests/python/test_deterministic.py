# tests/python/test_deterministic.py — deterministic mode (module option "deterministic" or
# fn.deterministic()) for every gradient that collides: partial broadcasts ((1, W), (H, 1), a
# vector element, an array), expanded views, and tables of 1, 32, 256 and 1M entries with uniform
# and random indices, in float16/32/64, tables added to in a loop, batches of tables, matrix
# elements, NaN / Inf propagation and accumulation into an existing .grad. Each case: the
# gradients match a float64 reference and are bitwise identical over 10 runs. On CUDA the
# colliding gradients go through ordered tables where they fit shared memory and through
# fixed-point tables otherwise (docs/autograd.md: deterministic mode; the generated CUDA of both
# is compiled by NVRTC in tests/cpp/test_grad_strategies.cpp). Runs on the backend of
# SHADEGRAD_TEST_DEVICE.
import pytest
import torch

from conftest import TEST_DEVICE
from gradient_cases import DTYPE_IDS, GRADIENT_KERNELS, LUTS, QUADS, RTOL, bits, close

SOURCE = GRADIENT_KERNELS + """
[Differentiable]
float poly(float x, float w[4]) { return w[0] + w[1] * x + w[2] * x * x + w[3] * x * x * x; }
[Differentiable]
float lerp_lut(float u, IDiffTensor<float, 1> table) {
    float p = u * 255.0;
    int i = min(int(p), 254);
    float f = p - float(i);
    return table[i] * (1.0 - f) + table[i + 1] * f;
}
[Differentiable]
float3 lut3(no_diff int i, IDiffTensor<float3, 1> table) { return table[i] * table[i]; }
[Differentiable]
float lut_loop(no_diff int i, IDiffTensor<float, 1> table) {
    float s = 0.0;
    for (int k = 0; k < 3; k++) s += table[(i + k) % 64];
    return s;
}
[Differentiable]
float lut_loop_big(no_diff int i, IDiffTensor<float, 1> table) {
    float s = 0.0;
    for (int k = 0; k < 4; k++) s += table[(i + k * 4099) % 1048576] * float(k + 1);
    return s;
}
[Differentiable]
float mat_quad(float x, float2x2 m) { return m[0][0] * x * x + m[0][1] * x + m[1][0] - m[1][1] * x; }
[Differentiable]
double mat_quad_d(double x, double2x2 m) { return m[0][0] * x * x + m[0][1] * x + m[1][0] - m[1][1] * x; }
"""

H, W = 256, 300  # several CUDA blocks and warps per gradient element
RUNS = 10


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "deterministic", SOURCE, options={"deterministic": True})


@pytest.fixture(scope="module")
def m_fast(sg, device):
    return sg.Module.load_from_source(device, "deterministic_fast", SOURCE)


def run_grads(fn, inputs, grad_out, runs=RUNS):
    """Calls fn on fresh leaf copies of `inputs` (a list of tensors; None entries pass through
    `grad_out`-less constants) `runs` times; returns the gradient lists, asserting equal bits."""
    first = None
    grads = None
    for _ in range(runs):
        leaves = [t.detach().clone().requires_grad_(t.requires_grad) for t in inputs]
        fn(*leaves).backward(grad_out)
        grads = [t.grad for t in leaves if t.requires_grad]
        got = [bits(g) for g in grads]
        if first is None:
            first = got
        for a, b in zip(got, first):
            assert torch.equal(a, b), "gradient bits differ between runs"
    return grads


def reference(expr, inputs, grad_out):
    """float64 gradients of expr (a torch function of the inputs) for the inputs that require grad."""
    leaves = [t.detach().double().requires_grad_(t.requires_grad) for t in inputs]
    expr(*leaves).backward(grad_out.double())
    return [t.grad for t in leaves if t.requires_grad]


def rand(shape, gen, dtype, requires_grad=False, lo=-0.5, hi=0.5):
    t = (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype).to(TEST_DEVICE)
    return t.requires_grad_(requires_grad)


# (shapes of a, b, c) in a call of shape (H, W): partial broadcasts beside full ones.
PARTIAL = {
    "(1,W)": ((1, W), (), (H, W)),
    "(H,1)": ((H, 1), (1,), (1, 1)),
    "(1,W)+(H,1)": ((1, W), (H, 1), ()),
    "(W,)": ((W,), (H, 1), (1,)),
}


@pytest.mark.parametrize("dtype", list(QUADS), ids=DTYPE_IDS)
@pytest.mark.parametrize("pattern", list(PARTIAL))
def test_partial_broadcasts_are_bitwise_identical_and_exact(m, dtype, pattern):
    gen = torch.Generator().manual_seed(11)
    x = rand((H, W), gen, dtype, requires_grad=True)
    params = [rand(s, gen, dtype, requires_grad=True) for s in PARTIAL[pattern]]
    g = rand((H, W), gen, dtype, lo=0.0, hi=1.0)
    got = run_grads(getattr(m, QUADS[dtype]), [x, *params], g)
    want = reference(lambda x, a, b, c: a * x * x + b * x + c, [x, *params], g)
    for gg, ww in zip(got, want):
        assert gg.shape == ww.shape and gg.dtype == dtype
        close(gg, ww, RTOL[dtype])


def test_expanded_views_are_bitwise_identical(m):
    gen = torch.Generator().manual_seed(12)
    x = rand((H, W), gen, torch.float32)
    a_leaf = rand((1, W), gen, torch.float32, requires_grad=True)
    g = rand((H, W), gen, torch.float32, lo=0.0, hi=1.0)
    first = None
    for _ in range(RUNS):
        a = a_leaf.detach().clone().requires_grad_(True)
        m.quad(x, a.expand(H, W), a.expand(H, W), torch.zeros(1, device=TEST_DEVICE)).backward(g)
        if first is None:
            first = bits(a.grad)
        assert torch.equal(bits(a.grad), first)
    xd = x.double()
    close(a.grad, (g.double() * (xd * xd + xd)).sum(0, keepdim=True), RTOL[torch.float32])


def test_vector_and_array_partial_broadcasts(m):
    gen = torch.Generator().manual_seed(13)
    p = rand((64, 40, 3), gen, torch.float32)
    k = rand((1, 40, 3), gen, torch.float32, requires_grad=True)
    g = rand((64, 40, 3), gen, torch.float32, lo=0.0, hi=1.0)
    (got,) = run_grads(m.shade, [p, k], g)
    (want,) = reference(lambda p, k: p * k * k + torch.sin(p * k), [p, k], g)
    close(got, want, 1e-4)
    x = rand((H, W), gen, torch.float32)
    w = rand((H, 1, 4), gen, torch.float32, requires_grad=True)
    g = rand((H, W), gen, torch.float32, lo=0.0, hi=1.0)
    (got,) = run_grads(m.poly, [x, w], g)
    (want,) = reference(lambda x, w: w[..., 0] + w[..., 1] * x + w[..., 2] * x * x + w[..., 3] * x * x * x, [x, w], g)
    close(got, want, 1e-4)


def table_case(dtype, entries, indices, seed):
    gen = torch.Generator().manual_seed(seed)
    n = 1 << 16 if entries < (1 << 20) else 1 << 20
    if dtype == torch.float16:
        n = min(n, 64 if indices == "uniform" else 64 * entries)  # about 64 adds per element: sums half holds
    table = (torch.rand(entries, generator=gen) + 0.5).to(dtype).to(TEST_DEVICE).requires_grad_(True)
    if indices == "uniform":
        idx = torch.full((n,), entries // 2, dtype=torch.int32)
    else:
        idx = torch.randint(0, entries, (n,), generator=gen, dtype=torch.int32)
    g = torch.rand(n, generator=gen).to(dtype).to(TEST_DEVICE)
    return table, idx.to(TEST_DEVICE), g


# The largest table an ordered CUDA gradient takes is 1408 floats (8 warps a block): the 1M-entry
# tables are past it, so on CUDA they are summed in fixed point; the CPU orders any size.
@pytest.mark.parametrize("dtype", list(LUTS), ids=DTYPE_IDS)
@pytest.mark.parametrize("entries", [1, 32, 256, 1 << 20])
@pytest.mark.parametrize("indices", ["uniform", "random"])
def test_tables_are_bitwise_identical_and_exact(m, dtype, entries, indices):
    table, idx, g = table_case(dtype, entries, indices, seed=14)
    fn = getattr(m, LUTS[dtype])
    (got,) = run_grads(lambda i, t: fn(i, t), [idx, table], g)
    td = table.detach().double()
    want = torch.zeros(entries, dtype=torch.float64, device=TEST_DEVICE).index_add_(
        0, idx.long(), 2.0 * td[idx.long()] * g.double()
    )
    assert got.dtype == dtype
    rtol = RTOL[dtype]
    if dtype == torch.float16:
        rtol = 5e-2  # every add into a half element rounds (test_grad_strategies.py measures torch's)
    close(got, want, rtol)


def test_interpolated_and_vector_tables(m):
    gen = torch.Generator().manual_seed(15)
    u = torch.rand(1 << 16, generator=gen).to(TEST_DEVICE)
    table = (torch.rand(256, generator=gen) + 0.5).to(TEST_DEVICE).requires_grad_(True)
    g = torch.rand(1 << 16, generator=gen).to(TEST_DEVICE)
    (got,) = run_grads(m.lerp_lut, [u, table], g)
    p = u.double() * 255.0
    i = p.long().clamp(max=254)
    f = p - i.double()
    want = torch.zeros(256, dtype=torch.float64, device=TEST_DEVICE)
    want.index_add_(0, i, g.double() * (1.0 - f)).index_add_(0, i + 1, g.double() * f)
    close(got, want, 1e-4)
    idx = torch.randint(0, 64, (1 << 15,), generator=gen, dtype=torch.int32).to(TEST_DEVICE)
    t3 = (torch.rand(64, 3, generator=gen) + 0.5).to(TEST_DEVICE).requires_grad_(True)
    g3 = torch.rand(1 << 15, 3, generator=gen).to(TEST_DEVICE)
    (got,) = run_grads(m.lut3, [idx, t3], g3)
    td = t3.detach().double()
    want = torch.zeros(64, 3, dtype=torch.float64, device=TEST_DEVICE).index_add_(
        0, idx.long(), 2.0 * td[idx.long()] * g3.double()
    )
    close(got, want, 1e-4)


def test_fast_and_deterministic_agree(m, m_fast):
    table, idx, g = table_case(torch.float32, 256, "random", seed=16)
    grads = []
    for fn in (m_fast.lut, m.lut):
        t = table.detach().clone().requires_grad_(True)
        fn(idx, t).backward(g)
        grads.append(t.grad)
    close(grads[1], grads[0].double(), 1e-5)


def test_debug_code_says_deterministic(m):
    x = torch.rand(8, 6, device=TEST_DEVICE)
    b = torch.rand(1, 6, device=TEST_DEVICE, requires_grad=True)
    code = m.quad.debug_code(x, b, b, b)
    assert "// gradient of 'a': atomic (broadcast along some call dimensions: summed in a fixed order" in code
    table = torch.rand(32, device=TEST_DEVICE, requires_grad=True)
    idx = torch.zeros(8, dtype=torch.int32, device=TEST_DEVICE)
    assert "// gradient of 'table': collide (colliding by data: summed in a fixed order" in m.lut.debug_code(idx, table)
    if TEST_DEVICE == "cuda":
        assert "sg_ordered_record(" in m.lut.debug_code(idx, table)


def test_table_read_in_a_loop(m):
    # An add site inside a loop runs several times per element: on CUDA no ordered table takes it,
    # a fixed-point one does.
    gen = torch.Generator().manual_seed(17)
    idx = torch.randint(0, 64, (1 << 14,), generator=gen, dtype=torch.int32).to(TEST_DEVICE)
    table = (torch.rand(64, generator=gen) + 0.5).to(TEST_DEVICE).requires_grad_(True)
    g = torch.rand(1 << 14, generator=gen).to(TEST_DEVICE)
    (got,) = run_grads(m.lut_loop, [idx, table], g)
    want = torch.zeros(64, dtype=torch.float64)
    for k in range(3):
        want.index_add_(0, (idx.long().cpu() + k) % 64, g.double().cpu())
    close(got, want, 1e-5)


def test_large_table_read_in_a_loop(m):
    gen = torch.Generator().manual_seed(18)
    entries = 1 << 20
    idx = torch.randint(0, entries, (1 << 18,), generator=gen, dtype=torch.int32).to(TEST_DEVICE)
    table = (torch.rand(entries, generator=gen) + 0.5).to(TEST_DEVICE).requires_grad_(True)
    g = torch.rand(1 << 18, generator=gen).to(TEST_DEVICE)
    (got,) = run_grads(m.lut_loop_big, [idx, table], g)
    want = torch.zeros(entries, dtype=torch.float64)
    for k in range(4):
        want.index_add_(0, (idx.long().cpu() + k * 4099) % entries, g.double().cpu() * (k + 1))
    close(got, want, 1e-5)


@pytest.mark.parametrize("entries", [256, 1 << 20])
def test_batch_of_tables(m, entries):
    # table (B, entries) with a call of shape (K, B): call element (k, b) reads table b.
    gen = torch.Generator().manual_seed(19)
    K, B = (512, 16) if entries < (1 << 20) else (4096, 2)
    table = (torch.rand(B, entries, generator=gen) + 0.5).to(TEST_DEVICE).requires_grad_(True)
    idx = torch.randint(0, entries, (K, B), generator=gen, dtype=torch.int32).to(TEST_DEVICE)
    g = torch.rand(K, B, generator=gen).to(TEST_DEVICE)
    (got,) = run_grads(m.lut, [idx, table], g)
    assert got.shape == (B, entries)
    td = table.detach().double().cpu()
    want = torch.zeros(B, entries, dtype=torch.float64)
    for b in range(B):
        i = idx[:, b].long().cpu()
        want[b].index_add_(0, i, 2.0 * td[b][i] * g[:, b].double().cpu())
    close(got, want, 1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(1, 2, 2), (W, 2, 2)], ids=["(1,2,2)", "(W,2,2)"])
def test_matrix_elements(m, dtype, shape):
    # A float2x2 parameter broadcast over (H, W) call elements: its gradient elements collide.
    gen = torch.Generator().manual_seed(20)
    x = rand((H, W), gen, dtype)
    mat = rand(shape, gen, dtype, requires_grad=True)
    g = rand((H, W), gen, dtype, lo=0.0, hi=1.0)
    fn = m.mat_quad if dtype == torch.float32 else m.mat_quad_d
    (got,) = run_grads(fn, [x, mat], g)
    (want,) = reference(lambda x, a: a[..., 0, 0] * x * x + a[..., 0, 1] * x + a[..., 1, 0] - a[..., 1, 1] * x,
                        [x, mat], g)
    assert got.shape == want.shape and got.dtype == dtype
    close(got, want, 1e-5 if dtype == torch.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_extreme_magnitudes_keep_each_entrys_precision(m, dtype):
    # A 1M-entry table (fixed point on CUDA): entries whose adds are all huge, all tiny, subnormal,
    # or mixed, each summed at its own scale. Per-entry error against float64 index_add, relative
    # to the entry's own sum of magnitudes (a sum of subnormals is exact).
    finfo = torch.finfo(dtype)
    classes = [finfo.max / 2 ** 13, 1.0, finfo.tiny * 4, finfo.tiny / 2 ** 10]  # the last one subnormal
    gen = torch.Generator().manual_seed(23)
    entries, per = 1 << 20, 8
    hit = 16 + torch.randperm(entries - 16, generator=gen)[: 4 * 64]  # 64 entries a class, 8 adds each
    idx = hit.repeat_interleave(per).to(torch.int32)
    scale = torch.tensor(classes, dtype=torch.float64).repeat_interleave(64 * per)
    g = (scale * (torch.rand(idx.numel(), generator=gen, dtype=torch.float64) + 0.5)).to(dtype)
    mixed = torch.randint(0, 16, (1 << 12,), generator=gen, dtype=torch.int32)  # every class on entries 0..15
    mixed_g = (torch.tensor(classes, dtype=torch.float64)[torch.arange(1 << 12) % 4]).to(dtype)
    idx, g = torch.cat([idx, mixed]), torch.cat([g, mixed_g])
    # d/dt t*t at t = 1: g*t + g*t = 2g, exact (halving a subnormal would round)
    table = torch.full((entries,), 1.0, dtype=dtype, device=TEST_DEVICE, requires_grad=True)
    fn = m.lut if dtype == torch.float32 else m.lut_d
    (got,) = run_grads(fn, [idx.to(TEST_DEVICE), table], g.to(TEST_DEVICE), runs=3)
    gd = 2.0 * g.double()
    want = torch.zeros(entries, dtype=torch.float64).index_add_(0, idx.long(), gd)
    magnitude = torch.zeros(entries, dtype=torch.float64).index_add_(0, idx.long(), gd.abs())
    got = got.double().cpu()
    # CUDA sums in fixed point at each entry's scale: the total is rounded once. The CPU adds in
    # order in the gradient's type: each add may round.
    rounding = 2.0 if TEST_DEVICE == "cuda" else torch.bincount(idx.long(), minlength=entries).double()
    err = (got - want).abs()
    assert torch.all(err <= rounding * finfo.eps * magnitude + finfo.tiny * finfo.eps), "per-entry precision lost"
    sub = hit[3 * 64:].long()  # subnormal adds only: exact sums
    assert torch.equal(got[sub], want[sub].to(dtype).double())


@pytest.mark.parametrize("entries", [256, 1 << 20])
def test_nan_and_inf_propagate(m, entries):
    # Entry 1 gets a NaN, 2 a +Inf, 3 a -Inf, 4 both infinities (NaN), 5 an Inf and finite adds;
    # the rest finite adds (float64 semantics of the sum whatever its order).
    gen = torch.Generator().manual_seed(21)
    n = 1 << 14
    table = (torch.rand(entries, generator=gen) + 0.5).to(TEST_DEVICE).requires_grad_(True)
    idx = torch.randint(0, entries, (n,), generator=gen, dtype=torch.int32)
    g = torch.rand(n, generator=gen)
    special = {0: (1, float("nan")), 1: (2, float("inf")), 2: (3, float("-inf")), 3: (4, float("inf")),
               4: (4, float("-inf")), 5: (5, float("inf")), 6: (5, 0.25), 7: (5, 0.5)}
    for pos, (entry, value) in special.items():
        idx[pos] = entry
        g[pos] = value
    idx, g = idx.to(TEST_DEVICE), g.to(TEST_DEVICE)
    (got,) = run_grads(m.lut, [idx, table], g)
    td = table.detach().double().cpu()
    want = torch.zeros(entries, dtype=torch.float64).index_add_(0, idx.long().cpu(),
                                                                2.0 * td[idx.long().cpu()] * g.double().cpu())
    got = got.double().cpu()
    assert torch.isnan(got[1]) and torch.isnan(got[4])
    assert got[2] == float("inf") and got[5] == float("inf") and got[3] == float("-inf")
    assert torch.equal(torch.isfinite(got), torch.isfinite(want))
    finite = torch.isfinite(want)
    close(got[finite], want[finite], 1e-5)


@pytest.mark.parametrize("entries", [256, 1 << 20])
def test_gradient_accumulates_into_existing_grad(m, entries):
    gen = torch.Generator().manual_seed(22)
    table, idx, g = table_case(torch.float32, entries, "random", seed=23)
    start = (torch.rand(entries, generator=gen) - 0.5).to(TEST_DEVICE)
    first = None
    for _ in range(RUNS):
        t = table.detach().clone().requires_grad_(True)
        t.grad = start.clone()
        m.lut(idx, t).backward(g)
        m.lut(idx, t).backward(g)  # twice: .grad holds start + 2 * the call's gradient
        if first is None:
            first = bits(t.grad)
        assert torch.equal(bits(t.grad), first), "gradient bits differ between runs"
    td = table.detach().double().cpu()
    i = idx.long().cpu()
    want = start.double().cpu() + 2.0 * torch.zeros(entries, dtype=torch.float64).index_add_(
        0, i, 2.0 * td[i] * g.double().cpu())
    close(t.grad, want, 1e-5)
