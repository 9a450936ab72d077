# tests/python/test_quick_first_kernel.py — a cold plan starts with a kernel quick to compile and
# takes its full kernel from a background compile (src/call/kernel_upgrade.h). On CUDA the quick
# kernel runs one call element per thread where the full one runs four; on the CPU the two are
# the same code, so these tests force the mechanism there with SHADEGRAD_QUICK_FIRST_KERNEL=1 and
# check what it promises: the same values before and after the switch, forward and backward; the
# full kernel indexed for the next process even when this one exits at once (exit waits for the
# background compile); no quick kernel when the index has the full one, or when turned off. Each
# case runs in a fresh process with its own cache directory (counts from _core._compile_stats()).
import json
import os
import subprocess
import sys
import textwrap

import pytest

TEST_DEVICE = os.environ.get("SHADEGRAD_TEST_DEVICE", "cpu")

CHILD = textwrap.dedent(
    r'''
    import json, sys
    import torch
    import shadegrad as sg
    from shadegrad import _core

    device, wait = sys.argv[1], sys.argv[2] == "wait"
    kind = sg.DeviceType.cuda if device == "cuda" else sg.DeviceType.cpu
    m = sg.Module.load_from_source(sg.create_torch_device(type=kind), "quick", """
    [Differentiable]
    float f(float a, float b) { return a * b + sin(a); }
    """)
    torch.manual_seed(0)
    a = (torch.rand(5000, device=device, dtype=torch.float64) + 0.5).float().requires_grad_()
    b = torch.rand(5000, device=device) + 0.5
    expect = (a.detach().double() * b.double() + torch.sin(a.detach().double()))
    out = {}
    def check(y, tag):
        assert y.shape == a.shape, tag
        err = (y.double() - expect).abs().max().item()
        assert err < 1e-5, (tag, err)
    y = m.f(a, b)
    check(y, "first")
    y.sum().backward()
    grad_first = a.grad.clone()
    torch.testing.assert_close(grad_first.double(), b.double() + torch.cos(a.detach().double()), rtol=1e-5, atol=1e-6)
    out["first"] = {k: v for k, v in _core._compile_stats().items() if k != "ms"}
    if wait:
        _core._wait_for_kernel_upgrades()
        out["after_wait"] = {k: v for k, v in _core._compile_stats().items() if k != "ms"}
        a.grad = None
        y2 = m.f(a, b)
        check(y2, "full")
        # Element-wise: the same bits whichever thread ran each element.
        assert torch.equal(y2, y), "full and quick kernels differ"
        y2.sum().backward()
        assert torch.equal(a.grad, grad_first)
        out["second"] = {k: v for k, v in _core._compile_stats().items() if k != "ms"}
    print(json.dumps(out))
    '''
)


def run(tmp_path, wait, setting, device="cpu"):
    env = dict(os.environ, SHADEGRAD_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("SHADEGRAD_QUICK_FIRST_KERNEL", None)
    if setting is not None:
        env["SHADEGRAD_QUICK_FIRST_KERNEL"] = setting
    proc = subprocess.run([sys.executable, "-c", CHILD, device, "wait" if wait else "exit"], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_cold_plan_launches_a_quick_kernel_then_the_full_one(tmp_path):
    out = run(tmp_path, wait=True, setting="1")
    first, after, second = out["first"], out["after_wait"], out["second"]
    # The forward plan started with the quick kernel (the backward's kernel is compiled whole).
    assert first["quick_kernels"] == 1, first
    assert after["upgrades"] == 1, after
    # Three kernels generated: the quick forward, the full forward (in the background, while or
    # after the backward compiled) and the backward. On the CPU the two forwards are one source:
    # the full one is the quick one's module from memory.
    assert after["front_end_runs"] == 3 and after["codegen_runs"] == 3, after
    assert after["compiles"] == 2 and after["memory_hits"] >= 1, after
    # No call after the switch compiles anything.
    assert second["front_end_runs"] == 3 and second["compiles"] == 2, second
    assert second["plans"] == after["plans"] == 1, second


def test_full_kernel_is_indexed_even_when_the_process_exits_at_once(tmp_path):
    cold = run(tmp_path, wait=False, setting="1")["first"]
    assert cold["quick_kernels"] == 1, cold
    # The next process (the mechanism off: CPU default) finds the full kernel in the index.
    warm = run(tmp_path, wait=False, setting=None)["first"]
    assert warm["index_hits"] == 2 and warm["index_misses"] == 0, warm
    assert warm["front_end_runs"] == 0 and warm["codegen_runs"] == 0 and warm["compiles"] == 0, warm
    # With the mechanism on, a plan whose full kernel is indexed takes it directly.
    again = run(tmp_path, wait=False, setting="1")["first"]
    assert again["quick_kernels"] == 0 and again["index_misses"] == 0 and again["front_end_runs"] == 0, again


def test_quick_first_kernel_is_off_on_the_cpu_and_when_disabled(tmp_path):
    default = run(tmp_path / "a", wait=True, setting=None)
    assert default["first"]["quick_kernels"] == 0 and default["after_wait"]["upgrades"] == 0, default
    off = run(tmp_path / "b", wait=True, setting="0", device=TEST_DEVICE)
    assert off["first"]["quick_kernels"] == 0 and off["after_wait"]["upgrades"] == 0, off


@pytest.mark.skipif(TEST_DEVICE != "cuda", reason="the GPU check (SHADEGRAD_TEST_DEVICE=cuda)")
def test_cuda_cold_plan_starts_quick_by_default(tmp_path):
    out = run(tmp_path, wait=True, setting=None, device="cuda")
    assert out["first"]["quick_kernels"] == 1, out
    assert out["after_wait"]["upgrades"] == 1, out
    warm = run(tmp_path, wait=False, setting=None, device="cuda")["first"]
    assert warm["quick_kernels"] == 0 and warm["front_end_runs"] == 0 and warm["index_misses"] == 0, warm


GRAPH_CHILD = textwrap.dedent(
    r'''
    import torch
    import shadegrad as sg
    from shadegrad import _core

    m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cuda), "quick_graph",
                                   "float g(float x) { return x * x + 1; }")
    x = torch.rand(1 << 20, device="cuda")
    y = m.g(x)  # the quick kernel; the full one compiles and loads on its own thread meanwhile
    assert _core._compile_stats()["quick_kernels"] == 1
    torch.cuda.synchronize()
    for _ in range(5):  # captures while the full kernel is loaded
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = m.g(x)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.allclose(out, x * x + 1, rtol=1e-6, atol=0)  # ours may fuse the multiply-add
        assert torch.equal(out, y)
    _core._wait_for_kernel_upgrades()
    assert _core._compile_stats()["upgrades"] == 1
    graph.replay()
    out2 = m.g(x)
    torch.cuda.synchronize()
    assert torch.equal(out, y) and torch.equal(out2, y)
    print("ok")
    '''
)


@pytest.mark.skipif(TEST_DEVICE != "cuda", reason="the GPU check (SHADEGRAD_TEST_DEVICE=cuda)")
def test_cuda_graph_capture_while_the_full_kernel_loads(tmp_path):
    env = dict(os.environ, SHADEGRAD_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("SHADEGRAD_QUICK_FIRST_KERNEL", None)
    proc = subprocess.run([sys.executable, "-c", GRAPH_CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr[-3000:]
