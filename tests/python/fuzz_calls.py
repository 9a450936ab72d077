# tests/python/fuzz_calls.py — a differential call fuzzer: random differentiable elementwise
# kernels called through shadegrad on random arguments, each call compared in value and gradient
# with the same expression evaluated by torch in float64.
#
# What varies is drawn from tables, so that new value kinds and dtypes are one entry each:
#   DTYPES         scalar types (torch dtype, kernel-language name, tolerances, whether enabled)
#   UNARY/BINARY   the expression grammar's operators and intrinsics, each with its torch twin
#   ARG_KINDS      how an argument is made: a layout of a leaf tensor (contiguous, transposed,
#                  sliced, expanded, offset), a 0-d tensor, or a Python scalar
#   RESULT_MODES   how the result comes back: returned, or written to an `out` parameter
# A case (one call) is a plain dict, so a failing one is shrunk (smaller expression, smaller
# shapes, simpler layouts) and stored in fuzz_regressions.json, which pytest replays.
#
# Compilation dominates the cost, so every generated module is called many times with other
# shapes, layouts, requires_grad masks and grad modes (the kernel cache serves repeats).
#
#   python tests/python/fuzz_calls.py --calls 2000 [--seed N] [--save]   (a random seed if none)
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

REGRESSIONS = Path(__file__).with_name("fuzz_regressions.json")


# ---------------------------------------------------------------- tables

@dataclass(frozen=True)
class DType:
    name: str
    torch: torch.dtype
    slang: str
    rtol: float
    atol: float
    enabled: Callable[[], bool] = lambda: True


DTYPES = {
    "float32": DType("float32", torch.float32, "float", 2e-4, 2e-5),
    "float64": DType("float64", torch.float64, "double", 1e-9, 1e-11),
    # Enabled once the scalar-type work makes `half` parameters bind float16 tensors.
    "float16": DType("float16", torch.float16, "half", 2e-2, 2e-3, enabled=lambda: False),
}

# Operators and intrinsics: (kernel-language template, torch function). Arguments stay in a
# range where every entry is smooth (divisions and logarithms see 1 + a*a, never 0).
UNARY = {
    "neg": ("(-{0})", lambda a: -a),
    "sin": ("sin({0})", torch.sin),
    "cos": ("cos({0})", torch.cos),
    "tanh": ("tanh({0})", torch.tanh),
    "exp": ("exp({0})", torch.exp),
    "softlog": ("log(1.0 + {0} * {0})", lambda a: torch.log(1.0 + a * a)),
    "softsqrt": ("sqrt(1.0 + {0} * {0})", lambda a: torch.sqrt(1.0 + a * a)),
    "softrcp": ("rcp(1.0 + {0} * {0})", lambda a: 1.0 / (1.0 + a * a)),
    "atan": ("atan({0})", torch.atan),
}
BINARY = {
    "add": ("({0} + {1})", lambda a, b: a + b),
    "sub": ("({0} - {1})", lambda a, b: a - b),
    "mul": ("({0} * {1})", lambda a, b: a * b),
    "softdiv": ("({0} / (1.0 + {1} * {1}))", lambda a, b: a / (1.0 + b * b)),
    "lerp": ("lerp({0}, {1}, 0.25)", lambda a, b: a + 0.25 * (b - a)),
    "fma": ("fma({0}, {1}, {0})", lambda a, b: a * b + a),
}
# Leaves: a parameter ("x0"...) or a constant.
CONSTANTS = [0.5, 2.0, -1.5]


@dataclass(frozen=True)
class ArgKind:
    """How one argument is made from its values. `layout(leaf, spec)` returns the tensor the
    call sees, built from the leaf by differentiable torch ops where the layout allows it (so
    that gradients flow back to the leaf); `scalar` kinds pass a Python number."""
    name: str
    tensor: bool = True
    differentiable: bool = True   # gradients can be asked for through it
    vectors: bool = True          # usable for vector parameters
    expand: bool = False          # extent-1 dims become stride-0 (expand) instead of size 1


