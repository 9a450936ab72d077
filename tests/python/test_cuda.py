# tests/python/test_cuda.py — what only a GPU can show: kernels on a non-default torch stream with
# no host synchronization in between, tensors on cuda:1, 64-bit indexing, cache reuse across
# processes, CUDA graph capture and replay of training steps. Skipped on machines without CUDA
# (CI); scripts/gpu_check.sh runs them on the H200.
import textwrap

import pytest
import torch

from conftest import run_python

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

SRC = """
import slangpy;
[Differentiable]
float mul2(no_diff int2 pix, IDiffTensor<float, 2> a, IDiffTensor<float, 2> b)
{
    return a[uint2(pix.x, pix.y)] * b[uint2(pix.x, pix.y)];
}
[Differentiable]
float axpb(float a, float x, float b) { return a * x + b; }
float add1(float x) { return x + 1.0; }
"""


@pytest.fixture(scope="module")
def m(sg):
    return sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cuda), "cuda_tests", SRC)


def test_runs_on_a_side_stream_without_host_sync(sg, m):
    side = torch.cuda.Stream()
    x = torch.rand(1 << 22, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        # A chain of kernels on the side stream: each reads the previous one's output. If any
        # ran on another stream, it would race with its producer.
        y = x
        for _ in range(20):
            y = m.add1(y)
        z = torch.sqrt(y)  # torch op on the same stream
        w = m.axpb(2.0, z, 1.0)
    side.synchronize()
    expected = 2.0 * torch.sqrt(x + 20.0) + 1.0
    torch.testing.assert_close(w, expected)


def test_backward_on_a_side_stream(sg, m):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        a = torch.rand(256, 256, device="cuda", requires_grad=True)
        b = torch.rand(256, 256, device="cuda", requires_grad=True)
        out = m.mul2(sg.grid((256, 256)), a, b)
        (out * 3).sum().backward()
    side.synchronize()
    assert torch.equal(a.grad, 3 * b.detach())
    assert torch.equal(b.grad, 3 * a.detach())


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_second_device(sg):
    dev = sg.create_torch_device(type=sg.DeviceType.cuda, index=1)
    m1 = sg.Module.load_from_source(dev, "m1", SRC)
    a = torch.rand(64, 64, device="cuda:1", requires_grad=True)
    b = torch.rand(64, 64, device="cuda:1")
    out = m1.mul2(sg.grid((64, 64)), a, b)
    assert out.device == torch.device("cuda:1")
    out.sum().backward()
    assert torch.equal(out.detach(), (a * b).detach())
    assert torch.equal(a.grad, b)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_tensors_on_two_devices_are_refused_naming_both(sg, m):
    a = torch.rand(8, 8, device="cuda:0")
    b = torch.rand(8, 8, device="cuda:1")
    with pytest.raises(ValueError, match=r"mul2\(\).*parameter 'b'.* on cuda:1, but other tensors of the call are on cuda:0"):
        m.mul2(sg.grid((8, 8)), a, b)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_two_devices_from_two_threads_each_on_its_stream(sg, m):
    # One module serves both devices: the tensors decide where a call runs (its plan is keyed by
    # the device, and the kernel compiled for one H200 is reused on the other: same architecture).
    import threading

    errors = []

    def work(dev: int):
        try:
            torch.cuda.set_device(dev)
            side = torch.cuda.Stream(device=dev)
            with torch.cuda.stream(side):
                for step in range(50):
                    a = torch.rand(128, 128, device=f"cuda:{dev}", requires_grad=True)
                    b = torch.rand(128, 128, device=f"cuda:{dev}")
                    out = m.mul2(sg.grid((128, 128)), a, b)
                    assert out.device == torch.device(f"cuda:{dev}")
                    out.sum().backward()
                    y = m.axpb(2.0, m.add1(a.detach()), float(step))
            side.synchronize()
            assert torch.equal(out.detach(), (a * b).detach())
            assert torch.equal(a.grad, b)
            torch.testing.assert_close(y, 2.0 * (a.detach() + 1.0) + 49.0)
        except Exception as e:  # noqa: BLE001 (reported by the main thread)
            errors.append(f"cuda:{dev}: {e!r}")

    # Alternate: each thread's calls interleave with the other device's.
    threads = [threading.Thread(target=work, args=(d,)) for d in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with torch.cuda.device(1):
        x = torch.rand(1000, device="cuda")  # cuda:1 through the device context
        torch.testing.assert_close(m.add1(x), x + 1.0)


def test_mixed_devices_are_refused(sg, m):
    with pytest.raises(ValueError, match=r"parameter 'x' of type float got a tensor on cpu, but the module's device is cuda"):
        m.add1(torch.ones(4))


def test_64bit_indexing(sg, m):
    n = (1 << 31) + 64  # 8.6 GB of float32: offsets past 2^31 need 64-bit arithmetic
    x = torch.empty(n, device="cuda")
    x[-128:] = torch.arange(128, device="cuda", dtype=torch.float32)
    key = m.add1.call_key(x)
    assert "opt=1" in key, key
    y = m.add1(x)
    torch.testing.assert_close(y[-128:], torch.arange(128, device="cuda", dtype=torch.float32) + 1)
    del x, y
    torch.cuda.empty_cache()


def test_cubin_cache_is_reused_by_a_new_process(tmp_path):
    code = textwrap.dedent(
        f"""
        import os, time, torch
        os.environ['SHADEGRAD_CACHE_DIR'] = {str(tmp_path)!r}
        import shadegrad as sg
        m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cuda), 'c', {SRC!r})
        x = torch.rand(1000, device='cuda')
        t = time.perf_counter(); y = m.add1(x); torch.cuda.synchronize(); dt = time.perf_counter() - t
        assert torch.equal(y, x + 1)
        print(dt)
        """
    )
    first = run_python(code)
    assert first.returncode == 0, first.stderr
    second = run_python(code)
    assert second.returncode == 0, second.stderr
    assert float(second.stdout) < float(first.stdout), (first.stdout, second.stdout)
    assert any(tmp_path.rglob("*.bin")), "no disk-cache entries were written"


# Small kernels run several call elements per thread (codegen: elements_per_thread), with an
# unrolled fast path for whole blocks and a checked tail: every size around the block edges must
# be covered exactly once.
@pytest.mark.parametrize("n", [1, 3, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 100_003])
def test_every_element_once_at_every_size(sg, m, n):
    x = torch.rand(n, device="cuda")
    torch.testing.assert_close(m.add1(x), x + 1.0, rtol=0, atol=0)
    a = torch.rand(n, device="cuda", requires_grad=True)
    y = m.axpb(a, 3.0, 0.5)
    torch.testing.assert_close(y, a.detach() * 3.0 + 0.5)
    y.backward(torch.ones_like(y))
    torch.testing.assert_close(a.grad, torch.full_like(a, 3.0), rtol=0, atol=0)


# The same for 2-D calls: the call index is decomposed with the rank fixed at generation.
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (17, 33), (255, 3), (2, 1025), (129, 257)])
def test_two_dimensional_calls_cover_every_element(sg, m, shape):
    a = torch.rand(shape, device="cuda", requires_grad=True)
    b = torch.rand(shape, device="cuda", requires_grad=True)
    out = m.mul2(sg.grid(shape), a, b)
    torch.testing.assert_close(out, (a * b).detach(), rtol=0, atol=0)
    out.backward(torch.full(shape, 2.0, device="cuda"))
    torch.testing.assert_close(a.grad, 2.0 * b.detach(), rtol=0, atol=0)
    torch.testing.assert_close(b.grad, 2.0 * a.detach(), rtol=0, atol=0)


