# tests/python/test_cache_concurrency.py — the kernel cache and the call path under concurrency:
# two processes compiling the same kernels into one disk cache at once, damaged disk entries
# (truncated, corrupted, foreign) for the CPU shared objects and the CUDA cubins (rebuilt, never
# trusted), and 8 threads calling one function with different shapes and grad masks.
#
# The C++ tests (tests/cpp/test_runtime.cpp, test_cuda_runtime.cpp) cover the cache layer alone;
# these run the whole call path: glue, compiler, backend compile, disk cache, launch, autograd.
import os
import subprocess
import sys
import textwrap
import threading

import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
float blend(float a, float b, float w)
{
    return a * w + b * (1.0 - w) + sin(a * b);
}
"""

# Computes with two kernels (forward and backward) and prints OK when values and gradients match
# torch. The cache directory and a start barrier come from the environment.
CHILD = textwrap.dedent(
    """
    import os, sys, time, torch
    barrier = os.environ["SG_TEST_BARRIER"]
    open(barrier + "." + sys.argv[1], "w").close()
    deadline = time.time() + 60
    while not all(os.path.exists(barrier + "." + k) for k in ("0", "1")) and time.time() < deadline:
        time.sleep(0.01)
    import shadegrad as sg
    dev = sg.create_torch_device(type=getattr(sg.DeviceType, os.environ["SG_TEST_DEVICE"]))
    m = sg.Module.load_from_source(dev, "cached", os.environ["SG_TEST_SOURCE"])
    device = os.environ["SG_TEST_DEVICE"]
    a = torch.rand(37, 5, device=device, requires_grad=True)
    b = torch.rand(37, 5, device=device)
    w = torch.rand(5, device=device)
    out = m.blend(a, b, w)
    out.sum().backward()
    ra = a.detach().clone().requires_grad_(True)
    ref = ra * w + b * (1 - w) + torch.sin(ra * b)
    ref.sum().backward()
    assert torch.allclose(out, ref, atol=1e-5), (out - ref).abs().max()
    assert torch.allclose(a.grad, ra.grad, atol=1e-5), (a.grad - ra.grad).abs().max()
    print("OK")
    """
)


def run_children(cache, tmp_path, count=2, source=SOURCE):
    env = dict(os.environ)
    env.update(
        SHADEGRAD_CACHE_DIR=str(cache),
        SG_TEST_BARRIER=str(tmp_path / "barrier"),
        SG_TEST_SOURCE=source,
        SG_TEST_DEVICE=TEST_DEVICE,
    )
    for k in range(count):
        (tmp_path / f"barrier.{k}").unlink(missing_ok=True)
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(k)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for k in range(count)
    ]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0 and out.strip() == "OK", f"rc {p.returncode}\n{out}\n{err}"


def entries(cache, kind):
    return sorted((cache / kind).rglob("*.bin"))


def test_two_processes_compile_the_same_kernels_into_one_cache(tmp_path):
    cache = tmp_path / "cache"
    source = SOURCE + "// two processes\n"
    run_children(cache, tmp_path, count=2, source=source)
    kind = "cpu" if TEST_DEVICE == "cpu" else "cuda"
    written = entries(cache, kind)
    assert len(written) >= 2, written  # forward and backward, each once (same key from both)
    assert not any(p.name.endswith(".tmp") for p in (cache / kind).rglob("*")), "a temporary was left behind"
    # A third process finds everything on disk and computes the same.
    run_children(cache, tmp_path, count=1, source=source)
    assert entries(cache, kind) == written


def damage(path, how, foreign=None):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 3])
    elif how == "corrupted":
        flipped = bytearray(data)
        flipped[len(data) // 2] ^= 0x20
        path.write_bytes(bytes(flipped))
    elif how == "foreign":
        # A complete, valid entry of another kernel under this kernel's name.
        path.write_bytes(foreign.read_bytes())
    elif how == "empty":
        path.write_bytes(b"")
    else:
        raise ValueError(how)


def test_damaged_disk_entries_are_rebuilt_not_trusted(tmp_path):
    # CPU shared objects, or CUDA cubins when SHADEGRAD_TEST_DEVICE=cuda. Each round damages
    # every entry of the call's kernels (forward and backward) in one way each; a fresh process
    # must compute the same values and gradients and leave good entries behind.
    cache = tmp_path / "cache"
    source = SOURCE + "// damage\n"
    run_children(cache, tmp_path, count=1, source=source)
    kind = "cpu" if TEST_DEVICE == "cpu" else "cuda"
    written = entries(cache, kind)
    assert len(written) >= 2, written
    spare = tmp_path / "spare.bin"
    for round_kinds in (["truncated", "corrupted"], ["foreign", "empty"]):
        originals = {p: p.read_bytes() for p in written}
        damaged = {}
        for k, p in enumerate(written):
            # A foreign entry: the complete, valid entry of another kernel under this one's name.
            spare.write_bytes(originals[written[(k + 1) % len(written)]])
            damage(p, round_kinds[k % 2], spare)
            damaged[p] = p.read_bytes()
        run_children(cache, tmp_path, count=1, source=source)  # values and gradients still right
        for p in written:
            assert p.exists(), f"{p} was not rebuilt"
            rebuilt = p.read_bytes()
            assert rebuilt != damaged[p], f"{p} still holds the damaged entry ({round_kinds})"
            assert len(rebuilt) > 64, f"{p} is not a complete entry"


def test_eight_threads_call_one_function_with_different_shapes_and_grad_masks(sg):
    device = sg.create_torch_device(type=getattr(sg.DeviceType, TEST_DEVICE))
    m = sg.Module.load_from_source(device, "threads", SOURCE)
    errors = []
    start = threading.Barrier(8)

    def worker(k):
        try:
            gen = torch.Generator().manual_seed(k)
            start.wait()
            for it in range(12):
                n = 1 + (k * 7 + it * 3) % 29
                shape = (n, 1 + (k + it) % 4)
                mask = (k + it) % 4  # which of a, b require grad
                a = torch.rand(shape, generator=gen).to(TEST_DEVICE).requires_grad_(bool(mask & 1))
                b = torch.rand(shape, generator=gen).to(TEST_DEVICE).requires_grad_(bool(mask & 2))
                w = torch.rand(shape[1], generator=gen).to(TEST_DEVICE)
                grad_mode = it % 3 != 2
                with torch.set_grad_enabled(grad_mode):
                    out = m.blend(a, b, w)
                ra = a.detach().clone().requires_grad_(True)
                rb = b.detach().clone().requires_grad_(True)
                ref = ra * w + rb * (1 - w) + torch.sin(ra * rb)
                assert torch.allclose(out, ref.detach(), atol=1e-5), f"thread {k} call {it}: values"
                wants = grad_mode and mask != 0
                assert (out.grad_fn is not None) == wants, f"thread {k} call {it}: grad_fn {out.grad_fn}"
                if wants:
                    g = torch.rand(shape, generator=gen).to(TEST_DEVICE)
                    out.backward(g)
                    ref.backward(g)
                    for name, t, r in (("a", a, ra), ("b", b, rb)):
                        if t.requires_grad:
                            assert torch.allclose(t.grad, r.grad, atol=1e-5), f"thread {k} call {it}: grad {name}"
                        else:
                            assert t.grad is None
        except Exception as e:  # noqa: BLE001 - reported below with the thread's context
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, "\n".join(errors)