def apply_layout(kind: str, leaf: torch.Tensor, spec: dict) -> torch.Tensor:
    """The argument tensor of kind `kind` with the values of `leaf`, differentiable w.r.t. it."""
    if kind == "contiguous":
        return leaf
    if kind == "transposed":
        n = spec["call_rank"]
        if n < 2:
            return leaf
        order = list(range(n))[::-1] + list(range(n, leaf.dim()))
        # A differentiable permute of a permuted copy: same values, reversed strides.
        return leaf.permute(*order).contiguous().permute(*order)
    if kind == "sliced":
        if leaf.dim() == 0 or spec["call_rank"] < 1:
            return leaf
        big = torch.repeat_interleave(leaf, 2, dim=0)
        return big[::2]
    if kind == "offset":
        flat = torch.cat([torch.zeros(7, dtype=leaf.dtype), leaf.reshape(-1)])
        return flat[7:].view(leaf.shape)
    if kind == "expanded":
        return leaf.expand(list(spec["shape"]))
    if kind == "zero_dim":
        return leaf
    raise ValueError(kind)


ARG_KINDS = {
    "contiguous": ArgKind("contiguous"),
    "transposed": ArgKind("transposed"),
    "sliced": ArgKind("sliced"),
    "offset": ArgKind("offset"),
    "expanded": ArgKind("expanded", expand=True),
    "zero_dim": ArgKind("zero_dim", vectors=False),
    "scalar": ArgKind("scalar", tensor=False, differentiable=False, vectors=False),
}

RESULT_MODES = ["return", "out"]


# ---------------------------------------------------------------- expressions

def random_expr(rng: random.Random, n_vars: int, depth: int):
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.85:
            return ["var", rng.randrange(n_vars)]
        return ["const", rng.choice(CONSTANTS)]
    if rng.random() < 0.4:
        return ["unary", rng.choice(sorted(UNARY)), random_expr(rng, n_vars, depth - 1)]
    return ["binary", rng.choice(sorted(BINARY)), random_expr(rng, n_vars, depth - 1), random_expr(rng, n_vars, depth - 1)]


def expr_source(e, slang_type: str) -> str:
    if e[0] == "var":
        return f"x{e[1]}"
    if e[0] == "const":
        return f"{slang_type}({e[1]!r})"
    if e[0] == "unary":
        return UNARY[e[1]][0].format(expr_source(e[2], slang_type))
    return BINARY[e[1]][0].format(expr_source(e[2], slang_type), expr_source(e[3], slang_type))


def expr_torch(e, xs):
    if e[0] == "var":
        return xs[e[1]]
    if e[0] == "const":
        return torch.tensor(e[1], dtype=torch.float64)
    if e[0] == "unary":
        return UNARY[e[1]][1](expr_torch(e[2], xs))
    return BINARY[e[1]][1](expr_torch(e[2], xs), expr_torch(e[3], xs))


def expr_size(e) -> int:
    return 1 if e[0] in ("var", "const") else 1 + sum(expr_size(c) for c in e[2:])


def expr_vars(e) -> set:
    if e[0] == "var":
        return {e[1]}
    if e[0] == "const":
        return set()
    return set().union(*(expr_vars(c) for c in e[2:]))


def module_source(kernel: dict) -> str:
    """The kernel-language source of a generated kernel: one function `f`."""
    dt = DTYPES[kernel["dtype"]]
    elem = dt.slang if kernel["width"] == 1 else f"vector<{dt.slang}, {kernel['width']}>"
    params = ", ".join(f"{elem} x{i}" for i in range(kernel["n_vars"]))
    body = expr_source(kernel["expr"], dt.slang)
    if kernel["width"] > 1:
        body = body.replace(f"{dt.slang}(", f"{elem}(")  # constants splat to vectors
    if kernel["result"] == "out":
        return f"void f({params}, out {elem} r)\n{{\n    r = {body};\n}}\n"
    return f"[Differentiable]\n{elem} f({params})\n{{\n    return {body};\n}}\n"


# ---------------------------------------------------------------- cases

def random_kernel(rng: random.Random, index: int) -> dict:
    dtypes = [d for d in DTYPES.values() if d.enabled()]
    n_vars = rng.randint(1, 3)
    return {
        "id": index,
        "dtype": rng.choice(dtypes).name,
        "width": rng.choice([1, 1, 3]),
        "n_vars": n_vars,
        "expr": random_expr(rng, n_vars, rng.randint(1, 3)),
        "result": "out" if rng.random() < 0.15 else "return",
    }


