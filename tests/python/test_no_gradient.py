# tests/python/test_no_gradient.py — arguments a call does not differentiate get no gradient:
# a tensor that requires grad passed to a `no_diff` parameter or to a read-only tensor parameter
# (ITensor, Tensor) keeps .grad None and no gradient buffer is allocated for it, on both torch
# bridges (the allocations of the backward are observed through a TorchDispatchMode), while the
# call still records a node when only such a tensor requires grad (SlangPy's rule); and a
# function without [Differentiable] called with a tensor that requires grad warns once.
import warnings

import pytest
import torch

from conftest import TEST_DEVICE, run_python

SOURCE = """
import slangpy;
[Differentiable]
float mix(float x, no_diff float s, ITensor<float, 1> t, Tensor<float, 1> u)
{
    return x * s + x * t[0] + u[1];
}
[Differentiable]
float scale(no_diff float s, float x) { return s * x * x; }
float twice(float x) { return 2.0f * x; }
float twice_nd(no_diff float x) { return 2.0f * x; }
[Differentiable]
float lookup(int i, ITensor<float, 1> t) { return t[i]; }
"""

BOTH_BRIDGES = """
import torch
from torch.utils._python_dispatch import TorchDispatchMode
import shadegrad as sg

class Allocations(TorchDispatchMode):
    '''Records the shape of every tensor allocated by an empty/zeros op while active.'''
    def __init__(self):
        super().__init__()
        self.numels = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {{}}))
        name = func.overloadpacket.__name__
        if name in ("empty", "empty_strided", "zeros", "new_empty", "new_zeros", "empty_like", "zeros_like"):
            self.numels.append(out.numel())
        return out

m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.{device}), "nograd", '''{source}''')
dev = "{device}"
x = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], device=dev, requires_grad=True)
s = torch.tensor([0.5, -1.0, 2.0, 3.0, -4.0], device=dev, requires_grad=True)
t = torch.arange(7.0, device=dev).add_(1.5).requires_grad_(True)      # 11 elements below: distinct sizes
u = torch.arange(11.0, device=dev).requires_grad_(True)
out = m.mix(x, s, t, u)
assert out.grad_fn is not None
with Allocations() as alloc:
    out.sum().backward()
assert s.grad is None and t.grad is None and u.grad is None, (s.grad, t.grad, u.grad)
torch.testing.assert_close(x.grad, s.detach() + 1.5)
# Only x's gradient was allocated: no buffer of 5 + 5, 7 or 11 elements (or their sums).
assert 5 in alloc.numels and set(alloc.numels) <= {{1, 5}}, alloc.numels  # 1: the loss gradient

# A no_diff input that is not a leaf: nothing flows into its history either.
a = torch.tensor([1.0, 2.0], device=dev, requires_grad=True)
sa = a * 3.0
x2 = torch.tensor([2.0, -1.0], device=dev, requires_grad=True)
m.scale(sa, x2).sum().backward()
assert a.grad is None
torch.testing.assert_close(x2.grad, 2.0 * sa.detach() * x2.detach())

# Only a non-differentiated input requires grad: as in SlangPy, the call is still part of the
# graph (the result has a grad_fn and backward runs), but the input gets no gradient, no buffer
# and no kernel.
t2 = torch.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
r = m.lookup(torch.tensor([2, 0], device=dev, dtype=torch.int32), t2)
assert r.grad_fn is not None and r.tolist() == [3.0, 1.0]
with Allocations() as alloc:
    r.sum().backward()
assert t2.grad is None and set(alloc.numels) <= {{1}}, (t2.grad, alloc.numels)
with torch.no_grad():
    assert m.lookup(torch.tensor([1], device=dev, dtype=torch.int32), t2).grad_fn is None
print("ok")
"""


@pytest.mark.parametrize("bridge", ["native", "fallback"])
def test_no_diff_and_read_only_tensors_get_no_gradient(bridge):
    proc = run_python(BOTH_BRIDGES.format(device=TEST_DEVICE, source=SOURCE), bridge)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("ok"), proc.stdout


@pytest.fixture()
def m(sg, device):
    # A fresh module per test: the warning is said once per function object's state.
    return sg.Module.load_from_source(device, "nograd_warn", SOURCE)


def test_missing_differentiable_warns_once_per_function(sg, m):
    x = torch.tensor([1.0, 2.0], device=TEST_DEVICE, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = m.twice(x)
        m.twice(x)
        m.twice(x * 2.0)
    assert r.grad_fn is None and r.tolist() == [2.0, 4.0]
    ours = [w for w in caught if issubclass(w.category, sg.NotDifferentiableWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    text = str(ours[0].message)
    assert "twice()" in text and "'x'" in text and "[Differentiable]" in text
    assert issubclass(sg.NotDifferentiableWarning, UserWarning)


def test_missing_differentiable_is_silent_where_it_changes_nothing(sg, m):
    x = torch.tensor([1.0, 2.0], device=TEST_DEVICE, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.NotDifferentiableWarning)
        with torch.no_grad():
            m.twice(x)                      # grad mode off
        m.twice(x.detach())                 # nothing requires grad
        m.twice_nd(x)                       # a no_diff parameter: [Differentiable] would not help
        out = m.scale(x, x)                 # a [Differentiable] function
    assert out.grad_fn is not None


def test_missing_differentiable_warning_can_be_an_error_or_ignored(sg, m):
    x = torch.tensor([1.0], device=TEST_DEVICE, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.NotDifferentiableWarning)
        with pytest.raises(sg.NotDifferentiableWarning, match=r"twice\(\) is not \[Differentiable\]"):
            m.twice(x)
        with pytest.raises(sg.NotDifferentiableWarning):  # an error filter raises every time
            m.twice(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=sg.NotDifferentiableWarning)
        assert m.twice(x).tolist() == [2.0]
    assert not caught
