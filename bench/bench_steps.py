# bench/bench_steps.py — rows 9 and 10 of bench/bench_gpu.py: a whole training step (a shadegrad
# call, a torch loss, backward) compiled with torch.compile(fullgraph=True) (row 9), and captured
# in a CUDA graph and replayed (row 10), each against the same step run eagerly.
#
# The step: y = mul2(grid, a, b) on 64x64 with both a and b requiring grad, loss = mean((y -
# target)^2), backward into a.grad and b.grad. Both rows first check their gradients against the
# eager step's, then time blocks of steps (host wall-clock, one synchronize per block, median of
# the repeats, interleaved with the eager blocks). Row 9 is N/A with the reason when torch.compile
# cannot trace the step without a graph break; row 10 is N/A without CUDA.
"""Training-step benchmarks: torch.compile(fullgraph=True) and CUDA graph replay vs eager."""

from __future__ import annotations

import statistics

from bench_rows import check, na_row, rel_err, row

STEP_SHAPE = (64, 64)
STEP_NAME = f"training step (mul2 {STEP_SHAPE[0]}x{STEP_SHAPE[1]}, loss, backward)"


def _step_inputs(b):
    torch = b.torch
    gen = torch.Generator(device="cpu").manual_seed(6)
    a = (torch.rand(STEP_SHAPE, generator=gen) + 0.5).to(b.tdev).requires_grad_(True)
    c = (torch.rand(STEP_SHAPE, generator=gen) + 0.5).to(b.tdev).requires_grad_(True)
    target = torch.rand(STEP_SHAPE, generator=gen).to(b.tdev)
    return a, c, target


def _median_us_per_step(b, cases: dict, steps: int) -> dict:
    """Median host µs per step of each case name → run(n) (n steps), blocks interleaved."""
    for run in cases.values():  # warm-up
        run(max(steps // 5, 3))
    b.sync()
    samples = {name: [] for name in cases}
    for _ in range(b.s["host_repeat"]):
        for name, run in cases.items():
            samples[name].append(b.host_block(run, (steps,), 1) / steps * 1e6)
    return {name: statistics.median(v) for name, v in samples.items()}


def bench_compiled_step(b) -> list:
    torch, sg, m = b.torch, b.sg, b.m
    name = f"{STEP_NAME} under torch.compile(fullgraph=True): host µs/step"
    a, c, target = _step_inputs(b)
    grid = sg.grid(STEP_SHAPE)
    mul2 = m.mul2

    def loss_of(a, c, target):
        return ((mul2(grid, a, c) - target) ** 2).mean()

    import torch._dynamo

    torch._dynamo.reset()
    compiled = torch.compile(loss_of, fullgraph=True)
    try:
        ga, gc = torch.autograd.grad(compiled(a, c, target), (a, c))
    except Exception as e:  # noqa: BLE001 — a graph break (or any tracing failure) is the finding
        return [na_row("9", name, f"torch.compile cannot trace the step: {type(e).__name__}: "
                                  + str(e).strip().splitlines()[0][:240])]
    ea, ec = torch.autograd.grad(loss_of(a, c, target), (a, c))
    check(rel_err(ga, ea) < 1e-6 and rel_err(gc, ec) < 1e-6, "compiled step gradients == eager gradients")

    def steps_with(loss_fn):
        def run(n):
            for _ in range(n):
                a.grad = None
                c.grad = None
                loss_fn(a, c, target).backward()

        return run

    t = _median_us_per_step(b, {"compiled": steps_with(compiled), "eager": steps_with(loss_of)}, b.s["bwd_number"])
    torch._dynamo.reset()
    ratio = t["compiled"] / t["eager"]
    return [row("9", name, value=t["compiled"], unit="µs", reference=t["eager"], reference_name="the eager step",
                ratio=ratio, notes="inductor backend; one graph, no break (fullgraph=True); gradients checked")]


def bench_graph_step(b) -> list:
    torch, sg, m = b.torch, b.sg, b.m
    name = f"{STEP_NAME} replayed from a CUDA graph: µs/step"
    if not b.cuda:
        return [na_row("10", name, "needs CUDA (torch.cuda.graph)")]
    a, c, target = _step_inputs(b)
    grid = sg.grid(STEP_SHAPE)
    mul2 = m.mul2

    def eager_step():
        a.grad = None
        c.grad = None
        loss = ((mul2(grid, a, c) - target) ** 2).mean()
        loss.backward()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: compiles the kernels outside the capture
        for _ in range(3):
            eager_step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    a.grad = None
    c.grad = None
    with torch.cuda.graph(graph):
        static_loss = ((mul2(grid, a, c) - target) ** 2).mean()
        static_loss.backward()
    graph.replay()
    ga, gc, loss = a.grad.clone(), c.grad.clone(), static_loss.clone()
    static_grads = (a.grad, c.grad)
    eager_loss = eager_step()
    check(rel_err(ga, a.grad) < 1e-6 and rel_err(gc, c.grad) < 1e-6 and rel_err(loss, eager_loss) < 1e-6,
          "replayed step gradients == eager gradients")

    def replayed(n):
        for _ in range(n):
            graph.replay()

    def eager(n):
        for _ in range(n):
            eager_step()

    t = _median_us_per_step(b, {"graph": replayed, "eager": eager}, b.s["bwd_number"])
    del static_grads
    ratio = t["graph"] / t["eager"]
    return [row("10", name, value=t["graph"], unit="µs", reference=t["eager"], reference_name="the eager step",
                ratio=ratio, notes="torch.cuda.graph of forward + backward, replayed; gradients checked")]
