#!/usr/bin/env python3
# scripts/slangpy_generator_values.py — the numbers SlangPy's wang_hash / rand_float generators give.
"""Runs SlangPy's own generator code (its `slangpy` Slang module: WangHashArg, RandFloatArg) in a
kernel on real Slang's CPU device and prints, per case, the values of the first threads, as JSON.
tests/python/test_spy_generators.py compares shadegrad's generators with these numbers.

SlangPy is not a dependency of shadegrad; run this with a Python that has it:

    ~/slangvenv/bin/python scripts/slangpy_generator_values.py 2>/dev/null | grep -v WARN \
        > tests/python/data/slangpy_generator_values.json

A case is (kind, components, seed as the kernel receives it, warmup, min, max); the seed a call
passes is hashed first when hash_seed=True (SlangPy does that on the host)."""
from __future__ import annotations

import json

import numpy as np
import slangpy as spy

THREADS = 6
CASES = [
    # kind, components (0: scalar), seed the kernel receives, warmup, min, max
    ("wang_hash", 0, 0, 0, 0.0, 0.0),
    ("wang_hash", 2, 0, 0, 0.0, 0.0),
    ("wang_hash", 3, 12345, 0, 0.0, 0.0),
    ("wang_hash", 2, 2640457667, 2, 0.0, 0.0),
    ("rand_float", 0, 7, 0, 0.0, 1.0),
    ("rand_float", 2, 99, 0, 0.0, 10.0),
    ("rand_float", 3, 4242, 1, -2.0, 3.0),
]


def kernel_source(kind: str, n: int, seed: int, warmup: int, lo: float, hi: float) -> str:
    value_type = ("uint" if kind == "wang_hash" else "float") + (str(n) if n else "")
    make = (f"WangHashArg<{warmup}> g; g.seed = {seed}u;" if kind == "wang_hash" else
            f"RandFloatArg<{warmup}> g; g.seed = {seed}u; g.min = {lo!r}; g.max = {hi!r};")
    return f"""
import slangpy;
RWStructuredBuffer<{value_type}> out_values;
[shader("compute")][numthreads(1, 1, 1)]
void gen_entry(uint3 tid : SV_DispatchThreadID) {{
    for (int i = 0; i < {THREADS}; i++) {{
        {make}
        Context0D c; c.thread_id = uint3(i, 0, 0);
        {value_type} v; g.__slangpy_load(c, v);
        out_values[i] = v;
    }}
}}
"""


def main() -> None:
    device = spy.create_device(type=spy.DeviceType.cpu)
    results = []
    for n_case, (kind, n, seed, warmup, lo, hi) in enumerate(CASES):
        module = device.load_module_from_source(f"gen{n_case}", kernel_source(kind, n, seed, warmup, lo, hi))
        program = device.link_program([module], [module.entry_point("gen_entry")])
        k = device.create_compute_kernel(program)
        comps = max(n, 1)
        usage = spy.BufferUsage.unordered_access | spy.BufferUsage.shader_resource
        buf = device.create_buffer(size=4 * comps * THREADS, usage=usage,
                                   data=np.zeros(comps * THREADS, dtype=np.uint32))
        k.dispatch(thread_count=[1, 1, 1], vars={"out_values": buf})
        raw = buf.to_numpy().view(np.uint32 if kind == "wang_hash" else np.float32)
        values = raw.reshape(THREADS, comps).tolist() if n else raw[:THREADS].tolist()
        results.append({"kind": kind, "components": n, "seed": seed, "warmup": warmup,
                        "min": lo, "max": hi, "values": values})
    print(json.dumps(results, separators=(",", ":")))


if __name__ == "__main__":
    main()
