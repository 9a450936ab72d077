# python/shadegrad/_bwds.py — fn.bwds: the explicit backward call (SlangPy's `func.bwds(...)`).
#
# Differentiable arguments come as diffPair(p, d) (the gradient lands in .grad) or as torch
# tensors that require grad (the gradient accumulates into .grad, as torch does); for a function
# with a result, its gradient is the last positional argument (parameters with defaults may be
# left out before it); an `out` parameter takes a
# diffPair whose `d` is its incoming gradient, an `inout` one a diffPair whose `d` is the gradient
# of its value after the call and becomes that of its value before the call. The call runs the forward under autograd and then
# the generated backward kernel through torch.autograd.backward, so the gradients are exactly
# those of the forward call's autograd node.
"""fn.bwds: explicit backward calls."""

from __future__ import annotations

from . import _values


class BwdsFunction:
    """The backward of a Function: call it as fn.bwds(args..., dresult)."""

    def __init__(self, fn):
        self._fn = fn

    def __repr__(self):
        return f"<shadegrad backward of {self._fn.name}>"

    def __call__(self, *args, **kwargs):
        import torch

        fn = self._fn
        params = fn.parameters  # [(name, dir, type name)]
        defaults = fn.parameter_defaults  # {name: source text} of those that may be left out
        args = list(args)
        dresult = None
        if fn.returns_value:
            if "_result_grad" in kwargs:
                dresult = kwargs.pop("_result_grad")
            elif args and len(args) > len([p for p in params if p[0] not in kwargs and p[0] not in defaults]):
                dresult = args.pop()  # the last positional argument, once the required ones are there
            if dresult is None:
                raise TypeError(f"{fn.name}.bwds(): the gradient of the result is missing (pass it as the last argument)")
        device = fn.device_type, fn.device_index
        pairs = []  # (DiffPair, tensor)
        outputs, grads = [], []

        def convert(value, direction):
            if isinstance(value, _values.DiffPair):
                if direction == "out":
                    if value.grad is None:
                        raise TypeError(f"{fn.name}.bwds(): an out parameter's diffPair needs d (its incoming gradient)")
                    d = _values.value_to_tensor(value.grad, value._sg_scalar_name, *device)
                    t = torch.zeros_like(d)
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
                if direction != "inout":
                    return t
                if not t.requires_grad:
                    return t.clone()  # written by the call; the pair's tensor stays a leaf
                # inout: d is the gradient of the value after the call; the call writes a copy
                # of the primal (the node takes the copy's old value as its input), and the
                # gradient that reaches the primal is the one of the value before the call.
                if value.grad is None:
                    raise TypeError(f"{fn.name}.bwds(): an inout parameter's diffPair needs d (the gradient of "
                                    "its value after the call)")
                written = t.clone()
                outputs.append(written)
                grads.append(_values.value_to_tensor(value.grad, value._sg_scalar_name, *device).to(t.dtype))
                return written
            if isinstance(value, dict):
                return {k: convert(v, direction) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [convert(v, direction) for v in value]
            return value

        directions = {p[0]: p[1] for p in params}
        call_args = [convert(a, params[i][1] if i < len(params) else "in") for i, a in enumerate(args)]
        call_kwargs = {k: convert(v, directions.get(k, "in")) for k, v in kwargs.items()}
        with torch.enable_grad():
            result = fn(*call_args, **call_kwargs)
        if dresult is not None:
            if not isinstance(result, torch.Tensor):
                raise TypeError(f"{fn.name}.bwds(): no argument takes part in differentiation")
            g = dresult if isinstance(dresult, torch.Tensor) else _values.value_to_tensor(dresult, None, *device)
            outputs.insert(0, result)
            grads.insert(0, g.to(result.dtype).expand_as(result) if g.dim() <= result.dim() else g)
        live = [(o, g) for o, g in zip(outputs, grads) if o.requires_grad]
        if live:
            torch.autograd.backward([o for o, _ in live], [g for _, g in live])
        for pair, t in pairs:
            if t is None:
                continue
            if t.grad is None:
                pair.grad = _values.tensor_to_value(torch.zeros_like(t), pair.primal)
            else:
                pair.grad = _values.tensor_to_value(t.grad, pair.primal)
        return None