def random_signature(rng: random.Random, kernel: dict) -> dict:
    """What the call key of a call holds (and so what makes a compiled kernel): the call rank,
    each argument's kind, rank and extent-1 dims, and the requires_grad masks to draw from.
    Calls of one signature differ in extents, values, layouts' strides and grad mode only, so
    that they reuse its kernels."""
    rank = rng.randint(0, 3)
    kinds = []
    for _ in range(kernel["n_vars"]):
        options = [n for n, k in ARG_KINDS.items() if kernel["width"] == 1 or k.vectors]
        if kernel["result"] == "out":
            options = [n for n in options if n != "zero_dim"]
        kinds.append(rng.choice(options))
    # A call of call dimensionality 0 returns a Python value, not a tensor (docs/calling.md): the fuzzer
    # keeps one tensor argument spanning a call rank >= 1 so that results are tensors.
    if all(k in ("scalar", "zero_dim") for k in kinds):
        kinds[0] = "contiguous"
    rank = max(rank, 1)
    first_tensor = next(i for i, k in enumerate(kinds) if k not in ("scalar", "zero_dim"))
    args = []
    for i, kind in enumerate(kinds):
        dims = 0 if kind in ("scalar", "zero_dim") else (rng.randint(0, rank) if rng.random() < 0.3 else rank)
        if i == first_tensor:
            dims = rank
        ones = [rng.random() < 0.25 and i != first_tensor for _ in range(dims)]
        args.append({"kind": kind, "dims": dims, "ones": ones})
    grad_capable = [kernel["result"] == "return" and ARG_KINDS[k].differentiable for k in kinds]
    masks = [[c and rng.random() < 0.6 for c in grad_capable] for _ in range(2)]
    return {"rank": rank, "args": args, "masks": masks}


def random_call(rng: random.Random, kernel: dict, signature: dict) -> dict:
    """One call of `kernel` with `signature`: extents, values and grad mode drawn."""
    rank = signature["rank"]
    call_shape = [rng.choice([2, 3, 5, 8]) for _ in range(rank)]
    mask = rng.choice(signature["masks"])
    args = []
    for i, s in enumerate(signature["args"]):
        if s["kind"] == "scalar":
            args.append({"kind": "scalar", "shape": [], "requires_grad": False, "value": rng.uniform(-1, 1)})
            continue
        shape = [1 if one else e for one, e in zip(s["ones"], call_shape[rank - s["dims"]:])]
        args.append({"kind": s["kind"], "shape": shape, "requires_grad": bool(mask[i])})
    return {
        "kernel": kernel,
        "call_shape": call_shape,
        "args": args,
        "grad_mode": rng.random() < 0.8,
        "value_seed": rng.randrange(1 << 30),
    }


class CaseFailure(Exception):
    pass


