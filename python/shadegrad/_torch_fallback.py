# python/shadegrad/_torch_fallback.py — the Python torch bridge: what the native bridge
# (src/bridge) does, through torch's Python API.
#
# The core uses it when the native bridge is missing or was refused (a different api_version or
# sizeof(TensorInfo); see shadegrad.torch_bridge_status()). Slower, identical in results: the
# core builds the call key from the same TensorInfo fields either bridge fills, and the autograd
# graph built here matches the native one (same saved tensors, dirty marking, grad mask and error
# messages); tests/python/test_bridge_native_abi.py checks both against each other.
#
# Only torch is imported here (lazily by the caller: importing this module imports torch), never
# shadegrad._core, so the module is usable and testable on its own.
"""Python fallback for the native torch bridge (see src/bridge/bridge_abi.h)."""

from __future__ import annotations

import struct

import torch

# sg::DType codes (src/call/tensor_info.h; stable, never renumbered).
DTYPE_UNKNOWN = 0
_DTYPE_CODES = {
    torch.bool: 1,
    torch.uint8: 2,
    torch.int8: 3,
    torch.int16: 4,
    torch.int32: 5,
    torch.int64: 6,
    torch.float16: 7,
    torch.bfloat16: 8,
    torch.float32: 9,
    torch.float64: 10,
}
# The unsigned types beyond uint8 exist from torch 2.3 on.
for _name, _code in (("uint16", 11), ("uint32", 12), ("uint64", 13)):
    if hasattr(torch, _name):
        _DTYPE_CODES[getattr(torch, _name)] = _code
_DTYPES_BY_CODE = {code: dtype for dtype, code in _DTYPE_CODES.items()}

# sg::DeviceType codes.
DEVICE_CPU = 0
DEVICE_CUDA = 1
DEVICE_OTHER = 2

MAX_TENSOR_RANK = 8  # sg::kMaxTensorRank

# sg::TensorInfo as bytes: data, shape[8], strides[8], ndim, dtype, device_type, device_index,
# requires_grad, is_leaf, reserved[6], numel, version. 176 bytes, no padding.
TENSOR_INFO_FORMAT = "=Q8q8q4iBB6xqQ"
TENSOR_INFO_SIZE = struct.calcsize(TENSOR_INFO_FORMAT)
assert TENSOR_INFO_SIZE == 176, "TensorInfo layout is part of the bridge ABI"

# Identical to the native bridge's texts (src/bridge/torch_autograd.cpp).
DOUBLE_BACKWARD_MESSAGE = (
    "shadegrad: double backward is not supported (the generated backward kernel is "
    "differentiable once)"
)


def dtype_code(dtype: torch.dtype) -> int:
    """The sg::DType code of a torch dtype (0 for dtypes the core does not support)."""
    return _DTYPE_CODES.get(dtype, DTYPE_UNKNOWN)


