# tests/python/test_coop_diff.py — differentiable cooperative kernels from Python:
# shadegrad.slangtorch's `.bwd(...)` and `.fwd(...)` with (values, gradient) pairs for
# DiffTensorView arguments (gradients against torch autograd and float64 finite differences, a
# kernel with groupshared memory and barriers), SlangPy's `_thread_count` launch taking part in
# torch autograd (gradcheck), and the argument errors, each naming the function and parameter.
import pytest
import torch

import shadegrad as sg
import shadegrad.slangtorch as slangtorch
from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
float poly(DiffTensorView<float> x, uint i) { return x.load(i) * x[i] * 3.0 + sin(x[i]); }

[AutoPyBindCUDA]
[Differentiable]
[CUDAKernel]
void square(DiffTensorView<float> x, DiffTensorView<float> y, float scale)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i >= x.size(0)) return;
    y.store(i, poly(x, i) * scale);
}

[Differentiable]
[CUDAKernel]
void square64(DiffTensorView<double> x, DiffTensorView<double> y, no_diff double scale)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i >= x.size(0)) return;
    double v = x.load(i);
    y.storeOnce(i, v * v * exp(v) * scale);
}

groupshared double tile[16];

// out[i] = x[i]^2 * (weights of the mirrored thread, through groupshared memory)
[Differentiable]
[CUDAKernel]
void mirrored(TensorView<double> w, DiffTensorView<double> x, DiffTensorView<double> out)
{
    uint t = cudaThreadIdx().x;
    uint i = cudaBlockIdx().x * 16 + t;
    tile[t] = w[i];
    GroupMemoryBarrierWithGroupSync();
    double v = x.load(i);
    out.store(i, v * v * tile[15 - t]);
}

