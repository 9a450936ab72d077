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

from types import SimpleNamespace

import torch

from . import _core

__all__ = ["launch"]

# The kinds of Function._coop_params() entries, by name (call/coop_launch.h: CoopParamKind).
KIND = SimpleNamespace(**_core._coop_param_kinds())
RESULTS = (KIND.diff_result, KIND.result)


def _bind(fn, args: tuple, kwargs: dict) -> tuple:
    """The argument of each parameter, in parameter order ((name, kind, value) triples), and the
    result's leaves ((name, kind) pairs of a function that takes views and returns a value:
    "_result", or "_result:<field>" per field of a struct; else None)."""
    params = fn._coop_params()
    result = [(name, kind) for name, kind, _ in params if kind in RESULTS] or None
    params = [(name, kind) for name, kind, _ in params if kind not in (*RESULTS, KIND.struct_field)]
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


def _get(value, path: tuple):
    """The part of a struct parameter's dict at `path` (the value itself for ())."""
    for key in path:
        value = value[key]
    return value


def _put(values: list, slot: tuple, x) -> None:
    """Sets argument slot (k, path) of `values` to x (a struct's dict copied along the path)."""
    k, path = slot
    if not path:
        values[k] = x
        return

    def rebuilt(d, path):
        copy = dict(d)
        copy[path[0]] = x if len(path) == 1 else rebuilt(d[path[0]], path[1:])
        return copy

    values[k] = rebuilt(values[k], path)


