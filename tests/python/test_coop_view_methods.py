# tests/python/test_coop_view_methods.py — Slang's TensorView / DiffTensorView methods beyond load
# and store, launched from Python on SHADEGRAD_TEST_DEVICE: `loadOnce` (its backward stores the
# gradient) with `storeOnce`, gradients against torch and float64 finite differences through
# slangtorch's `.bwd` / `.fwd`; slangtorch's `.diff.diff` spelling inside a hand-written backward
# (as slangtorch's inline MLP adds its weight gradients); the Interlocked methods
# (`v.InterlockedAdd(index, value, out original)`, ...) and the free Interlocked operations on
# RWStructuredBuffer elements with many threads hitting one element.
import pytest
import torch

import shadegrad as sg
import shadegrad.slangtorch as slangtorch
from conftest import TEST_DEVICE

ONCE = """
[Differentiable]
[CUDAKernel]
void cubic(DiffTensorView<double> x, DiffTensorView<double> y, double a)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i >= x.size(0)) return;
    double v = x.loadOnce(i);
    y.storeOnce(i, a * v * v * v + sin(v));
}

// A row sum whose hand-written backward adds into the gradients through `.diff.diff`.
[BackwardDerivative(row_sum_bwd)]
void row_sum(DiffTensorView<float> w, DiffTensorView<float> out, uint r)
{
    float s = 0.0;
    for (uint c = 0; c < w.size(1); c++)
        s += w.primal[r, c];
    out.store(r, s);
}

void row_sum_bwd(DiffTensorView<float> w, DiffTensorView<float> out, uint r)
{
    float g = out.diff.diff.load(r);
    for (uint c = 0; c < w.size(1); c++)
    {
        float old;
        w.diff.diff.InterlockedAdd(uint2(r, c), g * float(c + 1), old);
    }
}

[Differentiable]
[CUDAKernel]
void rows(DiffTensorView<float> w, DiffTensorView<float> out)
{
    uint r = cudaThreadIdx().x;
    if (r < out.size(0)) row_sum(w, out, r);
}

[Differentiable]
[CUDAKernel]
void half_poly(DiffTensorView<half> x, DiffTensorView<half> y)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i >= y.size(0)) return;
    half v = x.load(i);
    y.store(i, v * v * half(0.5) + v);
}

struct Tally { int hits; float weight; };
groupshared Tally tallies[8];
groupshared uint2 extremes;

// A block's histogram through Interlocked operations on groupshared struct fields and vector components.
[CUDAKernel]
void block_tally(TensorView<int> values, TensorView<int> hits, TensorView<float> weights, TensorView<uint> ext)
{
    uint t = cudaThreadIdx().x;
    uint b = cudaBlockIdx().x;
    if (t < 8) { tallies[t].hits = 0; tallies[t].weight = 0.0; }
    if (t == 0) extremes = uint2(0u, 0xffffffffu);
    GroupMemoryBarrierWithGroupSync();
    uint i = b * cudaBlockDim().x + t;
    if (i < values.size(0))
    {
        int v = values[i];
        InterlockedAdd(tallies[v].hits, 1);
        InterlockedAdd(tallies[v].weight, 0.25);
        InterlockedMax(extremes.x, uint(v));
        InterlockedMin(extremes.y, uint(v));
    }
    GroupMemoryBarrierWithGroupSync();
    if (t < 8) { hits[b, t] = tallies[t].hits; weights[b, t] = tallies[t].weight; }
    if (t == 0) { ext[b, 0] = extremes.x; ext[b, 1] = extremes.y; }
}

[CUDAKernel]
void methods(TensorView<int> acc, TensorView<uint> bits, TensorView<float> f, TensorView<int> claims, int n)
{
    uint t = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (t >= uint(n)) return;
    int o;
    acc.InterlockedAdd(0, 1, o);
    acc.InterlockedMax(1, int(t), o);
    acc.InterlockedMin(2, -int(t), o);
    uint ob;
    bits.InterlockedOr(0, 1u << (t % 32), ob);
    bits.InterlockedXor(1, 1u, ob);
    bits.InterlockedAnd(2, ~(1u << (t % 16)), ob);
    float of;
    f.InterlockedAdd(0, 0.5, of);
    claims.InterlockedCompareExchange(t % 7, -1, int(t));   // the first thread of each residue claims it
}
"""

BUFFERS = """
void hit_int(int v, RWStructuredBuffer<int> b)
{
    InterlockedAdd(b[0], 1);
    InterlockedMin(b[1], -v);
    InterlockedMax(b[2], v);
    int old;
    InterlockedExchange(b[3], v, old);
    InterlockedCompareExchange(b[4], 0, v + 1, old);
}
void hit_uint(uint v, RWStructuredBuffer<uint> b)
{
    InterlockedOr(b[0], 1u << (v % 32));
    InterlockedAnd(b[1], ~(1u << (v % 32)));
    InterlockedXor(b[2], 1u << (v % 3));
    InterlockedAdd(b[3], v);
}
void hit_int64(int v, RWStructuredBuffer<int64_t> b)
{
    InterlockedAdd(b[0], int64_t(v) << 32);
    InterlockedMax(b[1], int64_t(v) << 32);
}
void hit_float(float v, RWStructuredBuffer<float> b)
{
    InterlockedAdd(b[0], v);
    float old;
    InterlockedExchange(b[1], 2.5, old);
}
"""


