# python/shadegrad/_bwds.py — fn.bwds: the explicit backward call (SlangPy's `func.bwds(...)`).
#
# Differentiable arguments come as diffPair(p, d) (the gradient lands in .grad) or as torch
# tensors that require grad (the gradient accumulates into .grad, as torch does); for a function
# with a result, its gradient is the last positional argument (parameters with defaults may be
# left out before it); an `out` parameter takes a
# diffPair whose `d` is its incoming gradient, an `inout` one a diffPair whose `d` is the gradient
# of its value after the call and becomes that of its value before the call. Only the generated
# backward kernel runs (Function._backward, the call layer's backward entry): the forward is not
# run again and nothing but the gradients is written; they are exactly those the forward call's
# autograd node would compute.
"""fn.bwds: explicit backward calls."""

from __future__ import annotations

from . import _tensor, _values
from ._coop_autograd import KIND, RESULTS


# Tensor parameter types a call writes (a diff_pair for one holds the incoming gradient).
WRITTEN_TENSORS = ("WDiffTensor", "IWDiffTensor", "RWDiffTensor", "IRWDiffTensor", "DiffTensorView")


class BwdsFunction:
    """The backward of a Function: call it as fn.bwds(args..., dresult)."""

    def __init__(self, fn):
        self._fn = fn

    def __repr__(self):
        return f"<shadegrad backward of {self._fn.name}>"

    def _launch_kernel_backward(self, args, kwargs):
        """SlangPy's `kernel.bwds(args..., _thread_count=N)` of a [Differentiable] [CUDAKernel]
        function: its backward kernel launched over N threads (1-D), as slangtorch's `.bwd`; a
        `diff_pair(values, grad)` binds a DiffTensorView to its values and gradient tensors."""
        import torch

        kwargs = dict(kwargs)
        count = kwargs.pop("_thread_count", None)  # a function that takes views: once, or per sg.grid element
        fn = self._fn
        leaves = [(name, kind, dtype) for name, kind, dtype in fn._coop_params() if kind in RESULTS]
        result = (leaves[0][1], leaves[0][2]) if len(leaves) == 1 and leaves[0][0] == "_result" else None
        if leaves and result is None:
            # A struct result: the gradient of each field that carries one, as a dict of fields.
            n_params = len([p for p in fn._coop_params() if p[1] not in (*RESULTS, KIND.struct_field)])
            if "_result_grad" in kwargs:
                dresult = kwargs.pop("_result_grad")
            elif len(args) + len(kwargs) > n_params:
                *args, dresult = args
            else:
                dresult = None
            for name, kind, dtype in leaves:
                if kind != KIND.diff_result:
                    continue
                g = dresult
                for key in name[len("_result:"):].split("."):
                    if not isinstance(g, dict) or key not in g:
                        raise TypeError(f"{fn.name}.bwds(): the gradient of the result's field "
                                        f"'{name[len('_result:'):]}' is missing (pass a dict of the fields' gradients "
                                        "as the last argument)")
                    g = g[key]
                kwargs[name] = g.detach().clone() if isinstance(g, torch.Tensor) else \
                    torch.tensor(g, dtype=getattr(torch, dtype), device=_values._device(fn.device_type, fn.device_index))
        if result is not None:
            # A function that takes views and returns a value: the gradient of its results, as the
            # last positional argument, `_result_grad=`, or a `_result=` tensor's .grad (copied:
            # the backward consumes it).
            n_params = len([p for p in fn._coop_params() if p[1] not in (*RESULTS, KIND.struct_field)])
            if "_result_grad" in kwargs:
                dresult = kwargs.pop("_result_grad")
            elif "_result" in kwargs:
                dresult = getattr(kwargs.pop("_result"), "grad", None)
                if dresult is None:
                    raise TypeError(f"{fn.name}.bwds(): _result= must hold the result's gradient in .grad")
            elif len(args) + len(kwargs) > n_params:
                *args, dresult = args
            else:
                dresult = None
            if result[0] == KIND.diff_result:
                if dresult is None:
                    raise TypeError(f"{fn.name}.bwds(): the gradient of the result is missing (pass it as the last "
                                    "argument)")
                if isinstance(dresult, torch.Tensor):
                    dresult = dresult.detach().clone()
                else:
                    dresult = torch.tensor(dresult, dtype=getattr(torch, result[1]),
                                           device=_values._device(fn.device_type, fn.device_index))
                kwargs["_result"] = dresult

        def unpair(v):
            if isinstance(v, _values.DiffPair):
                return (v.primal, v.grad) if v.grad is not None else v.primal
            if isinstance(v, dict):  # a struct's fields
                return {k: unpair(x) for k, x in v.items()}
            return v

        args = tuple(unpair(a) for a in args)
        kwargs = {k: unpair(v) for k, v in kwargs.items()}
        self._fn._launch(args, kwargs, (), (), count, 1)
        return None

    def __call__(self, *args, **kwargs):
        import torch

        fn = self._fn
        if "_thread_count" in kwargs or fn._view_function:
            return self._launch_kernel_backward(args, kwargs)
        params = fn.parameters  # [(name, dir, type name)]
        defaults = fn.parameter_defaults  # {name: source text} of those that may be left out
        args = list(args)
        dresult = None
        if fn.returns_value:
            if isinstance(kwargs.get("_result"), _tensor.Tensor):
                kwargs["_result_grad"] = kwargs.pop("_result")  # SlangPy's form: the result Tensor, with grads
            elif "_result" in kwargs:
                # Another result container, whose .grad holds the result's gradient.
                result = kwargs.pop("_result")
                dresult = getattr(result, "grad", None)
                if dresult is not None and not isinstance(dresult, torch.Tensor) and hasattr(dresult, "to_torch"):
                    dresult = dresult.to_torch()
                if dresult is None:
                    raise TypeError(f"{fn.name}.bwds(): _result= must hold the result's gradient in .grad")
            if "_result_grad" in kwargs:
                dresult = kwargs.pop("_result_grad")
            elif args and len(args) > len([p for p in params if p[0] not in kwargs and p[0] not in defaults]):
                dresult = args.pop()  # the last positional argument, once the required ones are there
            if dresult is None:
                raise TypeError(f"{fn.name}.bwds(): the gradient of the result is missing (pass it as the last argument)")
        device = fn.device_type, fn.device_index
        pairs = []  # (DiffPair, tensor)
        outputs, grads = [], []

        tensors = []  # (sg.Tensor, the leaf tensor whose .grad goes to its grad_out)

        def convert(value, direction, name, type_name=""):
            if isinstance(value, _tensor.Tensor):
                return _tensor_arg(fn.name, value, direction, name, tensors, outputs, grads)
            if isinstance(value, _values.DiffPair) and isinstance(value.primal, torch.Tensor):
                return tensor_pair(value, direction, type_name)
            if isinstance(value, _values.DiffPair):
                if direction == "out":
                    if value.grad is None:
                        raise TypeError(f"{fn.name}.bwds(): an out parameter's diffPair needs d (its incoming gradient)")
                    d = _values.value_to_tensor(value.grad, value._sg_scalar_name, *device)
                    t = torch.zeros_like(d)  # its value is not read: only its gradient
                    outputs.append(t)
                    grads.append(d)
                    pairs.append((value, None))
                    return t
                primal = value.primal
                if isinstance(primal, int) and not isinstance(primal, bool) and value._sg_scalar_name is None:
                    primal = float(primal)  # only floating-point values have derivatives
                if isinstance(primal, (list, tuple)) and value._sg_scalar_name is None:
                    primal = [float(x) for x in primal]  # an array of numbers: its gradient is floats too
                t = _values.value_to_tensor(primal, value._sg_scalar_name, *device)
                if value.needs_grad and t.is_floating_point():
                    t.requires_grad_(True)
                pairs.append((value, t))
                if direction != "inout" or not t.requires_grad:
                    return t
                # inout: d is the gradient of the value after the call; the gradient computed
                # for the tensor is the one of its value before the call.
                if value.grad is None:
                    raise TypeError(f"{fn.name}.bwds(): an inout parameter's diffPair needs d (the gradient of "
                                    "its value after the call)")
                outputs.append(t)
                grads.append(_values.value_to_tensor(value.grad, value._sg_scalar_name, *device).to(t.dtype))
                return t
            if isinstance(value, dict):
                return {k: convert(v, direction, name, type_name) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [convert(v, direction, name, type_name) for v in value]
            return value

        def tensor_pair(value, direction, type_name):
            # diff_pair(primal, grad) of torch tensors: a written parameter's grad is its incoming
            # gradient; a read one's gradient is added into grad (when grad is a tensor).
            written = direction == "out" or any(type_name.startswith(k) for k in WRITTEN_TENSORS)
            if written:
                if not isinstance(value.grad, torch.Tensor):
                    raise TypeError(f"{fn.name}.bwds(): a diff_pair for a parameter the function writes needs its "
                                    "incoming gradient as a tensor (diff_pair(output, output_grad))")
                t = value.primal.detach().clone()  # its values are not read: only its gradient
                outputs.append(t)
                grads.append(value.grad)
                return t
            t = value.primal.detach().requires_grad_(value.needs_grad and value.primal.is_floating_point())
            pairs.append((value, t))
            return t

        directions = {p[0]: p[1] for p in params}
        types = {p[0]: p[2] for p in params}
        call_args = [convert(a, *((params[i][1], params[i][0], params[i][2]) if i < len(params) else ("in", "?", "")))
                     for i, a in enumerate(args)]
        call_kwargs = {k: convert(v, directions.get(k, "in"), k, types.get(k, "")) for k, v in kwargs.items()}
        result_grads = []
        if isinstance(dresult, _tensor.Tensor):
            # A result Tensor: its grad_in is the gradient of the result (leaves in field order).
            if dresult.grad_in is None:
                raise TypeError(f"{fn.name}.bwds(): the result Tensor has no grad_in (the gradient of the result); "
                                "attach one with .with_grads() or set .grad_in")
            result_grads.extend(_tensor.leaf_tensors(dresult.grad_in))
        elif dresult is not None:
            result_grads.append(dresult if isinstance(dresult, torch.Tensor) else _values.value_to_tensor(dresult, None, *device))
        computed = fn._backward(tuple(call_args), call_kwargs, result_grads, list(zip(outputs, grads)))
        if computed is None:
            if dresult is not None:
                raise TypeError(f"{fn.name}.bwds(): no argument takes part in differentiation")
            computed = []
        # The gradients by tensor (a tensor bound to two parameters gets the sum of both).
        by_tensor = {}
        for t, g in computed:
            if id(t) in by_tensor:
                by_tensor[id(t)] = (t, by_tensor[id(t)][1] + g)
            else:
                by_tensor[id(t)] = (t, g)
        own = {id(t) for _, t in pairs if t is not None}
        for pair, t in pairs:
            if t is None:
                continue
            g = by_tensor.get(id(t))
            if isinstance(pair.primal, torch.Tensor) and isinstance(pair.grad, torch.Tensor):
                if g is not None:  # diff_pair(x, x_grad): accumulated into the caller's buffer
                    pair.grad.add_(g[1].reshape(pair.grad.shape).to(pair.grad.dtype))
                continue
            pair.grad = _values.tensor_to_value(g[1] if g is not None else torch.zeros_like(t), pair.primal)
        # The caller's own tensors that require grad: their gradients flow as autograd's would
        # (accumulated into a leaf's .grad, through a non-leaf's history).
        theirs = [(t, g) for key, (t, g) in by_tensor.items() if key not in own]
        if theirs:
            torch.autograd.backward([t for t, _ in theirs], [g for _, g in theirs])
        # sg.Tensors: the gradient of each accumulates into its grad_out.
        for value, leaf in tensors:
            if leaf.grad is not None:
                with torch.no_grad():
                    value.grad_out.to_torch().add_(leaf.grad)
        return None


def _tensor_arg(fname, value, direction, name, tensors, outputs, grads):
    """What an sg.Tensor argument of a backward call binds as. With grad_out (an `in` or `inout`
    parameter) it is a fresh leaf over its storage that requires grad, whose gradient goes to
    grad_out; an `out` or `inout` parameter reads the gradient of its value after the call from
    grad_in. Without gradients it is its storage, and gets none."""
    import torch

    where = f"{fname}.bwds(): parameter '{name}'"
    if direction == "in" and value.grad_out is None:
        return value._sg_arg
    if direction != "in":
        if value.grad_in is None:
            raise TypeError(f"{where} is {direction}: its Tensor needs grad_in (the gradient of its value after the "
                            "call); attach one with .with_grads()")
        if direction == "inout" and value.grad_out is value.grad_in:
            raise ValueError(f"{where} is an inout param whose Tensor has one Tensor as grad_in and grad_out; pass "
                             "separate ones: .with_grads(grad_in=..., grad_out=...)")
    storage = value.to_torch()
    if direction == "out":
        leaf = torch.zeros_like(storage)  # its value is not read: only its gradient
    else:
        if not storage.is_floating_point():
            raise TypeError(f"{where}: a Tensor of {value.dtype.name} has no gradient")
        leaf = storage.detach().requires_grad_(value.grad_out is not None)
        if value.grad_out is not None:
            tensors.append((value, leaf))
    if direction != "in":
        outputs.append(leaf)
        grads.append(value.grad_in.to_torch())
    return leaf
