# examples/ddp_tone_model.py — DistributedDataParallel training of a small model whose forward
# pass is two shadegrad kernels: a learnable 32-entry tone curve (a lookup table) followed by a
# per-pixel MLP (1 -> 4 -> 1, tanh) with a residual connection. Each process trains on its share
# of a batch of procedural images; DDP all-reduces the gradients that shadegrad's backward
# kernels produce, exactly as it does for torch's own operators.
#
#   python examples/ddp_tone_model.py [--processes 2] [--steps 20] [--device cpu|cuda]
#
# CPU runs use the gloo backend; CUDA runs use NCCL with one GPU per process (cuda:RANK).
"""Train a shadegrad model with torch DistributedDataParallel."""

from __future__ import annotations

import argparse
import math
import os
import socket
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import shadegrad as sg

KERNELS = """
import slangpy;

// The table is read at the two entries around the scaled value and blended linearly; the index
// is a step function of the value and carries no derivative.
[Differentiable]
float apply_lut(float v, IDiffTensor<float, 1> lut)
{
    int last = int(lut.shape[0]) - 1;
    float x = clamp(v, 0.0, 1.0) * float(last);
    int i0 = min(int(no_diff floor(x)), last);
    int i1 = min(i0 + 1, last);
    return lerp(lut[i0], lut[i1], x - float(i0));
}

// w[0..3]: hidden weights, w[4..7]: hidden biases, w[8..11]: output weights, w[12]: output bias.
[Differentiable]
float pixel_mlp(float v, IDiffTensor<float, 1> w)
{
    float y = w[12];
    [ForceUnroll]
    for (int j = 0; j < 4; j++)
        y += w[8 + j] * tanh(w[j] * v + w[4 + j]);
    return v + y;
}
"""

LUT_SIZE = 32
MLP_WEIGHTS = 13


class ToneModel(torch.nn.Module):
    """Tone curve, then a residual per-pixel MLP; both run as shadegrad kernels."""

    def __init__(self, kernels: sg.Module, device: torch.device):
        super().__init__()
        self.kernels = kernels
        self.lut = torch.nn.Parameter(torch.linspace(0.0, 1.0, LUT_SIZE, device=device))
        init = torch.Generator().manual_seed(7)
        self.w = torch.nn.Parameter((0.1 * torch.randn(MLP_WEIGHTS, generator=init)).to(device))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.kernels.pixel_mlp(self.kernels.apply_lut(images, self.lut), self.w)


def make_batch(count: int, size: int, device: torch.device):
    """Procedural images in [0, 1] and their targets under a hidden tone mapping."""
    gen = torch.Generator().manual_seed(1234)
    coords = torch.linspace(-1.0, 1.0, size)
    y, x = torch.meshgrid(coords, coords, indexing="ij")
    images = []
    for _ in range(count):
        fx, fy, phase = (torch.rand(3, generator=gen) * torch.tensor([6.0, 6.0, 2 * math.pi])).tolist()
        img = 0.5 + 0.25 * torch.sin(fx * x + phase) + 0.25 * torch.cos(fy * y)
        images.append(img.clamp(0.0, 1.0))
    images = torch.stack(images)
    g = images**0.7
    targets = g - 0.06 * torch.sin(2.0 * math.pi * g)
    return images.to(device), targets.to(device)


def train(model: torch.nn.Module, images: torch.Tensor, targets: torch.Tensor, steps: int, lr: float) -> list:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.mean((model(images) - targets) ** 2)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def device_for(kind: str, rank: int) -> torch.device:
    return torch.device(f"cuda:{rank}") if kind == "cuda" else torch.device("cpu")


def load_kernels(kind: str, rank: int) -> sg.Module:
    sg_device = sg.create_torch_device(
        type=sg.DeviceType.cuda if kind == "cuda" else sg.DeviceType.cpu, index=rank if kind == "cuda" else 0
    )
    return sg.Module.load_from_source(sg_device, "ddp_tone_model", KERNELS)


def worker(rank: int, world: int, port: int, kind: str, batch: int, size: int, steps: int, lr: float, out: str):
    """One DDP process: trains on images [rank::world] and, on rank 0, saves the parameters."""
    if kind == "cuda":
        torch.cuda.set_device(rank)
    dist.init_process_group(
        "nccl" if kind == "cuda" else "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    try:
        device = device_for(kind, rank)
        model = ToneModel(load_kernels(kind, rank), device)
        ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank] if kind == "cuda" else None)
        images, targets = make_batch(batch, size, device)
        losses = train(ddp, images[rank::world], targets[rank::world], steps, lr)
        if rank == 0:
            torch.save({"lut": model.lut.detach().cpu(), "w": model.w.detach().cpu(), "losses": losses}, out)
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ddp(processes: int, kind: str, batch: int, size: int, steps: int, lr: float) -> dict:
    """Trains with `processes` DDP processes; returns rank 0's final parameters and losses."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "params.pt")
        mp.spawn(worker, args=(processes, free_port(), kind, batch, size, steps, lr, out), nprocs=processes, join=True)
        return torch.load(out)


def run_single(kind: str, batch: int, size: int, steps: int, lr: float, processes: int) -> dict:
    """The same training in one process on the whole batch, ordered as the DDP shards are."""
    device = device_for(kind, 0)
    model = ToneModel(load_kernels(kind, 0), device)
    images, targets = make_batch(batch, size, device)
    order = torch.cat([torch.arange(batch)[r::processes] for r in range(processes)])
    losses = train(model, images[order], targets[order], steps, lr)
    return {"lut": model.lut.detach().cpu(), "w": model.w.detach().cpu(), "losses": losses}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=8, help="images in the whole batch (split over processes)")
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = parser.parse_args()
    ddp = run_ddp(args.processes, args.device, args.batch, args.size, args.steps, args.lr)
    single = run_single(args.device, args.batch, args.size, args.steps, args.lr, args.processes)
    lut_diff = (ddp["lut"] - single["lut"]).abs().max().item()
    w_diff = (ddp["w"] - single["w"]).abs().max().item()
    print(f"{args.processes} processes ({args.device}), {args.steps} steps: loss {ddp['losses'][0]:.4e} -> "
          f"{ddp['losses'][-1]:.4e} (rank 0's share)")
    print(f"largest parameter difference to one process on the whole batch: lut {lut_diff:.2e}, mlp {w_diff:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
