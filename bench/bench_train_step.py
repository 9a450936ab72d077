# bench/bench_train_step.py — time per training step of a small model written with three
# shadegrad kernels, against the same step in plain torch and (CUDA only) against the shadegrad
# step captured in a CUDA graph and replayed.
#
# The step, on an (N, F) batch x (frozen) with a target:
#   h = scale_shift(x, w, b)     shadegrad: x * w + b, w and b are (1, F) parameters broadcast
#                                over the rows (their gradients are summed over N rows)
#   h = softplus(h)              shadegrad: log(1 + exp(h))
#   y = gate(h, v)               shadegrad: h * v, v an (N, F) parameter
#   loss = mean((y - target)^2)  torch
#   loss.backward(); SGD (momentum 0.9) step; gradients set to None
# torch's step is the same with x * w + b, torch.nn.functional.softplus and h * v.
#
# Each side runs in processes of its own (--processes, default 3), each with a warm-up and then 7
# blocks of --number steps (one synchronize per block); a process reports the median µs per
# step of its blocks, the table lists every process and the ratio of the medians to torch's. Every
# process first checks its step's gradients against torch's on the same parameters.
#
#   python bench/bench_train_step.py [--device cuda|cpu] [--size N,F] [--processes 3]
#                                    [--quick] [--json PATH] [--markdown PATH]
#
# Sizes: --size defaults to 256,256 on CUDA and 16,16 on the CPU, where the kernels run on the
# host and a large batch measures them rather than the host overhead (torch runs on one thread
# there, as the kernels of so small a step do); --quick (CI) is a tiny step (8x8, short blocks).
# Graph replay needs CUDA and is left out on the CPU.
"""Training-step time: shadegrad kernels vs plain torch, and under CUDA graph replay."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

from bench_rows import block_us, spawn_worker

KERNELS = """
[Differentiable]
float scale_shift(float x, float w, float b)
{
    return x * w + b;
}

[Differentiable]
float softplus(float x)
{
    return log(1.0 + exp(x));
}

[Differentiable]
float gate(float h, float v)
{
    return h * v;
}
"""

SIDES = {
    "torch": "plain torch (eager)",
    "sg": "shadegrad (eager)",
    "sg_graph": "shadegrad, CUDA graph replay",
}
BLOCKS = 7
LR = 0.01


class Step:
    """The model's tensors, its shadegrad and torch losses, and one optimizer per side."""

    def __init__(self, device: str, size: tuple):
        import torch

        import shadegrad as sg

        self.torch, self.device = torch, device
        n, f = size
        gen = torch.Generator(device="cpu").manual_seed(11)
        self.x = (torch.rand(n, f, generator=gen) - 0.5).to(device)
        self.target = torch.rand(n, f, generator=gen).to(device)
        self.w = (torch.rand(1, f, generator=gen) + 0.5).to(device).requires_grad_(True)
        self.b = (torch.rand(1, f, generator=gen) - 0.5).to(device).requires_grad_(True)
        self.v = (torch.rand(n, f, generator=gen) + 0.5).to(device).requires_grad_(True)
        self.params = [self.w, self.b, self.v]
        dev = sg.create_device(sg.DeviceType.cuda if device == "cuda" else sg.DeviceType.cpu)
        m = sg.Module.load_from_source(dev, "bench_train_step", KERNELS)
        self.scale_shift, self.softplus, self.gate = m.scale_shift, m.softplus, m.gate
        self.opt = torch.optim.SGD(self.params, lr=LR, momentum=0.9)

    def sg_loss(self, w, b, v):
        h = self.softplus(self.scale_shift(self.x, w, b))
        return ((self.gate(h, v) - self.target) ** 2).mean()

    def torch_loss(self, w, b, v):
        h = self.torch.nn.functional.softplus(self.x * w + b)
        return ((h * v - self.target) ** 2).mean()

    def step(self, loss_fn) -> None:
        self.opt.zero_grad(set_to_none=True)
        loss_fn(*self.params).backward()
        self.opt.step()

    def reference_grads(self) -> list:
        """torch's gradients of the loss at the current parameters (nothing is updated)."""
        leaves = [p.detach().clone().requires_grad_(True) for p in self.params]
        return list(self.torch.autograd.grad(self.torch_loss(*leaves), leaves))

    def check(self, side: str, grads: list, reference: list) -> None:
        for name, got, want in zip("wbv", grads, reference):
            err = float((got - want).norm() / want.norm().clamp_min(1e-30))
            if not err < 1e-4:
                raise SystemExit(f"{side}: the gradient of {name} differs from torch's (relative error {err:.2e})")

    def sync(self) -> None:
        if self.device == "cuda":
            self.torch.cuda.synchronize()


