# python/shadegrad/_instances.py — SlangPy's instances: calling a struct type to construct values
# (`module.Particle(...)`, its `__init` overloads), InstanceTensor / InstanceBuffer (many
# instances in one struct Tensor) and InstanceList (struct of arrays: a Tensor or value per
# field), whose attribute calls are the struct's methods over every instance (`this` bound to
# them; a [mutating] method writes them back), and the get_this() / update_this() protocol by
# which any Python object stands for a kernel value in a call (the core asks get_this() for the
# value and calls update_this(value) after a call that wrote it: src/python/marshal.cpp).
"""Struct construction and instance containers of the shadegrad call API."""

from __future__ import annotations

import torch

from . import _tensor


def update_this(obj, value) -> None:
    """The core's write-back for get_this() objects: obj.update_this(value) when it has one."""
    f = getattr(obj, "update_this", None)
    if f is not None:
        f(value)


def _init_of(struct, where: str):
    try:
        return getattr(struct, "__init")
    except AttributeError:
        return None


def construct_struct(struct, *args, **kwargs):
    """module.Particle(...): calls the struct's constructor (its `__init` overloads, chosen by
    the arguments), vectorized like any call. A struct without one takes its fields by keyword
    and gives the dict that binds to it."""
    init = _init_of(struct, struct.name)
    if init is not None:
        return init(*args, **kwargs)
    fields = list(struct.fields)
    if args:
        raise TypeError(f"{struct.name}(): struct {struct.name} has no __init; pass its fields by keyword "
                        f"({', '.join(fields)})")
    missing = [f for f in fields if f not in kwargs and f != "_result"]
    unknown = [k for k in kwargs if k not in fields]
    if unknown:
        raise TypeError(f"{struct.name}(): struct {struct.name} has no field '{unknown[0]}' (its fields: {', '.join(fields)})")
    if missing:
        raise TypeError(f"{struct.name}(): field '{missing[0]}' of struct {struct.name} is not specified")
    return {"_type": struct.name, **kwargs}


def _shaped(fn, device, shape: tuple, args: tuple, kwargs: dict, where: str):
    """The arguments of a constructor call made to run once per instance (call shape `shape`):
    one argument that is a plain value (not a generator or a tensor already of that shape) is
    given as a tensor of its parameter's type broadcast to `shape`, on the module's device
    (`device`), so generators (rand_float, ...) give each instance its own value, as SlangPy's
    construct() does."""
    params = fn.parameters
    by_name = {p[0]: p[2] for p in params}

    def widen(value, type_name):
        if isinstance(value, (_tensor.Tensor, torch.Tensor, dict)) or type(value).__name__.endswith("Arg"):
            return None
        try:
            d = _tensor.dtype_of(type_name, where)
        except TypeError:
            return None
        if d.is_struct:
            return None
        data = value._data if hasattr(value, "_data") else value
        try:
            t = torch.as_tensor(data, dtype=d.torch_dtype, device=_tensor._torch_device(device, where))
        except (TypeError, ValueError):
            return None
        t = t.reshape(tuple(d.shape)) if t.numel() == d.components else t.expand(tuple(d.shape))
        return t.expand(tuple(shape) + tuple(d.shape))

    args = list(args)
    for k, a in enumerate(args):
        if k < len(params):
            w = widen(a, params[k][2])
            if w is not None:
                args[k] = w
                return args, kwargs
    for name, a in kwargs.items():
        if name in by_name:
            w = widen(a, by_name[name])
            if w is not None:
                return args, {**kwargs, name: w}
    raise TypeError(f"{where}: needs an argument that is a plain value (not a generator) to run once per instance, "
                    "or tensors of the instances' shape")


def _device_of(struct, where: str):
    module = getattr(struct, "module", None)
    if module is None:
        raise TypeError(f"{where}: parameter 'struct' takes a struct of a module (module.Particle), got {struct!r}")
    return module.device


def _method(struct, name: str, this, where: str):
    try:
        fn = getattr(struct, name)
    except AttributeError:
        raise AttributeError(f"{where}: struct {struct.name} has no method or field '{name}'") from None
    params = fn.parameters
    if params and params[0][0] == "this":
        return lambda *args, **kwargs: fn(this, *args, **kwargs)
    return fn  # a static method: called as it is