# ---- CUDA graphs: torch.cuda.graph and torch.compile(mode="reduce-overhead") ------------------
# A cached call is capturable: kernels go to torch's current (capturing) stream, every output and
# gradient buffer comes from torch's allocator, gradient buffers are cleared with asynchronous
# memsets and nothing waits for the device. A call that would compile a kernel inside a capture
# is refused with an error that says to warm it up first.


def _loss(sg, m, a, b, x, target):
    y = m.mul2(sg.grid(tuple(a.shape)), a, b)  # both parameters get gradients
    z = m.axpb(y, x, 0.5)                      # y * x + 0.5: gradient through y only
    return ((z - target) ** 2).mean()


def _eager_step(sg, m, params, x, target, lr):
    for p in params:
        p.grad = None
    loss = _loss(sg, m, *params, x, target)
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
    return loss.detach()


def test_cuda_graph_replays_a_training_step(sg, m):
    torch.manual_seed(3)
    shape, lr, steps = (96, 80), 0.5, 100
    xs = torch.rand(steps, *shape, device="cuda") + 0.5
    targets = torch.rand(steps, *shape, device="cuda")
    a = (torch.rand(shape, device="cuda") + 0.5).requires_grad_(True)
    b = (torch.rand(shape, device="cuda") + 0.5).requires_grad_(True)
    static_x, static_target = xs[0].clone(), targets[0].clone()

    # Warm-up on a side stream (compiles the forward and backward kernels), as torch advises.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            _eager_step(sg, m, (a, b), static_x, static_target, lr)
    torch.cuda.current_stream().wait_stream(side)
    start = (a.detach().clone(), b.detach().clone())

    graph = torch.cuda.CUDAGraph()
    a.grad = b.grad = None  # backward inside the capture allocates them from the graph's pool
    with torch.cuda.graph(graph):
        static_loss = _loss(sg, m, a, b, static_x, static_target)
        static_loss.backward()
        with torch.no_grad():
            a -= lr * a.grad
            b -= lr * b.grad
    # Capturing ran nothing: replay from the warmed-up state.
    with torch.no_grad():
        a.copy_(start[0])
        b.copy_(start[1])
    losses = []
    for i in range(steps):
        static_x.copy_(xs[i])
        static_target.copy_(targets[i])
        graph.replay()
        losses.append(static_loss.clone())
    torch.cuda.synchronize()

    ea = start[0].clone().requires_grad_(True)
    eb = start[1].clone().requires_grad_(True)
    eager_losses = [_eager_step(sg, m, (ea, eb), xs[i], targets[i], lr) for i in range(steps)]
    torch.testing.assert_close(torch.stack(losses), torch.stack(eager_losses))
    torch.testing.assert_close(a.grad, ea.grad)
    torch.testing.assert_close(b.grad, eb.grad)
    torch.testing.assert_close(a.detach(), ea.detach())
    torch.testing.assert_close(b.detach(), eb.detach())
    assert not torch.equal(a.detach(), start[0])  # the replays did train


