# tests/python/test_resolution.py — overload and generic resolution at the call (docs/calling.md,
# "Resolution"): overloads picked by vector width, dtype, Python scalar kind and matrix shape;
# generic arguments inferred from list lengths, tuples, value types, trailing extents, dtypes and
# dict `_type`s; explicit arguments (m["f<8, 5>"]); ambiguity and no-fit messages; call keys that
# keep different choices apart; gradients through generic calls.
import re

import pytest
import torch

from conftest import TEST_DEVICE, device_tensor as t

OVERLOADS = """
[Differentiable]
float f(float3 v) { return v.x + v.y + v.z; }
[Differentiable]
float f(float4 v) { return 10.0 * (v.x + v.y + v.z + v.w); }

float g(half x) { return 1.0; }
float g(float x) { return 2.0; }

float h(int x) { return float(x) + 100.0; }
float h(float x) { return x; }

float pick(float2x3 a) { return a[1][2]; }
float pick(float3x2 a) { return -a[2][1]; }

float amb(float x, double y) { return 1.0; }
float amb(double x, float y) { return 2.0; }

float arr(float[5] x) { return x[4]; }
float arr(float[6] x) { return -x[5]; }

float mix(float x) { return 1.0; }
float mix<T : IFloat>(T x) { return 2.0; }

float elem(float x) { return x; }
float elem(float[5] x) { return -x[4]; }
"""

GENERICS = """
import slangpy;

[Differentiable]
float wsq<let N : int>(float[N] x, float[N] w)
{
    float s = 0.0;
    [ForceUnroll]
    for (int i = 0; i < N; i++)
        s += w[i] * x[i] * x[i];
    return s;
}

[Differentiable]
T cubic<T : IFloat>(T x, T a, T b) { return a * x * x * x + b * x; }

float vsum<let N : int>(vector<float, N> v)
{
    float s = 0.0;
    for (int i = 0; i < N; i++)
        s += v[i];
    return s;
}

float msum<let R : int, let C : int>(matrix<float, R, C> m) { return float(R * 10 + C) + m[R - 1][C - 1]; }

float asum<let N : int>(float[N] x)
{
    float s = 0.0;
    for (int i = 0; i < N; i++)
        s += x[i];
    return s + 1000.0 * N;
}

float two<let A : int, let B : int>(float[A] a, float[B] b) { return float(A * 10 + B); }

float width<T : IFloat, let N : int>(vector<T, N> v) { return float(N); }

interface IShape
{
    float area();
};

struct Sq : IShape
{
    float s;
    float area() { return s * s; }
};

struct Circ : IShape
{
    float r;
    float area() { return 3.0 * r * r; }
};

float area_of<S : IShape>(S s) { return s.area(); }

T first<T : IFloat>(Tensor<T, 1> t) { return t[0]; }

float rank_of<let D : int>(Tensor<float, D> t) { return float(D); }
"""


@pytest.fixture(scope="module")
def ov(sg, device):
    return sg.Module.load_from_source(device, "overloads", OVERLOADS)


@pytest.fixture(scope="module")
def gm(sg, device):
    return sg.Module.load_from_source(device, "generics", GENERICS)


# ---------------------------------------------------------------- overloads


def test_overload_by_vector_width(ov):
    assert ov.f(t([[1, 2, 3], [4, 5, 6]])).tolist() == [6, 15]
    assert ov.f(t([[1, 2, 3, 4]])).tolist() == [100]


def test_overload_gradients(sg, ov):
    # The backward kernel differentiates the chosen overload (bwd_diff picks it by the types).
    a3 = t([[1, 2, 3]]).requires_grad_(True)
    a4 = t([[1, 2, 3, 4]]).requires_grad_(True)
    ov.f(a3).sum().backward()
    ov.f(a4).sum().backward()
    assert a3.grad.tolist() == [[1, 1, 1]]
    assert a4.grad.tolist() == [[10, 10, 10, 10]]
    v = sg.diffPair(sg.float4(1, 2, 3, 4))
    ov.f.bwds(v, 0.5)
    assert list(v.grad) == [5, 5, 5, 5]


def test_overload_by_dtype(ov):
    assert ov.g(t([1, 2], torch.float16)).tolist() == [1, 1]
    assert ov.g(t([1, 2])).tolist() == [2, 2]
    assert ov.g(0.5) == 2  # a Python float converts less to float than to half


