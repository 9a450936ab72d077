# bench/bench_call.py — host time of a cached shadegrad call on the CPU backend versus the torch
# expression it replaces, for both torch bridges, in one run; plus a count of the Python function
# calls made during cached calls through the native bridge (expected: 0); and a training step
# compiled with torch.compile against the same step run eagerly (native bridge; --no-compile skips).
#
#   python bench/bench_call.py [--json PATH] [--quick] [--no-compile]
#
# Each bridge is measured in its own process (the fallback one with SHADEGRAD_TORCH_BRIDGE=fallback),
# and each process measures torch on the same tensors, so every ratio compares numbers taken
# side by side. Ratios are shadegrad / torch: below 1 means shadegrad is faster.
"""Benchmark the cached call path of shadegrad against torch on small CPU tensors."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

from mul2_kernels import MUL2_SOURCE, python_frames_during

SHAPES = [(4, 4), (64, 64)]
BRIDGES = ["native", "fallback"]


def time_per_call(fn, number: int, repeat: int, warmup: int) -> float:
    """Median over `repeat` rounds of the mean time of `number` calls, in microseconds."""
    for _ in range(warmup):
        fn()
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter_ns() - start) / number / 1000.0)
    return statistics.median(rounds)


def worker(quick: bool, compile_step: bool) -> dict:
    """Measures every case with the bridge this process was started with."""
    import torch

    import shadegrad as sg

    number, repeat, warmup = (50, 5, 50) if quick else (500, 21, 500)
    bwd_number = max(number // 5, 10)
    device = sg.create_torch_device(type=sg.DeviceType.cpu)
    m = sg.Module.load_from_source(device, "bench", MUL2_SOURCE)
    results = []

    def record(case, shape, sg_fn, torch_fn, n):
        sg_us = time_per_call(sg_fn, n, repeat, warmup)
        torch_us = time_per_call(torch_fn, n, repeat, warmup)
        results.append(
            {
                "case": case,
                "shape": list(shape),
                "shadegrad_us": round(sg_us, 3),
                "torch_us": round(torch_us, 3),
                "ratio": round(sg_us / torch_us, 3),
            }
        )

    python_calls = {}
    for shape in SHAPES:
        a = torch.rand(shape)
        b = torch.rand(shape)
        grid = sg.grid(shape)  # sg.grid is a Python helper: built once, outside the timed loop
        assert torch.equal(m.mul2(grid, a, b), a * b) and torch.equal(m.mul(a, b), a * b)

        record("mul2(grid, a, b) forward", shape, lambda: m.mul2(grid, a, b), lambda: torch.mul(a, b), number)
        record("mul(a, b) forward", shape, lambda: m.mul(a, b), lambda: torch.mul(a, b), number)

        ga = a.clone().requires_grad_(True)
        gb = b.clone().requires_grad_(True)
        grad_out = torch.ones(shape)

        def sg_fwd_bwd():
            ga.grad = gb.grad = None
            m.mul2(grid, ga, gb).backward(grad_out)

        def torch_fwd_bwd():
            ga.grad = gb.grad = None
            (ga * gb).backward(grad_out)

        record("mul2 forward+backward", shape, sg_fwd_bwd, torch_fwd_bwd, bwd_number)

        # A dict (struct) and a list (array) argument against the same call with tensors in their
        # place: what describing Python composites costs on a cached call.
        params = {"scale": 2.0, "bias": 0.5}
        weights = [1.0, 0.25]
        t_params = {"scale": torch.tensor(2.0), "bias": torch.tensor(0.5)}
        t_weights = torch.tensor([1.0, 0.25])
        assert torch.allclose(m.affine(a, params, weights), m.affine(a, t_params, t_weights))
        record(
            "affine(x, dict, list) vs the same call with tensors",
            shape,
            lambda: m.affine(a, params, weights),
            lambda: m.affine(a, t_params, t_weights),
            number,
        )

        key = "x".join(map(str, shape))
        python_calls[f"mul2 {key}"] = len(python_frames_during(m, "mul2", (grid, a, b), 1000))
        python_calls[f"mul {key}"] = len(python_frames_during(m, "mul", (a, b), 1000))
        python_calls[f"mul2 {key} requires_grad"] = len(python_frames_during(m, "mul2", (grid, ga, gb), 1000))

    if compile_step:
        # A training step (forward, loss, backward) compiled with torch.compile (inductor) against
        # the same step run eagerly: shadegrad calls inside a graph go through the custom operators.
        def train_step(a, b):
            return ((m.mul2(sg.grid(a.shape), a, b) - 0.5) ** 2).mean()

        # inductor generates its own CPU kernels for the loss (OpenMP: slow on a busy machine);
        # aot_eager runs the same graphs with torch's eager kernels, which isolates what the
        # custom-operator route of the shadegrad calls costs.
        for backend in ("inductor", "aot_eager"):
            compiled_step = torch.compile(train_step, fullgraph=True, backend=backend)
            for shape in SHAPES:
                a = torch.rand(shape, requires_grad=True)
                b = torch.rand(shape)

                def run(step):
                    a.grad = None
                    step(a, b).backward()

                run(compiled_step)  # compiles
                record(f"training step, torch.compile ({backend}) vs eager", shape, lambda: run(compiled_step),
                       lambda: run(train_step), bwd_number)

    return {
        "bridge": sg.torch_bridge_status()["active"],
        "results": results,
        "python_calls_per_1000_cached_calls": python_calls,
        "torch_threads": torch.get_num_threads(),
    }


def run_worker(bridge: str, quick: bool, compile_step: bool) -> dict:
    env = dict(os.environ)
    env.pop("SHADEGRAD_TORCH_BRIDGE", None)
    if bridge == "fallback":
        env["SHADEGRAD_TORCH_BRIDGE"] = "fallback"
    cmd = [sys.executable, os.path.abspath(__file__), "--worker"] + (["--quick"] if quick else [])
    cmd += ["--compile"] if compile_step else []
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"bench worker for the {bridge} bridge failed (exit {proc.returncode})")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["requested_bridge"] = bridge
    return data


def markdown(runs: list) -> str:
    lines = [
        "| bridge | case | shape | shadegrad µs | torch µs (or the tensor call) | ratio |",
        "|---|---|---|---:|---:|---:|",
    ]
    for run in runs:
        for r in run["results"]:
            shape = "x".join(map(str, r["shape"]))
            lines.append(
                f"| {run['bridge']} | {r['case']} | {shape} | {r['shadegrad_us']:.2f} "
                f"| {r['torch_us']:.2f} | {r['ratio']:.2f} |"
            )
    lines.append("")
    lines.append("Python function calls during 1000 cached calls:")
    for run in runs:
        counts = ", ".join(f"{k}: {v}" for k, v in run["python_calls_per_1000_cached_calls"].items())
        lines.append(f"- {run['bridge']}: {counts}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--quick", action="store_true", help="few repetitions (a smoke run, noisy)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile training-step row")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--compile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        print(json.dumps(worker(args.quick, args.compile)))
        return 0

    # The compiled step is measured with the native bridge only (compiling takes a while).
    runs = [run_worker(bridge, args.quick, bridge == "native" and not args.no_compile) for bridge in BRIDGES]
    print(markdown(runs))
    native = next(r for r in runs if r["requested_bridge"] == "native")
    status = 0
    if native["bridge"] != "native":
        print(f"\nwarning: the native bridge is not active (got '{native['bridge']}')", file=sys.stderr)
    elif any(native["python_calls_per_1000_cached_calls"].values()):
        print("\nerror: the native bridge's cached call path ran Python code", file=sys.stderr)
        status = 1

    if args.json:
        import torch

        report = {
            "machine": {
                "python": platform.python_version(),
                "torch": torch.__version__,
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
            },
            "ratio": "shadegrad_us / torch_us (below 1: shadegrad faster)",
            "runs": runs,
        }
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"\nwrote {args.json}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