def _eager_runner(step: Step, side: str):
    loss_fn = step.sg_loss if side == "sg" else step.torch_loss
    reference = step.reference_grads()
    step.opt.zero_grad(set_to_none=True)
    loss_fn(*step.params).backward()
    step.check(side, [p.grad for p in step.params], reference)

    def run(n):
        for _ in range(n):
            step.step(loss_fn)

    return run


def _graph_runner(step: Step):
    torch = step.torch
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture: compiles every kernel once
        for _ in range(3):
            step.step(step.sg_loss)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    step.opt.zero_grad(set_to_none=True)  # the gradients are allocated inside the capture
    with torch.cuda.graph(graph):
        step.sg_loss(*step.params).backward()
        step.opt.step()
    reference = step.reference_grads()
    graph.replay()  # the gradients at the parameters before this replay, then the update
    torch.cuda.synchronize()
    step.check("sg_graph", [p.grad for p in step.params], reference)

    def run(n):
        for _ in range(n):
            graph.replay()

    return run


def worker(side: str, device: str, size: tuple, number: int) -> float:
    if device == "cpu":
        import torch

        torch.set_num_threads(1)  # small tensors: torch's thread pool only adds noise on a shared machine
    step = Step(device, size)
    run = _graph_runner(step) if side == "sg_graph" else _eager_runner(step, side)
    run(max(number // 2, 5))  # warm-up: kernels, caching allocator, autograd engine threads
    return statistics.median(block_us(run, step.sync, number) for _ in range(BLOCKS))


def _spawn(args: list) -> float:
    return spawn_worker(os.path.abspath(__file__), args, timeout=900)


def _size(text: str) -> tuple:
    parts = [int(p) for p in text.split(",")]
    if len(parts) != 2 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"--size wants N,F (two positive integers), got {text!r}")
    return tuple(parts)


def table(results: dict, device: str, size: tuple, processes: int, number: int) -> str:
    ref = statistics.median(results["torch"])
    lines = [f"# training step: three shadegrad kernels + loss, forward, backward, SGD step; {device}, "
             f"batch {size[0]}x{size[1]} ({processes} processes per side, {BLOCKS} blocks of {number} steps, "
             "median)", "",
             "| side | µs/step per process | median µs/step | ratio to plain torch |", "|---|---|---:|---:|"]
    for side, values in results.items():
        med = statistics.median(values)
        lines.append(f"| {SIDES[side]} | {', '.join(f'{v:.1f}' for v in values)} | {med:.1f} | {med / ref:.3f}x |")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", choices=["cuda", "cpu"], default=None)
    p.add_argument("--size", type=_size, default=None, help="batch N,F (default: 256,256 on CUDA, 16,16 on CPU)")
    p.add_argument("--processes", type=int, default=3, help="fresh processes per side")
    p.add_argument("--number", type=int, default=None, help="steps per block (default 200; --quick 10)")
    p.add_argument("--quick", action="store_true", help="a tiny step and short blocks (CI smoke run)")
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--markdown", metavar="PATH")
    p.add_argument("--worker", metavar="SIDE", choices=sorted(SIDES), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.device is None:
        import torch

        a.device = "cuda" if torch.cuda.is_available() else "cpu"
    size = a.size or ((8, 8) if a.quick else (256, 256) if a.device == "cuda" else (16, 16))
    number = a.number or (10 if a.quick else 200)
    if a.worker:
        if a.worker == "sg_graph" and a.device != "cuda":
            raise SystemExit("sg_graph: CUDA graph replay needs --device cuda")
        print(worker(a.worker, a.device, size, number))
        return 0

    sides = [s for s in SIDES if s != "sg_graph" or a.device == "cuda"]
    common = ["--device", a.device, "--size", f"{size[0]},{size[1]}", "--number", str(number)]
    results = {side: [_spawn(["--worker", side, *common]) for _ in range(a.processes)] for side in sides}
    text = table(results, a.device, size, a.processes, number)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as fh:
            fh.write(text)
    if a.json:
        ref = statistics.median(results["torch"])
        with open(a.json, "w") as fh:
            json.dump({"device": a.device, "size": list(size), "blocks": BLOCKS, "number": number,
                       "us_per_step": results,
                       "ratio_to_torch": {s: statistics.median(v) / ref for s, v in results.items()}}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