def test_overload_python_int_before_float(ov):
    assert ov.h(3) == 103
    assert ov.h(3.5) == 3.5
    assert ov.h(t([3, 4], torch.int32)).tolist() == [103, 104]


def test_overload_by_matrix_shape(ov):
    a = torch.arange(6, dtype=torch.float32, device=TEST_DEVICE)
    assert ov.pick(a.reshape(1, 2, 3)).tolist() == [5]
    assert ov.pick(a.reshape(1, 3, 2)).tolist() == [-5]


def test_overload_by_array_length_with_key_separation(ov):
    # Extents above 4 share one class in the call key: the plan checks them.
    x5 = t([[0, 1, 2, 3, 4]])
    x6 = t([[0, 1, 2, 3, 4, 5]])
    assert ov.arr(x5).tolist() == [4]
    assert ov.arr(x6).tolist() == [-5]
    assert ov.arr(x5).tolist() == [4]
    assert ov.arr(x6).tolist() == [-5]


def test_key_separation_when_a_rejected_candidate_read_the_extent(ov):
    # (1, 6) fits only elem(float); (1, 5) fits both and takes elem(float[5]): the plan made for
    # (1, 6) checks the extent the other candidate would have read.
    x5 = t([[0, 1, 2, 3, 4]])
    x6 = t([[0, 1, 2, 3, 4, 5]])
    for _ in range(2):
        assert ov.elem(x6).tolist() == [[0, 1, 2, 3, 4, 5]]
        assert ov.elem(x5).tolist() == [-4]


def test_non_generic_exact_match_wins(ov):
    assert ov.mix(0.5) == 1
    assert ov.mix(t([0.5])).tolist() == [1]
    # Only the generic takes a float64 tensor (T = double) or a half tensor.
    assert ov.mix(t([0.5], torch.float64)).tolist() == [2]
    assert ov.mix(t([0.5], torch.float16)).tolist() == [2]


def test_ambiguity_lists_the_tied_candidates(ov):
    with pytest.raises(TypeError) as e:
        ov.amb(1.0, 2.0)
    msg = str(e.value)
    assert msg.startswith("amb(): the call is ambiguous: 2 overloads fit the arguments (a Python float, a Python float) equally well:")
    assert "\n  float amb(float x, double y)" in msg
    assert "\n  float amb(double x, float y)" in msg


def test_no_fit_lists_every_candidate_with_its_reason(ov):
    with pytest.raises(TypeError) as e:
        ov.f(t([[1, 2, 3, 4, 5]]))
    msg = str(e.value)
    lines = msg.split("\n")
    where = "cpu" if TEST_DEVICE == "cpu" else "cuda:0"
    assert lines[0] == f"f(): no overload fits the arguments (a float32 tensor of shape (1, 5) on {where}); the candidates:"
    assert lines[1].startswith("  float f(float3 v): parameter 'v' of type float3 needs a tensor whose last dims are (3,), got a float32 tensor of shape (1, 5)")
    assert lines[2].startswith("  float f(float4 v): parameter 'v' of type float4 needs a tensor whose last dims are (4,), got a float32 tensor of shape (1, 5)")
    assert len(lines) == 3


def test_no_fit_names_dtype_and_generic_reasons(ov):
    with pytest.raises(TypeError) as e:
        ov.mix(t([1], torch.int32))
    msg = str(e.value)
    assert msg.startswith("mix(): no overload fits the arguments (an int32 tensor of shape (1,)")
    assert "\n  float mix(float x): parameter 'x' of type float needs a float32 tensor, got an int32 tensor" in msg
    assert "\n  float mix<T : IFloat>(T x): type argument int does not conform to 'IFloat'" in msg


def test_no_fit_for_a_wrong_argument_count(ov):
    with pytest.raises(TypeError) as e:
        ov.h(1, 2)
    assert str(e.value) == (
        "h(): no overload fits the arguments (a Python int, a Python int); the candidates:\n"
        "  float h(int x): takes 1 argument but 2 were given (Too many arguments: expected 1, got 2)\n"
        "  float h(float x): takes 1 argument but 2 were given (Too many arguments: expected 1, got 2)"
    )


