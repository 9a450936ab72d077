# bench/mul2_kernels.py — what bench/bench_call.py, bench/bench_gpu.py and the Python tests
# (test_no_python_on_hot_path.py, test_fast_math.py) share: the mul2 / mul and chain10 kernel
# sources, chain10 in torch, and the profiler count of Python frames entered during cached calls.
# The benchmarks import it from their own directory (a script's directory is on sys.path);
# tests/python/conftest.py puts bench/ on sys.path.
"""The kernels the benchmarks share with the tests, and a Python-frame counter."""

from __future__ import annotations

import sys

MUL2_SOURCE = """
import slangpy;

[Differentiable]
float mul2(no_diff int2 pix, IDiffTensor<float, 2> a, IDiffTensor<float, 2> b)
{
    return a[uint2(pix.x, pix.y)] * b[uint2(pix.x, pix.y)];
}

[Differentiable]
float mul(float a, float b)
{
    return a * b;
}

struct Affine { float scale; float bias; };

float affine(float x, Affine p, float w[2])
{
    return x * p.scale * w[0] + p.bias * w[1];
}
"""

# Ten differentiable elementwise operations (bench row 8, tests/python/test_fast_math.py);
# chain10_torch is the same in torch.
CHAIN10_SOURCE = """
[Differentiable]
float chain10(float x)
{
    float y = x * 1.5 + 0.25;
    y = sin(y);
    y = y * y;
    y = exp(-y);
    y = y + x;
    y = tanh(y);
    y = y * 0.5 + 1.0;
    y = sqrt(y);
    return y * x;
}
"""


def chain10_torch(x):
    """chain10 of CHAIN10_SOURCE in torch: the same ten elementwise operations."""
    import torch

    y = x * 1.5 + 0.25
    y = torch.sin(y)
    y = y * y
    y = torch.exp(-y)
    y = y + x
    y = torch.tanh(y)
    y = y * 0.5 + 1.0
    y = torch.sqrt(y)
    return y * x


def python_frames_during(module, name: str, args: tuple, calls: int) -> list:
    """Python frames ("file:function") entered during `calls` calls of module.name(*args).

    The loop runs in this frame, already active when profiling starts, so every frame counted was
    entered by the call path itself (a lambda or helper around the call would count one per call)."""
    frames = []

    def profiler(frame, event, arg):
        if event == "call":
            frames.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    sys.setprofile(profiler)
    try:
        for _ in range(calls):
            getattr(module, name)(*args)
    finally:
        sys.setprofile(None)
    return frames
