# python/shadegrad/__init__.py — the public names of shadegrad (SlangPy-compatible for the
# common case: `import shadegrad as spy`).
"""shadegrad: differentiable kernels in a Slang-compatible language, called on torch tensors.

Write a function in the kernel language, load it into a Module, call it on torch tensors like a
Python function: the call is vectorized over the tensors' shapes, runs on the CPU or a CUDA GPU,
and takes part in torch autograd with a backward kernel shadegrad's compiler derives.

    import torch, shadegrad as sg
    device = sg.create_torch_device(type=sg.DeviceType.cpu)      # or DeviceType.cuda
    m = sg.Module.load_from_source(device, "example",
                                   "[Differentiable] float sq(float x) { return x * x; }")
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    m.sq(x).sum().backward()                                     # x.grad == 2 * x

The public API, in the order a program meets it:
    create_torch_device, create_device   a Device (DeviceType.cpu / .cuda) to load modules on
    Module                               Module.load_from_source / load_from_file: kernels
    Function                             m.f: call it; fn.map / set / bwds / debug_code ...
    grid, call_id, thread_id, wang_hash, rand_float   generated arguments
    Tensor                               SlangPy's n-dimensional container (torch storage)
    floatRef, intRef, diffPair, floatDiffPair          out values and backward pairs
    CompileError, CompileWarning, NotDifferentiableWarning   what goes wrong, what is said
    synchronize, check_faults, set_debug_mode, cuda_status, torch_bridge_status
    float3, int2, float4x4, ...          value types of the kernel language (classes below)

Guides: docs/getting_started.md, docs/calling.md, docs/autograd.md, docs/language.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch as _torch  # the bridge needs torch loaded first

from . import _bwds, _compile, _core, _torch_fallback, _values
from ._version import __version__
from ._warnings import CompileWarning, NotDifferentiableWarning
from ._core import (
    CompileError,
    Device,
    DeviceType,
    Function,
    GridArg,
    Module,
    Struct,
    check_faults,
    cuda_status,
    debug_mode,
    set_debug_mode,
    synchronize,
    torch_bridge_status,
)
from ._instances import InstanceBuffer, InstanceList, InstanceTensor
from ._tensor import NDBuffer, Tensor
from ._values import (
    CallIdArg,
    DiffPair,
    RandFloatArg,
    ThreadIdArg,
    ValueRef,
    ValueType,
    WangHashArg,
    diffPair,
    diff_pair,
    floatDiffPair,
    floatRef,
    intRef,
)

__all__ = [
    "__version__",
    "DiffPair",
    "ValueRef",
    "ValueType",
    "call_id",
    "diffPair",
    "diff_pair",
    "floatDiffPair",
    "floatRef",
    "intRef",
    "rand_float",
    "thread_id",
    "wang_hash",
    "Struct",
    "Tensor",
    "NDBuffer",
    "InstanceList",
    "InstanceTensor",
    "InstanceBuffer",
    "CompileError",
    "CompileWarning",
    "Device",
    "DeviceType",
    "Function",
    "Module",
    "NotDifferentiableWarning",
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


def _device(caller: str, type, index: int, include_paths, options: dict) -> Device:
    for name in options:
        raise TypeError(f"{caller}() got an unknown option '{name}'")
    paths = [os.fspath(p) for p in (include_paths or [])]
    return _core.create_device(type, index, paths, caller)


def create_device(type: DeviceType = DeviceType.cpu, index: int = 0, include_paths=None, **options) -> Device:
    """A device for modules to run on: the CPU or a CUDA GPU (the same as create_torch_device).

    Args:
        type: DeviceType.cpu (the default) or DeviceType.cuda.
        index: the CUDA device index (ignored for the CPU).
        include_paths: folders where modules loaded on it find their imports and includes, after
            the folder of the importing file, in order.

    Returns: a Device, to pass to Module.load_from_source / load_from_file.

    Raises:
        RuntimeError: for DeviceType.cuda when CUDA kernels cannot run in this process (a
            CPU-only build of torch, no NVIDIA driver, no NVRTC, no such device index); the
            message gives each reason and its fix.
        TypeError: for an unknown keyword option.

    Example: ``device = sg.create_device(sg.DeviceType.cuda, index=0)``
    """
    return _device("create_device", type, index, include_paths, options)


def create_torch_device(type: DeviceType = DeviceType.cpu, index: int = 0, include_paths=None, **options) -> Device:
    """A device whose kernels share torch's CUDA context and current streams (SlangPy's name).

    Arguments, result and errors as for create_device: shadegrad devices always work with
    torch's context and streams, so the two are the same.

    Example: ``device = sg.create_torch_device(type=sg.DeviceType.cpu)``
    """
    return _device("create_torch_device", type, index, include_paths, options)


def grid(shape, offset=None, stride=None) -> GridArg:
    """The call index as an argument: binds to int/int2/int3/... or int[N] parameters (SlangPy's
    grid, with its argument order).

    Args:
        shape: the call shape the grid defines: a tuple of 1 to 8 extents (the last dimension is
            the fastest); an extent of -1 is taken from the other arguments (a tensor, _result=).
            A plain int N, as in SlangPy, is N dimensions all -1.
        offset, stride: per dimension (or one int for all): a parameter gets
            `offset + index * stride` (a vector's .x is the last dimension).

    Raises: ValueError for an extent below -1 or an offset/stride of another rank.

    Example: ``m.mul2(sg.grid((64, 64)), a, b)`` calls mul2 once per pixel with pix = (x, y);
    ``m.f(sg.grid((-1, -1), stride=(4, 4)), _result=out)`` takes the shape from ``out``.
    """
    if isinstance(shape, int):
        shape = (-1,) * shape
    shape = tuple(shape)
    if not 1 <= len(shape) <= 8:
        raise ValueError(f"grid: shape must have 1 to 8 dimensions, got {len(shape)}")
    compiling = _torch.compiler.is_compiling()
    if not compiling:
        shape = tuple(int(s) for s in shape)
        for d, extent in enumerate(shape):
            if extent < -1:
                raise ValueError(f"grid: extent {extent} of dimension {d} is negative (-1 takes it from the "
                                 "other arguments)")

    def per_dim(name, v):
        if v is None:
            return []
        if not isinstance(v, (tuple, list)):
            v = (v,) * len(shape)
        v = tuple(v) if compiling else tuple(int(x) for x in v)
        if len(v) != len(shape):
            raise ValueError(f"grid: {name} has {len(v)} dimensions, the shape {len(shape)}")
        return list(v)

    stride, offset = per_dim("stride", stride), per_dim("offset", offset)
    if compiling:
        # torch.compile is tracing: symbolic extents stay symbolic (docs/torch_compile.md).
        return _compile.TracedGrid(shape, stride, offset)
    g = GridArg(list(shape), stride, offset)
    # For torch.compile's tracer, which cannot read the C++ members.
    g.extents, g.steps = shape, (tuple(stride), tuple(offset))
    return g


def call_id(dims: int = -1) -> CallIdArg:
    """The thread's index in the call shape: binds to int, intN (x = the last dimension) or int[N].

    `dims` (SlangPy's argument): the number of components the parameter must have (-1: any). A
    tuple, as in SlangPy, is a shape: ``call_id((4, 4))`` is ``grid((4, 4))``.
    """
    if isinstance(dims, tuple):
        return grid(dims)
    return CallIdArg(dims)


def thread_id(dims: int = -1) -> ThreadIdArg:
    """The thread's linear index in the call: binds to int / intN ((index, 0, ...)); `dims` as
    for call_id."""
    return ThreadIdArg(dims)


def wang_hash(dim: int = -1, seed: int = _values.DEFAULT_SEED, warmup: int = 0, hash_seed: bool = True) -> WangHashArg:
    """Per-thread 32-bit hashes, SlangPy's generator with its numbers: binds to uint, uintN, int,
    intN (the hash's bits) or their arrays.

    Args:
        dim: the number of components the parameter must have (-1: any).
        seed: mixed into every thread's hash (SlangPy's default 2640457667).
        warmup: extra rounds of hashing of the thread index before the seed is mixed in.
        hash_seed: hash the seed once on the host first (so that consecutive seeds decorrelate).

    Each thread starts from its linear index (times the number of components of a vector),
    hashes it `warmup` times, xors the seed in, then hashes once per component, each from the
    previous one.
    """
    return WangHashArg(dim, seed, warmup, hash_seed)


def rand_float(min: float = 0.0, max: float = 1.0, dim: int = -1, seed: int = _values.DEFAULT_SEED,
               warmup: int = 0, hash_seed: bool = True) -> RandFloatArg:
    """A per-thread uniform float in [min, max), SlangPy's generator with its numbers: binds to
    float, floatN or float[N]. `min + (max - min) * (h & 0x7FFFFF) / 2^23` of wang_hash's hashes
    (the same arguments as wang_hash).

    The third positional argument is `dim`, as in SlangPy (earlier shadegrad took the seed
    there): ``rand_float(0, 1, 42)`` raises a ValueError saying to pass ``seed=42``.
    """
    return RandFloatArg(min, max, dim, seed, warmup, hash_seed)


# Value types: sg.float3(1, 2, 3), sg.int2(...), sg.float4x4(...), ...
globals().update(_values.VALUE_TYPES)
__all__ += sorted(_values.VALUE_TYPES)

_values.register(_core)
Function.bwds = property(lambda self: _bwds.BwdsFunction(self), doc="The backward call: fn.bwds(args..., dresult).")
