# python/shadegrad/_tensor.py — sg.Tensor, SlangPy's n-dimensional container, over torch storage.
#
# A Tensor is a torch tensor (its storage, shared with torch at zero copy) seen as `shape`
# elements of one kernel-language type (`dtype`: a scalar, vector, matrix, array or struct). The
# storage's shape is `shape + dtype.shape`: a vector adds one dim, a matrix two, an array one per
# level, a struct one dim of all its scalar components in declaration order (the layout the call
# layer reads struct elements in: src/call/element_layout.h). A Tensor binds wherever a torch
# tensor binds: the core reads `_sg_arg`, the storage (a struct parameter reads one element's
# components from its last dim). Gradients are
# SlangPy's: `with_grads()` attaches `grad_in` (the gradient a backward call reads for a value
# the call wrote) and `grad_out` (where it accumulates the gradient of a value the call read),
# one zeroed Tensor for both unless given; `fn.bwds(...)` uses them (python/shadegrad/_bwds.py).
"""sg.Tensor: SlangPy's n-dimensional container, backed by torch storage."""

from __future__ import annotations

import math

import torch



def _values():
    # Imported when first used: _values registers this module's Tensor, so it imports this one.
    from . import _values as v

    return v

# ---------------------------------------------------------------- element types

_SCALAR_TORCH = {"bool": torch.bool, "int": torch.int32, "uint": getattr(torch, "uint32", torch.int32),
                 "float": torch.float32, "double": torch.float64, "half": torch.float16, "int64_t": torch.int64,
                 "uint8_t": torch.uint8, "int8_t": torch.int8, "int16_t": torch.int16}
