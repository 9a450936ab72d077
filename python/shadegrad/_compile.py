# python/shadegrad/_compile.py — torch.compile support: shadegrad calls as torch.library custom
# operators (docs/torch_compile.md).
#
# Eager calls never come here: calling a Function goes through a C type slot and the cached call
# runs no Python. When Dynamo traces a call of a shadegrad Function, it looks `__call__` up on the
# class, where the registration below put the Python stand-in `traced_call` (the slot itself is
# left as it is), and inlines it; the stand-in records one `shadegrad::call` operator whose fake
# implementation computes the result's shape and dtype from the call's binding, and whose
# registered autograd formula records `shadegrad::call_backward`. When the compiled graph runs,
# `call` calls the Function itself, and `call_backward` its backward entry (Function._backward:
# the backward kernel alone, without running the forward again).
#
# Registering needs torch._dynamo, which `import torch` does not load (it costs about a second):
# it happens when torch._dynamo is first imported, through the import hook installed by
# `install()`, or at once when it is already loaded.
from __future__ import annotations

import importlib.abc
import importlib.util
import inspect
import sys
from functools import lru_cache

import torch

from . import _core
from ._torch_fallback import _DTYPES_BY_CODE, dtype_code

_registered = False


class TracedGrid:
    """What `sg.grid(shape)` gives while torch.compile traces: the extents stay symbolic (a
    GridArg would turn them into ints and specialize the graph on them)."""

    def __init__(self, shape, stride=(), offset=()):
        self.shape = tuple(shape)
        self.steps = (tuple(stride), tuple(offset))


# ---------------------------------------------------------------------------- the call layout
# A call is flattened into the operator's arguments: the tensors, the integers (grid extents and
# int scalars), the floats, and a layout string that says where each argument goes: one token per
# argument, comma separated, "name=" in front for keywords: "t" tensor, "g<rank>" grid (then "s"
# and/or "o" when it has a stride / an offset, which follow its extents in the integers), "i" int,
# "f" float, "b0"/"b1" bool.


def _encode_grid(prefix, shape, steps, layout, ints):
    stride, offset = steps
    layout.append(prefix + "g" + str(len(shape)) + ("s" if stride else "") + ("o" if offset else ""))
    ints.extend(shape)
    ints.extend(stride)
    ints.extend(offset)


def _encode(value, prefix, layout, tensors, ints, floats):
    if isinstance(value, torch.Tensor):
        layout.append(prefix + "t")
        tensors.append(value)
    elif isinstance(value, TracedGrid):
        _encode_grid(prefix, value.shape, value.steps, layout, ints)
    elif isinstance(value, _core.GridArg):
        # extents and steps: set by sg.grid in the instance dict, where the tracer can read them
        _encode_grid(prefix, value.extents, value.steps, layout, ints)
    elif isinstance(value, bool):
        layout.append(prefix + ("b1" if value else "b0"))
    elif isinstance(value, int):
        layout.append(prefix + "i")
        ints.append(value)
    elif isinstance(value, float):
        layout.append(prefix + "f")
        floats.append(value)
    else:
        raise TypeError(
            f"shadegrad under torch.compile: an argument of type {type(value).__name__} is not supported yet "
            "(tensors, sg.grid, int, float and bool are)"
        )


def traced_call(self, /, *args, **kwargs):
    """What Dynamo traces for a call of a Function (same arguments, same result). It is
    `Function.__call__` as looked up on the class, but calls `fn(...)` run the C slot and never come
    here; an explicit `fn.__call__(...)` outside torch.compile does, and runs the call as the slot
    would."""
    if not torch.compiler.is_compiling():
        return _core.Function._call(self, *args, **kwargs)
    container = _container_position(args, kwargs)
    if container is not None:
        # A shadegrad Tensor argument: the call runs eagerly, between two graphs, exactly as
        # outside torch.compile (its result is a Tensor, its autograd torch's own). With
        # fullgraph=True the break is an error carrying this message.
        _graph_break(msg=_traced_container_message(id(self), container))
        return _core.Function._call(self, *args, **kwargs)
    layout, tensors, ints, floats = [], [], [], []
    for value in args:
        _encode(value, "", layout, tensors, ints, floats)
    for name, value in kwargs.items():
        _encode(value, name + "=", layout, tensors, ints, floats)
    return torch.ops.shadegrad.call(id(self), ",".join(layout), tensors, ints, floats)


