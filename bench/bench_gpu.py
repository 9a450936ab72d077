# bench/bench_gpu.py — the CUDA benchmark suite: every figure of the performance model (docs/performance.md) as
# a ratio against a reference measured in the same run, with its target and PASS/MISSED.
#
#   python bench/bench_gpu.py [--device cuda|cpu] [--quick] [--json PATH] [--markdown PATH]
#
#   1. host time of a cached forward call (mul(a, b), mul2(grid, a, b)) vs torch.mul, and vs a raw
#      launch of an empty kernel (cupy.RawKernel, else cuLaunchKernel through ctypes)
#   2. host time of mul2 forward + backward vs (a * b).backward(g)
#   3. bandwidth of a large elementwise kernel (read + write) vs a device-to-device copy
#   4. GPU time of a lookup-table kernel's forward + backward (atomics into the table gradient)
#      vs torch's table[idx] and its backward
#   5. first-call latency in fresh processes: cold (empty SHADEGRAD_CACHE_DIR, NVRTC compile) and
#      warm (the same cache dir after a previous process filled it)
#   6. GPU time of a*x*x + b*x + c over 1M elements with three (1,)-shaped parameters that require
#      grad (a reduced gradient each), forward + backward, vs torch's expression; and in
#      deterministic mode (vs torch and vs the fast mode)
#   6e. a (1, W) parameter over a (1024, 1024) call (a partial broadcast), forward + backward, in
#      deterministic mode vs the fast mode
#   7. GPU time of a float3 function over 1M elements with one differentiable argument, forward +
#      backward, vs torch's expression
#   8. GPU time of a fused chain of ten differentiable elementwise operations over 64M floats,
#      forward + backward, vs torch eager and vs the same function under torch.compile (8a, 8b:
#      precise math; 8c: fn.fast_math(), approximate float intrinsics, vs torch.compile)
#   4d. row 4 in deterministic mode vs the fast mode (N/A where the backend refuses it)
#   4e. a 1M-entry lookup table (16M threads) in deterministic mode vs the fast mode: past the
#      ordered tables' shared memory, so its gradient is summed in fixed point
#   9. host time of a training step (mul2, a loss, backward) under torch.compile(fullgraph=True) vs
#      the eager step; N/A with the reason when torch.compile breaks the graph (bench_steps.py)
#  10. the same step captured in a CUDA graph and replayed vs the eager step (bench_steps.py)
#
# Every benchmark checks its result against torch once before it is timed; a wrong result is
# reported as ERROR and not timed. Host times are wall-clock (time.perf_counter) over N calls,
# median of several repeats, with one synchronize at the end of each block; GPU times use CUDA
# events, with a GPU spin (torch.cuda._sleep) queued ahead so that host launch overhead stays out
# of the device time. --device cpu runs the same suite on the CPU backend (a smoke test: no raw
# launch, wall-clock instead of events); the targets are defined for CUDA.
"""CUDA benchmark suite of shadegrad: ratios against references measured in the same run."""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback

from bench_rows import check, na_row, rel_err, row
from bench_steps import bench_compiled_step, bench_graph_step
from mul2_kernels import CHAIN10_SOURCE, MUL2_SOURCE, chain10_torch

SOURCE = MUL2_SOURCE + """
float scale(float x)
{
    return x * 2.0;
}

[Differentiable]
float lut(int i, IDiffTensor<float, 1> table)
{
    return table[i];
}

[Differentiable]
float quad(float x, float a, float b, float c)
{
    return a * x * x + b * x + c;
}

[Differentiable]
float3 shade3(float3 p, float3 light)
{
    float3 q = p * light;
    return q * q + sin(q) * 0.5;
}
""" + CHAIN10_SOURCE

FIRST_CALL_SOURCE = """
import slangpy;

[Differentiable]
float mul(float a, float b)
{
    return a * b;
}
"""

# Repetition counts and sizes per (device, quick).
SETTINGS = {
    ("cuda", False): dict(host_number=2000, host_repeat=15, host_warmup=300, bwd_number=500,
                          bw_elems=256 << 20, lut_elems=16 << 20, gpu_runs=20, gpu_warmup=5,
                          first_call_reps=3, bcast_elems=1 << 20, f3_elems=1 << 20, chain_elems=64 << 20),
    ("cuda", True): dict(host_number=200, host_repeat=3, host_warmup=50, bwd_number=50,
                         bw_elems=32 << 20, lut_elems=4 << 20, gpu_runs=5, gpu_warmup=2,
                         first_call_reps=1, bcast_elems=1 << 20, f3_elems=1 << 20, chain_elems=16 << 20),
    ("cpu", False): dict(host_number=1000, host_repeat=9, host_warmup=200, bwd_number=200,
                         bw_elems=32 << 20, lut_elems=4 << 20, gpu_runs=9, gpu_warmup=2,
                         first_call_reps=2, bcast_elems=1 << 20, f3_elems=1 << 20, chain_elems=4 << 20),
    ("cpu", True): dict(host_number=100, host_repeat=3, host_warmup=20, bwd_number=20,
                        bw_elems=4 << 20, lut_elems=1 << 20, gpu_runs=3, gpu_warmup=1,
                        first_call_reps=1, bcast_elems=1 << 18, f3_elems=1 << 18, chain_elems=1 << 18),
}

SMALL_ELEMS = 64          # benchmark 1: 64-element tensors (mul2: 8x8)
SMALL_SHAPE = (8, 8)
BWD_SHAPE = (64, 64)      # benchmark 2
LUT_ENTRIES = 256         # benchmark 4
SLEEP_CYCLES = 2_000_000  # about 1 ms of GPU spin ahead of each event-timed region
FAST_MATH_RTOL = 2e-3     # benchmark 8c: fast math against float64 torch (docs/performance.md)


# --------------------------------------------------------------------------------------------
# Timing helpers