_TORCH_SCALAR = {v: k for k, v in reversed(list(_SCALAR_TORCH.items()))}
_SCALAR_ALIASES = {"float32": "float", "float64": "double", "float16": "half", "int32": "int", "uint32": "uint",
                   "int64": "int64_t", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t"}


class Shape(tuple):
    """A tuple of extents (SlangPy's Shape): compares equal to the plain tuple."""

    def as_tuple(self) -> tuple:
        return tuple(self)

    def as_list(self) -> list:
        return list(self)

    @property
    def valid(self) -> bool:
        return True


class DType:
    """The element type of a Tensor: `name` ("float", "float3", "float[4]", "Pixel"), its scalar
    type `scalar`, `shape` (the storage dims of one element) and, for a struct, `fields`
    [(name, DType, first component)]."""

    __slots__ = ("name", "scalar", "shape", "fields", "struct")

    def __init__(self, name, scalar, shape=(), fields=None, struct=None):
        self.name = name
        self.scalar = scalar
        self.shape = Shape(shape)
        self.fields = fields
        self.struct = struct

    @property
    def is_struct(self) -> bool:
        return self.fields is not None

    @property
    def components(self) -> int:
        return math.prod(self.shape)

    @property
    def torch_dtype(self):
        return _SCALAR_TORCH[self.scalar]

    def full_name(self) -> str:
        return self.name

    def __eq__(self, other):
        if isinstance(other, str):
            return self.name == other
        return isinstance(other, DType) and (self.name, self.scalar, self.shape) == (other.name, other.scalar, other.shape)

    def __hash__(self):
        return hash((self.name, self.scalar, self.shape))

    def __repr__(self):
        return f"DType({self.name})"

    def __str__(self):
        return self.name


def _scalar_dtype(name: str) -> DType:
    return DType(name, name)


def _parse_type_name(name: str, find_struct, where: str) -> DType:
    """A DType from a kernel-language type name: scalars, vectors, matrices, arrays of them, and
    (through `find_struct`, which may be None) structs."""
    text = name.replace(" ", "")
    text = _SCALAR_ALIASES.get(text, text)
    if text.endswith("]"):
        open_ = text.rfind("[")
        count = text[open_ + 1:-1]
        if not count.isdigit():
            raise TypeError(f"{where}: '{name}' is not an array of fixed size")
        inner = _parse_type_name(text[:open_], find_struct, where)
        # float3[2]: the outer array's count comes first.
        return DType(text, inner.scalar, (int(count),) + tuple(inner.shape), None if inner.fields is None else None)
    if text in _SCALAR_TORCH:
        return _scalar_dtype(text)
    if text in _values().VALUE_TYPES:
        vt = _values().VALUE_TYPES[text]
        shape = (vt._sg_rows, vt._sg_cols) if vt._sg_cols else (vt._sg_rows,)
        return DType(text, vt._sg_scalar_name, shape)
    for scalar in ("float", "double", "half", "int", "uint", "bool"):  # vector<float, 3>, matrix<...>
        if text.startswith(f"vector<{scalar},") and text.endswith(">"):
            return _parse_type_name(f"{scalar}{text[len(scalar) + 8:-1]}", find_struct, where)
    if find_struct is not None:
        s = find_struct(text)
        if s is not None:
            return _struct_dtype(s, where)
    raise TypeError(f"{where}: '{name}' is not a type a Tensor can hold (a scalar, vector, matrix or array name, "
                    "a value type such as sg.float3, a module struct, or a numpy / torch dtype)")


def _struct_dtype(s, where: str) -> DType:
    """The DType of a module struct (a shadegrad Struct): its fields' components in order."""
    module = getattr(s, "module", None)
    find = module.find_struct if module is not None else None
    fields, offset, scalars = [], 0, set()
    for fname, ftype in s.fields.items():
        d = _parse_type_name(ftype, find, where)
        fields.append((fname, d, offset))
        offset += d.components
        scalars.add(d.scalar)
    if len(scalars) > 1:
        raise TypeError(f"{where}: struct {s.name} mixes {' and '.join(sorted(scalars))} fields; a Tensor holds one "
                        "scalar type (as a torch tensor does)")
    if not fields:
        raise TypeError(f"{where}: struct {s.name} has no fields")
    return DType(s.name, scalars.pop(), (offset,), fields, s)


def dtype_of(dtype, where: str) -> DType:
    """The DType a Python object names: a DType, a scalar or type name, a value type (sg.float3,
    module.float3), a module struct (module.Pixel), a numpy or torch dtype, or float/int/bool."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str):
        return _parse_type_name(dtype, None, where)
    if isinstance(dtype, type) and issubclass(dtype, _values().ValueType):
        return _parse_type_name(dtype.__name__, None, where)
    if dtype is float:
        return _scalar_dtype("float")
    if dtype is int:
        return _scalar_dtype("int")
    if dtype is bool:
        return _scalar_dtype("bool")
    if isinstance(dtype, torch.dtype):
        if dtype not in _TORCH_SCALAR:
            raise TypeError(f"{where}: a Tensor cannot hold {dtype}")
        return _scalar_dtype(_TORCH_SCALAR[dtype])
    if type(dtype).__name__ == "Struct" and hasattr(dtype, "fields"):
        return _struct_dtype(dtype, where)
    try:
        import numpy

        np_dtype = numpy.dtype(dtype)
    except Exception:
        np_dtype = None
    if np_dtype is not None and np_dtype.fields is None:
        name = _SCALAR_ALIASES.get(np_dtype.name, np_dtype.name)
        if name in _SCALAR_TORCH:
            return _scalar_dtype(name)
    raise TypeError(f"{where}: parameter 'dtype' takes a scalar or type name ('float', 'float3'), a value type "
                    f"(sg.float3), a module struct (module.Pixel) or a numpy / torch dtype, got {dtype!r}")


def _torch_device(device, where: str):
    if isinstance(device, torch.device):
        return device
    from ._core import Device, DeviceType

    if not isinstance(device, Device):
        raise TypeError(f"{where}: parameter 'device' takes a shadegrad Device (sg.create_device(...)), "
                        f"got {type(device).__name__}")
    return torch.device("cpu") if device.type == DeviceType.cpu else torch.device("cuda", max(device.index, 0))


def _shape_of(shape, where: str) -> tuple:
    if isinstance(shape, int):
        shape = (shape,)
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{where}: parameter 'shape' takes a tuple of ints, got {shape!r}") from None
    for d, s in enumerate(shape):
        if s < 0:
            raise ValueError(f"{where}: parameter 'shape' has a negative extent {s} in dimension {d}")
    return shape


# ---------------------------------------------------------------- the container


class TensorStorage:
    """The memory under a Tensor (SlangPy's buffer): the torch tensor that holds it. Passed to a
    call it binds as a buffer of the Tensor's elements ((N,) + the element's dims)."""

    __slots__ = ("_t", "_elem_dims")

    def __init__(self, t, elem_dims: int = 0):
        self._t = t
        self._elem_dims = elem_dims

    def get_this(self):
        """What a call binds: the elements as one dim (a view where the layout allows)."""
        e = self._elem_dims
        return self._t.reshape((-1,) + tuple(self._t.shape[self._t.dim() - e:]))

    def to_torch(self):
        return self._t

    def to_numpy(self):
        return self._t.detach().cpu().numpy()

    def copy_from_numpy(self, array) -> None:
        import numpy

        src = torch.from_numpy(numpy.ascontiguousarray(array))
        if src.numel() != self._t.numel():
            raise ValueError(f"TensorStorage.copy_from_numpy(): parameter 'array' has {src.numel()} values, the "
                             f"storage {self._t.numel()}")
        self._t.copy_(src.reshape(self._t.shape).to(self._t.dtype))

    @property
    def size(self) -> int:
        return self._t.numel() * self._t.element_size()

    def __repr__(self):
        return f"TensorStorage({tuple(self._t.shape)}, {self._t.dtype}, {self._t.device})"


class _ContainerMeta(type):
    """help() of shadegrad's Tensor subclasses (NDBuffer, InstanceTensor, ...) shows their own
    names only: what they share is documented once, on Tensor. dir() of an instance is unchanged."""

    def __dir__(cls):
        if cls.__dict__.get("_sg_brief_help"):
            return sorted(set(cls.__dict__) - {"_sg_brief_help"})
        return super().__dir__()


class Tensor(metaclass=_ContainerMeta):
    """SlangPy's n-dimensional container: `shape` elements of type `dtype` in torch storage.

    Create with Tensor.empty / zeros / empty_like / zeros_like / from_numpy / from_torch; read
    with to_numpy() / to_torch() (zero copy) / cursor(); pass to any call parameter a torch
    tensor can take (a value type: vectorized; a tensor type: whole). A call whose tensor
    arguments are Tensors returns a Tensor, as does `_result="tensor"` or `_result=sg.Tensor`.
    `with_grads()` attaches gradients for `fn.bwds(...)`.
    """

    __slots__ = ("_sg_arg", "_storage", "_dtype", "_device", "grad_in", "grad_out")

    def __init__(self, storage, dtype="float", device=None, grad_in=None, grad_out=None, shape=None):
        where = f"{type(self).__name__}()"
        if shape is not None and not isinstance(storage, torch.Tensor):
            # SlangPy's form: Tensor(device, dtype=..., shape=...), zero-filled.
            device, d = storage, dtype_of(dtype, where)
            storage = torch.zeros(_shape_of(shape, where) + tuple(d.shape), dtype=d.torch_dtype,
                                  device=_torch_device(device, where))
        if not isinstance(storage, torch.Tensor):
            raise TypeError(f"{where}: parameter 'storage' takes a torch tensor, got {type(storage).__name__}")
        d = dtype_of(dtype, where)
        e = len(d.shape)
        if storage.dim() < e or tuple(storage.shape[storage.dim() - e:]) != tuple(d.shape):
            raise ValueError(f"{where}: a Tensor of {d.name} needs storage whose last dims are {tuple(d.shape)}, got "
                             f"shape {tuple(storage.shape)}")
        if storage.dtype != d.torch_dtype:
            raise TypeError(f"{where}: a Tensor of {d.name} needs {d.torch_dtype} storage, got {storage.dtype}")
        self._storage = storage
        self._dtype = d
        self._device = device
        self.grad_in = grad_in
        self.grad_out = grad_out
        self._sg_arg = storage

    # -- construction
    @classmethod
    def empty(cls, device, shape, dtype="float") -> "Tensor":
        """An uninitialised Tensor of `shape` elements of `dtype` on `device`."""
        where = f"{cls.__name__}.empty()"
        d = dtype_of(dtype, where)
        t = torch.empty(_shape_of(shape, where) + tuple(d.shape), dtype=d.torch_dtype, device=_torch_device(device, where))
        return cls(t, d, device)

    @classmethod
    def zeros(cls, device, shape, dtype="float") -> "Tensor":
        """A Tensor of `shape` elements of `dtype` on `device`, filled with zeros."""
        where = f"{cls.__name__}.zeros()"
        d = dtype_of(dtype, where)
        t = torch.zeros(_shape_of(shape, where) + tuple(d.shape), dtype=d.torch_dtype, device=_torch_device(device, where))
        return cls(t, d, device)

    @classmethod
    def empty_like(cls, other: "Tensor") -> "Tensor":
        """An uninitialised Tensor of the shape, dtype and device of `other`."""
        _check_tensor(other, f"{cls.__name__}.empty_like()", "other")
        return cls(torch.empty(tuple(other.shape) + tuple(other.dtype.shape), dtype=other._storage.dtype,
                               device=other._storage.device), other.dtype, other._device)

    @classmethod
    def zeros_like(cls, other: "Tensor") -> "Tensor":
        """A zero Tensor of the shape, dtype and device of `other`."""
        _check_tensor(other, f"{cls.__name__}.zeros_like()", "other")
        return cls(torch.zeros(tuple(other.shape) + tuple(other.dtype.shape), dtype=other._storage.dtype,
                               device=other._storage.device), other.dtype, other._device)

    @classmethod
    def from_numpy(cls, device, array, dtype=None) -> "Tensor":
        """A Tensor holding a copy of numpy `array` on `device`: scalar elements of its dtype
        (its shape is the Tensor's), or of `dtype`, whose element dims the array ends with."""
        import numpy

        where = f"{cls.__name__}.from_numpy()"
        if not isinstance(array, numpy.ndarray):
            raise TypeError(f"{where}: parameter 'array' takes a numpy array, got {type(array).__name__}")
        t = torch.from_numpy(numpy.ascontiguousarray(array)).to(_torch_device(device, where), copy=True)
        d = dtype_of(dtype, where) if dtype is not None else dtype_of(array.dtype, where)
        if dtype is not None and t.dtype != d.torch_dtype:
            raise TypeError(f"{where}: parameter 'array' holds {array.dtype}, {d.name} needs {d.torch_dtype}")
        return cls(t, d, device)

    @classmethod
    def from_torch(cls, tensor, dtype=None, device=None) -> "Tensor":
        """A Tensor over torch `tensor` (no copy): scalar elements of its dtype, or elements of
        `dtype` (its last dims the element's: (N, 3) with dtype 'float3' is N elements)."""
        where = f"{cls.__name__}.from_torch()"
        if not isinstance(tensor, torch.Tensor) and isinstance(dtype, torch.Tensor):
            tensor, dtype = dtype, None  # Tensor.from_torch(device, tensor)
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{where}: parameter 'tensor' takes a torch tensor, got {type(tensor).__name__}")
        d = dtype_of(dtype, where) if dtype is not None else dtype_of(tensor.dtype, where)
        return cls(tensor, d, device)

    # -- what it is
    @property
    def shape(self) -> Shape:
        """The extents of the element grid (the storage's shape without the element's dims)."""
        return Shape(self._storage.shape[: self._storage.dim() - len(self._dtype.shape)])

    @property
    def strides(self) -> Shape:
        """The element strides of the shape's dims, in elements."""
        n = self._dtype.components or 1
        return Shape(s // n for s in self._storage.stride()[: len(self.shape)])

    @property
    def offset(self) -> int:
        return self._storage.storage_offset() // (self._dtype.components or 1)

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def element_count(self) -> int:
        return math.prod(self.shape)

    @property
    def dims(self) -> int:
        return len(self.shape)

    @property
    def device(self):
        """The Device it was made for, or (for a call's result) its storage's torch device."""
        return self._device if self._device is not None else self._storage.device

    @property
    def storage(self) -> TensorStorage:
        return TensorStorage(self._storage, len(self._dtype.shape))

    def is_contiguous(self) -> bool:
        return self._storage.is_contiguous()

    def __len__(self):
        return self.shape[0] if self.shape else 1

    def __repr__(self):
        return (f"Tensor(dtype={self._dtype.name}, shape={tuple(self.shape)}, device={self._storage.device}, "
                f"has_grad_in={self.grad_in is not None}, has_grad_out={self.grad_out is not None})")

    # -- data
    def to_numpy(self):
        """A numpy copy of the storage (shape + the element's dims)."""
        return self._storage.detach().cpu().numpy().copy()

    def to_torch(self):
        """The torch tensor this Tensor views (no copy; shape + the element's dims)."""
        return self._storage

    def copy_from_numpy(self, array) -> None:
        """Fills the Tensor from a numpy array with as many values (any shape)."""
        import numpy

        if not isinstance(array, numpy.ndarray):
            raise TypeError(f"Tensor.copy_from_numpy(): parameter 'array' takes a numpy array, got {type(array).__name__}")
        if array.size != self._storage.numel():
            raise ValueError(f"Tensor.copy_from_numpy(): parameter 'array' has {array.size} values, the Tensor "
                             f"{self._storage.numel()} ({self.element_count} x {self._dtype.name})")
        src = torch.from_numpy(numpy.ascontiguousarray(array)).reshape(self._storage.shape)
        with torch.no_grad():
            self._storage.copy_(src.to(self._storage.dtype))

    def copy_from_torch(self, tensor) -> None:
        """Fills the Tensor from a torch tensor with as many values (any shape)."""
        if not isinstance(tensor, torch.Tensor) or tensor.numel() != self._storage.numel():
            raise ValueError(f"Tensor.copy_from_torch(): parameter 'tensor' must be a torch tensor of "
                             f"{self._storage.numel()} values")
        with torch.no_grad():
            self._storage.copy_(tensor.reshape(self._storage.shape))

    def clear(self) -> None:
        """Sets every element to zero."""
        with torch.no_grad():
            self._storage.zero_()

    def cursor(self) -> "TensorCursor":
        """Element-wise reading and writing from Python: c[i].read(), c[i].write(v), c[i]["field"];
        c.apply() writes the changes to the Tensor."""
        return TensorCursor(self)

    # -- views
    def _view(self, op) -> "Tensor":
        """A Tensor over op(storage), its gradients over op(their storage)."""
        def sub(g):
            return None if g is None else g._view(op)

        r = type(self).__new__(type(self))
        Tensor.__init__(r, op(self._storage), self._dtype, self._device)
        r.grad_in = sub(self.grad_in)
        r.grad_out = r.grad_in if self.grad_out is self.grad_in else sub(self.grad_out)
        return r

    def __getitem__(self, key) -> "Tensor":
        """A view of some of the elements (ints, slices, `...` over the shape's dims)."""
        if not isinstance(key, tuple):
            key = (key,)
        n = len(self.shape)
        if any(k is Ellipsis for k in key):
            at = next(i for i, k in enumerate(key) if k is Ellipsis)
            fill = n - (len(key) - 1)
            key = key[:at] + (slice(None),) * max(fill, 0) + key[at + 1:]
        if len(key) > n:
            raise IndexError(f"Tensor[]: {len(key)} indices for a Tensor of {n} dims")
        for k in key:
            if not isinstance(k, (int, slice)) or isinstance(k, bool):
                raise TypeError(f"Tensor[]: an index must be an int, a slice or ..., got {type(k).__name__}")
        key = key + (slice(None),) * (n - len(key) + len(self._dtype.shape))
        return self._view(lambda t: t[key])

    def broadcast_to(self, shape) -> "Tensor":
        """A view with `shape` (extent-1 and missing leading dims repeat: stride 0)."""
        shape = _shape_of(shape, "Tensor.broadcast_to()")
        cur = tuple(self.shape)
        if len(shape) < len(cur) or any(c not in (1, s) for c, s in zip(cur, shape[len(shape) - len(cur):])):
            raise ValueError(f"Tensor.broadcast_to(): cannot broadcast shape {cur} to {shape}")
        full = shape + tuple(self._dtype.shape)
        return self._view(lambda t: t.expand(full))

    def view(self, shape, strides=None, offset: int = 0) -> "Tensor":
        """A view with another shape (and element strides and offset, in elements)."""
        shape = _shape_of(shape, "Tensor.view()")
        n = self._dtype.components or 1
        if strides is None:
            strides, acc = [], 1
            for s in reversed(shape):
                strides.insert(0, acc)
                acc *= s
        elem_strides = list(self._storage.stride()[len(self.shape):]) if self._dtype.shape else []
        t = self._storage.as_strided(shape + tuple(self._dtype.shape), tuple(s * n for s in strides) + tuple(elem_strides),
                                     self._storage.storage_offset() + offset * n)
        r = type(self).__new__(type(self))
        Tensor.__init__(r, t, self._dtype, self._device)
        return r

    # -- gradients
    def with_grads(self, grad_in: "Tensor | None" = None, grad_out: "Tensor | None" = None, zero: bool = True) -> "Tensor":
        """This Tensor (same storage) with gradients: `grad_in` (read by a backward call for a
        value the call wrote) and `grad_out` (where it accumulates the gradient of a value it
        read). Without either, one new Tensor of the element's type serves as both. `zero`
        clears them."""
        for name, g in (("grad_in", grad_in), ("grad_out", grad_out)):
            if g is not None:
                _check_tensor(g, "Tensor.with_grads()", name)
                if tuple(g.shape) != tuple(self.shape):
                    raise ValueError(f"Tensor.with_grads(): parameter '{name}' has shape {tuple(g.shape)}, the Tensor "
                                     f"{tuple(self.shape)}")
        if grad_in is None and grad_out is None:
            if not self._storage.is_floating_point():
                raise TypeError(f"Tensor.with_grads(): a Tensor of {self._dtype.name} has no gradient (not floating point)")
            grad_in = grad_out = Tensor(torch.empty(tuple(self.shape) + tuple(self._dtype.shape), dtype=self._storage.dtype,
                                                    device=self._storage.device), self._dtype, self._device)
        r = type(self).__new__(type(self))
        Tensor.__init__(r, self._storage, self._dtype, self._device, grad_in, grad_out)
        if zero:
            for g in {id(g): g for g in (grad_in, grad_out) if g is not None}.values():
                g.clear()
        return r

    @property
    def grad(self) -> "Tensor":
        """The gradient a backward call accumulated (grad_out)."""
        if self.grad_out is None:
            raise ValueError("Tensor.grad: the Tensor has no gradient (make one with .with_grads())")
        return self.grad_out

    def detach(self) -> "Tensor":
        """This Tensor (same storage) without gradients."""
        r = type(self).__new__(type(self))
        Tensor.__init__(r, self._storage, self._dtype, self._device)
        return r


class NDBuffer(Tensor):
    """SlangPy's older container: a Tensor made as NDBuffer(device, dtype, element_count=None,
    shape=None), without gradients."""

    __slots__ = ()
    _sg_brief_help = True

    def __init__(self, device, dtype=None, element_count=None, shape=None, **_ignored):
        if isinstance(device, torch.Tensor):  # made from storage, as Tensor's class methods do
            Tensor.__init__(self, device, dtype, element_count)
            return
        where = "NDBuffer()"
        if shape is None:
            if element_count is None:
                raise TypeError(f"{where}: give parameter 'shape' or 'element_count'")
            shape = (int(element_count),)
        elif element_count is not None:
            raise TypeError(f"{where}: give parameter 'shape' or 'element_count', not both")
        d = dtype_of(dtype if dtype is not None else "float", where)
        t = torch.zeros(_shape_of(shape, where) + tuple(d.shape), dtype=d.torch_dtype, device=_torch_device(device, where))
        Tensor.__init__(self, t, d, device)

    def with_grads(self, *args, **kwargs):
        raise TypeError("NDBuffer.with_grads(): an NDBuffer has no gradients; use a shadegrad Tensor")


def _check_tensor(t, where: str, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{where}: parameter '{name}' takes a shadegrad Tensor, got {type(t).__name__}")


def _field_views(storage, d: DType):
    """The dict a struct Tensor binds as: `_type` and one view per field (nested for structs)."""
    out = {"_type": d.name}
    lead = storage.dim() - 1
    for fname, fd, off in d.fields:
        part = storage.narrow(lead, off, fd.components)
        if fd.is_struct:
            out[fname] = _field_views(part, fd)
        elif not fd.shape:
            out[fname] = part.squeeze(lead)
        else:
            out[fname] = part.unflatten(lead, tuple(fd.shape)) if len(fd.shape) > 1 else part
    return out



# ---------------------------------------------------------------- results as Tensors


def leaf_tensors_of(bound) -> list:
    """The torch tensors a Tensor binds as, in field order (one for a non-struct dtype)."""
    if isinstance(bound, dict):
        out = []
        for k, v in bound.items():
            if k != "_type":
                out.extend(leaf_tensors_of(v))
        return out
    return [bound]


def leaf_tree(t: "Tensor"):
    """A struct Tensor's fields as nested dicts of torch views (no `_type`)."""
    def strip(v):
        return {k: strip(x) for k, x in v.items() if k != "_type"} if isinstance(v, dict) else v

    return strip(_field_views(t.to_torch(), t.dtype)) if t.dtype.is_struct else t.to_torch()


def leaf_tensors(t: "Tensor") -> list:
    """The views of each scalar, vector, matrix or array leaf of a Tensor (its fields', in order)."""
    return leaf_tensors_of(_field_views(t.to_torch(), t.dtype) if t.dtype.is_struct else t.to_torch())


def _leaf_dtype(type_name: str, where: str) -> DType:
    return _parse_type_name(type_name, None, where)


def _struct_from_leaves(name: str, leaves, depth: int, where: str):
    """(DType, components) of a struct result from its leaves [(keys, tensor, type name)]."""
    fields, offset, order = [], 0, []
    groups = {}
    for keys, t, tname in leaves:
        if keys[depth] not in groups:
            groups[keys[depth]] = []
            order.append(keys[depth])
        groups[keys[depth]].append((keys, t, tname))
    scalars = set()
    for fname in order:
        group = groups[fname]
        if len(group) == 1 and len(group[0][0]) == depth + 1:
            fd = _leaf_dtype(group[0][2], where)
        else:
            fd = _struct_from_leaves(fname, group, depth + 1, where)
        fields.append((fname, fd, offset))
        offset += fd.components
        scalars.add(fd.scalar)
    if len(scalars) > 1:
        raise TypeError(f"{where}: the result struct {name} mixes {' and '.join(sorted(scalars))} fields; a Tensor holds "
                        "one scalar type (return it as dicts of torch tensors with _result='torch')")
    return DType(name, scalars.pop(), (offset,), fields)


def wrap_result(type_name, call_rank: int, leaves, target):
    """The core's `wrap` helper: a call's result as a Tensor (written into `target`, a Tensor,
    when `_result=` gave one). `leaves` are [(keys, torch tensor, type name)], one per result
    leaf (several for a struct result)."""
    where = "_result='tensor'"
    if len(leaves) == 1 and not leaves[0][0]:
        _, t, tname = leaves[0]
        d = _leaf_dtype(tname, where)
        if target is None:
            return Tensor(t, d)
        target.copy_from_torch(t)
        return target
    d = _struct_from_leaves(type_name or "struct", leaves, 0, where)
    lead = tuple(leaves[0][1].shape[:call_rank])
    storage = torch.cat([t.reshape(lead + (-1,)).to(d.torch_dtype) for _, t, _ in leaves], dim=-1)
    if target is None:
        return Tensor(storage, d)
    if target.dtype.components != d.components or tuple(target.shape) != lead:
        raise ValueError(f"_result=: the Tensor holds {tuple(target.shape)} x {target.dtype.name}, the call returns "
                         f"{lead} x {d.name}")
    target.copy_from_torch(storage)
    return target


from ._cursor import TensorCursor  # noqa: E402  (the cursor reads Tensors; defined beside)
