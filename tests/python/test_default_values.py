# tests/python/test_default_values.py — parameters with default values called from Python:
# trailing arguments left out, a middle one skipped by keyword, generic and struct-method
# defaults, gradients through calls that take defaults (against torch in float64, finite
# differences and hand values), distinct plans for distinct omissions, and the errors.
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
static const float K = 3.0;
float one() { return 1.0; }
[Differentiable] float scale(float x, float s = 2.0, no_diff int n = 1) { return x * s + n; }
[Differentiable] float poly(float x, float a = K, float b = -one()) { return a * x * x + b; }
[Differentiable] float3 shift(float3 p, float3 o = float3(1, 2, 3), float2 w = { 0.5, 4 }) { return p * w.x + o * w.y; }
[Differentiable] T times<T : IFloat>(T x, T s = T(3.0)) { return x * s; }
[Differentiable] double dpoly(double x, double a = K, double b = -one()) { return a * x * x + b; }
[Differentiable] double3 dshift(double3 p, double3 o = double3(1, 2, 3), double2 w = { 0.5, 4 })
{
    return p * p * w.x + o * w.y;
}
struct Acc
{
    float v;
    [Differentiable] float add(float a, float b = 0.25) { return v * a + b; }
};
struct C { static const int N = 7; };
float lead<let N : int>(vector<float, N> v, int k = C.N) { return v[0] + k; }
float over(float x, float s = 2) { return x * s; }
float over(float x, int s) { return -100.0 + x; }
float wide(float x, float2 w = { 1, 2 }) { return x * w.x + w.y; }
float wide(float x, float3 w) { return -100.0; }
struct Q : IDifferentiable { float a; float b; };
struct P : IDifferentiable { Q q; float c; };
[Differentiable] float nested(P p, float p_0 = 1.0) { return p.q.a * p.q.b * p.c * p_0; }
float pick(float x) { return x; }
float pick(float x, float y = 1.0) { return x + y; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "defaults", SOURCE)


def t(v, dtype=torch.float32, **kw):
    return torch.tensor(v, device=TEST_DEVICE, dtype=dtype, **kw)


def test_trailing_arguments_take_their_defaults(m):
    x = t([1.0, 2.0, 3.0])
    assert m.scale(x).tolist() == [3.0, 5.0, 7.0]          # x * 2 + 1
    assert m.scale(x, 3.0).tolist() == [4.0, 7.0, 10.0]    # x * 3 + 1
    assert m.scale(x, 3.0, 0).tolist() == [3.0, 6.0, 9.0]  # every argument given
    assert m.poly(x).tolist() == [2.0, 11.0, 26.0]         # 3 x^2 - 1: a global constant and a call
    assert m.scale(1.5) == 4.0                             # a plain value, no tensor


def test_a_middle_parameter_skipped_by_keyword(m):
    x = t([1.0, 2.0, 3.0])
    assert m.scale(x, n=5).tolist() == [7.0, 9.0, 11.0]
    assert m.poly(x, b=1.0).tolist() == [4.0, 13.0, 28.0]
    assert m.poly(x, a=1.0).tolist() == [0.0, 3.0, 8.0]


def test_one_function_called_with_different_omissions_keeps_them_apart(m):
    # Each omission is its own kernel (the plan's key holds the argument count and keywords).
    x = t([2.0])
    results = [m.scale(x).item(), m.scale(x, n=0).item(), m.scale(x, 0.5).item(), m.scale(x).item(),
               m.scale(x, s=4.0).item()]
    assert results == [5.0, 4.0, 2.0, 5.0, 9.0]


def test_vector_and_initializer_list_defaults(m):
    p = t([[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]])
    # p * 0.5 + (1, 2, 3) * 4
    assert m.shift(p).tolist() == [[4.0, 8.0, 12.0], [5.0, 10.0, 15.0]]
    assert m.shift(p, t([0.0, 0.0, 1.0])).tolist() == [[0.0, 0.0, 4.0], [1.0, 2.0, 7.0]]


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_generic_default_takes_the_instantiated_type(m, dtype):
    x = t([1.0, 2.5], dtype=dtype, requires_grad=True)
    y = m.times(x)
    assert y.dtype == dtype
    assert y.tolist() == [3.0, 7.5]
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_struct_method_default(sg, m):
    this = {"v": 2.0}
    assert m.Acc.add.bind(this)(3.0) == pytest.approx(6.25)
    assert m.Acc.add(this, 3.0, 1.0) == pytest.approx(7.0)


def test_gradients_through_defaults_match_torch_in_float64(m):
    # The defaults are constants: only the given arguments have gradients.
    x = t([0.5, -1.25, 2.0], dtype=torch.float64, requires_grad=True)
    xr = x.detach().clone().requires_grad_(True)
    m.dpoly(x).sum().backward()
    (3.0 * xr * xr - 1.0).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=0, atol=1e-12)
    assert x.grad.tolist() == [3.0, -7.5, 12.0]  # 6 x