class Bench:
    """The device, the module and the timing primitives for one run."""

    def __init__(self, device: str, quick: bool):
        import torch

        import shadegrad as sg

        self.torch = torch
        self.sg = sg
        self.device = device
        self.quick = quick
        self.cuda = device == "cuda"
        self.s = SETTINGS[(device, quick)]
        self.tdev = torch.device(device)
        self.sgdev = sg.create_torch_device(type=sg.DeviceType.cuda if self.cuda else sg.DeviceType.cpu)
        self.m = sg.Module.load_from_source(self.sgdev, "bench_gpu", SOURCE)
        self.has_sleep = self.cuda and hasattr(torch.cuda, "_sleep")

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def host_block(self, fn, args: tuple, number: int) -> float:
        """Seconds per call of fn(*args) over `number` calls, synchronized at both ends."""
        self.sync()
        n = len(args)
        clock = time.perf_counter
        if n == 0:
            start = clock()
            for _ in range(number):
                fn()
        elif n == 2:
            a0, a1 = args
            start = clock()
            for _ in range(number):
                fn(a0, a1)
        elif n == 3:
            a0, a1, a2 = args
            start = clock()
            for _ in range(number):
                fn(a0, a1, a2)
        else:
            start = clock()
            for _ in range(number):
                fn(*args)
        self.sync()
        return (clock() - start) / number

    def host_times_us(self, cases: dict, number: int) -> dict:
        """Median host µs per call for each case name → (fn, args); blocks interleaved per repeat."""
        for fn, args in cases.values():  # warm-up
            self.host_block(fn, args, self.s["host_warmup"])
        samples = {name: [] for name in cases}
        for _ in range(self.s["host_repeat"]):
            for name, (fn, args) in cases.items():
                samples[name].append(self.host_block(fn, args, number) * 1e6)
        return {name: statistics.median(v) for name, v in samples.items()}

    def device_times_ms(self, cases: dict) -> dict:
        """Median device ms of one run of each case name → fn() (CUDA events; wall-clock on cpu)."""
        torch = self.torch
        runs, warmup = self.s["gpu_runs"], self.s["gpu_warmup"]
        for fn in cases.values():
            for _ in range(warmup):
                fn()
        self.sync()
        samples = {name: [] for name in cases}
        for _ in range(runs):
            for name, fn in cases.items():
                if self.cuda:
                    start = torch.cuda.Event(enable_timing=True)
                    end = torch.cuda.Event(enable_timing=True)
                    if self.has_sleep:
                        torch.cuda._sleep(SLEEP_CYCLES)  # the host enqueues while the GPU spins
                    start.record()
                    fn()
                    end.record()
                    end.synchronize()
                    samples[name].append(start.elapsed_time(end))
                else:
                    t0 = time.perf_counter()
                    fn()
                    samples[name].append((time.perf_counter() - t0) * 1e3)
        self.sync()
        return {name: statistics.median(v) for name, v in samples.items()}

    def release(self):
        import gc

        gc.collect()
        if self.cuda:
            self.torch.cuda.synchronize()
            self.torch.cuda.empty_cache()


def count_text(n: int) -> str:
    """1M, 64M, 256K or the number itself."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10}K"
    return str(n)


# --------------------------------------------------------------------------------------------
# Raw launch of an empty kernel (reference of benchmark 1)

PTX_EMPTY = """
.version {version}
.target {target}
.address_size 64
.visible .entry k()
{{
    ret;
}}
"""


class CtypesLauncher:
    """cuModuleLoadData of a tiny PTX + cuLaunchKernel on libcuda, in torch's primary context."""

    def __init__(self, torch):
        import ctypes

        self.ct = ctypes
        lib = ctypes.CDLL("libcuda.so.1")
        self.lib = lib
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # makes torch's primary context current on this thread
        self.call("cuInit", ctypes.c_uint(0))
        ctx = ctypes.c_void_p()
        self.call("cuCtxGetCurrent", ctypes.byref(ctx))
        if not ctx.value:
            dev = ctypes.c_int()
            self.call("cuDeviceGet", ctypes.byref(dev), ctypes.c_int(torch.cuda.current_device()))
            self.call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
            self.call("cuCtxSetCurrent", ctx)
        self.module = ctypes.c_void_p()
        errors = []
        for version, target in (("7.8", "sm_90"), ("7.0", "sm_70"), ("6.0", "sm_50")):
            ptx = PTX_EMPTY.format(version=version, target=target).encode() + b"\0"
            self._ptx = ctypes.create_string_buffer(ptx)
            rc = lib.cuModuleLoadData(ctypes.byref(self.module), self._ptx)
            if rc == 0:
                break
            errors.append(f"{target}: {rc}")
        else:
            raise RuntimeError("cuModuleLoadData failed for every PTX target: " + ", ".join(errors))
        self.func = ctypes.c_void_p()
        self.call("cuModuleGetFunction", ctypes.byref(self.func), self.module, b"k")
        u = ctypes.c_uint
        lib.cuLaunchKernel.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p,
                                       ctypes.c_void_p, ctypes.c_void_p]
        lib.cuLaunchKernel.restype = ctypes.c_int
        self.stream = torch.cuda.current_stream().cuda_stream

    def call(self, name, *args):
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            raise RuntimeError(f"{name} failed with CUresult {rc}")

    def launch(self):
        rc = self.lib.cuLaunchKernel(self.func, 1, 1, 1, 1, 1, 1, 0, self.stream, None, None)
        if rc != 0:
            raise RuntimeError(f"cuLaunchKernel failed with CUresult {rc}")


