# python/shadegrad/_coop_autograd.py — SlangPy's `_thread_count` launch of a [Differentiable]
# [CUDAKernel] function inside torch autograd.
"""A launch `module.kernel(args..., _thread_count=N)` whose DiffTensorView arguments include
tensors that require grad joins torch autograd (the extension sends it here):

* the DiffTensorView tensors that require grad are the node's inputs;
* the other DiffTensorView tensors are the kernel's outputs: written in place, they become
  outputs of the node (torch's in-place rule, `mark_dirty`), so a loss computed from them
  reaches the kernel's backward;
* the backward launches the kernel's `bwd_diff` with the same thread count, each DiffTensorView
  bound to a (values, gradient) pair: a zero gradient to fill for an input, a copy of the
  incoming gradient for an output (the backward of `store` consumes it).

Every other argument (TensorView tensors, numbers) is passed through unchanged.
"""
from __future__ import annotations

import torch

__all__ = ["launch"]


def _bind(fn, args: tuple, kwargs: dict) -> list:
    """The argument of each parameter, in parameter order ((name, kind, value) triples)."""
    params = fn._coop_params()
    if len(args) > len(params):
        raise TypeError(f"{fn.name}() takes {len(params)} arguments, got {len(args)}")
    values = dict(zip((p[0] for p in params), args))
    for key, value in kwargs.items():
        if key in values:
            raise TypeError(f"{fn.name}(): parameter '{key}' is given twice")
        if key not in (p[0] for p in params):
            raise TypeError(f"{fn.name}(): no parameter named '{key}'")
        values[key] = value
    for name, _ in params:
        if name not in values:
            raise TypeError(f"{fn.name}(): parameter '{name}' has no argument")
    return [(name, kind, values[name]) for name, kind in params]


def launch(fn, args: tuple, kwargs: dict, thread_count: int):
    """Launches `fn` over `thread_count` threads as a torch autograd node; returns the output
    tensors (the DiffTensorView arguments that do not require grad), or None when there are none."""
    bound = _bind(fn, tuple(args), dict(kwargs))
    diff = [k for k, (_, kind, value) in enumerate(bound) if kind == 2 and isinstance(value, torch.Tensor)]
    inputs = [k for k in diff if bound[k][2].requires_grad]
    outputs = [k for k in diff if not bound[k][2].requires_grad]
    names = [name for name, _, _ in bound]

    def run(values: list, pass_: int) -> None:
        fn._launch((), dict(zip(names, values)), (), (), thread_count, pass_)

    if not outputs:
        # Nothing the kernel writes can carry a gradient on: a plain launch.
        with torch.no_grad():
            run([value for _, _, value in bound], 0)
        return None

    class _Kernel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *tensors):
            values = [value for _, _, value in bound]
            for k, t in zip(inputs + outputs, tensors):
                values[k] = t
            run(values, 0)
            ctx.mark_dirty(*tensors[len(inputs):])
            ctx.save_for_backward(*tensors[:len(inputs)])
            return tensors[len(inputs):]

        @staticmethod
        def backward(ctx, *grad_outputs):
            saved = ctx.saved_tensors
            values = [value for _, _, value in bound]
            grads = []
            # A DiffTensorView<half>'s gradient is float32 (as Slang's): made so, and given back
            # to torch in the values' dtype.
            def grad_dtype(t):
                return torch.float32 if t.dtype == torch.float16 else t.dtype

            for k, t in zip(inputs, saved):
                g = torch.zeros(t.shape, dtype=grad_dtype(t), device=t.device)
                values[k] = (t.detach(), g)
                grads.append(g)
            for k, g in zip(outputs, grad_outputs):
                out = bound[k][2].detach()
                g = torch.zeros(out.shape, dtype=grad_dtype(out), device=out.device) if g is None else \
                    g.to(grad_dtype(out), memory_format=torch.contiguous_format, copy=True)
                values[k] = (out, g)
            run(values, 1)
            return tuple(g.to(t.dtype) for g, t in zip(grads, saved)) + (None,) * len(outputs)

    tensors = [bound[k][2] for k in inputs + outputs]
    result = _Kernel.apply(*tensors)
    return result[0] if len(result) == 1 else result