def test_gradients_of_given_arguments_beside_defaulted_ones(m):
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    s = t([1.0, 0.5, -2.0], requires_grad=True)
    m.scale(x, s).sum().backward()  # n left out
    assert x.grad.tolist() == [1.0, 0.5, -2.0]
    assert s.grad.tolist() == [1.0, 2.0, 3.0]
    x.grad = None
    b = t([0.0, 1.0, 2.0], requires_grad=True)
    m.poly(x, b=b).sum().backward()  # a left out, b given
    assert x.grad.tolist() == [6.0, 12.0, 18.0]
    assert b.grad.tolist() == [1.0, 1.0, 1.0]


def test_gradient_against_finite_differences(m):
    x = t([[0.3, -0.7, 1.1]], dtype=torch.float64, requires_grad=True)
    x.grad = None
    m.dshift(x).sum().backward()
    h = 1e-6
    fd = []
    for k in range(3):
        e = torch.zeros_like(x)
        e[0, k] = h
        fd.append(((m.dshift(x.detach() + e).sum() - m.dshift(x.detach() - e).sum()) / (2 * h)).item())
    assert x.grad[0].tolist() == pytest.approx(fd, abs=1e-8)
    assert x.grad[0].tolist() == pytest.approx([0.3, -0.7, 1.1], abs=1e-15)  # p * 2 * 0.5


def test_debug_code_shows_the_default(m):
    code = m.scale.debug_code(t([1.0]))
    assert "float _default_1 = 2.0;" in code and "int _default_2 = 1;" in code
    assert "scale(_p_x[_c0], _default_1, _default_2)" in code


def test_errors_name_the_function_and_parameter(m):
    x = t([1.0])
    with pytest.raises(TypeError, match=r"scale\(\) missing required argument 'x'"):
        m.scale(s=2.0)
    with pytest.raises(TypeError, match=r"scale\(\) got an unexpected keyword argument 't'"):
        m.scale(x, t=1.0)
    with pytest.raises(TypeError, match=r"scale\(\) takes 3 arguments but 4 were given"):
        m.scale(x, 1.0, 1, 2)
    with pytest.raises(TypeError, match=r"map\(\) names parameter 's', which the call leaves to its default value"):
        m.scale.map(s="float")(x)


def test_an_overload_with_a_default_is_ambiguous_beside_one_without(m):
    # As in Slang: pick(x) fits both pick(float) and pick(float, float = 1.0) equally well.
    assert m.pick(1.0, 2.0) == 3.0
    with pytest.raises(TypeError, match=r"(?s)pick\(\): the call is ambiguous.*float pick\(float x, float y = 1.0\)"):
        m.pick(1.0)


def test_bwds_leaves_defaulted_parameters_out(sg, m):
    # The result's gradient stays the last positional argument.
    assert m.scale.parameter_defaults == {"s": "2.0", "n": "1"}
    p = sg.diffPair(3.0)
    m.scale.bwds(p, 1.5)  # s = 2 left out: d/dx = s * dresult
    assert p.grad == 3.0
    p = sg.diffPair(3.0)
    m.scale.bwds(p, 0.5, 2.0)  # s = 0.5 given, dresult = 2
    assert p.grad == 1.0
    p = sg.diffPair(3.0)
    m.scale.bwds(x=p, n=4, _result_grad=1.0)
    assert p.grad == 2.0
    with pytest.raises(TypeError, match=r"scale.bwds\(\): the gradient of the result is missing"):
        m.scale.bwds(sg.diffPair(3.0))


def test_the_default_converts_to_the_parameter_type_before_overloads_are_chosen(m):
    # `float s = 2` is a float: over(x, int) must not be picked because the literal is an int.
    x = t([1.0, 3.0])
    assert m.over(x).tolist() == [2.0, 6.0]
    assert m.wide(x).tolist() == [3.0, 5.0]  # the initializer list is a float2


def test_generic_arguments_replace_names_but_not_members(m):
    # The glue writes the default with N = 2 substituted, but C.N stays the struct's constant.
    assert m.lead(t([[1.0, 2.0]])).tolist() == [8.0]


def test_backward_of_a_defaulted_parameter_beside_a_nested_struct(m):
    a, b, c = (t([v], requires_grad=True) for v in (2.0, 3.0, 5.0))
    y = m.nested({"q": {"a": a, "b": b}, "c": c})
    y.backward()
    assert y.item() == 30.0
    assert [a.grad.item(), b.grad.item(), c.grad.item()] == [15.0, 10.0, 6.0]
