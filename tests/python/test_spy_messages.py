# tests/python/test_spy_messages.py — the exception types and key phrases SlangPy's own tests
# (test_errors.py, test_grid.py) match on, kept inside shadegrad's fuller messages; and SlangPy's
# autograd rule: a call of a differentiable function that gets any tensor requiring grad has a
# grad_fn, whatever parameter binds the tensor (the read-only / no_diff ones get None).
import pytest
import torch

from conftest import TEST_DEVICE

MODULE = """
import "slangpy";
float foo(float a) { return a; }
float foo2(float a, float b) { return a+b; }
float foo_ol(float a) { return a; }
float foo_ol(float a, float b) { return a+b; }
int3 get(int3 input) { return input; }
int3 get_array(int[3] input) { return 0; }
struct Foo { int x; }
void hello() {}
[Differentiable] float lookup(int i, ITensor<float, 1> t) { return t[i]; }
[Differentiable] float scaled(no_diff float s, float x) { return s * x; }
float plain(ITensor<float, 1> t, int i) { return t[i]; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "spy_messages", MODULE)


def test_argument_count_and_names(m):
    # SlangPy's test_errors.py: the same phrases, here in TypeErrors that also say it our way.
    with pytest.raises(TypeError, match=r"foo\(\) takes 1 argument but 2 were given \(Too many arguments: expected 1, got 2\)"):
        m.foo.call(1.0, 2.0)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'b' \(No parameter named 'b'; its parameters: a\)"):
        m.foo.call(b=10.0)
    with pytest.raises(TypeError, match=r"Parameter 'a' not specified"):
        m.foo.call()
    with pytest.raises(TypeError, match=r"foo2\(\) missing required argument 'b' \(Parameter 'b' not specified\)"):
        m.foo2.call(10.0)
    with pytest.raises(TypeError, match=r"Parameter 'a' specified multiple times"):
        m.foo2.call(10.0, a=20.0)
    # An overload set lists each candidate's reason, with the same phrases.
    with pytest.raises(TypeError, match=r"(?s)no overload fits.*Too many arguments: expected 2, got 3"):
        m.foo_ol.call(1.0, 2.0, 3.0)


def test_broadcasting_phrases(sg, device):
    strict = sg.Module.load_from_source(device, "strict", MODULE, options={"strict_broadcasting": True})
    with pytest.raises(ValueError, match=r"Strict broadcasting is enabled"):
        strict.foo2(torch.zeros(10, device=TEST_DEVICE), torch.zeros(10, 10, device=TEST_DEVICE))
    m = sg.Module.load_from_source(device, "loose", MODULE)
    with pytest.raises(ValueError, match=r"does not broadcast with .*; Shape mismatch"):
        m.foo2(torch.zeros(10, 5, device=TEST_DEVICE), torch.zeros(10, 10, device=TEST_DEVICE))


def test_lookup_phrases(m):
    with pytest.raises(AttributeError, match=r"module 'spy_messages' has no function or type named 'nosuch' \(it has: "):
        m.nosuch
    with pytest.raises(AttributeError, match=r"struct 'Foo' has no method or sub-type named 'foo'"):
        m.Foo.foo


def test_grid_to_a_wrong_size_is_a_value_error(sg, m):
    # SlangPy's test_grid.py: ValueError, "Could not find suitable".
    with pytest.raises(ValueError, match=r"get\(\): parameter 'input' of type int3 cannot take grid\(\(2, 2\)\): a grid of "
                                         r"rank 2 binds to int2 or int\[2\] \(Could not find suitable conversion from a grid "
                                         r"of rank 2 to int3\)"):
        m.get(sg.grid(shape=(2, 2)), _result="numpy")
    with pytest.raises(ValueError, match="Could not find suitable conversion from a grid of rank 2 to int\\[3\\]"):
        m.get_array(sg.grid(shape=(2, 2)), _result="numpy")


def test_a_read_only_tensor_that_requires_grad_joins_the_graph(m):
    t = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE, requires_grad=True)
    r = m.lookup(torch.tensor([2, 0], dtype=torch.int32, device=TEST_DEVICE), t)
    assert r.grad_fn is not None and r.requires_grad
    r.sum().backward()  # as in SlangPy, backward works; the read-only tensor gets no gradient
    assert t.grad is None
    s = torch.tensor([3.0], device=TEST_DEVICE, requires_grad=True)
    y = m.scaled(s, torch.tensor([1.0, 2.0], device=TEST_DEVICE))
    assert y.grad_fn is not None
    y.sum().backward()
    assert s.grad is None
    # Mixed with a differentiated input, the gradients are unchanged.
    x = torch.tensor([1.0, 2.0], device=TEST_DEVICE, requires_grad=True)
    m.scaled(s, x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and s.grad is None
    # Without [Differentiable] the rule of docs/autograd.md stays: no node (and no warning for a
    # read-only tensor, which [Differentiable] would not differentiate either).
    assert m.plain(t, 1).grad_fn is None
    with torch.no_grad():
        assert m.lookup(torch.tensor([0], dtype=torch.int32, device=TEST_DEVICE), t).grad_fn is None


def test_backward_call_with_only_a_read_only_tensor_says_so(sg, m):
    t = torch.tensor([1.0, 2.0], device=TEST_DEVICE, requires_grad=True)
    with pytest.raises(TypeError, match="no argument takes part in differentiation"):
        m.lookup.bwds(torch.tensor([0], dtype=torch.int32, device=TEST_DEVICE), t, torch.ones(1, device=TEST_DEVICE))