def _container_position(args, kwargs):
    """The position or keyword of the first argument that is a shadegrad Tensor (or a Tensor
    subclass), or None."""
    from ._tensor import Tensor

    for i, value in enumerate(args):
        if isinstance(value, Tensor):
            return i
    for name, value in kwargs.items():
        if isinstance(value, Tensor):
            return name
    return None


def _container_message(function_id: int, where) -> str:
    """Why a call with a shadegrad Tensor breaks the graph, naming the function and parameter.
    Run at trace time as a constant (Dynamo does not trace the extension's properties). It takes
    the function's id, not the function: Dynamo before 2.13 folds only arguments that are Python
    constants."""
    fn = _function(function_id)
    names = fn.parameter_names
    param = where if isinstance(where, str) else (names[where] if where < len(names) else f"#{where}")
    return (f"shadegrad under torch.compile: {fn.name}() parameter '{param}' is given a shadegrad.Tensor, so the "
            "call runs outside the compiled graph (pass its .to_torch() to keep the call in the graph)")


_traced_container_message = _container_message  # made a trace-time constant by _register()


def _graph_break(msg: str) -> None:
    torch._dynamo.graph_break(msg=msg)


@lru_cache(maxsize=None)
def _parse(layout: str) -> tuple:
    """(keyword or None, kind, rank, token, has stride, has offset) per argument of a layout."""
    out = []
    for token in layout.split(",") if layout else []:
        name, _, kind = token.rpartition("=")
        rank = int(kind[1:].rstrip("so")) if kind[0] == "g" else 0
        out.append((name or None, kind[0], rank, kind, kind[0] == "g" and "s" in kind, kind[0] == "g" and "o" in kind))
    return tuple(out)


def _ints_used(kind, rank, has_stride, has_offset) -> int:
    if kind == "g":
        return rank * (1 + has_stride + has_offset)
    return 1 if kind == "i" else 0


def _rebuild(layout, tensors, ints, floats, grid=_core.GridArg):
    """The call's positional and keyword arguments from the operator's arguments."""
    args, kwargs = [], {}
    it, ii, fi = 0, 0, 0
    for name, kind, rank, token, has_stride, has_offset in _parse(layout):
        if kind == "t":
            value = tensors[it]
            it += 1
        elif kind == "g":
            extents = list(ints[ii : ii + rank])
            k = ii + rank
            stride = list(ints[k : k + rank]) if has_stride else []
            k += rank if has_stride else 0
            offset = list(ints[k : k + rank]) if has_offset else []
            value = grid(extents, stride, offset)
            ii += _ints_used(kind, rank, has_stride, has_offset)
        elif kind == "i":
            value = ints[ii]
            ii += 1
        elif kind == "f":
            value = floats[fi]
            fi += 1
        else:
            value = token == "b1"
        if name is None:
            args.append(value)
        else:
            kwargs[name] = value
    return args, kwargs


def _function(function_id: int):
    fn = _core._function_by_id(function_id)
    if fn is None:
        raise RuntimeError(
            "shadegrad: the function this compiled graph calls no longer exists (its module was deleted)"
        )
    return fn


# ---------------------------------------------------------------------------- fake (meta) shapes


def _hint(size) -> int:
    """A size's value in the example inputs, without guarding on it."""
    if isinstance(size, int):
        return size
    hint = size.node.hint
    return int(hint) if hint is not None else 2


