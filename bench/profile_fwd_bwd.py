# bench/profile_fwd_bwd.py — where the host time of one mul2 forward + backward goes (benchmark
# row 2), next to torch's (a * b).backward(g): per-phase host times and torch.profiler's table of
# the operators and launches each runs. A diagnostic for bench_gpu.py's row 2, not a benchmark.
#
#   python bench/profile_fwd_bwd.py [--device cuda|cpu] [--shape 64] [--timeline]
#
# --timeline also prints one iteration of each side as a timeline (every profiled event with its
# thread, start and duration), from torch.profiler's trace: it shows which thread runs what, and
# the gaps between, which the operator table does not.
import argparse
import json
import os
import statistics
import tempfile
import time

import torch

import shadegrad as sg
from mul2_kernels import MUL2_SOURCE


def per_call_us(fn, number=2000, repeat=7):
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(samples)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--shape", type=int, default=64)
    p.add_argument("--timeline", action="store_true", help="print one iteration of each side as a timeline")
    args = p.parse_args()
    dev = args.device
    kind = sg.DeviceType.cuda if dev == "cuda" else sg.DeviceType.cpu
    m = sg.Module.load_from_source(sg.create_torch_device(type=kind), "profile", MUL2_SOURCE)
    n = args.shape
    a = (torch.rand(n, n, device=dev) + 0.5).requires_grad_(True)
    b = (torch.rand(n, n, device=dev) + 0.5).requires_grad_(True)
    g = torch.rand(n, n, device=dev)
    grid = sg.grid((n, n))
    f = m.mul2

    def sg_fwd():
        return f(grid, a, b)

    def sg_fwd_nograd():
        return f(grid, a.detach(), b.detach())

    def sg_both():
        a.grad = None
        b.grad = None
        f(grid, a, b).backward(g)

    def torch_both():
        a.grad = None
        b.grad = None
        (a * b).backward(g)

    def zeros2():
        return torch.zeros(n, n, device=dev), torch.zeros(n, n, device=dev)

    rows = {
        "sg forward, no grad": per_call_us(sg_fwd_nograd),
        "sg forward with autograd node": per_call_us(sg_fwd),
        "sg forward + backward": per_call_us(sg_both),
        "torch a * b (grad)": per_call_us(lambda: a * b),
        "torch (a * b).backward(g)": per_call_us(torch_both),
        "torch.zeros x2": per_call_us(zeros2),
        "torch.empty": per_call_us(lambda: torch.empty(n, n, device=dev)),
    }
    if dev == "cuda":
        torch.cuda.synchronize()
    for k, v in rows.items():
        print(f"{k:40s} {v:8.2f} us")

    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
    for name, fn in (("shadegrad", sg_both), ("torch", torch_both)):
        for _ in range(50):
            fn()
        with profile(activities=acts) as prof:
            for _ in range(200):
                fn()
        print(f"\n== {name}: 200 iterations")
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25))
    if args.timeline:
        for name, fn in (("shadegrad", sg_both), ("torch", torch_both)):
            print_timeline(name, fn, acts, dev)


def print_timeline(name, fn, acts, dev):
    """One iteration (the 10th of 12, each marked with record_function) as a list of events."""
    from torch.profiler import profile, record_function

    for _ in range(50):
        fn()
    with profile(activities=acts) as prof:
        for i in range(12):
            with record_function(f"iteration {i}"):
                fn()
            if dev == "cuda":
                torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    # The host's marks: on CUDA each iteration also has a gpu_user_annotation, spanning only the
    # kernels it launched.
    marks = sorted((e for e in events if e["name"].startswith("iteration ") and e.get("cat") == "user_annotation"),
                   key=lambda e: e["ts"])
    mark = marks[9]
    t0, t1 = mark["ts"], mark["ts"] + mark["dur"]
    inside = sorted((e for e in events if t0 <= e["ts"] < t1), key=lambda e: e["ts"])
    threads = {}
    print(f"\n== {name}: one iteration, {mark['dur']:.1f} us wall (start offset, duration, thread)")
    for e in inside:
        tid = threads.setdefault((e.get("pid"), e.get("tid")), f"T{len(threads)}")
        print(f"  {e['ts'] - t0:8.1f} {e['dur']:8.1f}  {tid:4s} {e.get('cat', ''):12.12s} {e['name'][:70]}")


if __name__ == "__main__":
    main()