class InstanceTensor(_tensor.Tensor):
    """Many instances of a module struct in one Tensor (SlangPy's InstanceTensor): attribute
    calls are the struct's methods over every instance (`particles.update(0.1)`: a [mutating]
    one writes them back), `construct(...)` runs its constructor once per instance. It binds
    to a call like the struct Tensor it is. Python subclasses may add attributes freely."""

    _sg_brief_help = True

    def __init__(self, struct, shape=None, device=None):
        if isinstance(struct, torch.Tensor):  # made from storage (views, with_grads)
            _tensor.Tensor.__init__(self, struct, shape, device)
            return
        where = f"{type(self).__name__}()"
        if shape is None:
            raise TypeError(f"{where}: parameter 'shape' is not specified")
        device = device if device is not None else _device_of(struct, where)
        d = _tensor.dtype_of(struct, where)
        storage = torch.zeros(_tensor._shape_of(shape, where) + tuple(d.shape), dtype=d.torch_dtype,
                              device=_tensor._torch_device(device, where))
        _tensor.Tensor.__init__(self, storage, d, device)

    @property
    def struct(self):
        return self.dtype.struct

    @property
    def buffer(self) -> _tensor.Tensor:
        """The instances as a plain struct Tensor (the same storage)."""
        return _tensor.Tensor(self.to_torch(), self.dtype, self._device)

    def construct(self, *args, **kwargs):
        """Runs the struct's constructor (`__init`) once per instance and stores the values."""
        where = f"{type(self).__name__}.construct()"
        init = _init_of(self.struct, where)
        if init is None:
            raise TypeError(f"{where}: struct {self.struct.name} has no __init")
        args, kwargs = _shaped(init, self._storage.device, tuple(self.shape), args, kwargs, where)
        init(*args, **kwargs, _result=self)
        return self

    def __getattr__(self, name):
        if name.startswith("_") or self.dtype.struct is None:
            raise AttributeError(name)
        return _method(self.dtype.struct, name, self, f"{type(self).__name__}.{name}")


class InstanceBuffer(InstanceTensor):
    """SlangPy's older name: an InstanceTensor of `shape` (or a count) instances."""

    _sg_brief_help = True

    def __init__(self, struct, shape=None, device=None):
        if isinstance(shape, int):
            shape = (shape,)
        super().__init__(struct, shape, device)


