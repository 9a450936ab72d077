# tests/python/test_backward_entry.py — the call layer's backward entry (Function._backward) and
# the two users of it, fn.bwds and torch.compile's backward operator: the backward kernel runs
# alone (the forward is not run again, nothing but the gradients is written), and its gradients
# are those of the forward call's autograd node.
import pytest
import torch
from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
float scaled(float a, float b) { return a * b * 3.0; }

[Differentiable]
float bump(inout float acc, float x) { acc = acc + x * x; return acc * 2.0; }

[Differentiable]
void square_into(float x, out float y) { y = x * x; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "backward_entry", SOURCE)


def _t(values, grad=False, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype, device=TEST_DEVICE, requires_grad=grad)


def test_backward_entry_matches_the_autograd_node(m):
    a, b = _t([1.0, 2.0, 3.0], True), _t([4.0, 5.0, 6.0], True)
    g = _t([1.0, 0.5, 2.0])
    m.scaled(a, b).backward(g)
    pairs = m.scaled._backward((a.detach().requires_grad_(), b.detach().requires_grad_()), {}, [g], [])
    assert len(pairs) == 2
    grads = [grad for _, grad in pairs]
    assert torch.equal(grads[0], a.grad)
    assert torch.equal(grads[1], b.grad)
    assert torch.allclose(grads[0].double(), (g * b * 3.0).double().detach())


def test_backward_entry_only_for_tensors_that_require_grad(m):
    a, b = _t([1.0, 2.0], True), _t([4.0, 5.0])
    pairs = m.scaled._backward((a, b), {}, [_t([1.0, 1.0])], [])
    assert [t is a for t, _ in pairs] == [True]
    assert torch.equal(pairs[0][1], b * 3.0)
    assert m.scaled._backward((_t([1.0]), _t([2.0])), {}, [_t([1.0])], []) is None


def test_backward_entry_broadcasts_and_converts_the_result_gradient(m):
    a, b = _t([1.0, 2.0, 3.0], True), _t([4.0, 5.0, 6.0])
    pairs = m.scaled._backward((a, b), {}, [torch.tensor([2.0], dtype=torch.float64, device=TEST_DEVICE)], [])
    assert torch.equal(pairs[0][1], b * 6.0)


def test_backward_entry_names_the_function_for_a_bad_result_gradient(m):
    a, b = _t([1.0, 2.0, 3.0], True), _t([4.0, 5.0, 6.0])
    with pytest.raises(ValueError, match=r"scaled\(\): the gradient of the result has extent 2 in dimension 0"):
        m.scaled._backward((a, b), {}, [_t([1.0, 2.0])], [])


def test_bwds_does_not_run_the_forward(sg, m):
    # bump writes `acc` in its forward; bwds computes gradients only.
    acc = sg.diffPair(1.5, 1.0)
    x = sg.diffPair(2.0)
    m.bump.bwds(acc, x, 1.0)
    # d/d acc_before (acc_after * 2) with acc_after = acc + x^2: 2 from the result, 1 from acc's own.
    assert acc.grad == pytest.approx(3.0)
    # d/dx: (2 + 1) * 2x = 12
    assert x.grad == pytest.approx(12.0)
    assert acc.primal == 1.5
    # A tensor bound to the inout parameter keeps its value.
    t = _t([1.5])
    m.bump.bwds(t, sg.diffPair(2.0), 1.0)
    assert t.item() == 1.5


def test_bwds_out_parameter_takes_its_incoming_gradient(sg, m):
    x = sg.diffPair(3.0)
    y = sg.diffPair(0.0, 2.0)
    m.square_into.bwds(x, y)
    assert x.grad == pytest.approx(2.0 * 2.0 * 3.0)


def test_bwds_accumulates_into_a_tensors_grad_as_autograd_does(m):
    a, b = _t([1.0, 2.0], True), _t([3.0, 4.0])
    m.scaled.bwds(a, b, _t([1.0, 1.0]))
    m.scaled.bwds(a, b, _t([1.0, 1.0]))
    assert torch.equal(a.grad, 2 * b * 3.0)
    # A non-leaf's gradient flows on to its leaf.
    leaf = _t([1.0, 2.0], True)
    m.scaled.bwds(leaf * 2.0, b, _t([1.0, 1.0]))
    assert torch.equal(leaf.grad, b * 3.0 * 2.0)