def _broadcast(shapes):
    """Right-aligned broadcast of call shapes whose extents may be symbolic (symbolic sizes are
    never 1: torch specializes 0 and 1)."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(rank):
        picked = 1
        for s in shapes:
            k = len(s) - rank + d
            if k < 0:
                continue
            e = s[k]
            if isinstance(e, int) and e == 1:
                continue
            if isinstance(picked, int) and picked == 1:
                picked = e
            else:
                torch._check(e == picked, lambda: f"shadegrad: call extents {picked} and {e} do not broadcast")
        out.append(picked)
    return out


def _describe(layout, tensors, ints, floats):
    """The call's argument descriptions for _core._bind_signature (hint values for sizes)."""
    grid = lambda extents, stride, offset: ("grid", [_hint(e) for e in extents])  # noqa: E731
    args, kwargs = _rebuild(layout, tensors, ints, floats, grid=grid)

    def one(value):
        if isinstance(value, torch.Tensor):
            device = value.device
            return ("tensor", dtype_code(value.dtype), [_hint(s) for s in value.shape], bool(value.requires_grad),
                    1 if device.type == "cuda" else 0, -1 if device.type == "cpu" else (device.index or 0))
        if isinstance(value, tuple):
            return value
        if isinstance(value, bool):
            return ("bool", value)
        if isinstance(value, (int, torch.SymInt)):
            return ("int", _hint(value))
        return ("float", float(value))

    positional = [one(v) for v in args]
    keywords = [(k, one(v)) for k, v in kwargs.items()]
    return args, kwargs, positional, keywords


def _fake_call(function_id, layout, tensors, ints, floats):
    fn = _function(function_id)
    args, kwargs, positional, keywords = _describe(layout, tensors, ints, floats)
    signature = _core._bind_signature(fn, positional, keywords)
    if signature["result"] is None:
        raise NotImplementedError(
            f"shadegrad under torch.compile: {fn.name} returns void; functions without a result "
            "are not supported yet under torch.compile"
        )
    values = list(args) + list(kwargs.values())
    shapes = []
    for value, (call_dims, elem_dims, writes, _differentiated) in zip(values, signature["args"]):
        if writes:
            raise NotImplementedError(
                f"shadegrad under torch.compile: {fn.name} writes a tensor argument; out/inout "
                "tensors are not supported yet under torch.compile"
            )
        if isinstance(value, torch.Tensor):
            shape = list(value.shape)
            # Element extents (a float3's 3) decide the binding: the graph specializes on them.
            for k in range(len(shape) - elem_dims, len(shape)):
                shape[k] = int(shape[k])
            shapes.append(shape[:call_dims])
    # Grid extents, symbolic as given.
    ii = 0
    for _, kind, rank, _token, has_stride, has_offset in _parse(layout):
        if kind == "g":
            shapes.append(list(ints[ii : ii + rank]))
        ii += _ints_used(kind, rank, has_stride, has_offset)
    dtype_id, elem_shape = signature["result"]
    if tensors:
        device = tensors[0].device
    elif fn.device.type == _core.DeviceType.cuda:
        device = torch.device("cuda", max(fn.device.index, 0))
    else:
        device = torch.device("cpu")
    return torch.empty(_broadcast(shapes) + list(elem_shape), dtype=_DTYPES_BY_CODE[dtype_id], device=device)


def _fake_call_backward(function_id, layout, tensors, ints, floats, grad, needs):
    return [torch.empty_like(tensors[i]) for i in needs]


# ---------------------------------------------------------------------------- real implementations


def _call(function_id, layout, tensors, ints, floats):
    fn = _function(function_id)
    args, kwargs = _rebuild(layout, tensors, ints, floats)
    with torch.no_grad():
        return fn(*args, **kwargs)


def _call_backward(function_id, layout, tensors, ints, floats, grad, needs):
    fn = _function(function_id)
    inputs = [t.detach().requires_grad_(i in needs) for i, t in enumerate(tensors)]
    args, kwargs = _rebuild(layout, inputs, ints, floats)
    # The call layer's backward entry: the backward kernel alone, the forward is not run again.
    computed = fn._backward(tuple(args), dict(kwargs), [grad], []) or []
    by_tensor = {}
    for t, g in computed:
        by_tensor[id(t)] = by_tensor[id(t)] + g if id(t) in by_tensor else g
    # An operator's outputs may not share memory with each other or its inputs.
    seen = {t.untyped_storage().data_ptr() for t in tensors} | {grad.untyped_storage().data_ptr()}
    out = []
    for i in needs:
        g = by_tensor.get(id(inputs[i]))
        if g is None:
            g = torch.zeros_like(inputs[i])
        elif g.untyped_storage().data_ptr() in seen:
            g = g.clone()
        seen.add(g.untyped_storage().data_ptr())
        out.append(g)
    return out


