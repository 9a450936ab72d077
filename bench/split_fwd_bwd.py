# bench/split_fwd_bwd.py — one mul2 forward + backward taken apart, next to torch's (a * b):
# the forward alone (node made and freed), the backward alone (over a retained graph), the
# backward through torch.autograd.grad (no AccumulateGrad), the whole step, and the whole step
# with Python's cyclic garbage collector off. A diagnostic for bench_fwd_bwd_host.py: when the
# whole step costs more than its parts, the difference lies between them (graph teardown,
# allocator, collector), not in either part.
#
#   python bench/split_fwd_bwd.py [--device cuda|cpu] [--shape 64] [--number 2000] [--frozen-a]
#
# --frozen-a: a does not require grad (bench_fwd_bwd_host.py's mixed case, with --shape 256).
#
# Each row: both sides in turn, 7 blocks of --number iterations each, median µs per iteration.
import argparse
import gc
import statistics

import torch

import shadegrad as sg
from bench_rows import block_us
from mul2_kernels import MUL2_SOURCE


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--shape", type=int, default=64)
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--frozen-a", action="store_true", help="a does not require grad")
    args = p.parse_args()
    dev, n = args.device, args.shape
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    kind = sg.DeviceType.cuda if dev == "cuda" else sg.DeviceType.cpu
    m = sg.Module.load_from_source(sg.create_device(kind), "split", MUL2_SOURCE)
    a = (torch.rand(n, n, device=dev) + 0.5).requires_grad_(not args.frozen_a)
    b = (torch.rand(n, n, device=dev) + 0.5).requires_grad_(True)
    g = torch.rand(n, n, device=dev)
    grid = sg.grid((n, n))
    f = m.mul2
    sides = {"sg": lambda: f(grid, a, b), "torch": lambda: a * b}

    def rows_for(make):
        def forward(k):
            for _ in range(k):
                make()

        def step(k):
            for _ in range(k):
                a.grad = None
                b.grad = None
                make().backward(g)

        leaves = tuple(t for t in (a, b) if t.requires_grad)

        def grad_only(k):
            for _ in range(k):
                torch.autograd.grad(make(), leaves, g)

        kept = make()

        def backward_retained(k):
            for _ in range(k):
                a.grad = None
                b.grad = None
                kept.backward(g, retain_graph=True)

        def step_no_gc(k):
            gc.disable()
            try:
                step(k)
            finally:
                gc.enable()

        def alloc_free(k):
            for _ in range(k):
                make()
                torch.empty(n, n, device=dev)
                torch.empty(n, n, device=dev)

        return {
            "forward (node made and freed)": forward,
            "backward alone (retain_graph)": backward_retained,
            "forward + backward": step,
            "forward + backward, gc off": step_no_gc,
            "forward + autograd.grad": grad_only,
            "forward + 2 empty": alloc_free,
        }

    table = {side: rows_for(make) for side, make in sides.items()}
    for side in table.values():
        for fn in side.values():
            fn(200)
    print(f"{'row':36s} {'sg us':>9s} {'torch us':>9s} {'diff':>8s}")
    for row in table["sg"]:
        samples = {side: [] for side in table}
        for _ in range(7):
            for side in table:
                samples[side].append(block_us(table[side][row], sync, args.number))
        s, t = (statistics.median(samples[k]) for k in ("sg", "torch"))
        print(f"{row:36s} {s:9.2f} {t:9.2f} {s - t:+8.2f}")
    stats = sg._core._compile_stats()
    print(f"CUDA launches that bound their context {stats.get('cuda_context_binds', '-')}, "
          f"pushed and popped it {stats.get('cuda_context_pushes', '-')}")


if __name__ == "__main__":
    main()
