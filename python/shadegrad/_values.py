# python/shadegrad/_values.py — the Python value kinds of the call API (SlangPy's names): value
# types (float3, int2, float2x2, ...), generators (call_id, thread_id, wang_hash, rand_float),
# value references (ValueRef, floatRef, intRef), differential pairs (diffPair), and the helpers
# the core calls for the kinds that need Python: numpy arrays, refs and results returned as
# Python values. VALUE_KINDS at the end registers them with the core, one row per kind; the core
# recognises these classes and reads their attributes; nothing here runs for calls whose
# arguments are torch tensors and Python scalars.
"""Value types, generators, references and diff pairs of the shadegrad call API."""

from __future__ import annotations

import math
from typing import NamedTuple

# lang::ScalarKind codes (src/lang/types.h): the core reads `_sg_scalar` as one of these.
SCALAR_CODES = {"bool": 0, "int": 3, "uint": 7, "float": 10, "double": 11, "half": 9, "int64_t": 4}
_SCALAR_NAMES = {v: k for k, v in SCALAR_CODES.items()}
_COMPONENTS = "xyzw"


def _coerce(scalar: str, v):
    if scalar == "bool":
        return bool(v)
    if scalar in ("int", "uint", "int64_t"):
        return int(v)
    return float(v)


class _ValueTypeMeta(type):
    """help() documents the methods all value types share once, on ValueType: dir() of a generated
    class (sg.float3, ...) lists only its own names. dir() of a value is unchanged."""

    def __dir__(cls):
        if "_sg_generated" in cls.__dict__:
            return sorted(set(cls.__dict__) - {"_sg_generated"})
        return super().__dir__()


class ValueType(metaclass=_ValueTypeMeta):
    """A vector or matrix value of the kernel language: sg.float3(1, 2, 3), sg.int2(...),
    sg.float2x2(...), one class per type (float, int, uint, bool, double, half; 2 to 4
    components; matrices of float, double, half from 2x2 to 4x4).

    Constructed from components, row-major (nested lists, other value types and numpy arrays
    are flattened): ``sg.float2x2(1, 2, 3, 4)``, ``sg.float3([1, 2], 3)``. A vector's components
    are .x .y .z .w, and both kinds index (``v[0]``; a matrix's ``m[1]`` is its row as a
    vector), iterate, compare with ``==``, and convert with to_list() and to_numpy(). A value
    type passed to a call binds to a parameter of that type; a call returns one for such a
    result.
    """

    __slots__ = ("_data",)
    _sg_scalar_name = "float"
    _sg_scalar = 10
    _sg_rows = 0
    _sg_cols = 0  # 0: a vector

    def __init__(self, *args):
        n = self._sg_rows * (self._sg_cols or 1)
        flat = []
        for a in args:
            if isinstance(a, ValueType):
                flat.extend(a._data)
            elif hasattr(a, "tolist") and not isinstance(a, (int, float, bool)):
                v = a.tolist()
                flat.extend(_flatten(v) if isinstance(v, list) else [v])
            elif isinstance(a, (list, tuple)):
                flat.extend(_flatten(a))
            else:
                flat.append(a)
        if len(flat) == 1 and n > 1:
            flat = flat * n  # float3(1) == float3(1, 1, 1), as in the kernel language
        if not flat:
            flat = [0] * n
        if len(flat) != n:
            raise ValueError(f"{type(self).__name__} takes {n} components, got {len(flat)}")
        self._data = [_coerce(self._sg_scalar_name, v) for v in flat]

    @property
    def shape(self) -> tuple:
        """(N,) for a vector, (R, C) for a matrix (SlangPy's value types have it too)."""
        return (self._sg_rows, self._sg_cols) if self._sg_cols else (self._sg_rows,)

    # -- components
    def __len__(self):
        return self._sg_rows

    def __getitem__(self, i):
        if self._sg_cols:
            row = self._row_type()
            r = range(self._sg_rows)[i]
            return row(self._data[r * self._sg_cols:(r + 1) * self._sg_cols])
        return self._data[range(self._sg_rows)[i]]

    def __setitem__(self, i, v):
        if self._sg_cols:
            r = range(self._sg_rows)[i]
            self._data[r * self._sg_cols:(r + 1) * self._sg_cols] = [_coerce(self._sg_scalar_name, x) for x in _flatten(v)]
        else:
            self._data[range(self._sg_rows)[i]] = _coerce(self._sg_scalar_name, v)

    def __iter__(self):
        return (self[i] for i in range(self._sg_rows))

    def __getattr__(self, name):
        if not type(self)._sg_cols and len(name) == 1 and name in _COMPONENTS[: type(self)._sg_rows]:
            return self._data[_COMPONENTS.index(name)]
        raise AttributeError(f"{type(self).__name__} has no attribute '{name}'")

    def __setattr__(self, name, v):
        if name in ValueType.__slots__:
            object.__setattr__(self, name, v)
        elif not self._sg_cols and len(name) == 1 and name in _COMPONENTS[: self._sg_rows]:
            self._data[_COMPONENTS.index(name)] = _coerce(self._sg_scalar_name, v)
        else:
            raise AttributeError(f"{type(self).__name__} has no attribute '{name}'")

    def _row_type(self):
        return VALUE_TYPES[f"{self._sg_scalar_name}{self._sg_cols}"]

    # -- conversions
    def to_numpy(self):
        import numpy

        dtype = {"bool": numpy.bool_, "int": numpy.int32, "uint": numpy.uint32, "float": numpy.float32,
                 "double": numpy.float64, "half": numpy.float16, "int64_t": numpy.int64}[self._sg_scalar_name]
        a = numpy.array(self._data, dtype=dtype)
        return a.reshape(self._sg_rows, self._sg_cols) if self._sg_cols else a

    def to_list(self):
        if self._sg_cols:
            return [self._data[r * self._sg_cols:(r + 1) * self._sg_cols] for r in range(self._sg_rows)]
        return list(self._data)

    def __eq__(self, other):
        if isinstance(other, ValueType):
            return type(self) is type(other) and self._data == other._data
        if isinstance(other, (list, tuple)):
            return self._data == _flatten(other)
        return NotImplemented

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    __hash__ = None

    def __repr__(self):
        def fmt(v):
            return repr(v) if not isinstance(v, float) else f"{v:g}" if math.isfinite(v) else repr(v)

        return f"{type(self).__name__}({', '.join(fmt(v) for v in self._data)})"


