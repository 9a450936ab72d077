# tests/python/test_forward_differentiable.py — [ForwardDifferentiable] functions through the
# call API: they compute their values, their forward derivative is called from kernel code,
# and torch autograd (which needs a backward derivative) is refused with an error naming the
# function instead of a silent zero or an internal error. Runs on SHADEGRAD_TEST_DEVICE.
import pytest
import torch

from conftest import TEST_DEVICE, device_tensor as t

SOURCE = """
[ForwardDifferentiable]
float cube(float x) { return x * x * x; }
float dcube(float x) { return fwd_diff(cube)(diffPair(x, 1.0)).d; }
[ForwardDifferentiable]
float dcube_fwd(float x) { return fwd_diff(cube)(diffPair(x, 1.0)).d; }
float d2cube(float x) { return fwd_diff(dcube_fwd)(diffPair(x, 1.0)).d; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "forward_differentiable", SOURCE)


def test_values_and_forward_derivatives(m):
    x = t([-2.0, 0.5, 3.0])
    torch.testing.assert_close(m.cube(x), x**3)
    torch.testing.assert_close(m.dcube(x), 3 * x**2)
    torch.testing.assert_close(m.d2cube(x), 6 * x)


def test_autograd_is_refused_with_the_function_named(m):
    x = t([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"cube\(\) is forward-only differentiable"):
        m.cube(x)


def test_bwds_is_refused_with_the_function_named(sg, m):
    with pytest.raises(TypeError, match=r"cube\(\) is forward-only differentiable.*fn.bwds"):
        m.cube.bwds(sg.diffPair(2.0), 1.0)


def test_no_grad_and_inputs_without_grad_run(m):
    x = t([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        torch.testing.assert_close(m.cube(x), t([1.0, 8.0]))
    torch.testing.assert_close(m.cube(x.detach()), t([1.0, 8.0]))