def launch(fn, args: tuple, kwargs: dict, thread_count):
    """Launches `fn` over `thread_count` threads (None: a function that takes views, whose
    arguments give its calls) as a torch autograd node; returns the results of a function that
    returns a value, else the output tensors (the DiffTensorView arguments that do not require
    grad, and the tensors of out and inout parameters), or None when there are none."""
    kwargs = dict(kwargs)
    given = kwargs.pop("_result", None)  # a function that takes views: the tensor its results go to
    for key in kwargs:
        if key.startswith("_result:"):
            raise TypeError(f"{fn.name}(): {key}= (a struct result's field written into a given tensor) is not "
                            "supported in torch autograd yet")
    bound, result = _bind(fn, tuple(args), kwargs)
    # Each tensor's part in the node: "in" (an input: DiffTensorView tensors and per-element
    # differentiable values that require grad), "out" (written in place: the other DiffTensorView
    # tensors), "inout" (an out/inout value's tensor, or a field of an out/inout struct: written
    # in place, its values before the call kept for the backward's recomputation, and when it
    # requires grad its gradient is that of those values).
    def role(kind, value):
        if not isinstance(value, torch.Tensor):
            return None
        if kind == KIND.diff_tensor_view:
            return "in" if value.requires_grad else "out"
        if kind == KIND.diff_element:
            return "in" if value.requires_grad else None
        if kind == KIND.diff_element_out:
            return "inout"
        if kind == KIND.struct:  # a struct from a tensor of its fields
            return "in" if value.requires_grad else None
        if kind == KIND.struct_out:
            return "inout"
        return None

    # Slots (parameter, path into a struct parameter's dict).
    roles = [role(kind, value) for _, kind, value in bound]
    ins = [(k, ()) for k, r in enumerate(roles) if r == "in"]
    outs = [(k, ()) for k, r in enumerate(roles) if r == "out"]
    inouts = [(k, ()) for k, r in enumerate(roles) if r == "inout"]
    # A struct's fields that carry a gradient, from tensors that require grad, are inputs too; an
    # out or inout struct's are written in place.
    fields = [name for name, kind, _ in fn._coop_params() if kind == KIND.struct_field]
    for k, (pname, kind, value) in enumerate(bound):
        if kind not in (KIND.struct, KIND.struct_out) or not isinstance(value, dict):
            continue
        for field in fields:
            if not field.startswith(pname + "."):
                continue
            path = tuple(field[len(pname) + 1:].split("."))
            try:
                part = _get(value, path)
            except (KeyError, TypeError):
                continue  # the launch reports a missing field
            if not isinstance(part, torch.Tensor):
                continue
            if kind == KIND.struct_out:
                inouts.append((k, path))
            elif part.requires_grad:
                ins.append((k, path))
    names = [name for name, _, _ in bound]
    returns = result is not None
    leaves = result or []
    diff_result = any(kind == KIND.diff_result for _, kind in leaves)
    struct_result = returns and leaves[0][0] != "_result"

    def leaf_values(out):
        """The result's tensors in leaf order (a struct's from its dict of fields)."""
        if not struct_result:
            return [out]
        found = []
        for name, _ in leaves:
            v = out
            for key in name[len("_result:"):].split("."):
                v = v[key]
            found.append(v)
        return found

    def as_result(values):
        """The result as the call returns it, from its leaves' tensors."""
        if not struct_result:
            return values[0]
        out = {}
        for (name, _), v in zip(leaves, values):
            *path, last = name[len("_result:"):].split(".")
            at = out
            for key in path:
                at = at.setdefault(key, {})
            at[last] = v
        return out

    def run(values: list, pass_: int, result_tensors=None):
        kw = dict(zip(names, values))
        if isinstance(result_tensors, dict):
            kw.update(result_tensors)
        elif result_tensors is not None:
            kw["_result"] = result_tensors
        return fn._launch((), kw, (), (), thread_count, pass_)

    if not outs and not inouts and not diff_result:
        # Nothing the kernel writes can carry a gradient on: a plain launch.
        with torch.no_grad():
            out = run([value for _, _, value in bound], 0, given)
        return out if returns else None

    order = ins + outs + inouts  # the node's tensor arguments, then `_result=`'s

    class _Kernel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *tensors):
            values = [value for _, _, value in bound]
            for slot, t in zip(order, tensors):
                _put(values, slot, t)
            # An inout tensor's values before the call: the backward recomputes from them.
            before = [_get(values[k], path).detach().clone() for k, path in inouts]
            target = tensors[-1] if given is not None else None
            out = run(values, 0, target)
            written = tuple(tensors[len(ins):len(order)])
            dirty = list(written) + ([target] if given is not None else [])
            if dirty:
                ctx.mark_dirty(*dirty)
            ctx.save_for_backward(*tensors[:len(ins)], *before)
            if not returns:
                return written
            outs_ = leaf_values(out)
            plain = [v for v, (_, kind) in zip(outs_, leaves) if kind != KIND.diff_result]
            if plain:
                ctx.mark_non_differentiable(*plain)
            ctx.result_like = [torch.empty((), dtype=v.dtype, device=v.device).expand(v.shape) for v in outs_]
            return tuple(outs_) + written

        @staticmethod
        def backward(ctx, *grad_outputs):
            saved = ctx.saved_tensors
            inputs, before = saved[:len(ins)], saved[len(ins):]
            values = [value for _, _, value in bound]
            # A DiffTensorView<half>'s gradient is float32 (as Slang's): made so, and given back
            # to torch in the values' dtype.
            def grad_dtype(t):
                return torch.float32 if t.dtype == torch.float16 else t.dtype

            def incoming(g, like):
                if g is None:
                    return torch.zeros(like.shape, dtype=grad_dtype(like), device=like.device)
                return g.to(grad_dtype(like), memory_format=torch.contiguous_format, copy=True)

            in_grads = []
            for slot, t in zip(ins, inputs):
                g = torch.zeros(t.shape, dtype=grad_dtype(t), device=t.device)
                _put(values, slot, (t.detach(), g))
                in_grads.append(g)
            written_grads = grad_outputs[len(leaves):]
            for (k, path), g in zip(outs, written_grads):
                out = _get(bound[k][2], path).detach()
                _put(values, (k, path), (out, incoming(g, out)))
            inout_grads = []
            for slot, b, g in zip(inouts, before, written_grads[len(outs):]):
                gb = incoming(g, b)  # after the backward: the gradient of the values before the call
                _put(values, slot, (b, gb))
                inout_grads.append(gb)
            result_grads = {name: incoming(g, like) for (name, kind), g, like in
                            zip(leaves, grad_outputs, getattr(ctx, "result_like", [])) if kind == KIND.diff_result}
            run(values, 1, result_grads or None)
            return (tuple(g.to(t.dtype) for g, t in zip(in_grads, inputs)) + (None,) * len(outs) +
                    tuple(g.to(t.dtype) if need else None for g, t, need in zip(inout_grads, before, inout_needs)) +
                    (None,) * (given is not None))

    tensors = [_get(bound[k][2], path) for k, path in order] + ([given] if given is not None else [])
    inout_needs = [_get(bound[k][2], path).requires_grad for k, path in inouts]
    result_out = _Kernel.apply(*tensors)
    if returns:
        return as_result(list(result_out[:len(leaves)]))
    return result_out[0] if len(result_out) == 1 else result_out