def test_key_separation_by_vector_width(sg, device):
    f = sg.Module.load_from_source(device, "overloads", OVERLOADS).f
    a3 = t([[1, 1, 1], [2, 2, 2]])
    a4 = t([[1, 1, 1, 1], [2, 2, 2, 2]])
    for _ in range(2):
        assert f(a3).tolist() == [3, 6]
        assert f(a4).tolist() == [40, 80]
    assert f.plan_count == 2


# ---------------------------------------------------------------- generic inference


def test_generic_value_from_list_and_tuple_lengths(gm):
    assert gm.wsq([1.0, 2.0, 3.0], [0.5, 0.25, 2.0]) == pytest.approx(19.5)
    assert gm.wsq((1, 2, 3), (0.5, 0.25, 2)) == pytest.approx(19.5)
    assert gm.wsq([1.0, 2.0], [1.0, 1.0]) == pytest.approx(5.0)
    assert gm.asum([1.0, 2.0, 3.0, 4.0]) == pytest.approx(4010.0)


def test_generic_key_separation_by_list_length(gm):
    f = gm.asum
    assert f([1.0, 2.0, 3.0]) == pytest.approx(3006.0)
    assert f([1.0, 2.0, 3.0, 4.0]) == pytest.approx(4010.0)
    assert f([1.0, 2.0, 3.0]) == pytest.approx(3006.0)


def test_generic_value_from_trailing_extent(gm):
    x5 = torch.ones(3, 5, device=TEST_DEVICE)
    x7 = torch.ones(3, 7, device=TEST_DEVICE)
    assert gm.asum(x5).tolist() == [5005.0] * 3
    assert gm.asum(x7).tolist() == [7007.0] * 3
    assert gm.asum(x5).tolist() == [5005.0] * 3
    assert gm.vsum(t([[1, 2, 3], [4, 5, 6]])).tolist() == [6, 15]
    assert gm.vsum(t([[1, 2]])).tolist() == [3]


def test_generic_matrix_from_trailing_extents(gm):
    a = torch.arange(6, dtype=torch.float32, device=TEST_DEVICE)
    assert gm.msum(a.reshape(1, 2, 3)).tolist() == [28.0]
    assert gm.msum(a.reshape(1, 3, 2)).tolist() == [37.0]


def test_generic_from_value_types(sg, gm):
    assert gm.vsum(sg.float3(1, 2, 3)) == pytest.approx(6.0)
    assert gm.width(sg.float2(1, 2)) == 2
    assert gm.width(sg.float4(1, 2, 3, 4)) == 4
    assert gm.vsum([1.0, 2.0, 3.0, 4.0]) == pytest.approx(10.0)


def test_generic_type_from_dtype(gm):
    for dtype in (torch.float32, torch.float64, torch.float16):
        x = t([2.0], dtype)
        out = gm.cubic(x, t([0.5], dtype), t([-1.0], dtype))
        assert out.dtype == dtype
        assert out.tolist() == [2.0]
    assert gm.cubic(2, 0.5, -1) == pytest.approx(2.0)  # Python int and float: T = float


def test_generic_tensor_parameters_from_a_whole_tensor(gm):
    assert gm.first(t([3.0, 4.0])).item() == 3.0
    out = gm.first(t([5.0, 4.0], torch.float64))
    assert out.dtype == torch.float64 and out.item() == 5.0
    assert gm.rank_of(torch.ones(2, 3, device=TEST_DEVICE)).item() == 2.0
    assert gm.rank_of(torch.ones(2, 3, 4, device=TEST_DEVICE)).item() == 3.0


def test_generic_type_conflict_is_named(gm):
    with pytest.raises(TypeError, match=r"cubic\(\): generic parameter 'T' is float from parameter 'x' but double from parameter 'a'"):
        gm.cubic(t([2.0]), t([0.5], torch.float64), t([1.0]))


def test_generic_from_dict_type(gm):
    assert gm.area_of({"_type": "Sq", "s": 2.0}) == pytest.approx(4.0)
    assert gm.area_of({"_type": "Circ", "r": 1.0}) == pytest.approx(3.0)
    with pytest.raises(TypeError, match=r"area_of\(\): generic parameter 'S' cannot be inferred from the arguments"):
        gm.area_of({"s": 2.0})


def test_generic_value_mismatch_is_named(gm):
    with pytest.raises(TypeError, match=r"wsq\(\): generic parameter 'N' is 3 from parameter 'x' but 2 from parameter 'w'"):
        gm.wsq([1.0, 2.0, 3.0], [1.0, 1.0])


