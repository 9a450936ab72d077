# tests/python/test_spy_safety.py — tensors a call refuses to write, as torch's in-place rules do:
# `_result=`, out / inout parameters and writable tensor parameters given an expanded tensor
# (elements overlapping in memory) or, in grad mode, a leaf that requires grad; each error names
# the parameter, and nothing is written. Under torch.no_grad() a leaf is written like any tensor.
import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
[Differentiable] float f(float x) { return 2.0 * x; }
[Differentiable] void o(float x, out float y) { y = 2.0 * x; }
[Differentiable] void io(float x, inout float y) { y = y * x; }
float plain(float x) { return 2.0 * x; }
void plain_out(float x, out float y) { y = x; }
void plain_inout(float x, inout float y) { y = y + x; }
void fill(int i, RWTensor<float, 1> t) { t[i] = float(i); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "spy_safety", SOURCE)


def ones(*shape, **kw):
    return torch.ones(*shape, device=TEST_DEVICE, **kw)


def zeros(*shape, **kw):
    return torch.zeros(*shape, device=TEST_DEVICE, **kw)


OVERLAP = r"got a tensor whose elements overlap in memory \(dimension 0 has extent 4 and stride 0, as expand\(\) makes\)"


@pytest.mark.parametrize("call", ["result", "result_plain", "out", "plain_out", "inout", "plain_inout"])
def test_expanded_tensors_are_not_written(sg, m, call):
    target = zeros(1).expand(4)
    x = ones(4)
    calls = {
        "result": (lambda: m.f(x, _result=target), r"f\(\): _result= "),
        "result_plain": (lambda: m.plain(x, _result=target), r"plain\(\): _result= "),
        "out": (lambda: m.o(x, target), r"o\(\): parameter 'y' "),
        "plain_out": (lambda: m.plain_out(x, target), r"plain_out\(\): parameter 'y' "),
        "inout": (lambda: m.io(x, target), r"io\(\): parameter 'y' "),
        "plain_inout": (lambda: m.plain_inout(x, target), r"plain_inout\(\): parameter 'y' "),
    }
    run, who = calls[call]
    with pytest.raises(ValueError, match=who + OVERLAP):
        run()
    with torch.no_grad(), pytest.raises(ValueError, match=who + OVERLAP):
        run()
    assert target.cpu().tolist() == [0.0] * 4


def test_an_expanded_writable_tensor_parameter_is_refused(sg, m):
    t = zeros(1).expand(3)
    with pytest.raises(ValueError, match=r"fill\(\): parameter 't' got a tensor whose elements overlap in memory"):
        m.fill(sg.grid((3,)), t)
    # Broadcast reads stay fine, and a tensor of its own is written.
    assert m.f(ones(1).expand(4)).cpu().tolist() == [2.0] * 4
    mine = zeros(1).expand(4).contiguous()
    m.f(ones(4), _result=mine)
    assert mine.cpu().tolist() == [2.0] * 4


@pytest.mark.filterwarnings("ignore:plain_inout\\(\\) is not \\[Differentiable\\]")
@pytest.mark.parametrize("call", ["result", "result_plain", "out", "plain_out", "plain_inout"])
def test_leaves_that_require_grad_are_not_written(sg, m, call):
    target = zeros(4, requires_grad=True)
    x = ones(4)
    calls = {
        "result": (lambda: m.f(x, _result=target), r"f\(\): _result= is written by the call"),
        "result_plain": (lambda: m.plain(x, _result=target), r"plain\(\): _result= is written by the call"),
        "out": (lambda: m.o(x, target), r"o\(\): parameter 'y' is out"),
        "plain_out": (lambda: m.plain_out(x, target), r"plain_out\(\): parameter 'y' is out"),
        "plain_inout": (lambda: m.plain_inout(x, target), r"plain_inout\(\): parameter 'y' is inout"),
    }
    run, who = calls[call]
    with pytest.raises(ValueError, match=who + " and got a leaf tensor that requires grad; torch does not allow writing "
                                               "such a tensor in place"):
        run()
    assert target.detach().cpu().tolist() == [0.0] * 4
    # torch writes leaves in place under no_grad (an optimizer's step): so does a call.
    with torch.no_grad():
        run()
    assert target.detach().cpu().tolist() != [0.0] * 4 and target.is_leaf and target.grad_fn is None


def test_the_differentiable_inout_keeps_its_message(m):
    with pytest.raises(ValueError, match=r"io\(\): parameter 'y' is inout and got a leaf tensor that requires grad; .*"
                                         r"pass a clone"):
        m.io(ones(4), ones(4, requires_grad=True))


def test_ordinary_writes_still_work(sg, m):
    y = zeros(4)
    x = ones(4, requires_grad=True)
    m.o(x, y)
    assert y.grad_fn is not None
    y.sum().backward()
    assert x.grad.cpu().tolist() == [2.0] * 4
    out = np.zeros(4, dtype=np.float32)
    m.plain(np.ones(4, dtype=np.float32), _result=out)
    assert out.tolist() == [2.0] * 4
    r = sg.floatRef()
    m.plain_out(3.0, r)
    assert r.value == 3.0
