# tests/python/test_structured_buffers.py — StructuredBuffer / RWStructuredBuffer parameters bound
# from tensors (shape (N,) + the element's shape; a struct as one dim of its flattened fields),
# structs as tensor elements (Tensor / RWTensor / DiffTensor / IDiffTensor of a struct), strided
# tensors, dtype and shape mistakes, and struct-element gradients against torch and float64
# central differences, through autograd and `.bwds`.
import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
struct P { float a; float b; };
struct Q : IDifferentiable { float2 p; float w[2]; };
struct D : IDifferentiable { double2 p; double w[2]; };
struct Mixed { float a; int b; };

float read_s(int i, StructuredBuffer<float> b) { return b[i]; }
float3 read_v(int i, StructuredBuffer<float3> b) { return b[i].zyx; }
float read_a(int i, int k, StructuredBuffer<float[4]> b) { return b[i][k]; }
float read_m(int i, StructuredBuffer<float2x3> b) { return b[i][1][2] * 100 + b[i][0][1]; }
float read_p(int i, StructuredBuffer<P> b) { return b[i].a * 10 + b[i].b; }
float read_va(int i, StructuredBuffer<float2[2]> b) { return b[i][1].x; }
void write_p(int i, RWStructuredBuffer<P> b) { b[i].b = b[i].a + 1.0; }
uint2 dims_q(StructuredBuffer<Q> b) { uint n, s; b.GetDimensions(n, s); return uint2(n, s); }
int read_i(int i, StructuredBuffer<int> b) { return b[i] * 2; }
double read_d(int i, StructuredBuffer<double> b) { return b[i]; }
half2 read_h(int i, StructuredBuffer<half2> b) { return b[i] * half(2.0); }
float read_mixed(StructuredBuffer<Mixed> b) { return b[0].a; }
float sum_all(StructuredBuffer<float> b) {
    uint n, s;
    b.GetDimensions(n, s);
    float t = 0;
    for (uint i = 0; i < n; i++) t += b[i];
    return t;
}

float tread_p(int i, Tensor<P, 1> t) { return t[i].a - t[i].b; }
void tswap_p(int2 ij, RWTensor<P, 2> t) { P p = t[ij.x, ij.y]; t[ij.x, ij.y] = { p.b, p.a }; }
float plain_p(P p) { return p.a; }
float plain_mixed(Mixed m) { return m.a; }
T first<T>(StructuredBuffer<T> b) { return b[0]; }
vector<float, N> firstv<let N : int>(StructuredBuffer<vector<float, N>> b) { return b[1]; }

[Differentiable]
float energy(int i, DiffTensor<Q, 1> t) { Q q = t[i]; return q.p.x * q.p.y + q.w[0] * q.w[0] + sin(q.w[1]); }
[Differentiable]
float energy_i(int i, IDiffTensor<Q, 1> t) { Q q = t[i]; return q.p.x * q.p.y + q.w[0] * q.w[0] + sin(q.w[1]); }
[Differentiable]
double energy_d(int i, DiffTensor<D, 1> t) { D q = t[i]; return q.p.x * q.p.y + q.w[0] * q.w[0] + sin(q.w[1]); }
[Differentiable]
void scatter(int i, DiffTensor<Q, 1> x, WDiffTensor<Q, 1> y)
{
    Q q = x[i];
    Q r;
    r.p = q.p * 2.0;
    r.w[0] = q.w[0] * q.w[1];
    r.w[1] = q.p.x;
    y[i] = r;
}
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "buffers", SOURCE)


def t(values, **kw):
    return torch.tensor(values, device=TEST_DEVICE, **kw)


def idx(values):
    return t(values, dtype=torch.int32)


# ---------------------------------------------------------------- element kinds


def test_scalar_buffer(m):
    b = t([1.5, 2.5, 4.0])
    assert m.read_s(idx([2, 0, 1]), b).tolist() == [4.0, 1.5, 2.5]
    assert m.sum_all(b) == 8.0


def test_vector_buffer(m):
    b = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert m.read_v(idx([1, 0]), b).tolist() == [[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]]