def _flatten(v):
    out = []
    for x in v:
        if isinstance(x, (list, tuple)):
            out.extend(_flatten(x))
        elif isinstance(x, ValueType):
            out.extend(x._data)
        else:
            out.append(x)
    return out


def _make_type(scalar: str, rows: int, cols: int = 0):
    name = f"{scalar}{rows}" + (f"x{cols}" if cols else "")
    attrs = {"__slots__": (), "_sg_scalar_name": scalar, "_sg_scalar": SCALAR_CODES[scalar], "_sg_rows": rows,
             "_sg_cols": cols, "_sg_generated": True,
             "__doc__": f"The kernel language's {name} as a Python value (see ValueType)."}
    return type(name, (ValueType,), attrs)


def components_tensor(value, device_type: int, device_index: int):
    """A vector value's components as a 1-D torch tensor on the call's device: what a scalar
    parameter of the component type reads it as (one call dimension, as SlangPy does)."""
    import torch

    from ._core import DeviceType

    device = torch.device("cuda", max(device_index, 0)) if device_type == DeviceType.cuda.value else torch.device("cpu")
    return torch.from_numpy(value.to_numpy()).to(device)


VALUE_TYPES = {}
for _s in ("float", "int", "uint", "bool", "double", "half"):
    for _n in (2, 3, 4):
        VALUE_TYPES[f"{_s}{_n}"] = _make_type(_s, _n)
for _s in ("float", "double", "half"):
    for _r in (2, 3, 4):
        for _c in (2, 3, 4):
            VALUE_TYPES[f"{_s}{_r}x{_c}"] = _make_type(_s, _r, _c)


def value_type(scalar_code: int, rows: int, cols: int):
    """The value type class of scalar kind code `scalar_code` with `rows` (and `cols`)."""
    name = _SCALAR_NAMES.get(scalar_code, "float") + str(rows) + (f"x{cols}" if cols else "")
    return VALUE_TYPES.get(name)


# ---------------------------------------------------------------- generators