class Runner:
    """Loads each generated module once per device and runs cases on it."""

    def __init__(self, sg, device_type: str = "cpu"):
        self.sg = sg
        self.device_type = device_type
        self.device = sg.create_torch_device(type=getattr(sg.DeviceType, device_type))
        self.modules = {}
        self.calls = 0

    def module(self, kernel: dict):
        source = module_source(kernel)
        if source not in self.modules:
            self.modules[source] = self.sg.Module.load_from_source(self.device, f"fuzz{len(self.modules)}", source)
        return self.modules[source]

    def run(self, case: dict) -> None:
        """Raises CaseFailure with a description when shadegrad and torch disagree."""
        kernel = case["kernel"]
        dt = DTYPES[kernel["dtype"]]
        width = kernel["width"]
        gen = torch.Generator().manual_seed(case["value_seed"])
        leaves, sg_args, ref_args, ref_leaves = [], [], [], []
        for a in case["args"]:
            if a["kind"] == "scalar":
                value = a["value"]
                sg_args.append(value)
                ref_args.append(torch.tensor(value, dtype=torch.float64))
                leaves.append(None)
                ref_leaves.append(None)
                continue
            elem = [] if width == 1 else [width]
            spec = {"call_rank": len(a["shape"]), "shape": a["shape"] + elem}
            leaf_shape = a["shape"] + elem
            if a["kind"] == "expanded":
                leaf_shape = [1 if e > 1 and k % 2 == 0 else e for k, e in enumerate(a["shape"])] + elem
            values = torch.rand(leaf_shape, generator=gen, dtype=torch.float64) * 2 - 1
            leaf = values.to(dt.torch).requires_grad_(a["requires_grad"])
            ref_leaf = leaf.detach().to(torch.float64).requires_grad_(a["requires_grad"])
            arg = apply_layout(a["kind"], leaf, spec)
            ref = apply_layout(a["kind"], ref_leaf, spec)
            if not a["requires_grad"]:
                arg = arg.detach()
            arg = arg.to(self.device_type)
            sg_args.append(arg)
            ref_args.append(ref)
            leaves.append(leaf if a["requires_grad"] else None)
            ref_leaves.append(ref_leaf if a["requires_grad"] else None)

        # Reference: the expression in float64, broadcast like the call (whose shape is the
        # broadcast of the arguments' call dims).
        call_shape = list(torch.broadcast_shapes(*[tuple(a["shape"]) for a in case["args"]]))
        shape = call_shape + ([] if width == 1 else [width])
        ref_out = torch.broadcast_to(expr_torch(kernel["expr"], ref_args), shape)

        m = self.module(kernel)
        self.calls += 1
        try:
            if kernel["result"] == "out":
                r = torch.full(shape, float("nan"), dtype=dt.torch, device=self.device_type)
                m.f(*sg_args, r)
                out = r
            elif case["grad_mode"]:
                out = m.f(*sg_args)
            else:
                with torch.no_grad():
                    out = m.f(*sg_args)
        except Exception as e:  # noqa: BLE001 - any error is a finding
            raise CaseFailure(f"call raised {type(e).__name__}: {e}") from e
        self._compare("value", out, ref_out, dt)

        wants_grad = case["grad_mode"] and any(l is not None for l in leaves)
        if kernel["result"] == "out" or not case["grad_mode"]:
            if out.grad_fn is not None:
                raise CaseFailure("result has a grad_fn without grad mode")
            return
        if not wants_grad:
            if out.grad_fn is not None:
                raise CaseFailure("result has a grad_fn although no input requires grad")
            return
        if out.grad_fn is None:
            raise CaseFailure("result has no grad_fn although an input requires grad")
        upstream = torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1
        try:
            out.backward(upstream.to(dt.torch).to(self.device_type))
        except Exception as e:  # noqa: BLE001
            raise CaseFailure(f"backward raised {type(e).__name__}: {e}") from e
        if ref_out.requires_grad:  # not when the expression uses no variable that requires grad
            ref_out.backward(upstream)
        for i, (leaf, ref_leaf) in enumerate(zip(leaves, ref_leaves)):
            if leaf is None:
                continue
            if leaf.grad is None:
                raise CaseFailure(f"x{i}: no gradient")
            # torch leaves the gradient of an unused variable undefined; shadegrad's is zero.
            ref_grad = ref_leaf.grad if ref_leaf.grad is not None else torch.zeros_like(ref_leaf)
            self._compare(f"gradient of x{i}", leaf.grad, ref_grad, dt)

    @staticmethod
    def _compare(what, got, ref, dt):
        got64 = got.detach().to("cpu", torch.float64)
        if tuple(got64.shape) != tuple(ref.shape):
            raise CaseFailure(f"{what}: shape {tuple(got64.shape)}, expected {tuple(ref.shape)}")
        scale = max(1.0, float(ref.detach().abs().max())) if ref.numel() else 1.0
        ok = torch.isclose(got64, ref.detach(), rtol=dt.rtol, atol=dt.atol * scale)
        if not bool(ok.all()):
            bad = (~ok).nonzero()[0].tolist()
            raise CaseFailure(
                f"{what}: at {bad} got {got64[tuple(bad)].item()!r}, expected {ref[tuple(bad)].item()!r} "
                f"({int((~ok).sum())} of {ok.numel()} differ)"
            )


# ---------------------------------------------------------------- shrinking

def _subtrees(e):
    if e[0] in ("var", "const"):
        return
    for c in e[2:]:
        yield c
    for k in range(2, len(e)):
        for s in _shrunk_exprs(e[k]):
            yield e[:k] + [s] + e[k + 1:]


def _shrunk_exprs(e):
    yield from _subtrees(e)


