# tests/python/test_value_kinds.py — the value-kind table: Python registers each kind as one row
# (shadegrad._values.VALUE_KINDS through _core._register_value_kind), registration refuses an
# unknown kind, a missing or unexpected helper and classes that are not classes, every row the
# core has is registered and has a recogniser, and every kind of the call layer is recognised.
import re

import numpy as np
import pytest

KIND_NAMES = "value, numpy, value_ref, call_id, thread_id, wang_hash, rand_float, diff_pair, tensor"


def _table(sg):
    return sg._core._value_kinds()


def _rows(sg):
    return {row["name"]: row for row in _table(sg)["rows"]}


def _snapshot(sg):
    return [(r["name"], r["classes"], sorted(r["helpers"].items())) for r in _table(sg)["rows"]]


def test_registration_refuses_an_unknown_kind(sg):
    before = _snapshot(sg)
    with pytest.raises(ValueError, match=re.escape(f"shadegrad: no value kind 'quaternion' (the kinds: {KIND_NAMES})")):
        sg._core._register_value_kind("quaternion", sg.ValueType)
    assert _snapshot(sg) == before


def test_registration_refuses_a_row_without_a_required_helper(sg):
    from shadegrad import _values

    before = _snapshot(sg)
    with pytest.raises(
        ValueError,
        match=re.escape("shadegrad: value kind 'value_ref' needs the helper 'store' (its helpers: to_tensor, store)"),
    ):
        sg._core._register_value_kind("value_ref", sg.ValueRef, to_tensor=_values.ref_to_tensor)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "shadegrad: value kind 'value' needs the helper 'leaf_value' (its helpers: leaf_value, assemble)"
        ),
    ):
        sg._core._register_value_kind("value", sg.ValueType, assemble=_values.assemble)
    assert _snapshot(sg) == before


def test_registration_refuses_an_unexpected_helper(sg):
    from shadegrad import _values

    before = _snapshot(sg)
    with pytest.raises(
        ValueError, match=re.escape("shadegrad: value kind 'call_id' takes no helper 'store' (its helpers: none)")
    ):
        sg._core._register_value_kind("call_id", sg.CallIdArg, store=_values.ref_store)
    with pytest.raises(
        ValueError,
        match=re.escape("shadegrad: value kind 'numpy' takes no helper 'to_array' (its helpers: to_tensor, store)"),
    ):
        sg._core._register_value_kind(
            "numpy", "numpy.ndarray", to_tensor=_values.numpy_to_tensor, store=_values.numpy_store, to_array=print
        )
    assert _snapshot(sg) == before


def test_registration_refuses_classes_and_helpers_of_the_wrong_type(sg):
    from shadegrad import _values

    before = _snapshot(sg)
    with pytest.raises(
        TypeError,
        match=re.escape("shadegrad: value kind 'call_id' needs a class, a tuple of classes or 'module.Class', got int"),
    ):
        sg._core._register_value_kind("call_id", 3)
    with pytest.raises(TypeError, match="needs a class, a tuple of classes or 'module.Class', got tuple"):
        sg._core._register_value_kind("call_id", (sg.CallIdArg, 3))
    with pytest.raises(ValueError, match=re.escape("a class named by a string must be 'module.Class', got 'ndarray'")):
        sg._core._register_value_kind("call_id", "ndarray")
    with pytest.raises(TypeError, match=re.escape("shadegrad: value kind 'value_ref': helper 'store' is not callable")):
        sg._core._register_value_kind("value_ref", sg.ValueRef, to_tensor=_values.ref_to_tensor, store=3)
    assert _snapshot(sg) == before


def test_every_row_is_registered_with_its_recogniser_and_helpers(sg):
    from shadegrad import _values

    rows = _rows(sg)
    assert list(rows) == [row.name for row in _values.VALUE_KINDS], "VALUE_KINDS registers the core's rows, in order"
    for name, row in rows.items():
        assert row["registered"], name
        assert row["recogniser"], name
        assert row["classes"] is not None, name
        assert all(callable(h) for h in row["helpers"].values()), (name, row["helpers"])
        # A row that makes a kind of its own is named after it (call/value_kind.cpp's row).
        if row["arg_kind"] not in ("tensor", "none"):
            assert name == row["arg_kind"]


def test_every_kind_of_the_call_layer_is_recognised(sg):
    table = _table(sg)
    recognised = set(table["inline"]) | {row["arg_kind"] for row in table["rows"]}
    assert set(table["arg_kinds"]) - recognised <= {"none"}, table


SOURCE = "float f(bool b) { return b ? 1.0 : 0.0; }"

# One object of each row's kind and what a call that cannot bind it says about it: each row's
# recogniser gives the object its kind. A new row needs its sample here.
SAMPLES = {
    "value": (lambda sg: sg.float3(1, 2, 3), "cannot take a float3"),
    "numpy": (lambda sg: np.zeros(2, np.float32), "got a float32 array of shape (2,) on cpu"),
    "value_ref": (lambda sg: sg.ValueRef(1.0), "got a float32 ValueRef of shape () on cpu"),
    "call_id": (lambda sg: sg.call_id(), "cannot take call_id()"),
    "thread_id": (lambda sg: sg.thread_id(), "cannot take thread_id()"),
    "wang_hash": (lambda sg: sg.wang_hash(seed=3), "cannot take wang_hash()"),
    "rand_float": (lambda sg: sg.rand_float(), "cannot take rand_float()"),
    "diff_pair": (lambda sg: sg.diffPair(1.0, 1.0), "a diffPair argument is for backward calls"),
    "tensor": (lambda sg: type("MyTensor", (sg.Tensor,), {})(__import__("torch").zeros(2), "float"),
               "needs a bool tensor, got a float32 tensor of shape (2,)"),
}


def test_every_row_has_a_sample(sg):
    assert set(SAMPLES) == set(_rows(sg))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_row_recognises_its_objects(sg, cpu_device, name):
    module = sg.Module.load_from_source(cpu_device, "value_kinds", SOURCE)
    make, message = SAMPLES[name]
    with pytest.raises(TypeError, match=re.escape(message)):
        module.f(make(sg))


def test_an_object_of_no_kind_is_named_in_the_message(sg, cpu_device):
    module = sg.Module.load_from_source(cpu_device, "value_kinds", SOURCE)
    with pytest.raises(TypeError, match=re.escape("f(): parameter 'b' of type bool cannot take a Python object")):
        module.f(object())