[CUDAKernel]
void plain_kernel(TensorView<float> x) { x[cudaThreadIdx().x] = 1.0; }
"""


def load():
    return slangtorch.loadModuleFromSource(SOURCE, moduleName="coop_diff")


def torch_poly(x):
    return x * x * 3.0 + torch.sin(x)


def test_bwd_with_pairs_matches_torch_autograd():
    m = load()
    x = torch.linspace(-1.0, 1.5, 50, device=TEST_DEVICE)
    y = torch.zeros(50, device=TEST_DEVICE)
    m.square(x=x, y=y, scale=2.0).launchRaw(blockSize=(16, 1, 1), gridSize=(4, 1, 1))
    assert torch.allclose(y, torch_poly(x) * 2.0, rtol=1e-6, atol=1e-6)

    xt = x.detach().clone().requires_grad_(True)
    gy = torch.linspace(0.5, 2.0, 50, device=TEST_DEVICE)
    (torch_poly(xt) * 2.0 * gy).sum().backward()
    gx = torch.zeros_like(x)
    gy_in = gy.clone()
    m.square.bwd(x=(x, gx), y=(y, gy_in), scale=2.0).launchRaw(blockSize=(16, 1, 1), gridSize=(4, 1, 1))
    assert torch.allclose(gx, xt.grad, rtol=1e-5, atol=1e-6)
    # store's backward consumes the output gradient (reads and clears it), as slangtorch's does
    assert torch.count_nonzero(gy_in) == 0
    # a lone tensor for a DiffTensorView: no gradient there (the others still flow)
    gy_in = gy.clone()
    m.square.bwd(x, (y, gy_in), 2.0).launchRaw(blockSize=(16, 1, 1), gridSize=(4, 1, 1))
    assert torch.count_nonzero(gy_in) == 0


def test_bwd_against_float64_finite_differences_and_fwd_tangents():
    m = load()
    n = 20
    x = torch.linspace(-0.8, 0.9, n, dtype=torch.float64, device=TEST_DEVICE)
    w = torch.linspace(1.0, 2.0, n, dtype=torch.float64, device=TEST_DEVICE)

    def loss(xs):
        y = torch.zeros(n, dtype=torch.float64, device=TEST_DEVICE)
        m.square64(xs, y, 1.5).launchRaw(blockSize=(8, 1, 1), gridSize=(3, 1, 1))
        return float((y * w).sum())

    h = 1e-6
    want = torch.zeros(n, dtype=torch.float64)
    for j in range(n):
        up, down = x.clone(), x.clone()
        up[j] += h
        down[j] -= h
        want[j] = (loss(up) - loss(down)) / (2 * h)
    gx = torch.zeros_like(x)
    y = torch.zeros_like(x)
    gw = w.clone()
    m.square64.bwd((x, gx), (y, gw), 1.5).launchRaw(blockSize=(8, 1, 1), gridSize=(3, 1, 1))
    assert torch.allclose(gx.cpu(), want, rtol=1e-7, atol=1e-9)
    assert torch.equal(gw, w)  # storeOnce's backward reads the gradient without consuming it
    # fwd: the tangent of y for a tangent of x
    dx = torch.linspace(0.1, 1.0, n, dtype=torch.float64, device=TEST_DEVICE)
    dy = torch.zeros_like(x)
    m.square64.fwd((x, dx), (y, dy), 1.5).launchRaw(blockSize=(8, 1, 1), gridSize=(3, 1, 1))
    xt = x.detach().clone()
    _, jvp = torch.func.jvp(lambda v: v * v * torch.exp(v) * 1.5, (xt,), (dx,))
    assert torch.allclose(dy, jvp, rtol=1e-12, atol=1e-12)


def test_bwd_of_a_kernel_with_groupshared_memory_and_a_barrier():
    m = load()
    n = 48
    w = torch.linspace(0.5, 3.0, n, dtype=torch.float64, device=TEST_DEVICE)
    x = torch.linspace(-1.0, 1.0, n, dtype=torch.float64, device=TEST_DEVICE)
    out = torch.zeros_like(x)
    m.mirrored(w, x, out).launchRaw(blockSize=(16, 1, 1), gridSize=(3, 1, 1))
    mirror = w.view(3, 16).flip(1).reshape(n)
    assert torch.allclose(out, x * x * mirror, rtol=1e-14)
    xt = x.clone().requires_grad_(True)
    g = torch.linspace(1.0, -1.0, n, dtype=torch.float64, device=TEST_DEVICE)
    (xt * xt * mirror * g).sum().backward()
    gx = torch.zeros_like(x)
    m.mirrored.bwd(w, (x, gx), (out, g.clone())).launchRaw(blockSize=(16, 1, 1), gridSize=(3, 1, 1))
    assert torch.allclose(gx, xt.grad, rtol=1e-13)


def test_thread_count_launch_takes_part_in_autograd():
    m = sg.Module.load_from_source(sg.create_device(), "coop_diff_tc", SOURCE)
    x = torch.linspace(-1.0, 1.0, 300, dtype=torch.float64, device=TEST_DEVICE).requires_grad_(True)

    def run(xs):
        y = torch.zeros(300, dtype=torch.float64, device=TEST_DEVICE)
        m.square64(xs, y, 0.5, _thread_count=300)
        return y

    y = run(x)
    assert y.grad_fn is not None
    assert torch.allclose(y.detach(), x.detach() ** 2 * torch.exp(x.detach()) * 0.5, rtol=1e-14)
    (y * torch.arange(300, dtype=torch.float64, device=TEST_DEVICE)).sum().backward()
    xd = x.detach()
    want = (2 * xd + xd * xd) * torch.exp(xd) * 0.5 * torch.arange(300, dtype=torch.float64, device=TEST_DEVICE)
    assert torch.allclose(x.grad, want, rtol=1e-12)
    xs = torch.linspace(-0.5, 0.7, 300, dtype=torch.float64, device=TEST_DEVICE).requires_grad_(True)
    assert torch.autograd.gradcheck(run, (xs,), eps=1e-6, atol=1e-7, fast_mode=True)
    # without grad: a plain launch
    with torch.no_grad():
        y2 = run(x)
    assert y2.grad_fn is None


def test_derivative_launch_errors_name_the_function_and_parameter():
    m = load()
    x = torch.zeros(8, device=TEST_DEVICE)
    y = torch.zeros(8, device=TEST_DEVICE)
    with pytest.raises(TypeError, match=r"plain_kernel\.bwd\(\): plain_kernel is not \[Differentiable\]"):
        m.plain_kernel.bwd(x).launchRaw(blockSize=(8, 1, 1))
    with pytest.raises(TypeError, match=r"square\.bwd\(\): parameter 'x' \(DiffTensorView<float>\): the gradient is a float64"):
        m.square.bwd((x, torch.zeros(8, dtype=torch.float64, device=TEST_DEVICE)), y, 1.0).launchRaw(blockSize=(8, 1, 1))
    with pytest.raises(ValueError, match=r"square\.bwd\(\): parameter 'y' \(DiffTensorView<float>\): the gradient's shape"):
        m.square.bwd(x, (y, torch.zeros(9, device=TEST_DEVICE)), 1.0).launchRaw(blockSize=(8, 1, 1))
    with pytest.raises(TypeError, match=r"square\.bwd\(\): parameter 'x' \(DiffTensorView<float>\) takes a tensor or a \(values, gradient\) pair"):
        m.square.bwd((x, x, x), y, 1.0).launchRaw(blockSize=(8, 1, 1))
    with pytest.raises(TypeError, match=r"square\(\): parameter 'scale' \(float\) takes a number"):
        m.square(x, y, "a").launchRaw(blockSize=(8, 1, 1))
    with pytest.raises(TypeError, match=r"square\.bwd\(\): parameter 'y' has no argument"):
        m.square.bwd(x=(x, y)).launchRaw(blockSize=(8, 1, 1))


HELPER_SOURCE = """
float row_product(DiffTensorView<float> a, uint r)
{
    float t = 1.0;
    for (uint j = 0; j < a.size(1); j++)  // no [MaxIters]: the helper is not differentiable
        t *= 1.0 - a[r, j];
    return t;
}

[Differentiable]
[CUDAKernel]
void weigh(DiffTensorView<float> a, DiffTensorView<float> x, DiffTensorView<float> out)
{
    uint r = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (r >= out.size(0)) return;
    out.storeOnce(r, row_product(a, r) * x[r]);
}
"""


def test_a_helper_that_is_not_differentiable_passes_no_derivative():
    # As in Slang, a call of a function without [Differentiable] from a differentiable kernel
    # carries no derivative: its DiffTensorView reads add nothing to a's gradient, and its loop
    # needs no [MaxIters] (it was an internal compiler error, found by the fuzzer).
    m = slangtorch.loadModuleFromSource(HELPER_SOURCE, moduleName="coop_helper_no_diff")
    a = torch.rand(5, 3, device=TEST_DEVICE) * 0.5
    x = torch.rand(5, device=TEST_DEVICE)
    out = torch.zeros(5, device=TEST_DEVICE)
    m.weigh(a=a, x=x, out=out).launchRaw(blockSize=(4, 1, 1), gridSize=(2, 1, 1))
    weight = torch.prod(1.0 - a, dim=1)
    torch.testing.assert_close(out, weight * x)
    ga, gx, g_out = torch.zeros_like(a), torch.zeros_like(x), torch.rand(5, device=TEST_DEVICE)
    m.weigh.bwd(a=(a, ga), x=(x, gx), out=(out, g_out)).launchRaw(blockSize=(4, 1, 1), gridSize=(2, 1, 1))
    torch.testing.assert_close(gx, weight * g_out)
    assert torch.count_nonzero(ga) == 0