def describe(t: torch.Tensor) -> tuple:
    """TensorInfo fields of `t`, in struct order.

    (data_ptr, shape, strides, ndim, dtype code, device type code, device index, requires_grad,
    is_leaf, numel, version); shape and strides have ndim entries (the struct pads them with
    zeros). Raises TypeError / ValueError where the native describe() returns an error.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"shadegrad: expected a torch.Tensor, got {type(t).__name__}")
    if t.layout != torch.strided:
        raise ValueError(
            f"shadegrad: only strided (dense) tensors are supported, got layout {t.layout}"
        )
    ndim = t.dim()
    if ndim > MAX_TENSOR_RANK:
        raise ValueError(
            f"shadegrad: tensors of rank {ndim} are not supported (at most {MAX_TENSOR_RANK})"
        )
    device = t.device
    if device.type == "cpu":
        device_type, device_index = DEVICE_CPU, -1
    else:
        device_type = DEVICE_CUDA if device.type == "cuda" else DEVICE_OTHER
        device_index = -1 if device.index is None else device.index
    # Inference tensors have no version counter; the native bridge reports 0 for them too.
    version = 0 if t.is_inference() else t._version
    return (
        t.data_ptr(),
        tuple(t.shape),
        t.stride(),
        ndim,
        dtype_code(t.dtype),
        device_type,
        device_index,
        bool(t.requires_grad),
        bool(t.is_leaf),
        t.numel(),
        version,
    )


def pack_tensor_info(info: tuple) -> bytes:
    """The 176 bytes of sg::TensorInfo for a describe() tuple (unused entries and reserved zero)."""
    data, shape, strides, ndim, *scalars, requires_grad, is_leaf, numel, version = info
    pad = (0,) * (MAX_TENSOR_RANK - ndim)
    return struct.pack(
        TENSOR_INFO_FORMAT,
        data,
        *shape,
        *pad,
        *strides,
        *pad,
        ndim,
        *scalars,  # dtype, device_type, device_index
        int(requires_grad),
        int(is_leaf),
        numel,
        version,
    )


def _device(device_type: int, device_index: int) -> torch.device:
    if device_type == DEVICE_CPU:
        return torch.device("cpu")
    if device_type == DEVICE_CUDA:
        return torch.device("cuda", device_index) if device_index >= 0 else torch.device("cuda")
    raise ValueError("shadegrad: can only allocate on CPU or CUDA devices")


def empty(shape, dtype: int, device_type: int, device_index: int, zero) -> torch.Tensor:
    """A new tensor from torch's allocator (zero-filled when `zero`), like the native empty()."""
    shape = tuple(int(s) for s in shape)
    if len(shape) > MAX_TENSOR_RANK:
        raise ValueError(f"shadegrad: cannot allocate a tensor of rank {len(shape)}")
    for d, extent in enumerate(shape):
        if extent < 0:
            raise ValueError(
                f"shadegrad: cannot allocate a tensor with negative extent {extent} "
                f"in dimension {d}"
            )
    torch_dtype = _DTYPES_BY_CODE.get(dtype)
    if torch_dtype is None:
        raise ValueError(f"shadegrad: cannot allocate a tensor of dtype code {dtype}")
    device = _device(device_type, device_index)
    factory = torch.zeros if zero else torch.empty
    return factory(shape, dtype=torch_dtype, device=device)


def current_stream(device_type: int, device_index: int) -> int:
    """The current CUDA stream of a device as an integer handle; 0 for CPU (and the legacy
    default stream)."""
    if device_type != DEVICE_CUDA or not torch.cuda.is_available():
        return 0
    device = device_index if device_index >= 0 else None
    return torch.cuda.current_stream(device).cuda_stream


def grad_enabled() -> bool:
    """True when grad mode is on and inference mode is off."""
    return torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


class _DoubleBackwardGuard(torch.autograd.Function):
    """Makes differentiating the backward kernel's results raise (the native bridge's
    DoubleBackwardGuard): they have no history, so a second derivative would silently be zero."""

    @staticmethod
    def forward(ctx, n_grads, *tensors):
        return tensors[:n_grads]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(DOUBLE_BACKWARD_MESSAGE)


class _Call:
    """What forward needs for one call; dropped after forward so the node does not keep the
    outputs alive (outputs -> grad_fn -> ctx -> outputs would be a reference cycle)."""

    __slots__ = ("handle", "n_inputs", "takes_grad", "outputs", "dirty", "overwritten")

    def __init__(self, handle, n_inputs, takes_grad, outputs, dirty, overwritten):
        self.handle = handle
        self.n_inputs = n_inputs
        self.takes_grad = takes_grad
        self.outputs = outputs
        self.dirty = dirty
        self.overwritten = overwritten