def test_array_buffer(m):
    b = t([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    assert m.read_a(idx([1, 0, 1]), idx([2, 3, 0]), b).tolist() == [7.0, 4.0, 5.0]


def test_array_of_vectors_buffer(m):
    b = torch.arange(8.0, device=TEST_DEVICE).reshape(2, 2, 2)
    assert m.read_va(idx([0, 1]), b).tolist() == [2.0, 6.0]


def test_matrix_buffer(m):
    b = torch.arange(12.0, device=TEST_DEVICE).reshape(2, 2, 3)
    assert m.read_m(idx([0, 1]), b).tolist() == [501.0, 1107.0]


def test_struct_buffer_fields_in_declaration_order(m):
    b = t([[1.0, 2.0], [3.0, 4.0]])
    assert m.read_p(idx([0, 1]), b).tolist() == [12.0, 34.0]


def test_rw_struct_buffer_writes_into_the_tensor(m):
    b = t([[1.0, 0.0], [3.0, 0.0], [5.0, 0.0]])
    m.write_p(idx([0, 2]), b)
    assert b.tolist() == [[1.0, 2.0], [3.0, 0.0], [5.0, 6.0]]


def test_get_dimensions_of_a_struct_buffer(m):
    b = torch.zeros(5, 4, device=TEST_DEVICE)
    assert list(m.dims_q(b)) == [5, 16]


def test_integer_and_double_buffers(m):
    assert m.read_i(idx([1, 0]), idx([7, -3])).tolist() == [-6, 14]
    d = t([0.1, 0.2], dtype=torch.float64)
    assert m.read_d(idx([0, 1]), d).tolist() == [0.1, 0.2]
    h = m.read_h(idx([1, 0]), t([[0.5, 1.5], [2.25, -1.0]], dtype=torch.float16))
    assert h.dtype == torch.float16 and h.tolist() == [[4.5, -2.0], [1.0, 3.0]]
    with pytest.raises(TypeError, match=r"parameter 'b' of type StructuredBuffer<half2> needs a float16 tensor, got a float32"):
        m.read_h(idx([0]), t([[0.5, 1.5]]))


def test_numpy_array_binds_to_a_buffer(sg, device, m):
    if TEST_DEVICE != "cpu":
        pytest.skip("numpy arrays are CPU memory")
    b = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    out = m.read_p(np.array([1, 0], dtype=np.int32), b)
    assert list(out) == [34.0, 12.0]


def test_generic_element_inferred_from_the_tensor(m):
    assert m.first(t([3.0, 4.0])) == 3.0
    assert m.first(idx([7, 8])) == 7
    assert list(m.firstv(t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))) == [4.0, 5.0, 6.0]


# ---------------------------------------------------------------- strided tensors


def test_strided_buffers(m):
    base = torch.arange(10.0, device=TEST_DEVICE)
    assert m.read_s(idx([0, 1, 4]), base[::2]).tolist() == [0.0, 2.0, 8.0]
    # A transposed (3, N) tensor: components N apart.
    v = torch.arange(6.0, device=TEST_DEVICE).reshape(3, 2).t()
    assert not v.is_contiguous()
    assert m.read_v(idx([0, 1]), v).tolist() == [[4.0, 2.0, 0.0], [5.0, 3.0, 1.0]]
    p = t([[1.0, 3.0], [2.0, 4.0]]).t()  # fields a = 1, 3 ... as rows of the transpose
    assert m.read_p(idx([0, 1]), p).tolist() == [12.0, 34.0]
    # Every other row of a bigger buffer, written in place.
    big = torch.zeros(6, 2, device=TEST_DEVICE)
    big[:, 0] = torch.arange(6.0, device=TEST_DEVICE)
    m.write_p(idx([0, 1, 2]), big[::2])
    assert big[:, 1].tolist() == [1.0, 0.0, 3.0, 0.0, 5.0, 0.0]


def test_struct_tensor_strided_and_in_place(m):
    x = t([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    assert m.tread_p(idx([0, 1]), x[1]).tolist() == [-1.0, -1.0]
    m.tswap_p(t([[0, 1], [1, 0]], dtype=torch.int32), x)
    assert x.tolist() == [[[1.0, 2.0], [4.0, 3.0]], [[6.0, 5.0], [7.0, 8.0]]]
    # A transposed view: fields stride apart.
    y = t([[1.0, 10.0], [2.0, 20.0]]).t()
    assert m.tread_p(idx([0, 1]), y).tolist() == [-1.0, -10.0]


# ---------------------------------------------------------------- mistakes


def test_dtype_mismatch_names_the_parameter(m):
    with pytest.raises(
        TypeError,
        match=r"read_s\(\): parameter 'b' of type StructuredBuffer<float> needs a float32 tensor, got a float64 tensor",
    ):
        m.read_s(idx([0]), t([1.0, 2.0], dtype=torch.float64))
    with pytest.raises(TypeError, match=r"parameter 'b' of type StructuredBuffer<int> needs an int32 tensor"):
        m.read_i(idx([0]), t([1.0]))


def test_shape_mismatches(m):
    with pytest.raises(TypeError, match=r"parameter 'b' of type StructuredBuffer<float3> needs a tensor whose last dims are \(3,\)"):
        m.read_v(idx([0]), torch.zeros(4, 2, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"parameter 'b' of type StructuredBuffer<P> needs a tensor whose last dims are \(2,\)"):
        m.read_p(idx([0]), torch.zeros(4, 3, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"StructuredBuffer<float> needs a tensor of shape \(N,\) \(one buffer per call\)"):
        m.read_s(idx([0]), torch.zeros(2, 4, device=TEST_DEVICE))


def test_mixed_struct_is_refused(m):
    with pytest.raises(TypeError, match=r"read_mixed\(\): parameter 'b' of type StructuredBuffer<Mixed>: struct Mixed mixes scalar types"):
        m.read_mixed(torch.zeros(3, 2, device=TEST_DEVICE))


def test_non_contiguous_element_dims_are_refused(m):
    b = torch.zeros(3, 2, 2, device=TEST_DEVICE).transpose(1, 2)
    with pytest.raises(TypeError, match=r"parameter 'b' .* not contiguous among themselves"):
        m.read_va(idx([0]), b)


def test_plain_struct_parameter_from_one_tensor(m):
    # One tensor whose last dim holds the struct's components (as a struct sg.Tensor does).
    assert m.plain_p(t([[1.0, 9.0], [2.0, 8.0]])).tolist() == [1.0, 2.0]
    # The SlangPy way: a dict with a tensor per field.
    assert m.plain_p({"a": t([1.0, 2.0]), "b": t([0.0, 0.0])}).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match=r"plain_p\(\): parameter 'p' of type P needs a tensor whose last dims are \(2,\)"):
        m.plain_p(torch.zeros(4, 3, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"parameter 'm' of type Mixed cannot be read from one tensor: struct Mixed mixes "
                                        r"scalar types.*pass a dict"):
        m.plain_mixed(torch.zeros(4, 2, device=TEST_DEVICE))


# ---------------------------------------------------------------- gradients of struct elements


def energy_ref(q, i):
    q = q[i.long()]
    return q[:, 0] * q[:, 1] + q[:, 2] * q[:, 2] + torch.sin(q[:, 3])


@pytest.mark.parametrize("fn", ["energy", "energy_i"])
def test_struct_difftensor_gradient_through_autograd(m, fn):
    torch.manual_seed(3)
    x = torch.randn(4, 4, device=TEST_DEVICE, requires_grad=True)
    i = idx([0, 2, 2, 3, 1])
    y = getattr(m, fn)(i, x)
    g = torch.randn(5, device=TEST_DEVICE)
    (y * g).sum().backward()
    xd = x.detach().double().requires_grad_(True)
    ref = energy_ref(xd, i)
    torch.testing.assert_close(y.detach().double(), ref.detach(), rtol=1e-5, atol=1e-6)
    (ref * g.double()).sum().backward()
    torch.testing.assert_close(x.grad.double(), xd.grad, rtol=1e-5, atol=1e-5)


def test_struct_difftensor_gradient_through_bwds(m):
    x = t([[1.0, 2.0, 0.5, 0.0], [3.0, -1.0, 2.0, 1.0]], requires_grad=True)
    i = idx([1, 0, 1])
    m.energy.bwds(i, x, t([1.0, 2.0, 0.5]))
    # d/dp.x = p.y, d/dp.y = p.x, d/dw0 = 2 w0, d/dw1 = cos(w1); row 1 is used with weights 1 + 0.5.
    want = [[2 * 2.0, 2 * 1.0, 2 * 2 * 0.5, 2 * 1.0], [1.5 * -1.0, 1.5 * 3.0, 1.5 * 4.0, 1.5 * float(np.cos(1.0))]]
    torch.testing.assert_close(x.grad, t(want), rtol=1e-5, atol=1e-6)


def test_struct_difftensor_gradcheck_float64(m):
    x = torch.randn(3, 4, dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    i = idx([0, 1, 2, 1])
    assert torch.autograd.gradcheck(lambda v: m.energy_d(i, v), (x,))


def test_struct_written_through_wdifftensor(m):
    torch.manual_seed(5)
    x = torch.randn(3, 4, device=TEST_DEVICE, requires_grad=True)
    y = torch.zeros(3, 4, device=TEST_DEVICE, requires_grad=True)
    out = y * 1.0
    m.scatter(idx([0, 1, 2]), x, out)
    xd = x.detach().double().requires_grad_(True)
    ref = torch.stack([xd[:, 0] * 2, xd[:, 1] * 2, xd[:, 2] * xd[:, 3], xd[:, 0]], dim=1)
    torch.testing.assert_close(out.detach().double(), ref.detach(), rtol=1e-6, atol=1e-6)
    g = torch.randn(3, 4, device=TEST_DEVICE)
    (out * g).sum().backward()
    (ref * g.double()).sum().backward()
    torch.testing.assert_close(x.grad.double(), xd.grad, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- faults


def test_buffer_index_out_of_bounds_names_the_parameter(m):
    b = t([1.0, 2.0])
    pattern = r"^read_s\(\): parameter 'b': index 5 out of bounds for dimension 0 of extent 2 at buffers\.slang:\d+:\d+"
    if TEST_DEVICE == "cpu":
        with pytest.raises(RuntimeError, match=pattern):
            m.read_s(idx([5]), b)
    else:
        m.read_s(idx([5]), b)  # asynchronous: the next call on the device raises it
        torch.cuda.synchronize()
        with pytest.raises(RuntimeError, match=pattern):
            m.read_s(idx([0]), b)
    assert m.read_s(idx([1]), b).tolist() == [2.0]
