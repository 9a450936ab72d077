# bench/bench_rows.py — what bench/bench_gpu.py and bench/bench_steps.py share: the correctness
# check and relative error every benchmark runs before it is timed, and the report rows they
# return. A module of its own so that bench_steps need not import bench_gpu, which imports it.
"""Result rows and correctness checks shared by the GPU benchmark suite."""

from __future__ import annotations

import math


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