class ShadegradFunction(torch.autograd.Function):
    """One shadegrad call in the autograd graph.

    forward(ctx, call, *tensors): tensors are the differentiable inputs followed by the dirty
    outputs that are not inputs (torch only accepts mark_dirty for forward arguments).
    """

    @staticmethod
    def forward(ctx, call, *tensors):
        # The handle is the node's from here on; it is released when the node dies.
        ctx.handle = call.handle
        ctx.n_inputs = call.n_inputs
        ctx.takes_grad = call.takes_grad
        ctx.set_materialize_grads(False)  # None grad outputs reach the handle as None
        outputs, dirty, overwritten = call.outputs, call.dirty, call.overwritten
        call.outputs = call.dirty = call.overwritten = None
        call.handle.forward()
        if dirty:
            ctx.mark_dirty(*dirty)
        for t in overwritten:
            # A fresh output that was a user tensor: its earlier uses see the write.
            torch.autograd.graph.increment_version(t)
        ctx.save_for_backward(*tensors[: call.n_inputs])
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        n_inputs = ctx.n_inputs
        # An input the call does not differentiate (no_diff, read-only) gets None: no buffer,
        # and its .grad stays None (the native bridge gives it no edge at all).
        needs = [n and t for n, t in zip(ctx.needs_input_grad[1 : 1 + n_inputs], ctx.takes_grad)]
        n_results = len(ctx.needs_input_grad)
        if not any(needs):
            return (None,) * n_results
        saved = ctx.saved_tensors  # raises if an input was modified in place since forward
        # Contents unspecified: the core zero-fills them (bridge_abi.h, SgBackwardFn).
        grad_inputs = [
            torch.empty(t.shape, dtype=t.dtype, device=t.device) if need else None
            for t, need in zip(saved, needs)
        ]
        ctx.handle.backward(saved, grad_outputs, grad_inputs)
        if torch.is_grad_enabled():
            # create_graph=True: make a second differentiation fail loudly. The saved inputs
            # count too (unlike @once_differentiable): the gradients depend on them.
            tracked = [g for g in grad_outputs if g is not None and g.requires_grad]
            tracked += [t for t in saved if t.requires_grad]
            computed = [i for i, g in enumerate(grad_inputs) if g is not None]
            if tracked and computed:
                wrapped = _DoubleBackwardGuard.apply(
                    len(computed), *(grad_inputs[i] for i in computed), *tracked
                )
                for i, g in zip(computed, wrapped):
                    grad_inputs[i] = g
        return (None, *grad_inputs) + (None,) * (n_results - 1 - n_inputs)


def apply_autograd(inputs, outputs, dirty, handle, takes_grad=None) -> tuple:
    """Runs `handle.forward()` inside ShadegradFunction; returns the outputs (the same objects),
    which then carry the node as grad_fn.

    inputs: differentiable input tensors; outputs: output tensors, already allocated; dirty: per
    output, 1 when it is a user tensor written in place (it must then not be a leaf that requires
    grad), 2 when it is a user tensor overwritten that becomes a fresh output (its version is
    bumped), 0 for a fresh result. handle.backward(saved_inputs, grad_outputs, grad_inputs) runs the backward
    kernel: grad_outputs entries may be None (treat as zero), grad_inputs holds a zero-filled
    contiguous tensor per input whose gradient is needed, None otherwise, to be accumulated into.
    takes_grad: per input, False when the call does not differentiate it (a no_diff or read-only
    parameter): it is saved, but gets no gradient (None); None means every input takes one.
    """
    inputs = list(inputs)
    outputs = list(outputs)
    # 1: written in place (mark_dirty); 2: a user tensor overwritten that becomes a fresh output
    # (a leaf that requires grad, which torch does not let a function modify in place).
    overwritten = [t for t, d in zip(outputs, dirty) if int(d) == 2]
    dirty = [int(d) == 1 for d in dirty]
    if len(dirty) != len(outputs):
        raise ValueError("shadegrad: one dirty flag per output is required")
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, t in enumerate(tensors):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"shadegrad: autograd {kind} {i} is not a torch.Tensor")

    # Tensors are identified by object: torch keeps one Python object per TensorImpl, so this is
    # the native bridge's TensorImpl comparison.
    tensors = list(inputs)
    dirty_outputs = []
    for o, (t, is_dirty) in enumerate(zip(outputs, dirty)):
        input_index = next((i for i, x in enumerate(inputs) if x is t), -1)
        if is_dirty:
            dirty_outputs.append(t)
            if not any(x is t for x in tensors):
                tensors.append(t)
        elif input_index >= 0:
            raise RuntimeError(
                f"shadegrad: output {o} is also input {input_index} but is not marked as modified "
                "in place"
            )
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        for o, (t, is_dirty) in enumerate(zip(outputs, dirty)):
            if is_dirty and t.is_leaf and t.requires_grad:
                raise RuntimeError(
                    f"shadegrad: output {o} is a leaf tensor that requires grad and cannot be "
                    "written in place (a leaf Variable that requires grad is being used in an "
                    "in-place operation)"
                )

    takes_grad = [True] * len(inputs) if takes_grad is None else [bool(x) for x in takes_grad]
    if len(takes_grad) != len(inputs):
        raise ValueError("shadegrad: one takes_grad flag per input is required")
    call = _Call(handle, len(inputs), takes_grad, outputs, dirty_outputs, overwritten)
    results = ShadegradFunction.apply(call, *tensors)
    if not isinstance(results, tuple):
        results = (results,)
    return results
