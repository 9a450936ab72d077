# tests/python/test_spy_element_types.py — arguments whose element type is not the parameter's,
# as SlangPy resolves or rejects them: a vector value (sg.float3) given to a scalar parameter of
# its component type is read as that many scalars, one call dimension (SlangPy's broadcasting
# example); a torch tensor (..., 3) of floats to a float parameter is floats, but a shadegrad
# Tensor of float3 is not (its elements bind whole: SlangPy finds no binding); other mismatches
# (another component type, another vector size, int tensors to float parameters, float tensors to
# int parameters) are TypeErrors naming the function and the parameter.
import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
float add_floats(float a, float b) { return a * b + a; }
int add_ints(int a, int b) { return a + b; }
double twice(double a) { return 2.0 * a; }
half halve(half a) { return a * 0.5h; }
float4 id4(float4 v) { return v; }
float3 id3(float3 v) { return v; }
void store(float a, out float r) { r = a; }
float add_overloaded(float a, float b) { return a + b; }
float add_overloaded(float a, int b) { return a - float(b); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "spy_element_types", SOURCE)


def test_a_vector_value_to_a_scalar_parameter_is_its_components(sg, m):
    # SlangPy's broadcasting example: a float3 and 3 floats give 3 results.
    b = np.array([10, 20, 30], dtype=np.float32)
    res = m.add_floats(sg.float3(1, 2, 3), b, _result="numpy")
    assert res.shape == (3,) and res.tolist() == [11.0, 42.0, 93.0]
    # Both arguments vectors, by keyword; the result a torch tensor of the call's shape.
    r = m.add_floats(a=sg.float3(1, 2, 3), b=sg.float3(2, 2, 2))
    assert isinstance(r, torch.Tensor) and r.cpu().tolist() == [3.0, 6.0, 9.0]
    # Broadcast against a (4, 3) tensor: the float3's dimension is the last.
    t = torch.arange(12, dtype=torch.float32, device=TEST_DEVICE).reshape(4, 3)
    r = m.add_floats(sg.float3(1, 2, 3), t)
    want = torch.tensor([1.0, 2.0, 3.0]) * t.cpu() + torch.tensor([1.0, 2.0, 3.0])
    torch.testing.assert_close(r.cpu(), want)
    # int3 to int.
    assert m.add_ints(sg.int3(1, 2, 3), 10, _result="numpy").tolist() == [11, 12, 13]
    # The gradient of the tensor beside it.
    x = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE, requires_grad=True)
    m.add_floats(sg.float3(4, 5, 6), x).sum().backward()
    assert x.grad.cpu().tolist() == [4.0, 5.0, 6.0]


def test_a_float_tensor_ending_in_3_to_a_float_parameter_is_floats(sg, m):
    t = torch.arange(6, dtype=torch.float32, device=TEST_DEVICE).reshape(2, 3)
    r = m.add_floats(t, 1.0)
    assert r.shape == (2, 3) and r.cpu().tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]  # a * 1 + a


@pytest.mark.parametrize("call, message", [
    # another component type, as SlangPy (its scalars must be the parameter's type)
    (lambda sg, m: m.add_ints(sg.float3(1, 2, 3), 1), r"add_ints\(\): parameter 'a' of type int cannot take a float3"),
    (lambda sg, m: m.add_floats(sg.int3(1, 2, 3), 1.0), r"add_floats\(\): parameter 'a' of type float cannot take an int3"),
    (lambda sg, m: m.twice(sg.float3(1, 2, 3)), r"twice\(\): parameter 'a' of type double cannot take a float3"),
    (lambda sg, m: m.halve(sg.float3(1, 2, 3)), r"halve\(\): parameter 'a' of type half cannot take a float3"),
    # another vector size
    (lambda sg, m: m.id4(sg.float3(1, 2, 3)), r"id4\(\): parameter 'v' of type float4 cannot take a float3"),
    (lambda sg, m: m.id3(sg.float2(1, 2)), r"id3\(\): parameter 'v' of type float3 cannot take a float2"),
    # a matrix is not read as scalars
    (lambda sg, m: m.add_floats(sg.float2x2(1, 2, 3, 4), 1.0), r"add_floats\(\): parameter 'a' of type float cannot take a float2x2"),
    # written parameters take no values
    (lambda sg, m: m.store(1.0, sg.float3(1, 2, 3)), r"store\(\): parameter 'r'"),
    # tensors of another scalar type
    (lambda sg, m: m.add_floats(torch.ones(3, dtype=torch.int32, device=TEST_DEVICE), 1.0),
     r"add_floats\(\): parameter 'a' of type float needs a float32 tensor, got an int32 tensor"),
    (lambda sg, m: m.add_ints(torch.ones(3, device=TEST_DEVICE), 1),
     r"add_ints\(\): parameter 'a' of type int needs an int32 tensor, got a float32 tensor"),
    (lambda sg, m: m.id4(torch.ones(2, 3, device=TEST_DEVICE)),
     r"id4\(\): parameter 'v' of type float4 needs a tensor whose last dims are \(4,\)"),
])
def test_mismatches_are_type_errors_naming_the_parameter(sg, m, call, message):
    with pytest.raises(TypeError, match=message):
        call(sg, m)


def test_overloads_are_not_read_by_components(sg, m):
    # With overloads, a value fits the overload that takes it whole or none: the message lists them.
    with pytest.raises(TypeError, match=r"add_overloaded\(\): no overload fits the arguments"):
        m.add_overloaded(sg.float3(1, 2, 3), 1.0)


def test_a_tensor_of_float3_binds_its_elements_whole(sg, m, device):
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = sg.Tensor.from_numpy(device, data, dtype="float3")
    with pytest.raises(TypeError, match=r"add_floats\(\): parameter 'a' of type float cannot take a shadegrad\.Tensor "
                                        r"whose elements have shape \(3,\) \(a Tensor's elements bind whole, as in "
                                        r"SlangPy; its \.to_torch\(\) reads their components\)"):
        m.add_floats(v, 1.0)
    with pytest.raises(TypeError, match=r"add_floats\(\): parameter 'b' of type float cannot take a shadegrad\.Tensor"):
        m.add_floats(b=v, a=1.0)
    m3 = sg.Tensor.from_numpy(device, np.ones((2, 3, 3), dtype=np.float32), dtype="float3x3")
    with pytest.raises(TypeError, match=r"id3\(\): parameter 'v' of type float3 cannot take a shadegrad\.Tensor whose "
                                        r"elements have shape \(3, 3\)"):
        m.id3(m3)
    # Whole elements bind: float3 to float3, and the storage's floats to float.
    r = m.id3(v)
    assert isinstance(r, sg.Tensor) and r.to_numpy().tolist() == data.tolist()
    assert m.add_floats(v.to_torch(), 1.0).cpu().tolist() == (data + data).tolist()
    # A Tensor of floats (2, 3) still fills float3 parameters, as SlangPy's scalar Tensors do.
    f = sg.Tensor.from_numpy(device, data)
    assert m.id3(f).to_numpy().tolist() == data.tolist()
