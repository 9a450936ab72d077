# scripts/call_instructions.py — instructions per cached call on the CPU backend, counted by
# valgrind's callgrind (deterministic, unlike wall-clock time on a shared machine): each case is
# run once with no timed calls and once with N, and the difference is divided by N. The cases are
# bench_call's: mul(a, b), mul2(grid, a, b) and mul2 forward + backward, on 8x8 tensors (a, b
# require grad in the last). The counts include the CPU kernel itself and the Python loop.
# torch_mul and torch_fwdbwd count torch's own torch.mul(a, b) and (a * b).backward(g) on the same
# tensors, for reference. mixed_fwdbwd is the frozen/learnable case (a does not require grad, b
# does: mul2(grid, a, b).backward(g)), torch_mixed_fwdbwd the same in torch; tensor_mul is
# mul(A, B) with sg.Tensors over a and b (bench row 1e), against torch_args_mul, the same lambda
# given a and b.
#
#   python3 scripts/call_instructions.py [--calls N] [--cases mul,mul2,fwdbwd,mixed_fwdbwd] [--keep DIR]
#
# With --keep, the callgrind outputs stay in DIR (callgrind_annotate --inclusive=yes FILE-01
# shows where the main thread's instructions go; an unstripped _core names its functions: install
# with -Ccmake.define.SG_NOSTRIP=ON -Cinstall.strip=false). A build's readings still differ by up
# to 10% between runs (mul; mul2 and fwdbwd repeat exactly): compare builds over several runs.
"""Instructions per cached shadegrad call, counted with callgrind."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

LOOP = r'''
import sys
import torch
import shadegrad as sg
sys.path.insert(0, {bench!r})
from mul2_kernels import MUL2_SOURCE

torch.set_num_threads(1)
m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.cpu), "instructions", MUL2_SOURCE)
a, b = torch.rand(8, 8), torch.rand(8, 8)
grid = sg.grid((8, 8))
ga, gb = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
fa, lb = a.clone(), b.clone().requires_grad_(True)  # the mixed case: a frozen, b learnable
g = torch.ones(8, 8)
mul, mul2 = m.mul, m.mul2
# (builds from before sg.Tensor existed still run the other cases)
ta, tb = (sg.Tensor.from_torch(a), sg.Tensor.from_torch(b)) if hasattr(sg, "Tensor") else (a, b)


def fwdbwd():
    ga.grad = gb.grad = None
    mul2(grid, ga, gb).backward(g)


def torch_fwdbwd():
    ga.grad = gb.grad = None
    (ga * gb).backward(g)


def mixed_fwdbwd():
    lb.grad = None
    mul2(grid, fa, lb).backward(g)


def torch_mixed_fwdbwd():
    lb.grad = None
    (fa * lb).backward(g)


cases = {{"mul": lambda: mul(a, b), "mul2": lambda: mul2(grid, a, b), "fwdbwd": fwdbwd,
          "mixed_fwdbwd": mixed_fwdbwd,
          # the same names looked up either way (a global's lookup cost depends on its name)
          "torch_args_mul": lambda x=a, y=b: mul(x, y), "tensor_mul": lambda x=ta, y=tb: mul(x, y),
          "torch_mul": lambda: torch.mul(a, b), "torch_fwdbwd": torch_fwdbwd,
          "torch_mixed_fwdbwd": torch_mixed_fwdbwd}}
for warm in cases.values():  # every case compiles and warms up in both runs
    for _ in range(200):
        warm()
f, n = cases[sys.argv[1]], int(sys.argv[2])
for _ in range(n):
    f()
'''


def instructions(script: str, case: str, calls: int, out_dir: str) -> int:
    """Instructions of the main thread (the one that makes the calls) in one run."""
    out = os.path.join(out_dir, f"callgrind.{case}.{calls}")
    # One process's count differs from the next one's unless everything that varies between
    # processes is pinned: str hashing (PYTHONHASHSEED: dict layouts, hence probe counts) and
    # numpy's OpenBLAS server thread, which spins for the whole run (tens of millions of
    # instructions, differing from run to run); torch and OpenMP get one thread too. Only the
    # main thread is counted (callgrind writes one file per thread, the main one ending in -01).
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={out}",
         sys.executable, script, case, str(calls)],
        capture_output=True, text=True, env=env)
    main_thread = f"{out}-01"
    found = None
    if proc.returncode == 0 and os.path.exists(main_thread):
        with open(main_thread) as f:
            found = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
    if not found:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"callgrind run of {case} ({calls} calls) failed")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20000, help="timed calls per case (fwdbwd: a fifth)")
    parser.add_argument("--cases", default="mul,mul2,fwdbwd")
    parser.add_argument("--keep", metavar="DIR", help="keep the callgrind outputs in DIR")
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not installed")
    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
    out_dir = args.keep or tempfile.mkdtemp(prefix="sg_callgrind_")
    os.makedirs(out_dir, exist_ok=True)
    script = os.path.join(out_dir, "loop.py")
    with open(script, "w") as f:
        f.write(LOOP.format(bench=bench))
    base = instructions(script, "mul", 0, out_dir)
    for case in args.cases.split(","):
        calls = max(args.calls // 5, 1) if case.endswith("fwdbwd") else args.calls
        per_call = (instructions(script, case, calls, out_dir) - base) / calls
        print(f"{case}: {per_call:.0f} instructions per call")
    if not args.keep:
        shutil.rmtree(out_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