class InstanceList:
    """Instances of a module struct as a struct of arrays (SlangPy's InstanceList): each field
    is a Tensor, a torch tensor, a value or a ValueRef (`data`: a dict of them, or one struct
    Tensor for all). Attribute calls are the struct's methods over every instance, with `this`
    bound to the fields ([mutating] ones write the tensors and refs back); `construct(...)` runs
    its constructor. Fields are attributes (`instances.position`); a Python subclass may add
    attributes of its own, which are not fields. It binds wherever the struct does."""

    def __init__(self, struct, data=None):
        where = f"{type(self).__name__}()"
        object.__setattr__(self, "_struct", struct)
        object.__setattr__(self, "_fields", list(getattr(struct, "fields", {}) or {}))
        if not self._fields:
            raise TypeError(f"{where}: parameter 'struct' takes a struct of a module (module.Particle), got {struct!r}")
        object.__setattr__(self, "_data", {})
        object.__setattr__(self, "_whole", None)
        if isinstance(data, _tensor.Tensor):
            if not data.dtype.is_struct or data.dtype.name != struct.name:
                raise TypeError(f"{where}: parameter 'data' is a Tensor of {data.dtype.name}, not of {struct.name}")
            object.__setattr__(self, "_whole", data)
        elif isinstance(data, dict):
            for k, v in data.items():
                if k == "_type":
                    continue
                if k not in self._fields:
                    raise TypeError(f"{where}: struct {struct.name} has no field '{k}' (its fields: "
                                    f"{', '.join(self._fields)})")
                self._data[k] = v
        elif data is not None:
            raise TypeError(f"{where}: parameter 'data' takes a dict of fields or a struct Tensor, got "
                            f"{type(data).__name__}")

    @property
    def struct(self):
        return self._struct

    def get_this(self):
        """The value a call binds: the struct Tensor, or the dict of fields."""
        if self._whole is not None:
            return self._whole
        missing = [f for f in self._fields if f not in self._data]
        if missing:
            raise TypeError(f"{type(self).__name__}: field '{missing[0]}' of struct {self._struct.name} is not "
                            "specified")
        return {"_type": self._struct.name, **{f: self._data[f] for f in self._fields}}

    def update_this(self, value) -> None:
        """Tensors and refs were written in place; nothing else to store."""

    def _shape(self):
        src = [self._whole] if self._whole is not None else list(self._data.values())
        for v in src:
            if isinstance(v, _tensor.Tensor):
                return tuple(v.shape)
            if isinstance(v, torch.Tensor):
                return None
        return ()

    def construct(self, *args, **kwargs):
        """Runs the struct's constructor once per instance and stores it into the fields."""
        where = f"{type(self).__name__}.construct()"
        init = _init_of(self._struct, where)
        if init is None:
            raise TypeError(f"{where}: struct {self._struct.name} has no __init")
        shape = self._shape()
        if shape:
            args, kwargs = _shaped(init, _device_of(self._struct, where), shape, args, kwargs, where)
        value = init(*args, **kwargs, _result="tensor") if shape else init(*args, **kwargs)
        if self._whole is not None:
            self._whole.copy_from_torch(value.to_torch().expand(self._whole.to_torch().shape))
            return self
        fields = value.cursor()[0].read() if isinstance(value, _tensor.Tensor) and not shape else value
        self._store(self._data, fields if not isinstance(fields, _tensor.Tensor) else _tensor.leaf_tree(fields), where)
        return self

    def _store(self, target: dict, value, where: str):
        from . import _values

        for name in list(target):
            cur, new = target[name], value[name]
            if isinstance(cur, dict):
                self._store(cur, new, where)
            elif isinstance(cur, _tensor.Tensor):
                cur.copy_from_torch(torch.as_tensor(_plain(new), dtype=cur.to_torch().dtype).to(cur.to_torch().device)
                                    .expand(cur.to_torch().shape))
            elif isinstance(cur, torch.Tensor):
                with torch.no_grad():
                    cur.copy_(torch.as_tensor(_plain(new), dtype=cur.dtype).to(cur.device).expand(cur.shape))
            elif isinstance(cur, _values.ValueRef):
                cur.value = _ref_value(cur, new, name, where)
            else:
                target[name] = new

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        data = object.__getattribute__(self, "_data")
        if name in data:
            return data[name]
        return _method(self._struct, name, self, f"{type(self).__name__}.{name}")

    def __setattr__(self, name, value):
        if name in self._fields:
            self._data[name] = value
        else:
            object.__setattr__(self, name, value)

    def __repr__(self):
        return f"<{type(self).__name__} of {self._struct.name}: {', '.join(self._data) or 'a struct Tensor'}>"


def _ref_value(ref, new, name: str, where: str):
    """A constructed field's value for a ValueRef field: one value, as the ref holds it."""
    from . import _values

    if isinstance(new, torch.Tensor):
        size = len(ref.value._data) if isinstance(ref.value, _values.ValueType) else 1
        if new.numel() != size:
            raise ValueError(f"{where}: field '{name}' is a ValueRef, which holds one value, but there are "
                             f"{new.numel() // max(size, 1)} instances (use a Tensor for the field)")
        flat = new.reshape(-1).tolist()
        return type(ref.value)(flat) if isinstance(ref.value, _values.ValueType) else flat[0]
    if isinstance(ref.value, _values.ValueType) and not isinstance(new, _values.ValueType):
        return type(ref.value)(_plain(new))
    return new


def _plain(v):
    from . import _values

    if isinstance(v, _values.ValueType):
        return v.to_list()
    if isinstance(v, _tensor.Tensor):
        return v.to_torch()
    return v
