# tests/python/test_call_errors.py — one test per caller mistake with the new value kinds: the
# exception type SlangPy raises where user code catches it, and a message that names the
# function and the parameter and says what was expected and what was given. Nothing crashes.
import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
struct P { float3 pos; int id; };
float sum3(float a[3]) { return a[0] + a[1] + a[2]; }
float len3(float3 v) { return length(v); }
float m23(float2x3 m) { return m[0][0]; }
float usep(P p) { return p.pos.x + float(p.id); }
int twice(int i) { return 2 * i; }
void outv(float x, out float y) { y = x; }
P makep(float x) { P p; p.pos = float3(x, x, x); p.id = 1; return p; }
[Differentiable]
float sq(float x) { return x * x; }
float3 v3(float x) { return float3(x, x, x); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "errors", SOURCE)


def test_list_of_the_wrong_length(m):
    with pytest.raises(TypeError, match=r"sum3\(\): parameter 'a' of type float\[3\] needs 3 items, got a Python list of 2 items"):
        m.sum3([1.0, 2.0])
    with pytest.raises(TypeError, match=r"len3\(\): parameter 'v' of type float3 needs 3 components, got a Python list of 4"):
        m.len3([1, 2, 3, 4])


def test_list_for_a_scalar_or_struct(m):
    with pytest.raises(TypeError, match=r"twice\(\): parameter 'i' of type int cannot take a Python list of 1 item"):
        m.twice([1])
    with pytest.raises(TypeError, match=r"usep\(\): parameter 'p' of type P cannot take a Python list"):
        m.usep([1, 2])


def test_matrix_rows_of_the_wrong_shape(m):
    with pytest.raises(TypeError, match=r"m23\(\): parameter 'm' of type float2x3 needs 2 rows of 3 components"):
        m.m23([[1, 2], [3, 4]])


def test_dict_for_a_non_struct_and_bad_keys(m):
    with pytest.raises(TypeError, match=r"len3\(\): parameter 'v' of type float3 got a dict without component 'y'"):
        m.len3({"x": 1.0})
    with pytest.raises(TypeError, match=r"twice\(\): parameter 'i' of type int cannot take a Python dict of 1 field"):
        m.twice({"x": 1.0})
    with pytest.raises(TypeError, match=r"keys must be field names"):
        m.usep({1: 2.0})
    with pytest.raises(TypeError, match=r"_type must be a struct name"):
        m.usep({"_type": 3, "pos": [1, 2, 3], "id": 1})


def test_nested_field_of_the_wrong_kind(sg, m):
    with pytest.raises(TypeError, match=r"usep\(\): parameter 'p.id' of type int cannot take a Python float"):
        m.usep({"pos": sg.float3(1, 2, 3), "id": 1.5})
    with pytest.raises(TypeError, match=r"parameter 'p.pos' of type float3 needs 3 components"):
        m.usep({"pos": [1, 2], "id": 1})


def test_value_type_of_the_wrong_shape_or_kind(sg, m):
    with pytest.raises(TypeError, match=r"len3\(\): parameter 'v' of type float3 cannot take a float2"):
        m.len3(sg.float2(1, 2))
    with pytest.raises(TypeError, match=r"len3\(\): parameter 'v' of type float3 cannot take a bool3"):
        m.len3(sg.bool3(True, True, False))
    with pytest.raises(TypeError, match=r"twice\(\): parameter 'i' of type int cannot take a float2"):
        m.twice(sg.float2(1, 2))
    # An int2 to an int parameter is read as two ints, one call dimension, as SlangPy reads it
    # (test_spy_element_types.py).
    assert m.twice(sg.int2(1, 2), _result="numpy").tolist() == [2, 4]


def test_unsupported_objects_are_named(m):
    with pytest.raises(TypeError, match=r"twice\(\): parameter 'i' of type int cannot take a Python str"):
        m.twice("3")
    with pytest.raises(TypeError, match=r"cannot take a Python object"):
        m.twice(object())


def test_diff_pair_outside_bwds(sg, m):
    with pytest.raises(TypeError, match=r"diffPair argument is for backward calls"):
        m.sq(sg.diffPair(1.0))


def test_out_parameter_given_a_value(sg, m):
    with pytest.raises(TypeError, match=r"outv\(\): parameter 'y' of type float is an out/inout parameter and needs a tensor or a ValueRef, got a Python float"):
        m.outv(1.0, 2.0)
    with pytest.raises(TypeError, match=r"parameter 'y' of type float is an out/inout parameter: a Python list"):
        m.outv(1.0, [2.0])


def test_self_containing_list(m):
    a = []
    a.append(a)
    with pytest.raises(ValueError, match="nested more than 16 levels"):
        m.sum3(a)


def test_result_argument_mistakes(m):
    x = torch.ones(4, device=TEST_DEVICE)
    with pytest.raises(ValueError, match=r"sq\(\): _result= of shape \(3,\) does not match the call shape \(4,\)"):
        m.sq(x, _result=torch.zeros(3, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"sq\(\): _result= needs a float32 tensor, got a float64 tensor"):
        m.sq(x, _result=torch.zeros(4, dtype=torch.float64, device=TEST_DEVICE))
    with pytest.raises(ValueError, match=r"v3\(\): _result= needs a tensor whose last dims are \(3,\) \(the result is float3\), got shape \(4, 2\)"):
        m.v3(x, _result=torch.zeros(4, 2, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"makep\(\): _result= cannot take a struct"):
        m.makep(x, _result=torch.zeros(4, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"_result= / return_type\(\) cannot take an int"):
        m.sq(x, _result=3)


def test_struct_result_under_autograd_is_refused(m):
    x = torch.ones(2, device=TEST_DEVICE, requires_grad=True)
    # makep is not differentiable: its result needs no autograd, so it returns.
    assert set(m.makep(x)) == {"pos", "id"}


def test_numpy_of_an_unsupported_dtype(m):
    with pytest.raises(TypeError, match=r"sq\(\): parameter 'x' of type float needs a float32 tensor, got a float64 array of shape \(3,\)"):
        m.sq(np.ones(3))


def test_ref_of_an_unsupported_value(sg, m):
    with pytest.raises(TypeError, match="a ValueRef holds a Python scalar or a value type"):
        m.outv(1.0, sg.ValueRef("text"))


def test_grid_and_generator_as_out(sg, m):
    with pytest.raises(TypeError, match=r"outv\(\): parameter 'y' of type float is an out/inout parameter and cannot take call_id\(\)"):
        m.outv(1.0, sg.call_id())


def test_errors_reach_python_as_through_any_bound_function(sg, m):
    # A call runs from the type's call slot straight into C++; its errors still take nanobind's
    # translation: the project's exception kinds, a Python exception from a callback unchanged,
    # and the same errors through the `call` method.
    x = torch.ones(3, device=TEST_DEVICE)

    def failing_values():
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        m.sq.set(failing_values)()
    with pytest.raises(TypeError, match=r"sq\(\) takes 1 argument"):
        m.sq(*([x] * 20))
    with pytest.raises(TypeError, match="unexpected keyword argument 'k0'"):
        m.sq(x=x, **{f"k{i}": x for i in range(20)})
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        m.twice(2**70)
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        m.twice.call(2**70)
    # Keyword-free and keyword calls after an error still work (nothing is left pending).
    assert torch.equal(m.sq(x), x * x) and torch.equal(m.sq(x=x), x * x)
