# scripts/first_call_profile.py — where the time of a first call goes, on the CPU backend, in fresh
# processes: the child of bench/bench_gpu.py row 5 (load a module, call mul(a, b) once), run
# cold (empty SHADEGRAD_CACHE_DIR) and warm (the cache the cold run left), with the compile
# path's own split (`_core._compile_stats()`: binding, glue, the kernel index, re-reading the user
# module, the driver's phases, the compiler's identity, the disk cache read, the host compile,
# loading the shared object).
#
#   python3 scripts/first_call_profile.py [--reps 3] [--device cpu|cuda] [--json]
#
# Prints the median of --reps process pairs per step, in milliseconds.
"""First-call latency split, cold and warm, in fresh processes."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

SOURCE = "float mul(float a, float b) { return a * b; }"

CHILD = r'''
import json, sys, time
import torch
import shadegrad as sg
from shadegrad import _core
device, source = sys.argv[1], sys.argv[2]
cuda = device == "cuda"
a = torch.rand(64, device=device) + 0.5
b = torch.rand(64, device=device) + 0.5
if cuda:
    torch.cuda.synchronize()
dev = sg.create_torch_device(type=sg.DeviceType.cuda if cuda else sg.DeviceType.cpu)
t1 = time.perf_counter()
m = sg.Module.load_from_source(dev, "first_call", source)
t2 = time.perf_counter()
before = _core._compile_stats()
y = m.mul(a, b)
if cuda:
    torch.cuda.synchronize()
t3 = time.perf_counter()
after = _core._compile_stats()
assert torch.equal(y, a * b)
stats = {k: after[k] - before[k] for k in after if k != "ms"}
stats["ms"] = {k: after["ms"][k] - before["ms"][k] for k in after["ms"]}
print(json.dumps({"load_ms": (t2 - t1) * 1e3, "first_call_ms": (t3 - t2) * 1e3, "stats": stats}))
'''

# The rows of the split, in the order a cold call runs them: (label, key in stats["ms"]).
STEPS = [
    ("bind (resolve_call)", "bind"),
    ("glue source", "glue"),
    ("kernel index lookup / store, of which:", "index"),
    ("  the key (compiler identity, hashing)", "index_key"),
    ("front end: re-read the user module", "module_parse"),
    ("front end: parse the glue", "glue_parse"),
    ("front end: sema", "sema"),
    ("lower", "lower"),
    ("autodiff", "autodiff"),
    ("IR passes", "passes"),
    ("codegen", "codegen"),
    ("backend load, of which:", "backend_load"),
    ("  compiler identity", "compiler_identity"),
    ("  disk cache read + verify", "disk_read"),
    ("  module from the disk entry (write + dlopen)", "disk_decode"),
    ("  compile (host C++ / NVRTC) + dlopen", "compile"),
    ("  device module load (CUDA)", "device_load"),
    ("CUDA: primary context, first retain", "cuda_context"),
    ("CUDA: fault record (mapped host memory)", "cuda_fault_record"),
    ("CUDA: function lookup + launch configuration", "cuda_function"),
    ("CUDA: first launch of each entry (host)", "cuda_first_launch"),
]


def run_child(device: str, cache_dir: str) -> dict:
    env = dict(os.environ, SHADEGRAD_CACHE_DIR=cache_dir)
    proc = subprocess.run([sys.executable, "-c", CHILD, device, SOURCE], env=env, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = {"cold": [], "warm": []}
    for _ in range(args.reps):
        cache_dir = tempfile.mkdtemp(prefix="sg_first_call_")
        try:
            runs["cold"].append(run_child(args.device, cache_dir))
            runs["warm"].append(run_child(args.device, cache_dir))
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
    if args.json:
        print(json.dumps(runs, indent=1))
        return

    def med(kind: str, get) -> float:
        return statistics.median(get(r) for r in runs[kind])

    print(f"{'step':48s} {'cold ms':>9s} {'warm ms':>9s}")
    print(f"{'first call (wall, median)':48s} {med('cold', lambda r: r['first_call_ms']):9.2f} "
          f"{med('warm', lambda r: r['first_call_ms']):9.2f}")
    for label, key in STEPS:
        print(f"{label:48s} {med('cold', lambda r: r['stats']['ms'][key]):9.2f} "
              f"{med('warm', lambda r: r['stats']['ms'][key]):9.2f}")
    print(f"{'module load (before the call; not in the row)':48s} {med('cold', lambda r: r['load_ms']):9.2f} "
          f"{med('warm', lambda r: r['load_ms']):9.2f}")
    counts = ["plans", "index_hits", "index_misses", "quick_kernels", "upgrades", "front_end_runs", "codegen_runs", "memory_hits", "disk_hits",
              "compiles"]
    for kind in ("cold", "warm"):
        print(kind + ": " + ", ".join(f"{k} {runs[kind][0]['stats'][k]}" for k in counts))


if __name__ == "__main__":
    main()
