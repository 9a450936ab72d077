"""bench/bench_coop_cpu.py — CPU time of a cooperative kernel whose threads meet at barriers.

1M threads (4096 blocks of 256) of a kernel that passes a value around its block through
groupshared memory with 9 barriers (GroupMemoryBarrierWithGroupSync), and the same kernel
without barriers (threads one after another). The first case times the CPU backend's fiber
switches; the result is checked before timing. Wall time depends on the pool's threads and the
machine's load; the CPU time of all threads is the steadier figure. Not a test: timings are never asserted.

    python bench/bench_coop_cpu.py [--repeats N] [--threads N]
"""
import argparse
import time

import torch

import shadegrad.slangtorch as slangtorch

SOURCE = """
groupshared float tile[256];

[CUDAKernel]
void rotate(TensorView<float> x, TensorView<float> out)
{
    uint t = cudaThreadIdx().x;
    uint i = cudaBlockIdx().x * 256 + t;
    float v = x[i];
    for (int r = 0; r < 4; ++r)
    {
        tile[t] = v;
        GroupMemoryBarrierWithGroupSync();
        v = tile[(t + 1) % 256] + 1.0;
        GroupMemoryBarrierWithGroupSync();
    }
    tile[t] = v;
    GroupMemoryBarrierWithGroupSync();
    out[i] = tile[255 - t];
}

[CUDAKernel]
void plain(TensorView<float> x, TensorView<float> out)
{
    uint i = cudaBlockIdx().x * 256 + cudaThreadIdx().x;
    float v = x[i];
    for (int r = 0; r < 4; ++r) v = v * 0.5 + 1.0;
    out[i] = v;
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1 << 20)
    args = ap.parse_args()
    n = args.threads // 256 * 256
    m = slangtorch.loadModuleFromSource(SOURCE, moduleName="bench_coop_cpu")
    x = torch.arange(n, dtype=torch.float32)
    out = torch.zeros(n)
    blocks = n // 256
    m.rotate(x, out).launchRaw(blockSize=(256, 1, 1), gridSize=(blocks, 1, 1))
    b = x.view(blocks, 256)
    want = torch.roll(b, -4, dims=1) + 4.0
    want = want.flip(1).reshape(-1)
    assert torch.equal(out, want), "rotate: wrong result"
    for name, fn in (("9 barriers (fibers)", m.rotate), ("no barrier (loop)", m.plain)):
        times, cpu = [], []
        for _ in range(args.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            fn(x, out).launchRaw(blockSize=(256, 1, 1), gridSize=(blocks, 1, 1))
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(f"{name:22s} {n} threads: wall best {min(times):.3f} s, median {sorted(times)[len(times) // 2]:.3f} s; "
              f"CPU time (all threads) best {min(cpu):.3f} s")


if __name__ == "__main__":
    main()