def test_cuda_graph_capture_in_debug_mode(sg, m):
    # Debug mode waits for every kernel outside a capture; inside one it must not wait.
    x = torch.rand(4096, device="cuda")
    sg.set_debug_mode(True)
    try:
        m.add1(x)  # warm-up
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = m.add1(x)
        x.copy_(torch.arange(4096, device="cuda", dtype=torch.float32))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(y, x + 1.0)
    finally:
        sg.set_debug_mode(False)


def test_compiling_inside_a_capture_is_refused(sg):
    fresh = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cuda), "capture_refused", SRC)
    x = torch.rand(1024, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=r"add1\(\): its forward kernel would have to be compiled while the CUDA "
                                           r"stream is capturing a graph .*warm it up before capturing"):
        with torch.cuda.graph(graph):
            fresh.add1(x)
    # Warmed up, the same call captures and replays.
    fresh.add1(x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = fresh.add1(x)
    x.copy_(torch.rand(1024, device="cuda"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, x + 1.0)


def test_compiling_a_backward_inside_a_capture_is_refused(sg):
    fresh = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cuda), "capture_refused_bwd", SRC)
    a = torch.rand(64, 64, device="cuda", requires_grad=True)
    b = torch.rand(64, 64, device="cuda")
    fresh.mul2(sg.grid((64, 64)), a, b)  # the forward only: the backward kernel compiles on first backward
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=r"mul2\(\): its backward kernel would have to be compiled while the CUDA "
                                           r"stream is capturing a graph"):
        with torch.cuda.graph(graph):
            fresh.mul2(sg.grid((64, 64)), a, b).sum().backward()


def test_torch_compile_reduce_overhead_matches_eager(sg, m):
    import torch._dynamo

    torch._dynamo.reset()
    shape = (64, 48)

    def loss_fn(a, b, x, target):
        return _loss(sg, m, a, b, x, target)

    compiled = torch.compile(loss_fn, mode="reduce-overhead")
    torch.manual_seed(4)
    a = (torch.rand(shape, device="cuda") + 0.5).requires_grad_(True)
    b = (torch.rand(shape, device="cuda") + 0.5).requires_grad_(True)
    for i in range(6):  # the first runs record, the later ones replay the CUDA graphs
        x = torch.rand(shape, device="cuda") + 0.5
        target = torch.rand(shape, device="cuda")
        torch.compiler.cudagraph_mark_step_begin()
        loss = compiled(a, b, x, target)
        ga, gb = torch.autograd.grad(loss, (a, b))
        ea, eb = a.detach().clone().requires_grad_(True), b.detach().clone().requires_grad_(True)
        eager = loss_fn(ea, eb, x, target)
        eager.backward()
        torch.testing.assert_close(loss.detach().clone(), eager.detach())
        torch.testing.assert_close(ga.clone(), ea.grad)
        torch.testing.assert_close(gb.clone(), eb.grad)
    torch._dynamo.reset()


@pytest.mark.parametrize("bridge", ["native", "fallback"])
def test_cuda_graph_capture_with_each_bridge(bridge):
    # A fresh process per bridge: the fallback's autograd node is a Python autograd.Function.
    code = textwrap.dedent(
        f"""
        import torch
        import shadegrad as sg
        assert sg.torch_bridge_status()["active"] == {bridge!r}, sg.torch_bridge_status()
        m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cuda), "g", {SRC!r})
        a = torch.rand(32, 48, device="cuda", requires_grad=True)
        b = torch.rand(32, 48, device="cuda", requires_grad=True)
        g = torch.rand(32, 48, device="cuda")
        def step():
            m.mul2(sg.grid((32, 48)), a, b).backward(g)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                a.grad = b.grad = None
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        a.grad = b.grad = None
        with torch.cuda.graph(graph):
            step()
        for _ in range(10):
            with torch.no_grad():
                a.copy_(torch.rand_like(a))
                b.copy_(torch.rand_like(b))
                g.copy_(torch.rand_like(g))
            graph.replay()
            torch.cuda.synchronize()
            assert torch.equal(a.grad, g * b.detach()) and torch.equal(b.grad, g * a.detach())
        print("ok")
        """
    )
    proc = run_python(code, bridge=bridge)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("ok")


