# python/shadegrad/_coop_autograd.py — SlangPy's `_thread_count` launch of a [Differentiable]
# [CUDAKernel] function, and a call of a [Differentiable] function that takes views, inside
# torch autograd.
"""A launch `module.kernel(args..., _thread_count=N)` whose DiffTensorView arguments include
tensors that require grad joins torch autograd (the extension sends it here):

* the DiffTensorView tensors that require grad are the node's inputs;
* the other DiffTensorView tensors are the kernel's outputs: written in place, they become
  outputs of the node (torch's in-place rule, `mark_dirty`), so a loss computed from them
  reaches the kernel's backward;
* the backward launches the kernel's `bwd_diff` with the same thread count, each DiffTensorView
  bound to a (values, gradient) pair: a zero gradient to fill for an input, a copy of the
  incoming gradient for an output (the backward of `store` consumes it).

A function that takes views (docs/calling.md, "Functions that take views") adds two things: a
tensor read per element by a differentiable scalar or vector parameter that requires grad is an
input too (its gradient is added per call, broadcast elements summed), and its results are an
output whose incoming gradient the backward passes as `_result`.

Every other argument (TensorView tensors, numbers) is passed through unchanged.
"""
from __future__ import annotations

import torch

__all__ = ["launch"]


def _bind(fn, args: tuple, kwargs: dict) -> tuple:
    """The argument of each parameter, in parameter order ((name, kind, value) triples), and the
    result's entry ((kind, dtype name) of a function that takes views and returns a value, else None)."""
    params = fn._coop_params()
    result = next(((kind, dtype) for name, kind, dtype in params if kind in (4, 5)), None)
    params = [(name, kind) for name, kind, _ in params if kind not in (4, 5)]
    if len(args) > len(params):
        raise TypeError(f"{fn.name}() takes {len(params)} arguments, got {len(args)}")
    values = dict(zip((p[0] for p in params), args))
    for key, value in kwargs.items():
        if key in values:
            raise TypeError(f"{fn.name}(): parameter '{key}' is given twice")
        if key not in (p[0] for p in params):
            raise TypeError(f"{fn.name}(): no parameter named '{key}'")
        values[key] = value
    # A parameter without an argument may have one from fn.set(): the launch reports a missing one.
    return [(name, kind, values[name]) for name, kind in params if name in values], result


def launch(fn, args: tuple, kwargs: dict, thread_count):
    """Launches `fn` over `thread_count` threads (None: a function that takes views, whose
    arguments give its calls) as a torch autograd node; returns the results of a function that
    returns a value, else the output tensors (the DiffTensorView arguments that do not require
    grad), or None when there are none."""
    kwargs = dict(kwargs)
    given = kwargs.pop("_result", None)  # a function that takes views: the tensor its results go to
    bound, result = _bind(fn, tuple(args), kwargs)
    # The node's inputs: DiffTensorView tensors and per-element differentiable values (kind 3)
    # that require grad; its outputs: the other DiffTensorView tensors (written in place) and the
    # results of a function that takes views (a new tensor, or `_result=`'s, written in place).
    carries = [k for k, (_, kind, value) in enumerate(bound) if kind in (2, 3) and isinstance(value, torch.Tensor)]
    inputs = [k for k in carries if bound[k][2].requires_grad]
    outputs = [k for k, (_, kind, value) in enumerate(bound)
               if kind == 2 and isinstance(value, torch.Tensor) and not value.requires_grad]
    names = [name for name, _, _ in bound]
    returns = result is not None
    diff_result = returns and result[0] == 4

    def run(values: list, pass_: int, result_tensor=None):
        kw = dict(zip(names, values))
        if result_tensor is not None:
            kw["_result"] = result_tensor
        return fn._launch((), kw, (), (), thread_count, pass_)

    if not outputs and not diff_result:
        # Nothing the kernel writes can carry a gradient on: a plain launch.
        with torch.no_grad():
            out = run([value for _, _, value in bound], 0, given)
        return out if returns else None

    n_in = len(inputs)

    class _Kernel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *tensors):
            values = [value for _, _, value in bound]
            for k, t in zip(inputs + outputs, tensors):
                values[k] = t
            dirty = list(tensors[n_in:n_in + len(outputs)])
            target = tensors[-1] if given is not None else None
            out = run(values, 0, target)
            if given is not None:
                dirty.append(target)
            if dirty:
                ctx.mark_dirty(*dirty)
            ctx.save_for_backward(*tensors[:n_in])
            written = tuple(tensors[n_in:n_in + len(outputs)])
            if not returns:
                return written
            if not diff_result:
                ctx.mark_non_differentiable(out)
            ctx.result_like = torch.empty((), dtype=out.dtype, device=out.device).expand(out.shape)
            return (out,) + written

        @staticmethod
        def backward(ctx, *grad_outputs):
            saved = ctx.saved_tensors
            values = [value for _, _, value in bound]
            grads = []
            # A DiffTensorView<half>'s gradient is float32 (as Slang's): made so, and given back
            # to torch in the values' dtype.
            def grad_dtype(t):
                return torch.float32 if t.dtype == torch.float16 else t.dtype

            def incoming(g, like):
                if g is None:
                    return torch.zeros(like.shape, dtype=grad_dtype(like), device=like.device)
                return g.to(grad_dtype(like), memory_format=torch.contiguous_format, copy=True)

            for k, t in zip(inputs, saved):
                g = torch.zeros(t.shape, dtype=grad_dtype(t), device=t.device)
                values[k] = (t.detach(), g)
                grads.append(g)
            written_grads = grad_outputs[1:] if returns else grad_outputs
            for k, g in zip(outputs, written_grads):
                out = bound[k][2].detach()
                values[k] = (out, incoming(g, out))
            result_grad = None
            if diff_result:
                result_grad = incoming(grad_outputs[0], ctx.result_like)
            run(values, 1, result_grad)
            # A broadcast per-element tensor's gradient has its own shape already.
            return tuple(g.to(t.dtype) for g, t in zip(grads, saved)) + (None,) * (len(outputs) + (given is not None))

    tensors = [bound[k][2] for k in inputs + outputs] + ([given] if given is not None else [])
    result_out = _Kernel.apply(*tensors)
    if returns:
        return result_out[0]
    return result_out[0] if len(result_out) == 1 else result_out