def test_generic_gradients_through_autograd(gm):
    x = t([2.0, -1.5]).requires_grad_(True)
    a = t([0.5, 2.0]).requires_grad_(True)
    b = t([-1.0, 0.25]).requires_grad_(True)
    y = gm.cubic(x, a, b)
    assert y.tolist() == pytest.approx([2.0, -7.125])
    y.backward(torch.ones(2, device=TEST_DEVICE))
    assert x.grad.tolist() == pytest.approx([5.0, 13.75])
    assert a.grad.tolist() == pytest.approx([8.0, -3.375])
    assert b.grad.tolist() == pytest.approx([2.0, -1.5])


def test_generic_gradcheck_float64(gm):
    args = [torch.randn(5, dtype=torch.float64, device=TEST_DEVICE, requires_grad=True) for _ in range(3)]
    assert torch.autograd.gradcheck(lambda x, a, b: gm.cubic(x, a, b), args, eps=1e-6, atol=1e-8)
    x = torch.randn(4, 3, dtype=torch.float32, device=TEST_DEVICE, requires_grad=True)
    w = torch.randn(4, 3, dtype=torch.float32, device=TEST_DEVICE, requires_grad=True)
    gm.wsq(x, w).sum().backward()
    torch.testing.assert_close(x.grad, 2 * w.detach() * x.detach())
    torch.testing.assert_close(w.grad, x.detach() ** 2)


def test_generic_bwds(sg, gm):
    x, a, b = sg.diffPair(2.0), sg.diffPair(0.5), sg.diffPair(-1.0)
    gm.cubic.bwds(x, a, b, 1.0)
    assert (x.grad, a.grad, b.grad) == (pytest.approx(5.0), pytest.approx(8.0), pytest.approx(2.0))


# ---------------------------------------------------------------- explicit generic arguments


def test_explicit_arguments(gm):
    assert gm["wsq<3>"]([1.0, 2.0, 3.0], [0.5, 0.25, 2.0]) == pytest.approx(19.5)
    assert gm["wsq< 3 >"] is gm["wsq<3>"]
    assert gm["wsq<3>"].name == "wsq<3>"
    assert gm["two<8, 5>"]([0.0] * 8, [0.0] * 5) == 85
    assert gm["two<8,5>"] is gm["two<8, 5>"]
    f = gm.require_function("cubic<double>")
    assert f(t([2.0], torch.float64), t([0.5], torch.float64), t([-1.0], torch.float64)).tolist() == [2.0]
    assert gm.find_function("cubic<float>")(2.0, 0.5, -1.0) == pytest.approx(2.0)


def test_explicit_arguments_that_do_not_fit(gm):
    with pytest.raises(TypeError, match=r"wsq<4>\(\): parameter 'x' of type float\[4\] needs 4 items, got a Python list of 3 items"):
        gm["wsq<4>"]([1.0, 2.0, 3.0], [0.5, 0.25, 2.0])
    with pytest.raises(ValueError, match=r"'wsq<3, 4>': function 'wsq' cannot take the generic arguments wsq<3, 4>:\n  float wsq<let N : int>\(float\[N\] x, float\[N\] w\): it takes <let N : int>"):
        gm["wsq<3, 4>"]
    with pytest.raises(ValueError, match=r"function 'wsq' cannot take the generic arguments wsq<float>"):
        gm.require_function("wsq<float>")
    with pytest.raises(ValueError, match=r"(?s)cubic<int>.*int does not conform to 'IFloat'"):
        gm["cubic<int>"]
    with pytest.raises(ValueError, match=r"generic argument 'nosuch' is neither an integer nor a type"):
        gm["cubic<nosuch>"]
    assert gm.find_function("nosuch<3>") is None


def test_explicit_arguments_on_a_non_generic_function(ov):
    with pytest.raises(ValueError, match=r"'h<3>': function 'h' of module 'overloads' is not generic"):
        ov["h<3>"]


def test_generic_functions_are_attributes(gm):
    names = gm.function_names()
    for n in ("wsq", "cubic", "vsum", "area_of"):
        assert n in names
    assert [p[:2] for p in gm.wsq.parameters] == [("x", "in"), ("w", "in")]
    assert gm.wsq.parameters[0][2] == "float[N]"
    assert gm.wsq.returns_value