def raw_launcher(torch):
    """(launch function, method text) for an empty kernel; raises when neither way works."""
    errors = []
    try:
        import cupy

        kernel = cupy.RawKernel('extern "C" __global__ void k() {}', "k")
        grid, block, args = (1,), (1,), ()
        kernel(grid, block, args)  # compiles and loads
        cupy.cuda.Device().synchronize()
        return (lambda: kernel(grid, block, args)), f"cupy {cupy.__version__} RawKernel"
    except Exception as e:  # noqa: BLE001 — any failure falls through to ctypes
        errors.append(f"cupy: {type(e).__name__}: {e}")
    try:
        launcher = CtypesLauncher(torch)
        launcher.launch()
        torch.cuda.synchronize()
        return launcher.launch, "ctypes cuLaunchKernel (libcuda)"
    except Exception as e:  # noqa: BLE001
        errors.append(f"ctypes: {type(e).__name__}: {e}")
    raise RuntimeError("; ".join(errors))


# --------------------------------------------------------------------------------------------
# Benchmarks


def bench_forward_call(b: Bench) -> list:
    torch, m = b.torch, b.m
    a = torch.rand(SMALL_ELEMS, device=b.tdev) + 0.5
    c = torch.rand(SMALL_ELEMS, device=b.tdev) + 0.5
    a2 = torch.rand(SMALL_SHAPE, device=b.tdev) + 0.5
    c2 = torch.rand(SMALL_SHAPE, device=b.tdev) + 0.5
    grid = b.sg.grid(SMALL_SHAPE)
    out = torch.empty_like(a)
    check(torch.equal(m.mul(a, c), a * c), "mul(a, b) == a * b")
    check(torch.equal(m.mul2(grid, a2, c2), a2 * c2), "mul2(grid, a, b) == a * b")

    f_mul, f_mul2, t_mul = m.mul, m.mul2, torch.mul

    def torch_mul_out(x, y):
        return t_mul(x, y, out=out)

    cases = {
        "sg_mul": (f_mul, (a, c)),
        "sg_mul2": (f_mul2, (grid, a2, c2)),
        "torch_mul": (t_mul, (a, c)),
        "torch_mul_out": (torch_mul_out, (a, c)),
    }
    raw_method, raw_error = None, None
    if b.cuda:
        try:
            launch, raw_method = raw_launcher(torch)
            cases["raw_launch"] = (launch, ())
        except Exception as e:  # noqa: BLE001
            raw_error = str(e)
    t = b.host_times_us(cases, b.s["host_number"])
    ref = t["torch_mul"]
    common = {k: round(v, 3) for k, v in t.items()}
    common["raw_launch_method"] = raw_method
    rows = [
        row("1a", f"cached forward mul(a, b), {SMALL_ELEMS} floats: host µs/call",
            value=t["sg_mul"], unit="µs", reference=ref, reference_name="torch.mul(a, b)",
            ratio=t["sg_mul"] / ref, target=1.0, target_text="≤ 1.0x",
            passed=t["sg_mul"] / ref <= 1.0,
            notes=f"torch.mul(out=) {t['torch_mul_out']:.2f} µs", extra=common),
        row("1b", f"cached forward mul2(grid, a, b), {SMALL_SHAPE[0]}x{SMALL_SHAPE[1]}: host µs/call",
            value=t["sg_mul2"], unit="µs", reference=ref, reference_name="torch.mul(a, b)",
            ratio=t["sg_mul2"] / ref, target=1.0, target_text="≤ 1.0x",
            passed=t["sg_mul2"] / ref <= 1.0),
    ]
    if "raw_launch" in t:
        raw = t["raw_launch"]
        rows.append(row("1c", "cached forward mul(a, b) vs raw launch of an empty kernel",
                        value=t["sg_mul"], unit="µs", reference=raw,
                        reference_name=f"raw launch ({raw_method})", ratio=t["sg_mul"] / raw,
                        notes="reference only; includes the launcher's Python overhead"))
    else:
        rows.append(na_row("1c", "cached forward mul(a, b) vs raw launch of an empty kernel",
                           "needs CUDA" if not b.cuda else f"no raw launcher: {raw_error}"))
    rows.append(bench_composite_arguments(b, a))
    rows.append(bench_sg_tensor_arguments(b, a, c))
    return rows


def bench_sg_tensor_arguments(b: Bench, a, c) -> dict:
    """Row 1e: a cached call whose arguments are sg.Tensors over the same storage as row 1a's
    torch tensors (the result an sg.Tensor): what SlangPy's container costs per call."""
    m, sg = b.m, b.sg
    A, C = sg.Tensor.from_torch(a), sg.Tensor.from_torch(c)
    check(b.torch.equal(m.mul(A, C).to_torch(), a * c), "mul(Tensor, Tensor) == a * b")
    f = m.mul
    t = b.host_times_us({"sg_tensor": (f, (A, C)), "torch": (f, (a, c))}, b.s["host_number"])
    ratio = t["sg_tensor"] / t["torch"]
    return row("1e", f"cached forward mul(A, B) with sg.Tensor arguments, {SMALL_ELEMS} floats: host µs/call",
               value=t["sg_tensor"], unit="µs", reference=t["torch"],
               reference_name="the same call with the torch tensors behind them", ratio=ratio, target=1.05,
               target_text="≤ 1.05x", passed=ratio <= 1.05)


def bench_composite_arguments(b: Bench, x) -> dict:
    """Row 1d: a cached call with a dict (struct) and a list (array) argument against the same
    call with tensors in their place: what describing Python composites costs per call."""
    torch, m = b.torch, b.m
    params, weights = {"scale": 2.0, "bias": 0.5}, [1.0, 0.25]
    t_params = {"scale": torch.tensor(2.0, device=b.tdev), "bias": torch.tensor(0.5, device=b.tdev)}
    t_weights = torch.tensor([1.0, 0.25], device=b.tdev)
    check(torch.allclose(m.affine(x, params, weights), m.affine(x, t_params, t_weights)),
          "affine(x, dict, list) == affine(x, tensors)")
    check(torch.allclose(m.affine(x, params, weights), x * 2.0 + 0.5 * 0.25), "affine(x, dict, list) value")
    f = m.affine
    t = b.host_times_us({"composite": (f, (x, params, weights)), "tensors": (f, (x, t_params, t_weights))},
                        b.s["host_number"])
    return row("1d", f"cached affine(x, dict, list), {SMALL_ELEMS} floats: host µs/call",
               value=t["composite"], unit="µs", reference=t["tensors"],
               reference_name="the same call with tensors for the dict and the list",
               ratio=t["composite"] / t["tensors"], notes="info: cost of describing Python composites")