def shrink(case: dict, fails: Callable[[dict], bool], budget: int = 200) -> dict:
    """A smaller case that still fails: expression subtrees replace their parents, call
    dimensions and extents shrink, layouts become contiguous, masks and grad mode simplify."""
    def candidates(c):
        k = c["kernel"]
        for e in _shrunk_exprs(k["expr"]):
            if expr_vars(e):
                yield {**c, "kernel": {**k, "expr": e}}
        for d in range(len(c["call_shape"])):
            if c["call_shape"][d] > 1:
                smaller = [2 if j == d and c["call_shape"][d] > 2 else (1 if j == d else x) for j, x in enumerate(c["call_shape"])]
                yield _with_call_shape(c, smaller)
        if c["call_shape"]:
            yield _drop_leading_dim(c)
        for i, a in enumerate(c["args"]):
            if a["kind"] not in ("contiguous", "scalar", "zero_dim"):
                yield _with_arg(c, i, {**a, "kind": "contiguous"})
            if a["requires_grad"] and sum(x["requires_grad"] for x in c["args"]) > 1:
                yield _with_arg(c, i, {**a, "requires_grad": False})
        if k["width"] > 1:
            yield {**c, "kernel": {**k, "width": 1}}

    best = case
    tries = 0
    progress = True
    while progress and tries < budget:
        progress = False
        for cand in candidates(best):
            tries += 1
            if tries >= budget:
                break
            if fails(cand):
                best = cand
                progress = True
                break
    return best


def _with_arg(c, i, a):
    args = list(c["args"])
    args[i] = a
    return {**c, "args": args}


def _with_call_shape(c, shape):
    rank = len(shape)
    args = []
    for a in c["args"]:
        n = len(a["shape"])
        if a["kind"] in ("scalar", "zero_dim"):
            args.append(a)
            continue
        new = [min(e, shape[rank - n + j]) for j, e in enumerate(a["shape"])]
        args.append({**a, "shape": new})
    return {**c, "call_shape": shape, "args": args}


def _drop_leading_dim(c):
    args = []
    for a in c["args"]:
        if a["kind"] not in ("scalar", "zero_dim") and len(a["shape"]) == len(c["call_shape"]):
            a = {**a, "shape": a["shape"][1:]}
        args.append(a)
    return {**c, "call_shape": c["call_shape"][1:], "args": args}


# ---------------------------------------------------------------- driver

def generate_cases(seed: int, calls: int, calls_per_kernel: int = 250):
    """`calls` cases, `calls_per_kernel` for each random kernel; each kernel gets two call
    signatures, so that its compiled plans are reused (compilation dominates the cost)."""
    rng = random.Random(seed)
    produced = 0
    index = 0
    while produced < calls:
        kernel = random_kernel(rng, index)
        index += 1
        signatures = [random_signature(rng, kernel) for _ in range(2)]
        for _ in range(min(calls_per_kernel, calls - produced)):
            yield random_call(rng, kernel, rng.choice(signatures))
            produced += 1


def fuzz(sg, seed: int, calls: int, device: str = "cpu", save: bool = False, log=print) -> list:
    """Runs `calls` random cases; returns the shrunk failing cases (saved when `save`)."""
    runner = Runner(sg, device)
    failures = []
    start = time.time()
    for case in generate_cases(seed, calls):
        try:
            runner.run(case)
        except CaseFailure as e:
            def fails(c):
                try:
                    runner.run(c)
                    return False
                except CaseFailure:
                    return True
            small = shrink(case, fails)
            try:
                runner.run(small)
                message = str(e)
            except CaseFailure as e2:
                message = str(e2)
            small["failure"] = message
            small["source"] = module_source(small["kernel"])
            failures.append(small)
            log(f"FAIL (seed {seed}): {message}\n{small['source']}{json.dumps(small)}")
    log(f"fuzz_calls: seed {seed}: {runner.calls} calls ({calls} cases, {len(runner.modules)} modules) on {device} "
        f"in {time.time() - start:.1f} s, {len(failures)} failures")
    if save and failures:
        save_regressions(failures)
    return failures


def load_regressions() -> list:
    if not REGRESSIONS.exists():
        return []
    return json.loads(REGRESSIONS.read_text())


def save_regressions(cases: list) -> None:
    known = load_regressions()
    keys = {json.dumps({k: v for k, v in c.items() if k != "failure"}, sort_keys=True) for c in known}
    for c in cases:
        key = json.dumps({k: v for k, v in c.items() if k != "failure"}, sort_keys=True)
        if key not in keys:
            known.append(c)
            keys.add(key)
    REGRESSIONS.write_text(json.dumps(known, indent=1) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=None, help="default: a random seed (printed)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--save", action="store_true", help=f"append shrunk failures to {REGRESSIONS.name}")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    print(f"fuzz_calls: seed {seed}")
    import shadegrad

    failures = fuzz(shadegrad, seed, args.calls, args.device, args.save)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
