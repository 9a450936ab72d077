# bench/bench_rows.py — what bench/bench_gpu.py and bench/bench_steps.py share: the correctness
# check and relative error every benchmark runs before it is timed, and the report rows they
# return. A module of its own so that bench_steps need not import bench_gpu, which imports it.
# The host-time scripts (bench_fwd_bwd_host, bench_train_step, split_fwd_bwd) take their worker
# processes and their timed blocks from here too.
"""Result rows and correctness checks shared by the GPU benchmark suite."""

from __future__ import annotations

import math
import subprocess
import sys
import time


def rel_err(x, ref) -> float:
    """‖x − ref‖ / ‖ref‖ in float64 (inf when x has NaN)."""
    x = x.double()
    ref = ref.double()
    if not bool(x.isfinite().all()):
        return math.inf
    denom = float(ref.norm())
    return float((x - ref).norm()) / (denom if denom else 1.0)


def check(cond: bool, what: str):
    if not cond:
        raise AssertionError(f"correctness check failed: {what}")


def row(bid, name, *, value=None, unit="", reference=None, reference_name="", ratio=None,
        target=None, target_text="—", passed=None, notes="", extra=None):
    if passed is None:
        result = "info"
    else:
        result = "PASS" if passed else "MISSED"
    return {
        "id": bid, "benchmark": name, "value": value, "unit": unit, "reference": reference,
        "reference_name": reference_name, "ratio": ratio, "target": target,
        "target_text": target_text, "result": result, "notes": notes, "extra": extra or {},
    }


def na_row(bid, name, why):
    return row(bid, name, notes=why) | {"result": "N/A"}


def spawn_worker(script: str, args: list, timeout: float) -> float:
    """Runs `script` with `args` in a fresh Python process (each side of a host-time benchmark in
    a process of its own) and returns the number on the last line of its output."""
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"worker {args} failed:\n{proc.stdout}\n{proc.stderr}")
    return float(proc.stdout.strip().splitlines()[-1])


def block_us(run, sync, number: int) -> float:
    """µs per iteration of `run(number)` (which runs `number` iterations), timed between two
    `sync()` calls so that the device's queue is empty at both ends."""
    sync()
    t0 = time.perf_counter()
    run(number)
    sync()
    return (time.perf_counter() - t0) / number * 1e6