@pytest.mark.parametrize("dynamic", [False, True])
def test_torch_compile_fullgraph_matches_eager(sg, m, dynamic):
    # torch.compile of a training step on the CUDA backend: one graph (fullgraph=True, inductor),
    # values and gradients as in eager mode, for two shapes.
    import torch._dynamo

    torch._dynamo.reset()

    def loss_fn(a, b, x, target):
        return _loss(sg, m, a, b, x, target)

    compiled = torch.compile(loss_fn, fullgraph=True, dynamic=dynamic)
    for shape, seed in (((40, 24), 5), ((17, 33), 6)):
        gen = torch.Generator(device="cuda").manual_seed(seed)
        a = (torch.rand(shape, device="cuda", generator=gen) + 0.5).requires_grad_(True)
        b = (torch.rand(shape, device="cuda", generator=gen) + 0.5).requires_grad_(True)
        x = torch.rand(shape, device="cuda", generator=gen) + 0.5
        target = torch.rand(shape, device="cuda", generator=gen)
        results = []
        for fn in (loss_fn, compiled):
            a.grad = b.grad = None
            loss = fn(a, b, x, target)
            loss.backward()
            results.append((loss.detach(), a.grad.clone(), b.grad.clone()))
        for eager, got in zip(*results):
            torch.testing.assert_close(got, eager, rtol=1e-5, atol=1e-6)
    torch._dynamo.reset()


def test_a_forked_child_gets_an_error_not_a_crash():
    # The fault record's pinned page is not inherited by a fork()ed child (MADV_DONTFORK, so that
    # the parent keeps the page the device writes); the child forgets the record, so a call there
    # fails with an exception rather than reading an unmapped page. The parent goes on working.
    code = textwrap.dedent(
        f"""
        import os, torch
        import shadegrad as sg
        m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cuda), 'f', {SRC!r})
        x = torch.rand(1000, device='cuda')
        out = torch.empty_like(x)
        m.add1(x, _result=out)
        torch.cuda.synchronize()
        pid = os.fork()
        if pid == 0:
            try:
                m.add1(x, _result=out)
            except Exception:
                os._exit(0)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        print(os.WIFSIGNALED(status), os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0)
        m.add1(x, _result=out)
        torch.cuda.synchronize()
        assert torch.equal(out, x + 1)
        """
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "0"], result.stdout


def test_launch_threads_without_a_context_bind_it_once():
    # torch's autograd thread for cuda:0 has no CUDA context until its first runtime call, and a
    # backward made only of shadegrad nodes makes none: the first launch there binds device 0's
    # primary context (as the runtime's first call would) and every later one finds it current,
    # instead of pushing and popping it around each launch. A fresh Python thread is the same.
    code = textwrap.dedent(
        f"""
        import threading, torch
        import shadegrad as sg
        from shadegrad import _core
        m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cuda), 'f', {SRC!r})
        a = torch.rand(64, 64, device='cuda', requires_grad=True)
        b = torch.rand(64, 64, device='cuda', requires_grad=True)
        g = torch.rand(64, 64, device='cuda')
        grid = sg.grid((64, 64))
        def counts():
            s = _core._compile_stats()
            return s['cuda_context_binds'], s['cuda_context_pushes']
        for _ in range(20):
            a.grad = None
            b.grad = None
            m.mul2(grid, a, b).backward(g)
        torch.cuda.synchronize()
        assert torch.allclose(a.grad, b * g) and torch.allclose(b.grad, a * g)
        after_backward = counts()
        out = []
        t = threading.Thread(target=lambda: out.extend(m.add1(a.detach()) for _ in range(5)))
        t.start()
        t.join()
        torch.cuda.synchronize()
        assert all(torch.equal(o, a.detach() + 1) for o in out)
        print(*after_backward, *counts())
        """
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    binds, pushes, binds_after_thread, pushes_after_thread = map(int, result.stdout.split())
    # At most one bind per thread that had no context (none where a torch runtime call bound it
    # first); never a push: every context here is device 0's. Before, each of the 20 backward
    # launches pushed and popped.
    assert binds <= 1 and pushes == 0, result.stdout
    assert binds <= binds_after_thread <= binds + 1 and pushes_after_thread == 0, result.stdout
