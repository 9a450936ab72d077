# bench/bench_fwd_bwd_host.py — host time of a forward + backward call against the same step in
# torch, measured two ways: each side in a process of its own (the honest figure: nothing of the
# other side warms the caches or the allocator), and both sides interleaved block by block in one
# process (what bench_gpu.py row 2 does). Interleaving flatters whichever side benefits from the
# other's warm state, so the target is defined on the independent form.
#
#   python bench/bench_fwd_bwd_host.py [--device cuda|cpu] [--processes 3] [--quick]
#                                      [--size N] [--json PATH] [--markdown PATH]
#
# --size N runs both cases on NxN instead (both keep their grad pattern). On the CPU backend the
# kernels run on the host, so 256x256 measures kernel time as much as host overhead: use a small
# size (8) there to compare host costs.
#
# Cases (issue: forward + backward overhead):
#   both   mul2(grid, a, b) on 64x64, a and b require grad       vs (a * b).backward(g)
#   mixed  mul2(grid, a, b) on 256x256, a frozen, b requires grad vs (a * b).backward(g)
# Each measurement: its side's gradients checked, warm-up, then 7 blocks of N iterations (one
# synchronize per block), median µs per iteration. Each side runs in --processes fresh
# processes; the table lists every process and the ratio of the medians.
"""Forward + backward host time, each side in its own process, and interleaved."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from bench_rows import block_us, spawn_worker
from mul2_kernels import MUL2_SOURCE

CASES = {
    "both": {"shape": (64, 64), "grads": (True, True), "text": "mul2 fwd + bwd 64x64, both require grad"},
    "mixed": {"shape": (256, 256), "grads": (False, True), "text": "mul2 fwd + bwd 256x256, a frozen, b learnable"},
}
TARGET = 0.9
BLOCKS = 7


def _spec(case: str, size) -> dict:
    spec = dict(CASES[case])
    if size:
        spec["shape"] = (size, size)
        spec["text"] = spec["text"].replace("x".join(map(str, CASES[case]["shape"])), f"{size}x{size}")
    return spec


def _setup(case: str, device: str, size=None, sides=("sg", "torch")):
    import torch

    import shadegrad as sg

    spec = _spec(case, size)
    gen = torch.Generator(device="cpu").manual_seed(3)
    a = (torch.rand(spec["shape"], generator=gen) + 0.5).to(device).requires_grad_(spec["grads"][0])
    b = (torch.rand(spec["shape"], generator=gen) + 0.5).to(device).requires_grad_(spec["grads"][1])
    g = (torch.rand(spec["shape"], generator=gen) + 0.5).to(device)
    dev = sg.create_device(sg.DeviceType.cuda if device == "cuda" else sg.DeviceType.cpu)
    m = sg.Module.load_from_source(dev, "bench_fwd_bwd_host", MUL2_SOURCE)
    grid = sg.grid(spec["shape"])
    f = m.mul2
    leaves = [t for t in (a, b) if t.requires_grad]

    def sg_iters(n):
        for _ in range(n):
            for t in leaves:
                t.grad = None
            f(grid, a, b).backward(g)

    def torch_iters(n):
        for _ in range(n):
            for t in leaves:
                t.grad = None
            (a * b).backward(g)

    # Each side's gradients are checked before anything is timed, against g * b and g * a made by
    # plain operations on this thread: a side's process runs nothing of the other side, not even
    # the check (a torch backward would, among other things, bind the CUDA context of the
    # autograd thread that a shadegrad-only backward must bind itself).
    expected = {id(a): g * b.detach(), id(b): g * a.detach()}
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    runs = {"sg": sg_iters, "torch": torch_iters}
    for side in sides:
        runs[side](1)
        for t in leaves:
            if not torch.allclose(t.grad, expected[id(t)]):
                raise SystemExit(f"{case}: {side}'s gradient differs from g * (the other input)")
    return {side: runs[side] for side in sides}, sync


def worker(case: str, side: str, device: str, number: int, size=None) -> float:
    runs, sync = _setup(case, device, size, sides=(side,))
    run = runs[side]
    run(max(number // 2, 10))  # warm-up: plans, caching allocator, autograd engine threads
    return statistics.median(block_us(run, sync, number) for _ in range(BLOCKS))


def interleaved(case: str, device: str, number: int, size=None) -> dict:
    runs, sync = _setup(case, device, size)
    for run in runs.values():
        run(max(number // 2, 10))
    samples = {side: [] for side in runs}
    for _ in range(BLOCKS):
        for side, run in runs.items():
            samples[side].append(block_us(run, sync, number))
    return {side: statistics.median(v) for side, v in samples.items()}


def _spawn(args: list) -> float:
    return spawn_worker(os.path.abspath(__file__), args, timeout=600)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", choices=["cuda", "cpu"], default=None)
    p.add_argument("--processes", type=int, default=3, help="fresh processes per side and case")
    p.add_argument("--quick", action="store_true", help="short blocks (a smoke run, noisy)")
    p.add_argument("--size", type=int, default=None, help="run both cases on NxN (CPU host cost: 8)")
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--markdown", metavar="PATH")
    p.add_argument("--worker", nargs=2, metavar=("CASE", "SIDE"), help=argparse.SUPPRESS)
    p.add_argument("--interleaved", metavar="CASE", help=argparse.SUPPRESS)
    p.add_argument("--number", type=int, default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.device is None:
        import torch

        a.device = "cuda" if torch.cuda.is_available() else "cpu"
    number = a.number or (50 if a.quick else 500)
    if a.worker:
        print(worker(a.worker[0], a.worker[1], a.device, number, a.size))
        return 0
    if a.interleaved:
        print(json.dumps(interleaved(a.interleaved, a.device, number, a.size)))
        return 0

    common = ["--device", a.device, "--number", str(number)] + (["--size", str(a.size)] if a.size else [])
    results = []
    for case in CASES:
        spec = _spec(case, a.size)
        own = {side: [_spawn(["--worker", case, side, *common]) for _ in range(a.processes)] for side in ("sg", "torch")}
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--interleaved", case, *common],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"interleaved {case} failed:\n{proc.stderr}")
        inter = json.loads(proc.stdout.strip().splitlines()[-1])
        ratio = statistics.median(own["sg"]) / statistics.median(own["torch"])
        per_process = [s / t for s, t in zip(own["sg"], own["torch"])]
        results.append({
            "case": case, "text": spec["text"], "device": a.device, "own_process_us": own,
            "ratio_own_process": ratio, "ratio_per_process_pair": per_process,
            "interleaved_us": inter, "ratio_interleaved": inter["sg"] / inter["torch"],
            "target": TARGET, "passed": max(per_process) <= TARGET,
        })

    lines = [f"# forward + backward host time, {a.device} ({a.processes} processes per side, "
             f"{BLOCKS} blocks of {number} iterations, median)", "",
             "| case | shadegrad µs/iter (own process) | torch µs/iter (own process) | ratio | ratio, interleaved | "
             f"target ≤ {TARGET}x in every pair |", "|---|---|---|---:|---:|---|"]
    for r in results:
        own = r["own_process_us"]
        lines.append(f"| {r['text']} | {', '.join(f'{v:.1f}' for v in own['sg'])} | "
                     f"{', '.join(f'{v:.1f}' for v in own['torch'])} | {r['ratio_own_process']:.3f}x | "
                     f"{r['ratio_interleaved']:.3f}x | {'PASS' if r['passed'] else 'MISSED'} "
                     f"({', '.join(f'{x:.2f}' for x in r['ratio_per_process_pair'])}) |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as fh:
            fh.write(text)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