def _dims(name: str, value) -> int:
    """A generator's number of components: -1 (any, the parameter decides) or 1 to 4."""
    if isinstance(value, bool) or not isinstance(value, int) or not (value == -1 or 1 <= value <= 4):
        raise ValueError(
            f"{name}: expected -1 (any) or a number of components from 1 to 4, got {value!r}"
            + (" (rand_float's third argument is `dim`, as in SlangPy: pass the seed as seed=...)"
               if name == "rand_float: dim" else ""))
    return value


def _seed(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: the seed must be an int, got {type(value).__name__}")
    return int(value) & 0xFFFFFFFF


def _warmup(name: str, value) -> int:
    value = int(value)
    if value < 0:
        raise ValueError(f"{name}: warmup must be 0 or more rounds, got {value}")
    return value


def wang_hash_int(seed: int) -> int:
    """Wang's 32-bit integer hash of `seed` (what hash_seed=True does to a generator's seed)."""
    seed &= 0xFFFFFFFF
    seed = (seed ^ 61) ^ (seed >> 16)
    seed = (seed * 9) & 0xFFFFFFFF
    seed ^= seed >> 4
    seed = (seed * 0x27D4EB2D) & 0xFFFFFFFF
    return seed ^ (seed >> 15)


# SlangPy's default seed of wang_hash and rand_float.
DEFAULT_SEED = 2640457667


class CallIdArg:
    """sg.call_id(dims): the thread's index in the call shape (vectors: .x is the fastest dimension)."""

    def __init__(self, dims: int = -1):
        self.dims = _dims("call_id: dims", dims)

    def __repr__(self):
        return "call_id()" if self.dims == -1 else f"call_id(dims={self.dims})"


class ThreadIdArg:
    """sg.thread_id(dims): the thread's linear index in the call (vectors: (index, 0, 0))."""

    def __init__(self, dims: int = -1):
        self.dims = _dims("thread_id: dims", dims)

    def __repr__(self):
        return "thread_id()" if self.dims == -1 else f"thread_id(dims={self.dims})"


class WangHashArg:
    """sg.wang_hash(dim, seed, warmup, hash_seed): per-thread 32-bit hashes of the thread index
    (SlangPy's generator, with its numbers). `kernel_seed` is the seed the kernel receives: the
    seed hashed once on the host when hash_seed is true."""

    def __init__(self, dims: int = -1, seed: int = DEFAULT_SEED, warmup: int = 0, hash_seed: bool = True):
        self.dims = _dims("wang_hash: dim", dims)
        self.seed = _seed("wang_hash", seed)
        self.warmup = _warmup("wang_hash", warmup)
        self.hash_seed = bool(hash_seed)

    @property
    def kernel_seed(self) -> int:
        return wang_hash_int(self.seed) if self.hash_seed else self.seed

    def __repr__(self):
        return (f"wang_hash(dim={self.dims}, seed={self.seed}, warmup={self.warmup}, "
                f"hash_seed={self.hash_seed})")


class RandFloatArg:
    """sg.rand_float(min, max, dim, seed, warmup, hash_seed): a per-thread uniform float in
    [min, max) from the hashes of wang_hash (SlangPy's generator, with its numbers)."""

    def __init__(self, min: float = 0.0, max: float = 1.0, dim: int = -1, seed: int = DEFAULT_SEED,
                 warmup: int = 0, hash_seed: bool = True):
        self.min = float(min)
        self.max = float(max)
        self.dims = _dims("rand_float: dim", dim)
        self.seed = _seed("rand_float", seed)
        self.warmup = _warmup("rand_float", warmup)
        self.hash_seed = bool(hash_seed)

    @property
    def kernel_seed(self) -> int:
        return wang_hash_int(self.seed) if self.hash_seed else self.seed

    def __repr__(self):
        return (f"rand_float(min={self.min}, max={self.max}, dim={self.dims}, seed={self.seed}, "
                f"warmup={self.warmup}, hash_seed={self.hash_seed})")


# ---------------------------------------------------------------- references and pairs


class ValueRef:
    """A value an out / inout parameter writes: the result lands in `.value`."""

    def __init__(self, value=0.0, scalar: str | None = None):
        self.value = value
        self._sg_scalar_name = scalar

    def __repr__(self):
        return f"ValueRef({self.value!r})"


def floatRef(value: float = 0.0) -> ValueRef:
    """A float ValueRef for an `out` / `inout float` parameter of a call without tensors.

    Example: ``r = sg.floatRef(); m.split(2.0, r, sg.floatRef())`` leaves the result in
    ``r.value``.
    """
    return ValueRef(float(value), "float")


def intRef(value: int = 0) -> ValueRef:
    """An int ValueRef for an `out` / `inout int` parameter (see floatRef)."""
    return ValueRef(int(value), "int")


class DiffPair:
    """A primal value and its derivative, for .bwds calls: the gradient lands in `.grad` (`.d`)."""

    def __init__(self, p=None, d=None, needs_grad: bool = True, scalar: str | None = None):
        self.primal = p
        self.grad = d
        self.needs_grad = needs_grad
        self._sg_scalar_name = scalar

    @property
    def p(self):
        return self.primal

    @property
    def d(self):
        return self.grad

    def __repr__(self):
        return f"diffPair(p={self.primal!r}, d={self.grad!r})"


def diffPair(p=None, d=None, needs_grad: bool = True) -> DiffPair:
    """A DiffPair for a backward call (fn.bwds): `p` the primal value, `d` the derivative.

    An `in` parameter takes ``diffPair(p)`` and receives its gradient in ``.grad``; an `out`
    parameter takes ``diffPair(d=incoming_gradient)``; an `inout` one ``diffPair(p, d)``.
    `needs_grad=False` asks for no gradient.

    Example: ``x = sg.diffPair(3.0); m.sq.bwds(x, 1.0)`` leaves d(x*x)/dx = 6.0 in ``x.grad``.
    """
    return DiffPair(p, d, needs_grad)


def diff_pair(primal, grad) -> DiffPair:
    """SlangPy's pair of torch tensors for a backward call (fn.bwds): `primal` the values, `grad`
    their gradient buffer.

    For a parameter the function reads, the gradient computed for `primal` is added into `grad`
    in place; for one it writes (an `out` parameter, a writable differentiable tensor such as
    `WDiffTensor`), `grad` is the incoming gradient of the written values.

    Example: ``m.sq.bwds(sg.diff_pair(x, x_grad), dy)`` adds 2 * x * dy into ``x_grad``.
    """
    return DiffPair(primal, grad, True)


def floatDiffPair(p: float = 0.0, d: float = 1.0, needs_grad: bool = True) -> DiffPair:
    """A float DiffPair (see diffPair); the derivative defaults to 1."""
    return DiffPair(float(p), float(d), needs_grad, "float")


# ---------------------------------------------------------------- helpers the core calls


def _torch():
    import torch

    return torch


def _device(device_type: int, index: int):
    return "cpu" if device_type == 0 else f"cuda:{max(index, 0)}"


_TORCH_DTYPES = None


def _dtype_of(scalar: str):
    torch = _torch()
    return {"bool": torch.bool, "int": torch.int32, "uint": getattr(torch, "uint32", torch.int32),
            "float": torch.float32, "double": torch.float64, "half": torch.float16, "int64_t": torch.int64}[scalar]


def value_to_tensor(value, scalar, device_type: int, index: int):
    """A small tensor holding `value` (a Python scalar or value type) on the device."""
    torch = _torch()
    if isinstance(value, ValueType):
        scalar = scalar or value._sg_scalar_name
        data = value.to_list()
    elif isinstance(value, bool):
        scalar, data = scalar or "bool", value
    elif isinstance(value, int):
        scalar, data = scalar or "int", value
    elif isinstance(value, float):
        scalar, data = scalar or "float", value
    elif isinstance(value, torch.Tensor):
        return value.detach().clone().to(_device(device_type, index))
    elif isinstance(value, (list, tuple)) and value and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        # A flat list of numbers (an array argument): float unless every item is an int.
        scalar, data = scalar or ("int" if all(isinstance(x, int) for x in value) else "float"), list(value)
    else:
        raise TypeError(f"a ValueRef holds a Python scalar or a value type (sg.float3, ...), got {type(value).__name__}")
    return torch.tensor(data, dtype=_dtype_of(scalar), device=_device(device_type, index))


def tensor_to_value(t, like=None):
    """A tensor of a scalar, vector or matrix element back to a Python value."""
    v = t.detach().cpu().tolist()
    if t.dim() == 0:
        return v
    scalar = {"torch.bool": "bool", "torch.int32": "int", "torch.uint32": "uint", "torch.float32": "float",
              "torch.float64": "double", "torch.float16": "half", "torch.int64": "int64_t"}.get(str(t.dtype), "float")
    if isinstance(like, ValueType):
        return type(like)(v)
    if isinstance(like, (list, tuple)):
        return v
    if t.dim() == 1 and 2 <= t.shape[0] <= 4 and f"{scalar}{t.shape[0]}" in VALUE_TYPES:
        return VALUE_TYPES[f"{scalar}{t.shape[0]}"](v)
    if t.dim() == 2 and f"{scalar}{t.shape[0]}x{t.shape[1]}" in VALUE_TYPES:
        return VALUE_TYPES[f"{scalar}{t.shape[0]}x{t.shape[1]}"](v)
    return v


def ref_to_tensor(ref: ValueRef, device_type: int, index: int):
    return value_to_tensor(ref.value, ref._sg_scalar_name, device_type, index)


def ref_store(ref: ValueRef, t) -> None:
    ref.value = tensor_to_value(t, ref.value)


def numpy_to_tensor(array, device_type: int, index: int):
    """(tensor, copied): a torch view of a numpy array (zero-copy on CPU where torch can view it)."""
    torch = _torch()
    try:
        t = torch.from_numpy(array)
        copied = False
    except (ValueError, TypeError):
        import numpy

        t = torch.from_numpy(numpy.ascontiguousarray(array))
        copied = True
    if device_type != 0:
        t = t.to(_device(device_type, index))
        copied = True
    return t, copied


def numpy_store(array, t) -> None:
    array[...] = t.detach().cpu().numpy()


def leaf_value(t, kind: int):
    """One result leaf of a call with call dimensionality 0: kind 0 scalar, 1 vector, 2 matrix, 3 array."""
    if kind == 1 or kind == 2:
        return tensor_to_value(t)
    if kind == 3:
        def convert(x):
            if x.dim() <= 1 and kind == 3 and x.dim() == 0:
                return x.item()
            return tensor_to_value(x) if x.dim() <= 2 and _is_value_shape(x) else [convert(y) for y in x]

        return [convert(x) for x in t]
    return t.item()


def _is_value_shape(x):
    if x.dim() == 1:
        return 2 <= x.shape[0] <= 4
    return False


def assemble(leaves):
    """Builds the Python result from [(keys, value)]: a dict tree for structs, else the value."""
    if len(leaves) == 1 and not leaves[0][0]:
        return leaves[0][1]
    out = {}
    for keys, value in leaves:
        d = out
        for k in keys[:-1]:
            d = d.setdefault(k, {})
        d[keys[-1]] = value
    return out


# ---------------------------------------------------------------- the rows the core registers


class KindRow(NamedTuple):
    """One Python value kind: its row in the core (src/python/marshal.cpp, kKindRows) by `name`,
    the class(es) whose instances are of the kind ("module.Class": imported when first seen), and
    exactly the helpers that row needs, by name."""

    name: str
    classes: object
    helpers: dict


VALUE_KINDS = (
    # Results of call dimensionality 0 come back as Python values, struct results as dicts.
    KindRow("value", ValueType, {"leaf_value": leaf_value, "assemble": assemble}),
    KindRow("numpy", "numpy.ndarray", {"to_tensor": numpy_to_tensor, "store": numpy_store}),
    KindRow("value_ref", ValueRef, {"to_tensor": ref_to_tensor, "store": ref_store}),
    KindRow("call_id", CallIdArg, {}),
    KindRow("thread_id", ThreadIdArg, {}),
    KindRow("wang_hash", WangHashArg, {}),
    KindRow("rand_float", RandFloatArg, {}),
    KindRow("diff_pair", DiffPair, {}),  # recognised to refuse it outside fn.bwds
)

# sg.Tensor (python/shadegrad/_tensor.py, which uses the value types above): binds as its
# storage; `wrap` makes a call's result a Tensor.
from . import _tensor  # noqa: E402

VALUE_KINDS += (KindRow("tensor", _tensor.Tensor, {"wrap": _tensor.wrap_result}),)


def register(core) -> None:
    """Registers every row of VALUE_KINDS with the core (`shadegrad._core`)."""
    for row in VALUE_KINDS:
        core._register_value_kind(row.name, row.classes, **row.helpers)
