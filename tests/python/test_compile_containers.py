# tests/python/test_compile_containers.py — shadegrad.Tensor arguments under torch.compile. A call
# given a Tensor runs eagerly between two compiled graphs (a graph break), so its values, its
# Tensor result and its gradients are eager's; with fullgraph=True the break is an error naming
# the function and the parameter. A Tensor's .to_torch() keeps the call in the graph.
import numpy as np
import pytest
import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounterWithBackend

from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
float sq(float x, float y) { return x * x * y; }

[Differentiable]
float3 scale3(float3 v, float s) { return v * s; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "compiled_containers", SOURCE)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_tensor_arguments_give_eager_values_and_a_tensor(sg, m, device):
    x = sg.Tensor.from_numpy(device, np.array([1, 2, 3], dtype=np.float32))
    y = sg.Tensor.from_numpy(device, np.array([2, 3, 4], dtype=np.float32))

    def f(a, b):
        return m.sq(a, b)

    counter = CompileCounterWithBackend("eager")
    r = torch.compile(f, backend=counter)(x, y)
    assert isinstance(r, sg.Tensor)  # as eager: every tensor argument is a Tensor
    assert r.to_numpy().tolist() == [2.0, 12.0, 36.0]
    assert r.to_numpy().tolist() == f(x, y).to_numpy().tolist()
    # A vector Tensor too, by keyword.
    v = sg.Tensor.from_numpy(device, np.arange(6, dtype=np.float32).reshape(2, 3), dtype="float3")
    r = torch.compile(lambda t: m.scale3(v=t, s=2.0), backend="eager")(v)
    assert isinstance(r, sg.Tensor) and r.dtype.name == "float3" and tuple(r.shape) == (2,)
    np.testing.assert_array_equal(r.to_numpy(), 2 * np.arange(6, dtype=np.float32).reshape(2, 3))


def test_graphs_before_and_after_the_call_stay_compiled_and_gradients_flow(sg, m):
    xt = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE, requires_grad=True)
    yt = torch.tensor([2.0, 3.0, 4.0], device=TEST_DEVICE, requires_grad=True)
    x = sg.Tensor.from_torch(xt)

    def f(a, b):
        c = b * 2  # compiled before the call
        r = m.sq(a, c)  # a Tensor argument: runs eagerly; torch tensors present, so a torch result
        return r.sin()  # compiled after it

    counter = CompileCounterWithBackend("eager")
    r = torch.compile(f, backend=counter)(x, yt)
    assert isinstance(r, torch.Tensor)
    assert counter.frame_count == 2  # the graph before the break and the one after it
    r.sum().backward()
    # Against torch in float64: d/dx sin(x^2 2y) = cos(.) 4xy, d/dy = cos(.) 2x^2.
    x64, y64 = xt.detach().double().cpu(), yt.detach().double().cpu()
    u = x64 * x64 * 2 * y64
    torch.testing.assert_close(r.detach().double().cpu(), torch.sin(u), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(xt.grad.double().cpu(), torch.cos(u) * 4 * x64 * y64, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(yt.grad.double().cpu(), torch.cos(u) * 2 * x64 * x64, rtol=1e-5, atol=1e-5)


def test_tensors_with_grads_and_bwds_under_compile(sg, m, device):
    # SlangPy's gradient containers: the forward and fn.bwds inside the compiled function write
    # x.grad as eager does (2xy for x, with the result's gradient 1).
    x = sg.Tensor.from_numpy(device, np.array([1, 2, 3], dtype=np.float32)).with_grads(zero=True)
    y = sg.Tensor.from_numpy(device, np.array([2, 3, 4], dtype=np.float32))

    def f(a, b):
        r = m.sq(a, b, _result="tensor").with_grads()
        r.grad.storage.copy_from_numpy(np.ones(3, dtype=np.float32))
        m.sq.bwds(a, b, _result=r)
        return r

    r = torch.compile(f, backend="eager")(x, y)
    assert r.to_numpy().tolist() == [2.0, 12.0, 36.0]
    assert x.grad.to_numpy().tolist() == [4.0, 12.0, 24.0]


def test_fullgraph_names_the_function_and_parameter(sg, m, device):
    x = sg.Tensor.from_numpy(device, np.array([1, 2, 3], dtype=np.float32))
    yt = torch.tensor([2.0, 3.0, 4.0], device=TEST_DEVICE)
    with pytest.raises(Exception, match=r"sq\(\) parameter 'y' is given a shadegrad\.Tensor, so the call runs "
                                        r"outside the compiled graph \(pass its \.to_torch\(\) to keep the call in the graph\)"):
        torch.compile(lambda a, b: m.sq(a, b), backend="eager", fullgraph=True)(yt, x)
    with pytest.raises(Exception, match=r"sq\(\) parameter 'x' is given a shadegrad\.Tensor"):
        torch.compile(lambda a, b: m.sq(y=b, x=a), backend="eager", fullgraph=True)(x, yt)
    # Its storage stays in the graph: fullgraph works, the values are the same.
    r = torch.compile(lambda a, b: m.sq(a.to_torch(), b), backend="eager", fullgraph=True)(x, yt)
    assert r.cpu().tolist() == [2.0, 12.0, 36.0]
