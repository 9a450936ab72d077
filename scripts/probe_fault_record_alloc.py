# scripts/probe_fault_record_alloc.py — what the first small allocation of each kind costs in a
# fresh process after torch has made its CUDA context, on a machine with an NVIDIA GPU. A warm
# first call (bench row 5b) spends most of its CUDA time making the device's fault record, mapped
# pinned host memory from cuMemHostAlloc (src/runtime/cuda_mapped_memory.cpp); this compares the
# ways a 64-byte record could be made, each in a process of its own (the first pinned allocation
# of a process pays for setting up pinned memory, so kinds measured in one process would flatter
# the later ones).
#
#   python3 scripts/probe_fault_record_alloc.py [--reps 5]
#
# Prints, per kind, the median over --reps processes of the first and the second call, in ms.
"""First-allocation cost of the fault record's candidate memory kinds on CUDA."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CHILD = r'''
import ctypes, mmap, sys, time
import torch
torch.rand(64, device="cuda")
torch.cuda.synchronize()
cuda = ctypes.CDLL("libcuda.so.1")
ctx = ctypes.c_void_p()
dev = ctypes.c_int()
assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cuda.cuCtxPushCurrent_v2(ctx) == 0
PORTABLE, DEVICEMAP = 1, 2
pages = []

def host_alloc():
    p = ctypes.c_void_p()
    assert cuda.cuMemHostAlloc(ctypes.byref(p), ctypes.c_size_t(64), PORTABLE | DEVICEMAP) == 0
    d = ctypes.c_uint64()
    assert cuda.cuMemHostGetDevicePointer_v2(ctypes.byref(d), p, 0) == 0

def host_register():
    page = mmap.mmap(-1, 4096)
    pages.append(page)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    assert cuda.cuMemHostRegister_v2(ctypes.c_void_p(address), ctypes.c_size_t(4096), PORTABLE | DEVICEMAP) == 0
    d = ctypes.c_uint64()
    assert cuda.cuMemHostGetDevicePointer_v2(ctypes.byref(d), ctypes.c_void_p(address), 0) == 0

def device_alloc():
    d = ctypes.c_uint64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(64)) == 0

def managed_alloc():
    d = ctypes.c_uint64()
    assert cuda.cuMemAllocManaged(ctypes.byref(d), ctypes.c_size_t(64), 1) == 0

kind = {"host_alloc": host_alloc, "host_register": host_register, "device_alloc": device_alloc,
        "managed_alloc": managed_alloc}[sys.argv[1]]
times = []
for _ in range(2):
    t = time.perf_counter()
    kind()
    times.append(1e3 * (time.perf_counter() - t))
print(times[0], times[1])
'''

KINDS = ["host_alloc", "host_register", "device_alloc", "managed_alloc"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    print(f"{'kind':<16}{'first ms':>10}{'second ms':>11}")
    for kind in KINDS:
        first, second = [], []
        for _ in range(args.reps):
            out = subprocess.run([sys.executable, "-c", CHILD, kind], capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{kind:<16} failed: {out.stderr.strip().splitlines()[-1:]}")
                break
            a, b = map(float, out.stdout.split())
            first.append(a)
            second.append(b)
        else:
            print(f"{kind:<16}{statistics.median(first):>10.3f}{statistics.median(second):>11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
