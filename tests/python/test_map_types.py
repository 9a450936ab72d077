# tests/python/test_map_types.py — fn.map() by type (SlangPy's type mapping): a type name per
# parameter, by position or keyword, says what the argument is read as (its element type, so its
# dtype and element dims); the glue converts it to the parameter's type. Part of the call key.
import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
int64_t add64(int64_t a, int64_t b) { return a + b; }
double twice(double x) { return x * 2.0; }
float3 scale(float3 v, float s) { return v * s; }
float sum3(float v[3]) { return v[0] + v[1] + v[2]; }
float len3(float3 v) { return length(v); }
struct P { float3 pos; float w; };
float pw(P p) { return p.pos.x * p.w; }
[Differentiable]
float sqf(float x) { return x * x; }
[Differentiable]
float dotf(float3 a, float3 b) { return dot(a, b); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "map_types", SOURCE)


def test_map_int64_by_position(m):
    a = torch.tensor([1 << 40, -3, 7], dtype=torch.int64, device=TEST_DEVICE)
    b = torch.tensor([5, 4, 1 << 35], dtype=torch.int64, device=TEST_DEVICE)
    out = m.add64.map("int64_t", "int64_t")(a, b)
    assert out.dtype == torch.int64 and out.tolist() == (a + b).tolist()
    # Python ints read as int64_t: exact beyond 32 bits.
    assert m.add64.map("int64_t", "int64_t")(1 << 40, 5) == (1 << 40) + 5


def test_map_reads_another_dtype_and_converts(m):
    x = torch.tensor([0.5, 1.25, -3.0], device=TEST_DEVICE)  # float32 into a double parameter
    with pytest.raises(TypeError, match=r"twice\(\): parameter 'x' of type double needs a float64 tensor"):
        m.twice(x)
    out = m.twice.map(x="float")(x)
    assert out.dtype == torch.float64 and out.tolist() == [1.0, 2.5, -6.0]
    h = torch.tensor([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]], dtype=torch.float16, device=TEST_DEVICE)
    assert m.len3.map(v="half3")(h).tolist() == [5.0, 2.0]
    # numpy too.
    np.testing.assert_allclose(m.twice.map("float")(np.array([1.5, 2.0], dtype=np.float32)), [3.0, 4.0])


def test_map_to_the_parameters_own_types(m):
    v = torch.arange(6.0, device=TEST_DEVICE).reshape(2, 3)
    assert m.sum3.map(v="float[3]")(v).tolist() == [3.0, 12.0]
    torch.testing.assert_close(m.len3.map("float3")(v), torch.linalg.vector_norm(v, dim=1))
    p = {"pos": v, "w": torch.tensor([2.0, 3.0], device=TEST_DEVICE)}
    assert m.pw.map(p="P")(p).tolist() == [0.0, 9.0]


def test_map_a_scalar_splats_to_a_vector(m):
    v = torch.tensor([1.0, 2.0], device=TEST_DEVICE)
    out = m.scale.map(v="float")(v, 3.0)
    assert out.shape == (2, 3) and out.tolist() == [[3.0] * 3, [6.0] * 3]


def test_map_type_errors_name_the_parameter(m):
    v = torch.ones(2, 3, device=TEST_DEVICE)
    with pytest.raises(TypeError, match=r"len3\(\): parameter 'v' of type float3: map\(\) names 'nosuch', which is no type"):
        m.len3.map(v="nosuch")(v)
    with pytest.raises(TypeError, match=r"len3\(\): parameter 'v' of type float3: map\(\) reads it as float\[3\], which does not convert to float3"):
        m.len3.map(v="float[3]")(v)
    with pytest.raises(TypeError, match=r"pw\(\): parameter 'p' of type P: map\(\) reads it as float3"):
        m.pw.map(p="float3")(v)
    with pytest.raises(TypeError, match=r"map\(\) of 'v' takes dimension tuples or a type name"):
        m.len3.map(v=float)
    # The mapped type decides the element shape the argument must have.
    with pytest.raises(TypeError, match=r"len3\(\): parameter 'v' of type half3 needs a float16 tensor"):
        m.len3.map(v="half3")(v)


def test_map_types_are_part_of_the_call_key(m):
    x = torch.ones(3, device=TEST_DEVICE)
    k_float = m.twice.map(x="float").call_key(x)
    k_plain = m.twice.call_key(x.double())
    k_half = m.twice.map(x="half").call_key(x.half())
    assert len({k_float, k_plain, k_half}) == 3
    assert m.twice.map(x="float").call_key(x) == k_float
    code = m.twice.map(x="float").debug_code(x)
    assert "twice(double(" in code


def test_map_types_with_gradients(m):
    x = torch.tensor([0.5, -2.0, 3.0], dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    y = m.sqf.map(x="double")(x)  # read as double, converted to the float parameter
    assert y.dtype == torch.float32 and y.grad_fn is not None
    y.backward(torch.tensor([1.0, 0.5, 2.0], device=TEST_DEVICE))
    assert x.grad.dtype == torch.float64
    torch.testing.assert_close(x.grad, torch.tensor([1.0, -2.0, 12.0], dtype=torch.float64, device=TEST_DEVICE))
    # A scalar splat into a vector parameter: the gradient sums the components.
    a = torch.tensor([1.0, 2.0], device=TEST_DEVICE, requires_grad=True)
    b = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=TEST_DEVICE, requires_grad=True)
    m.dotf.map(a="float")(a, b).sum().backward()
    assert a.grad.tolist() == [6.0, 15.0]
    assert b.grad.tolist() == [[1.0] * 3, [2.0] * 3]
    # An int tensor read into a differentiable float parameter: no gradient for it, the others get theirs.
    i = torch.tensor([[1, 0, 2], [0, 3, 0]], dtype=torch.int32, device=TEST_DEVICE)
    b.grad = None
    m.dotf.map(a="int3")(i, b).sum().backward()
    assert b.grad.tolist() == [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]