@pytest.fixture(scope="module")
def once():
    return slangtorch.loadModuleFromSource(ONCE, moduleName="view_methods")


@pytest.fixture(scope="module")
def buffers(device):
    return sg.Module.load_from_source(device, "buffer_atomics", BUFFERS)


def cubic_torch(x, a):
    return a * x ** 3 + torch.sin(x)


def test_load_once_gradients_against_torch_and_finite_differences(once):
    gen = torch.Generator().manual_seed(3)
    x = (torch.rand(300, generator=gen, dtype=torch.float64) * 2 - 1).to(TEST_DEVICE)
    gy = torch.rand(300, generator=gen, dtype=torch.float64).to(TEST_DEVICE)
    y = torch.zeros_like(x)
    launch = dict(blockSize=(128, 1, 1), gridSize=(3, 1, 1))
    once.cubic(x=x, y=y, a=0.5).launchRaw(**launch)
    torch.testing.assert_close(y, cubic_torch(x, 0.5), rtol=1e-12, atol=1e-12)
    # loadOnce's backward stores: a stale value in the gradient is replaced, not added to
    gx = torch.full_like(x, 1e6)
    once.cubic.bwd(x=(x, gx), y=(y, gy), a=0.5).launchRaw(**launch)
    xr = x.clone().requires_grad_()
    (cubic_torch(xr, 0.5) * gy).sum().backward()
    torch.testing.assert_close(gx, xr.grad, rtol=1e-12, atol=1e-12)
    eps = 1e-6
    for i in (0, 7, 299):
        hi, lo = x.clone(), x.clone()
        hi[i] += eps
        lo[i] -= eps
        fd = float(((cubic_torch(hi, 0.5) - cubic_torch(lo, 0.5)) * gy).sum()) / (2 * eps)
        assert abs(fd - float(gx[i])) < 1e-6
    # forward mode: loadOnce reads the tangent as load does, storeOnce writes it
    dx, dy = torch.rand(300, generator=gen, dtype=torch.float64).to(TEST_DEVICE), torch.zeros_like(x)
    once.cubic.fwd(x=(x, dx), y=(y, dy), a=0.5).launchRaw(**launch)
    torch.testing.assert_close(dy, (1.5 * x * x + torch.cos(x)) * dx, rtol=1e-12, atol=1e-12)


def test_diff_diff_in_a_hand_written_backward(once):
    w = torch.arange(12, dtype=torch.float32, device=TEST_DEVICE).reshape(4, 3)
    out = torch.zeros(4, device=TEST_DEVICE)
    once.rows(w=w, out=out).launchRaw(blockSize=(4, 1, 1), gridSize=(1, 1, 1))
    torch.testing.assert_close(out, w.sum(1))
    gw, gout = torch.zeros_like(w), torch.tensor([1.0, -2.0, 0.5, 3.0], device=TEST_DEVICE)
    once.rows.bwd(w=(w, gw), out=(out, gout)).launchRaw(blockSize=(4, 1, 1), gridSize=(1, 1, 1))
    expect = gout.unsqueeze(1) * torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE)
    torch.testing.assert_close(gw, expect)