# ---------------------------------------------------------------------------- autograd formula


def _takes_grad(function_id, layout, tensors, ints, floats) -> list:
    """Per tensor argument, whether the call differentiates its parameter: a tensor given to a
    no_diff or read-only tensor parameter gets no gradient (None), as in eager mode. The call's
    binding answers, so overloads, generic instances and methods get the same answer as eager."""
    fn = _function(function_id)
    args, kwargs, positional, keywords = _describe(layout, tensors, ints, floats)
    per_arg = _core._bind_signature(fn, positional, keywords, True)["args"]
    return [differentiated for (kind, (*_, differentiated)) in zip((p[1] for p in _parse(layout)), per_arg)
            if kind == "t"]


def _setup_context(ctx, inputs, output):
    function_id, layout, tensors, ints, floats = inputs
    ctx.function_id, ctx.layout, ctx.ints, ctx.floats = function_id, layout, ints, floats
    takes = _takes_grad(function_id, layout, tensors, ints, floats)
    ctx.needs = [i for i, t in enumerate(tensors) if t.requires_grad and takes[i]]
    ctx.save_for_backward(*tensors)


def _backward(ctx, grad):
    tensors = list(ctx.saved_tensors)
    grads = [None] * len(tensors)
    if ctx.needs:
        computed = torch.ops.shadegrad.call_backward(
            ctx.function_id, ctx.layout, tensors, ctx.ints, ctx.floats, grad, ctx.needs
        )
        for i, g in zip(ctx.needs, computed):
            grads[i] = g
    # One entry per operator input, shaped like it: torch reads an empty list as a (vacuous) list
    # of tensors, which wants [] back, and other lists as leaves, which want None.
    return None, None, grads, [] if not ctx.ints else None, [] if not ctx.floats else None


# ---------------------------------------------------------------------------- registration


def _register() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    global _traced_container_message, _graph_break
    _traced_container_message = torch._dynamo.assume_constant_result(_container_message)
    if "msg" not in inspect.signature(torch._dynamo.graph_break).parameters:  # before torch 2.7
        _graph_break = lambda msg: torch._dynamo.graph_break()  # noqa: E731
    call = torch.library.custom_op(
        "shadegrad::call",
        mutates_args=(),
        schema="(int function_id, str layout, Tensor[] tensors, SymInt[] ints, float[] floats) -> Tensor",
    )(_call)
    call.register_fake(_fake_call)
    call_backward = torch.library.custom_op(
        "shadegrad::call_backward",
        mutates_args=(),
        schema="(int function_id, str layout, Tensor[] tensors, SymInt[] ints, float[] floats, Tensor grad, "
        "int[] needs) -> Tensor[]",
    )(_call_backward)
    call_backward.register_fake(_fake_call_backward)
    call.register_autograd(_backward, setup_context=_setup_context)
    # Dynamo looks a called object's __call__ up on its class (inspect.getattr_static) and inlines
    # it when it is a Python function; calls keep using the C slot (compile_support.h).
    _core._set_call_attribute(traced_call)


class _DynamoImportHook(importlib.abc.MetaPathFinder):
    """Registers the operators and the stand-in right after torch._dynamo is first imported."""

    def find_spec(self, name, path, target=None):
        if name != "torch._dynamo":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            _register()

        spec.loader.exec_module = exec_and_register
        return spec


def install() -> None:
    if "torch._dynamo" in sys.modules:
        _register()
    elif not any(isinstance(f, _DynamoImportHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _DynamoImportHook())