def bench_forward_backward(b: Bench) -> list:
    torch, m = b.torch, b.m
    H, W = BWD_SHAPE
    a = (torch.rand(BWD_SHAPE, device=b.tdev) + 0.5).requires_grad_(True)
    c = (torch.rand(BWD_SHAPE, device=b.tdev) + 0.5).requires_grad_(True)
    g = torch.rand(BWD_SHAPE, device=b.tdev) + 0.5
    grid = b.sg.grid(BWD_SHAPE)

    out = m.mul2(grid, a, c)
    check(out.grad_fn is not None, "mul2 output has a grad_fn")
    check(torch.equal(out.detach(), (a * c).detach()), "mul2 forward == a * b")
    out.backward(g)
    check(torch.equal(a.grad, g * c.detach()) and torch.equal(c.grad, g * a.detach()),
          "mul2 gradients == g * b, g * a")

    f = m.mul2

    def sg_iters(n):
        for _ in range(n):
            a.grad = None
            c.grad = None
            f(grid, a, c).backward(g)

    def torch_iters(n):
        for _ in range(n):
            a.grad = None
            c.grad = None
            (a * c).backward(g)

    number = b.s["bwd_number"]
    # host_block times fn(n) once per block: pass the iteration count as the argument.
    cases = {"sg": (sg_iters, (number,)), "torch": (torch_iters, (number,))}
    for fn, args in cases.values():
        fn(max(number // 5, 5))
    b.sync()
    samples = {k: [] for k in cases}
    for _ in range(b.s["host_repeat"]):
        for name, (fn, args) in cases.items():
            samples[name].append(b.host_block(fn, args, 1) / number * 1e6)
    t = {k: statistics.median(v) for k, v in samples.items()}
    ratio = t["sg"] / t["torch"]
    return [row("2", f"mul2 forward + backward, {H}x{W}, both require grad: host µs/iter",
                value=t["sg"], unit="µs", reference=t["torch"],
                reference_name="(a * b).backward(g)", ratio=ratio, target=1.0,
                target_text="≤ 1.0x", passed=ratio <= 1.0)]


def bench_bandwidth(b: Bench) -> list:
    torch, m = b.torch, b.m
    n = b.s["bw_elems"]
    x = torch.rand(n, device=b.tdev) - 0.5
    # Poison: the caching allocator hands this NaN-filled block to scale's output, so an
    # unwritten element fails the check below.
    poison = torch.full((n,), float("nan"), device=b.tdev)
    del poison
    y = m.scale(x)
    check(y.shape == x.shape and y.dtype == x.dtype, "scale output shape/dtype")
    check(torch.equal(y, x * 2.0), "scale(x) == x * 2")
    del y
    dst = torch.empty_like(x)
    dst.copy_(x)
    check(torch.equal(dst, x), "copy")
    b.release()

    f = m.scale
    holder = {}

    def sg_run():
        holder["y"] = f(x)  # the previous result is freed only after the next one is allocated

    t = b.device_times_ms({"sg": sg_run, "copy": lambda: dst.copy_(x)})
    holder.clear()
    nbytes = 2 * n * x.element_size()  # read + write
    bw_sg = nbytes / (t["sg"] * 1e-3) / 1e12
    bw_copy = nbytes / (t["copy"] * 1e-3) / 1e12
    ratio = bw_sg / bw_copy
    size = f"{n * 4 / 2**30:g} GiB" if n * 4 >= 2**30 else f"{n * 4 >> 20} MiB"
    del x, dst
    b.release()
    timing = "CUDA events" if b.cuda else "wall clock"
    return [row("3", f"elementwise scale(x), {n >> 20}M floats ({size} in + {size} out): TB/s (read + write)",
                value=bw_sg, unit="TB/s", reference=bw_copy,
                reference_name="dst.copy_(src) (read + write)", ratio=ratio, target=0.90,
                target_text="≥ 0.90x", passed=ratio >= 0.90,
                notes=f"{t['sg']:.3f} ms vs copy {t['copy']:.3f} ms ({timing}, median)",
                extra={"sg_ms": t["sg"], "copy_ms": t["copy"], "bytes": nbytes})]


def lut_inputs(b: Bench, entries: int):
    """A table of `entries` requiring grad, lut_elems random indices into it, an output gradient
    and the table's float64 reference gradient (index_add)."""
    torch, n = b.torch, b.s["lut_elems"]
    table = (torch.rand(entries, device=b.tdev) + 0.5).requires_grad_(True)
    idx = torch.randint(0, entries, (n,), dtype=torch.int32, device=b.tdev)
    g = torch.rand(n, device=b.tdev) + 0.5
    ref = torch.zeros(entries, dtype=torch.float64, device=b.tdev).index_add_(0, idx, g.double())
    return table, idx, g, ref


def bench_lut(b: Bench) -> list:
    torch, m = b.torch, b.m
    n = b.s["lut_elems"]
    table, idx, g, ref = lut_inputs(b, LUT_ENTRIES)

    out = m.lut(idx, table)
    check(out.grad_fn is not None, "lut output has a grad_fn")
    check(torch.equal(out.detach(), table.detach()[idx]), "lut forward == table[idx]")
    out.backward(g)
    err = rel_err(table.grad, ref)
    check(err < 1e-4, f"lut table gradient vs float64 index_add (rel err {err:.2e})")
    table.grad = None
    (table[idx]).backward(g)
    err_torch = rel_err(table.grad, ref)
    table.grad = None
    del out
    b.release()

    f = m.lut

    def sg_run():
        table.grad = None
        f(idx, table).backward(g)

    def torch_index():
        table.grad = None
        table[idx].backward(g)

    def torch_index_select():
        table.grad = None
        table.index_select(0, idx).backward(g)

    cases = {"sg": sg_run, "torch": torch_index, "torch_is": torch_index_select}
    det_error = deterministic_lut_error(b, f.deterministic(), idx, table, g, ref)
    if det_error is None:
        fd = f.deterministic()

        def sg_det_run():
            table.grad = None
            fd(idx, table).backward(g)

        cases["sg_det"] = sg_det_run
    t = b.device_times_ms(cases)
    table.grad = None
    b.release()
    timing = "CUDA events" if b.cuda else "wall clock"
    name = f"lookup table fwd + bwd, {n >> 20}M threads into {LUT_ENTRIES} entries"
    rows = [
        row("4a", f"{name}: ms", value=t["sg"], unit="ms", reference=t["torch"],
            reference_name="table[idx] + backward (index_put accumulate)",
            ratio=t["sg"] / t["torch"], target=0.2, target_text="≤ 0.2x",
            passed=t["sg"] / t["torch"] <= 0.2,
            notes=f"{timing}, median; grad rel err {err:.1e} (torch {err_torch:.1e})",
            extra={"sg_grad_rel_err": err, "torch_grad_rel_err": err_torch}),
        row("4b", f"{name} vs index_select: ms", value=t["sg"], unit="ms", reference=t["torch_is"],
            reference_name="table.index_select(0, idx) + backward (index_add)",
            ratio=t["sg"] / t["torch_is"], target=0.5, target_text="≤ 0.5x",
            passed=t["sg"] / t["torch_is"] <= 0.5, notes=timing + ", median"),
    ]
    if det_error is None:
        rows.append(row("4d", f"{name}, deterministic mode vs fast mode: ms", value=t["sg_det"], unit="ms",
                        reference=t["sg"], reference_name="the same call in fast mode",
                        ratio=t["sg_det"] / t["sg"], target=1.5, target_text="≤ 1.5x",
                        passed=t["sg_det"] / t["sg"] <= 1.5,
                        notes=f"{timing}, median; vs table[idx]: {t['sg_det'] / t['torch']:.3f}x; "
                              "gradient bits identical over 10 runs"))
    else:
        rows.append(na_row("4d", f"{name}, deterministic mode", det_error))
    return rows


def deterministic_lut_error(b: Bench, fd, idx, table, g, ref):
    """None when the deterministic LUT call runs and repeats its gradient bits; else why not."""
    torch = b.torch
    try:
        first = None
        for _ in range(10):
            table.grad = None
            fd(idx, table).backward(g)
            bits = table.grad.view(torch.int32).clone()
            if first is None:
                first = bits
                check(rel_err(table.grad, ref) < 1e-4, "deterministic lut gradient vs float64")
            check(torch.equal(bits, first), "deterministic lut gradient bits repeat")
        table.grad = None
        return None
    except ValueError as e:  # the backend refuses the mode for this gradient: say why
        table.grad = None
        return str(e).splitlines()[0][:300]


BIG_LUT_ENTRIES = 1 << 20


def bench_big_lut(b: Bench) -> list:
    """Row 4e: the deterministic mode's fixed-point tables (a table too large for the ordered ones)."""
    torch, m = b.torch, b.m
    n = b.s["lut_elems"]
    table, idx, g, ref = lut_inputs(b, BIG_LUT_ENTRIES)
    f = m.lut
    fd = f.deterministic()
    f(idx, table).backward(g)
    err = rel_err(table.grad, ref)
    check(err < 1e-4, f"1M-entry lut gradient vs float64 index_add (rel err {err:.2e})")
    det_error = deterministic_lut_error(b, fd, idx, table, g, ref)
    table.grad = None
    b.release()
    name = f"lookup table fwd + bwd, {n >> 20}M threads into {BIG_LUT_ENTRIES >> 20}M entries"
    if det_error is not None:
        return [na_row("4e", f"{name}, deterministic mode", det_error)]
    table.grad = None
    fd(idx, table).backward(g)
    det_err = rel_err(table.grad, ref)

    def sg_run():
        table.grad = None
        f(idx, table).backward(g)

    def sg_det_run():
        table.grad = None
        fd(idx, table).backward(g)

    t = b.device_times_ms({"sg": sg_run, "sg_det": sg_det_run})
    table.grad = None
    b.release()
    timing = "CUDA events" if b.cuda else "wall clock"
    return [row("4e", f"{name}, deterministic (fixed point) vs fast mode: ms", value=t["sg_det"], unit="ms",
                reference=t["sg"], reference_name="the same call in fast mode",
                ratio=t["sg_det"] / t["sg"], target=1.5, target_text="≤ 1.5x",
                passed=t["sg_det"] / t["sg"] <= 1.5,
                notes=f"{timing}, median; grad rel err {det_err:.1e} (fast {err:.1e}); "
                      "gradient bits identical over 10 runs",
                extra={"sg_det_grad_rel_err": det_err, "sg_grad_rel_err": err})]


def bench_broadcast_params(b: Bench) -> list:
    torch, m = b.torch, b.m
    n = b.s["bcast_elems"]
    x = torch.rand(n, device=b.tdev) * 2.0 - 1.0
    g = torch.rand(n, device=b.tdev) + 0.5
    params = [torch.full((1,), v, device=b.tdev, requires_grad=True) for v in (0.5, -0.25, 0.125)]

    def grads_of(fn):
        for p in params:
            p.grad = None
        fn(x, *params).backward(g)
        return [p.grad.clone() for p in params]

    xd, gd = x.double(), g.double()
    want = [(gd * xd * xd).sum().reshape(1), (gd * xd).sum().reshape(1), gd.sum().reshape(1)]
    f, fd = m.quad, m.quad.deterministic()
    for got, ref in zip(grads_of(f), want):
        check(rel_err(got, ref) < 1e-4, f"quad broadcast gradient vs float64 (rel err {rel_err(got, ref):.1e})")
    first = grads_of(fd)
    for got, ref in zip(first, want):
        check(rel_err(got, ref) < 1e-4, "deterministic quad gradient vs float64")
    for _ in range(9):
        check(all(torch.equal(a.view(torch.int32), c.view(torch.int32)) for a, c in zip(grads_of(fd), first)),
              "deterministic quad gradient bits repeat")

    def torch_expr(x, a, bb, c):
        return a * x * x + bb * x + c

    def runner(fn):
        def run():
            for p in params:
                p.grad = None
            fn(x, *params).backward(g)
        return run

    t = b.device_times_ms({"sg": runner(f), "sg_det": runner(fd), "torch": runner(torch_expr)})
    b.release()
    timing = "CUDA events" if b.cuda else "wall clock"
    name = f"a*x*x + b*x + c, {count_text(n)} elements, a, b, c (1,) requiring grad, fwd + bwd"
    return [
        row("6", f"{name}: ms", value=t["sg"], unit="ms", reference=t["torch"],
            reference_name="torch expression + backward", ratio=t["sg"] / t["torch"], target=1.0,
            target_text="≤ 1.0x", passed=t["sg"] / t["torch"] <= 1.0, notes=timing + ", median"),
        row("6d", f"{name}, deterministic mode vs fast mode: ms", value=t["sg_det"], unit="ms",
            reference=t["sg"], reference_name="the same call in fast mode", ratio=t["sg_det"] / t["sg"],
            target=1.5, target_text="≤ 1.5x", passed=t["sg_det"] / t["sg"] <= 1.5,
            notes=f"{timing}, median; vs torch: {t['sg_det'] / t['torch']:.3f}x; gradient bits identical over 10 runs"),
    ]


def bench_partial_broadcast(b: Bench) -> list:
    """Row 6e: a (1, W) parameter over an (H, W) call (a gradient per column, summed over the rows):
    the deterministic mode's ordered sums vs the fast mode's atomics."""
    torch, m = b.torch, b.m
    side = math.isqrt(b.s["bcast_elems"])
    x = torch.rand(side, side, device=b.tdev) * 2.0 - 1.0
    g = torch.rand(side, side, device=b.tdev) + 0.5
    a = torch.full((1, side), 0.5, device=b.tdev, requires_grad=True)
    consts = [torch.full((1,), v, device=b.tdev) for v in (-0.25, 0.125)]
    want = (g.double() * x.double() * x.double()).sum(0, keepdim=True)
    f, fd = m.quad, m.quad.deterministic()

    def grad_of(fn):
        a.grad = None
        fn(x, a, *consts).backward(g)
        return a.grad.clone()

    check(rel_err(grad_of(f), want) < 1e-4, "quad (1, W) gradient vs float64")
    first = grad_of(fd)
    check(rel_err(first, want) < 1e-4, "deterministic quad (1, W) gradient vs float64")
    for _ in range(9):
        check(torch.equal(grad_of(fd).view(torch.int32), first.view(torch.int32)),
              "deterministic quad (1, W) gradient bits repeat")

    def runner(fn):
        def run():
            a.grad = None
            fn(x, a, *consts).backward(g)
        return run

    def torch_expr(x, a, bb, c):
        return a * x * x + bb * x + c

    t = b.device_times_ms({"sg": runner(f), "sg_det": runner(fd), "torch": runner(torch_expr)})
    a.grad = None
    b.release()
    timing = "CUDA events" if b.cuda else "wall clock"
    name = f"a*x*x + b*x + c over ({side}, {side}), a (1, {side}) requiring grad, fwd + bwd"
    return [
        row("6e", f"{name}, deterministic mode vs fast mode: ms", value=t["sg_det"], unit="ms",
            reference=t["sg"], reference_name="the same call in fast mode", ratio=t["sg_det"] / t["sg"],
            target=1.5, target_text="≤ 1.5x", passed=t["sg_det"] / t["sg"] <= 1.5,
            notes=f"{timing}, median; fast mode vs torch: {t['sg'] / t['torch']:.3f}x; "
                  "gradient bits identical over 10 runs"),
    ]


def bench_float3(b: Bench) -> list:
    torch, m = b.torch, b.m
    n = b.s["f3_elems"]
    p = (torch.rand(n, 3, device=b.tdev) - 0.5).requires_grad_(True)
    light = torch.tensor([[0.8, 1.1, 0.6]], device=b.tdev)
    g = torch.rand(n, 3, device=b.tdev) + 0.5

    def torch_expr(p, light):
        q = p * light
        return q * q + torch.sin(q) * 0.5

    out = m.shade3(p, light)
    check(rel_err(out.detach(), torch_expr(p.detach(), light)) < 1e-5, "shade3 forward vs torch")
    out.backward(g)
    pd = p.detach().double().requires_grad_(True)
    torch_expr(pd, light.double()).backward(g.double())
    check(rel_err(p.grad, pd.grad) < 1e-5, "shade3 gradient vs float64 torch")
    f = m.shade3

    def runner(fn):
        def run():
            p.grad = None
            fn(p, light).backward(g)
        return run

    t = b.device_times_ms({"sg": runner(f), "torch": runner(torch_expr)})
    p.grad = None
    b.release()
    timing = "CUDA events" if b.cuda else "wall clock"
    return [row("7", f"float3 function over {count_text(n)} elements, one differentiable "
                     "argument, fwd + bwd: ms",
                value=t["sg"], unit="ms", reference=t["torch"], reference_name="torch expression + backward",
                ratio=t["sg"] / t["torch"], target=0.9, target_text="≤ 0.9x", passed=t["sg"] / t["torch"] <= 0.9,
                notes=timing + ", median")]


def bench_chain(b: Bench) -> list:
    torch, m = b.torch, b.m
    n = b.s["chain_elems"]
    x = (torch.rand(n, device=b.tdev) + 0.1).requires_grad_(True)
    g = torch.rand(n, device=b.tdev) + 0.5
    f = m.chain10
    out = f(x)
    check(rel_err(out.detach(), chain10_torch(x.detach())) < 1e-5, "chain10 forward vs torch")
    out.backward(g)
    sub_n = min(n, 1 << 20)
    xd = x.detach()[:sub_n].double().requires_grad_(True)
    chain10_torch(xd).backward(g[:sub_n].double())
    check(rel_err(x.grad[:sub_n], xd.grad) < 1e-5, "chain10 gradient vs float64 torch")
    del out, xd
    x.grad = None
    # Fast math (8c): approximate float intrinsics; its gradient against float64 torch at the
    # tolerance docs/performance.md gives for the chain (tanh.approx.f32 dominates).
    f_fast = m.chain10.fast_math()
    fast_note = ""
    try:
        out = f_fast(x)
        check(rel_err(out.detach(), chain10_torch(x.detach())) < FAST_MATH_RTOL, "chain10 fast-math forward vs torch")
        out.backward(g)
        xd = x.detach()[:sub_n].double().requires_grad_(True)
        chain10_torch(xd).backward(g[:sub_n].double())
        fast_err = rel_err(x.grad[:sub_n], xd.grad)
        check(fast_err < FAST_MATH_RTOL, f"chain10 fast-math gradient vs float64 torch ({fast_err:.2e})")
        fast_note = f"gradient rel. error vs float64 torch {fast_err:.1e} (tolerance {FAST_MATH_RTOL:g})"
        del out, xd
    except AssertionError as e:
        fast_note = str(e)
        f_fast = None
    x.grad = None

    def runner(fn):
        def run():
            x.grad = None
            fn(x).backward(g)
        return run

    cases = {"sg": runner(f), "torch": runner(chain10_torch)}
    if f_fast is not None:
        cases["sg_fast"] = runner(f_fast)
    compile_note = ""
    try:
        compiled = torch.compile(chain10_torch)
        x.grad = None
        compiled(x).backward(g)
        check(rel_err(x.grad, torch.autograd.grad(chain10_torch(x), x, g)[0]) < 1e-5, "torch.compile result")
        cases["compiled"] = runner(compiled)
    except Exception as e:  # noqa: BLE001 — torch.compile needs a working inductor backend
        compile_note = f"torch.compile failed: {type(e).__name__}: {e}".splitlines()[0][:200]
    x.grad = None
    b.release()
    t = b.device_times_ms(cases)
    x.grad = None
    b.release()
    timing = "CUDA events" if b.cuda else "wall clock"
    name = f"chain of ten differentiable elementwise ops, {count_text(n)} floats, fwd + bwd"
    rows = [row("8a", f"{name} vs torch eager: ms", value=t["sg"], unit="ms", reference=t["torch"],
                reference_name="the same ops in torch (eager) + backward", ratio=t["sg"] / t["torch"],
                target=0.25, target_text="≤ 0.25x", passed=t["sg"] / t["torch"] <= 0.25, notes=timing + ", median")]
    if "compiled" in t:
        rows.append(row("8b", f"{name} vs torch.compile: ms", value=t["sg"], unit="ms", reference=t["compiled"],
                        reference_name="torch.compile(the same function) + backward",
                        ratio=t["sg"] / t["compiled"], target=1.0, target_text="≤ 1.0x",
                        passed=t["sg"] / t["compiled"] <= 1.0, notes=timing + ", median"))
    else:
        rows.append(na_row("8b", f"{name} vs torch.compile", compile_note))
    fast_name = f"{name}, fast math (fn.fast_math()) vs torch.compile: ms"
    if "compiled" in t and "sg_fast" in t:
        rows.append(row("8c", fast_name, value=t["sg_fast"], unit="ms", reference=t["compiled"],
                        reference_name="torch.compile(the same function) + backward",
                        ratio=t["sg_fast"] / t["compiled"], target=1.0, target_text="≤ 1.0x",
                        passed=t["sg_fast"] / t["compiled"] <= 1.0,
                        notes=timing + ", median; " + fast_note))
    elif "sg_fast" not in t:
        rows.append(row("8c", fast_name, notes=fast_note) | {"result": "ERROR"})
    else:
        rows.append(na_row("8c", fast_name, compile_note))
    return rows


FIRST_CALL_CHILD = textwrap.dedent(
    """
    import json, sys, time
    import torch
    import shadegrad as sg
    device, source = sys.argv[1], sys.argv[2]
    cuda = device == "cuda"
    a = torch.rand(64, device=device) + 0.5
    b = torch.rand(64, device=device) + 0.5
    ref = a * b
    if cuda:
        torch.cuda.synchronize()  # torch's context and kernels are up before the clock starts
    t0 = time.perf_counter()
    dev = sg.create_torch_device(type=sg.DeviceType.cuda if cuda else sg.DeviceType.cpu)
    t1 = time.perf_counter()
    m = sg.Module.load_from_source(dev, "first_call", source)
    t2 = time.perf_counter()
    y = m.mul(a, b)
    if cuda:
        torch.cuda.synchronize()
    t3 = time.perf_counter()
    ok = bool(torch.equal(y, ref))
    print(json.dumps({"create_device_ms": (t1 - t0) * 1e3, "load_ms": (t2 - t1) * 1e3,
                      "first_call_ms": (t3 - t2) * 1e3, "correct": ok}))
    """
)


def run_first_call_child(device: str, cache_dir: str) -> dict:
    env = dict(os.environ)
    env["SHADEGRAD_CACHE_DIR"] = cache_dir
    proc = subprocess.run([sys.executable, "-c", FIRST_CALL_CHILD, device, FIRST_CALL_SOURCE],
                          env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"first-call child exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    check(data["correct"], "first call mul(a, b) == a * b")
    return data


def bench_first_call(b: Bench) -> list:
    cold, warm, cache_files = [], [], []
    for _ in range(b.s["first_call_reps"]):
        cache_dir = tempfile.mkdtemp(prefix="sg_bench_cache_")
        try:
            cold.append(run_first_call_child(b.device, cache_dir))
            cache_files.append(sum(len(files) for _, _, files in os.walk(cache_dir)))
            warm.append(run_first_call_child(b.device, cache_dir))
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)

    def med(runs, key):
        return statistics.median(r[key] for r in runs)

    cold_ms, warm_ms = med(cold, "first_call_ms"), med(warm, "first_call_ms")
    compile_step = "NVRTC compile" if b.cuda else "host C++ compile"
    empty = min(cache_files) == 0
    cache_note = " — cache dir EMPTY after the cold run: disk cache not used?" if empty else ""
    return [
        row("5a", f"first call, cold (empty SHADEGRAD_CACHE_DIR, {compile_step}): ms",
            value=cold_ms, unit="ms", target=300.0, target_text="< 300 ms", passed=cold_ms < 300.0,
            notes=(f"median of {len(cold)} fresh process(es); + create_device "
                   f"{med(cold, 'create_device_ms'):.1f} ms, load {med(cold, 'load_ms'):.1f} ms"),
            extra={"runs": cold, "cache_files_after_cold": cache_files}),
        row("5b", "first call, warm (disk cache from a previous process): ms",
            value=warm_ms, unit="ms", target=20.0, target_text="< 20 ms", passed=warm_ms < 20.0,
            notes=(f"median of {len(warm)} fresh process(es); + create_device "
                   f"{med(warm, 'create_device_ms'):.1f} ms, load {med(warm, 'load_ms'):.1f} ms"
                   + cache_note),
            extra={"runs": warm}),
    ]


BENCHMARKS = [
    ("1", "cached forward call", bench_forward_call),
    ("2", "forward + backward", bench_forward_backward),
    ("3", "large elementwise bandwidth", bench_bandwidth),
    ("4", "lookup-table backward", bench_lut),
    ("4e", "1M-entry lookup table, deterministic", bench_big_lut),
    ("5", "first-call latency", bench_first_call),
    ("6", "broadcast parameters", bench_broadcast_params),
    ("6e", "partial broadcast, deterministic", bench_partial_broadcast),
    ("7", "float3 function", bench_float3),
    ("8", "fused elementwise chain", bench_chain),
    ("9", "torch.compile(fullgraph=True) training step", bench_compiled_step),
    ("10", "CUDA graph replay of a training step", bench_graph_step),
]


# --------------------------------------------------------------------------------------------
# Report


def fmt(v, unit=""):
    if v is None:
        return "—"
    if unit == "TB/s":
        return f"{v:.3f} TB/s" if v >= 0.1 else f"{v * 1e3:.2f} GB/s"
    if unit == "ms":
        return f"{v:.3f} ms" if v < 10 else f"{v:.1f} ms"
    if unit == "µs":
        return f"{v:.2f} µs"
    return f"{v:.3g}"


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = [
        "# shadegrad GPU benchmarks" + (" (quick)" if report["quick"] else ""),
        "",
        f"- date: {report['date']}",
        f"- device: {report['device']} — {m['gpu']}",
        f"- torch {m['torch']}, shadegrad bridge: {m['shadegrad_bridge']}, python {m['python']}",
        f"- raw launch reference: {m.get('raw_launch') or 'N/A'}",
        f"- wall time: {report['wall_s']:.1f} s",
        "",
        "| # | benchmark | shadegrad | reference | ratio | target | result | notes |",
        "|---|---|---:|---|---:|---|---|---|",
    ]
    for r in report["rows"]:
        ref = "—" if r["reference"] is None else f"{fmt(r['reference'], r['unit'])} ({r['reference_name']})"
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.3f}x"
        notes = r["notes"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r['id']} | {r['benchmark']} | {fmt(r['value'], r['unit'])} | {ref} | {ratio} "
                     f"| {r['target_text']} | {r['result']} | {notes} |")
    lines.append("")
    lines.append("Ratios are shadegrad / reference (time) or shadegrad / copy (bandwidth, row 3).")
    if report["device"] != "cuda":
        lines.append("Targets are defined for CUDA; on the CPU backend the results are indicative only.")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, smaller sizes (smoke test)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    parser.add_argument("--markdown", metavar="PATH", help="write the markdown table to PATH")
    parser.add_argument("--only", metavar="IDS", help="comma-separated benchmark numbers, e.g. 1,3")
    args = parser.parse_args()

    wall0 = time.perf_counter()
    import torch

    import shadegrad as sg

    if args.device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda but torch.cuda.is_available() is False (use --device cpu)",
              file=sys.stderr)
        return 2
    b = Bench(args.device, args.quick)
    only = set(args.only.split(",")) if args.only else None

    rows, errors = [], 0
    for bid, name, fn in BENCHMARKS:
        if only and bid not in only:
            continue
        t0 = time.perf_counter()
        try:
            rows.extend(fn(b))
        except Exception as e:  # noqa: BLE001 — one failing benchmark must not hide the others
            errors += 1
            traceback.print_exc(file=sys.stderr)
            rows.append(row(bid, name, notes=f"{type(e).__name__}: {e}".splitlines()[0][:300])
                        | {"result": "ERROR"})
            b.release()
        print(f"[bench_gpu] {bid} {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    raw = next((r["extra"].get("raw_launch_method") for r in rows if r["id"] == "1a"), None)
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": args.device,
        "quick": args.quick,
        "machine": {
            "gpu": torch.cuda.get_device_name() if args.device == "cuda" else
                   f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)",
            "torch": torch.__version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "shadegrad_bridge": sg.torch_bridge_status()["active"],
            "cuda_status": sg.cuda_status() if args.device == "cuda" else None,
            "raw_launch": raw,
        },
        "ratio": "shadegrad / reference for times; shadegrad / copy for bandwidth",
        "wall_s": time.perf_counter() - wall0,
        "rows": rows,
        "errors": errors,
    }
    text = markdown(report)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2, default=str)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