@pytest.mark.parametrize("n", [1, 33, 1000])
def test_interlocked_methods_under_contention(once, n):
    acc = torch.tensor([0, -(1 << 30), 1 << 30], dtype=torch.int32, device=TEST_DEVICE)
    bits = torch.tensor([0, 0, 0xFFFF], dtype=torch.int64).to(torch.int32).to(TEST_DEVICE)
    f = torch.zeros(1, device=TEST_DEVICE)
    claims = torch.full((7,), -1, dtype=torch.int32, device=TEST_DEVICE)
    bits_u = bits.view(torch.uint32)
    once.methods(acc=acc, bits=bits_u, f=f, claims=claims, n=n).launchRaw(
        blockSize=(256, 1, 1), gridSize=((n + 255) // 256, 1, 1))
    assert acc.cpu().tolist() == [n, n - 1, -(n - 1)]
    b = [int(v) & 0xFFFFFFFF for v in bits.cpu().tolist()]
    assert b[0] == (0xFFFFFFFF if n >= 32 else (1 << n) - 1)
    assert b[1] == n % 2
    assert b[2] == (0 if n >= 16 else 0xFFFF & ~((1 << n) - 1))
    assert float(f.item()) == 0.5 * n
    c = claims.cpu().tolist()
    for r in range(7):
        if r < n:
            assert c[r] >= 0 and c[r] % 7 == r
        else:
            assert c[r] == -1


def test_interlocked_on_buffer_elements_under_contention(buffers):
    n = 2000
    v = torch.arange(n, dtype=torch.int32, device=TEST_DEVICE)
    b = torch.zeros(5, dtype=torch.int32, device=TEST_DEVICE)
    buffers.hit_int(v, b)
    got = b.cpu().tolist()
    assert got[0] == n and got[1] == -(n - 1) and got[2] == n - 1
    assert 0 <= got[3] < n                       # some thread's value: the last exchange
    assert 1 <= got[4] <= n                      # the one compare-exchange that found 0
    u = torch.tensor([0, -1, 0, 0], dtype=torch.int32, device=TEST_DEVICE)
    buffers.hit_uint(v.view(torch.uint32), u.view(torch.uint32))
    ub = [int(x) & 0xFFFFFFFF for x in u.cpu().tolist()]
    assert ub[0] == 0xFFFFFFFF and ub[1] == 0
    x = 0
    for k in range(n):
        x ^= 1 << (k % 3)
    assert ub[2] == x
    assert ub[3] == (n * (n - 1) // 2) & 0xFFFFFFFF
    w = torch.zeros(2, dtype=torch.int64, device=TEST_DEVICE)
    buffers.hit_int64(v, w)
    assert w.cpu().tolist() == [(n * (n - 1) // 2) << 32, (n - 1) << 32]
    fb = torch.zeros(2, device=TEST_DEVICE)
    buffers.hit_float(torch.full((n,), 0.25, device=TEST_DEVICE), fb)
    assert fb.cpu().tolist() == [0.25 * n, 2.5]


def test_half_values_with_float_gradients(once):
    # Slang's DiffTensorView<half>: half values, float32 gradients (`.diff.diff` is a TensorView<float>)
    x = torch.tensor([0.5, -1.25, 2.0, 3.5], dtype=torch.float16, device=TEST_DEVICE)
    y = torch.zeros_like(x)
    once.half_poly(x=x, y=y).launchRaw(blockSize=(4, 1, 1), gridSize=(1, 1, 1))
    xf = x.float()
    torch.testing.assert_close(y, (xf * xf * 0.5 + xf).half())
    gx, gy = torch.zeros(4, device=TEST_DEVICE), torch.tensor([1.0, 2.0, -1.0, 0.5], device=TEST_DEVICE)
    once.half_poly.bwd(x=(x, gx), y=(y, gy.clone())).launchRaw(blockSize=(4, 1, 1), gridSize=(1, 1, 1))
    # the adjoint is computed in half (as the values are), then stored into the float gradient
    torch.testing.assert_close(gx, (xf + 1.0) * gy, rtol=2e-3, atol=2e-3)
    with pytest.raises(TypeError, match="half_poly.bwd\\(\\): parameter 'x' \\(DiffTensorView<half>\\): the gradient "
                                        "is a float16 tensor, the values float16 \\(whose gradient is float32\\)"):
        once.half_poly.bwd(x=(x, torch.zeros_like(x)), y=(y, gy)).launchRaw(blockSize=(4, 1, 1), gridSize=(1, 1, 1))


def test_half_autograd_through_thread_count(once):
    x = torch.tensor([0.5, -1.25, 2.0], dtype=torch.float16, device=TEST_DEVICE, requires_grad=True)
    y = torch.zeros(3, dtype=torch.float16, device=TEST_DEVICE)
    out = once.module.half_poly(x, y, _thread_count=3)  # SlangPy's form: joins torch autograd
    (out.float() * torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE)).sum().backward()
    assert x.grad.dtype == torch.float16
    torch.testing.assert_close(x.grad.float(), (x.detach().float() + 1.0) * torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE),
                               rtol=2e-3, atol=2e-3)


def test_interlocked_on_groupshared_fields_and_components(once):
    n, block = 1000, 128
    values = torch.randint(0, 8, (n,), generator=torch.Generator().manual_seed(9), dtype=torch.int32).to(TEST_DEVICE)
    blocks = (n + block - 1) // block
    hits = torch.full((blocks, 8), -1, dtype=torch.int32, device=TEST_DEVICE)
    weights = torch.zeros(blocks, 8, device=TEST_DEVICE)
    ext = torch.zeros(blocks, 2, dtype=torch.int32, device=TEST_DEVICE)
    once.block_tally(values, hits, weights, ext.view(torch.uint32)).launchRaw(
        blockSize=(block, 1, 1), gridSize=(blocks, 1, 1))
    v = values.cpu().long()
    for b in range(blocks):
        part = v[b * block:(b + 1) * block]
        want = torch.bincount(part, minlength=8)
        assert hits.cpu()[b].tolist() == want.tolist()
        assert weights.cpu()[b].tolist() == (0.25 * want.float()).tolist()
        assert ext.cpu()[b].tolist() == [int(part.max()), int(part.min())]
