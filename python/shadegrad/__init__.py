# python/shadegrad/__init__.py — the public names of shadegrad (SlangPy-compatible for the
# common case: `import shadegrad as spy`).
"""shadegrad: differentiable kernels in a Slang-compatible language, called on torch tensors."""

from __future__ import annotations

import os
from pathlib import Path

import torch as _torch  # the bridge needs torch loaded first

from . import _compile, _core, _torch_fallback
from ._version import __version__
from ._core import (
    CompileError,
    Device,
    DeviceType,
    Function,
    GridArg,
    Module,
    check_faults,
    cuda_status,
    debug_mode,
    set_debug_mode,
    synchronize,
    torch_bridge_status,
)

__all__ = [
    "__version__",
    "CompileError",
    "Device",
    "DeviceType",
    "Function",
    "Module",
    "check_faults",
    "create_device",
    "create_torch_device",
    "cuda_status",
    "debug_mode",
    "grid",
    "set_debug_mode",
    "synchronize",
    "torch_bridge_status",
]


def _native_bridge_path() -> str:
    here = Path(__file__).resolve().parent
    for name in ("libshadegrad_torch_bridge.so", "shadegrad_torch_bridge.so"):
        if (here / name).exists():
            return str(here / name)
    return ""


def _nvrtc_search_dirs() -> list:
    """The sys.path folders holding NVIDIA pip wheels (where nvidia-cuda-nvrtc installs)."""
    import sys

    return [str(Path(base)) for base in sys.path if base and (Path(base) / "nvidia").is_dir()]


_core._set_nvrtc_search_dirs(_nvrtc_search_dirs())
# torch.compile support registers itself when torch._dynamo is loaded (docs/torch_compile.md).
_compile.install()
_core._init_torch(
    _native_bridge_path(),
    _torch_fallback,
    os.environ.get("SHADEGRAD_TORCH_BRIDGE", "").lower() == "fallback",
)


def create_device(type: DeviceType = DeviceType.cpu, index: int = 0, **_ignored) -> Device:
    """A device for modules to run on (CPU or CUDA)."""
    return _core.create_device(type, index)


def create_torch_device(type: DeviceType = DeviceType.cpu, index: int = 0, **_ignored) -> Device:
    """A device that shares torch's context and streams (SlangPy's name for it)."""
    return _core.create_device(type, index)


def grid(shape) -> GridArg:
    """The call index as an argument: binds to int/int2/int3/... or int[N] parameters."""
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if not 1 <= len(shape) <= 8:
        raise ValueError(f"grid: shape must have 1 to 8 dimensions, got {len(shape)}")
    if _torch.compiler.is_compiling():
        # torch.compile is tracing: symbolic extents stay symbolic (docs/torch_compile.md).
        return _compile.TracedGrid(shape)
    shape = tuple(int(s) for s in shape)
    for d, extent in enumerate(shape):
        if extent < 0:
            raise ValueError(f"grid: extent {extent} of dimension {d} is negative")
    g = GridArg(list(shape))
    g.extents = shape  # for torch.compile's tracer, which cannot read the C++ `shape`
    return g
