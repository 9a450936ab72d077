# python/shadegrad/_cursor.py — Tensor.cursor(): reading and writing a Tensor's elements from
# Python, element by element (SlangPy's buffer cursor). The cursor works on a host copy of the
# storage, taken when it is made; apply() writes the copy back to the Tensor.
"""Element cursors of shadegrad Tensors."""

from __future__ import annotations

import torch



def _values_mod():
    from . import _values

    return _values


def _vt():
    return _values_mod().VALUE_TYPES


class TensorCursor:
    """c[i] is the i-th element (row-major over the Tensor's shape): .read(), .write(value),
    ["field"] for a struct's field. apply() writes what was written to the Tensor."""

    def __init__(self, tensor):
        self._tensor = tensor
        d = tensor.dtype
        self._host = tensor.to_torch().detach().cpu().clone(memory_format=torch.contiguous_format).reshape(
            (-1,) + tuple(d.shape))
        self._dtype = d

    def __len__(self):
        return self._host.shape[0]

    def __getitem__(self, index: int) -> "ElementCursor":
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"TensorCursor[]: an element index is an int, got {type(index).__name__}")
        n = self._host.shape[0]
        if not -n <= index < n:
            raise IndexError(f"TensorCursor[]: element {index} of a Tensor of {n} elements")
        return ElementCursor(self, index % n, self._dtype, 0)

    def __setitem__(self, index: int, value) -> None:
        self[index].write(value)

    def apply(self) -> None:
        """Writes the cursor's elements to the Tensor."""
        t = self._tensor.to_torch()
        with torch.no_grad():
            t.copy_(self._host.reshape(t.shape).to(t.device))

    def read(self, index: int):
        return self[index].read()

    def write(self, index: int, value) -> None:
        self[index].write(value)


class ElementCursor:
    """One element (or a field of one) of a TensorCursor."""

    def __init__(self, cursor: TensorCursor, index: int, dtype, offset: int):
        self._c = cursor
        self._index = index
        self._dtype = dtype
        self._offset = offset  # first component within the element (struct fields)

    def _flat(self):
        row = self._c._host[self._index]
        n = self._dtype.components or 1
        flat = row.reshape(-1)
        return flat[self._offset:self._offset + n]

    def __getitem__(self, name: str) -> "ElementCursor":
        d = self._dtype
        if not d.is_struct:
            raise TypeError(f"a cursor of {d.name} has no fields")
        for fname, fd, off in d.fields:
            if fname == name:
                return ElementCursor(self._c, self._index, fd, self._offset + off)
        raise KeyError(f"struct {d.name} has no field '{name}' (its fields: {', '.join(f[0] for f in d.fields)})")

    def __setitem__(self, name: str, value) -> None:
        self[name].write(value)

    def read(self):
        """The element as a Python value: a number, a value type (sg.float3), a list (arrays)
        or a dict (structs)."""
        d = self._dtype
        if d.is_struct:
            return {fname: ElementCursor(self._c, self._index, fd, self._offset + off).read() for fname, fd, off in d.fields}
        flat = self._flat()
        if not d.shape:
            return flat[0].item()
        if d.name in _vt():
            return _vt()[d.name](flat.tolist())
        return flat.reshape(tuple(d.shape)).tolist()

    def write(self, value) -> None:
        """Sets the element: a number, a value type, a list or numpy array of its components, a
        dict of its fields (structs)."""
        d = self._dtype
        if d.is_struct:
            if not isinstance(value, dict):
                raise TypeError(f"ElementCursor.write(): a {d.name} element takes a dict of its fields, got "
                                f"{type(value).__name__}")
            names = [f[0] for f in d.fields]
            for key in value:
                if key != "_type" and key not in names:
                    raise KeyError(f"ElementCursor.write(): struct {d.name} has no field '{key}' (its fields: "
                                   f"{', '.join(names)})")
            for fname, fd, off in d.fields:
                if fname in value:
                    ElementCursor(self._c, self._index, fd, self._offset + off).write(value[fname])
            return
        if isinstance(value, _values_mod().ValueType):
            data = list(value._data)
        elif hasattr(value, "tolist") and not isinstance(value, (int, float, bool)):
            data = value.tolist()
        else:
            data = value
        src = torch.tensor(data, dtype=self._c._host.dtype).reshape(-1)
        n = self._dtype.components or 1
        if src.numel() != n:
            raise ValueError(f"ElementCursor.write(): a {d.name} element takes {n} values, got {src.numel()}")
        self._flat().copy_(src)
