# tests/python/test_cuda.py — what only a GPU can show: kernels on a non-default torch stream with
# no host synchronization in between, tensors on cuda:1, 64-bit indexing, cache reuse across
# processes. Skipped on machines without CUDA (CI); scripts/gpu_check.sh runs them on the H200.
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
