# tests/python/test_globals.py — globals called from Python. `static` globals that are not
# const: every element of a call (one thread) starts from the declared initial values, whatever
# other elements or earlier calls wrote; a differentiable function reads a global as a constant
# (torch autograd gets the same gradient as the hand-written derivative, none for the global).
# Global buffers: the module loads and its other functions work; a function that uses one is
# called with the buffer bound by fn.set(...) (test_global_bindings.py), and without it is a
# TypeError naming the function and the global.
import pytest
import torch
from conftest import TEST_DEVICE

SOURCE = """
static int g_count = 0;
static double g_scale = 2.0;
float counted(float x)
{
    g_count++;
    g_count++;
    return x * float(g_count);
}
void set_scale(double s) { g_scale = s; }
[Differentiable]
double scaled_square(double x)
{
    return g_scale * x * x;
}
[Differentiable]
double rescaled(double x, no_diff double s)
{
    set_scale(s);
    return scaled_square(x);
}
"""


def test_each_element_starts_from_the_initial_values(sg, device):
    m = sg.Module.load_from_source(device, "static_globals", SOURCE)
    x = torch.arange(6, dtype=torch.float32, device=TEST_DEVICE)
    y = m.counted(x)
    assert torch.equal(y, x * 2)  # never 4, 6, ...: one copy per element
    y2 = m.counted(x)  # a second call starts again
    assert torch.equal(y2, x * 2)


def test_gradient_treats_the_global_as_a_constant(sg, device):
    m = sg.Module.load_from_source(device, "static_globals", SOURCE)
    x = torch.tensor([0.5, -1.0, 3.0], dtype=torch.float64, requires_grad=True, device=TEST_DEVICE)
    y = m.scaled_square(x)
    y.sum().backward()
    assert torch.allclose(y.detach(), 2.0 * x.detach() ** 2)
    assert torch.allclose(x.grad, 4.0 * x.detach())
    assert torch.autograd.gradcheck(lambda t: m.scaled_square(t), (x.detach().clone().requires_grad_(),))


def test_a_helper_sets_the_global_before_the_differentiated_read(sg, device):
    m = sg.Module.load_from_source(device, "static_globals", SOURCE)
    x = torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64, requires_grad=True, device=TEST_DEVICE)
    s = torch.tensor([3.0, 0.5, 4.0], dtype=torch.float64, device=TEST_DEVICE)
    y = m.rescaled(x, s)
    y.sum().backward()
    assert torch.allclose(y.detach(), s * x.detach() ** 2)
    assert torch.allclose(x.grad, 2.0 * s * x.detach())
    # float64 finite differences of the same call
    eps = 1e-6
    fd = (m.rescaled(x.detach() + eps, s) - m.rescaled(x.detach() - eps, s)) / (2 * eps)
    assert torch.allclose(x.grad, fd, atol=1e-6)


BUFFER_SOURCE = """
RWStructuredBuffer<float> g_table;
float lookup(int i) { return g_table[i]; }
float twice_lookup(int i) { return 2.0 * lookup(i); }
float plain(float x) { return x + 1.0; }
"""


def test_a_module_with_a_global_buffer_loads(sg, device):
    m = sg.Module.load_from_source(device, "global_buffer", BUFFER_SOURCE)
    assert torch.equal(m.plain(torch.tensor([1.0, 2.0], device=TEST_DEVICE)), torch.tensor([2.0, 3.0], device=TEST_DEVICE))


def test_calling_a_function_that_uses_a_global_buffer_names_it(sg, device):
    # Bound with fn.set(g_table=...): tests/python/test_global_bindings.py.
    m = sg.Module.load_from_source(device, "global_buffer", BUFFER_SOURCE)
    with pytest.raises(TypeError, match=r"twice_lookup\(\): it uses global buffer 'g_table' \(RWStructuredBuffer<float>, "
                                        r"line 2\), which the call does not bind"):
        m.twice_lookup(1)
    table = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE)
    assert m.twice_lookup.set(g_table=table)(2) == 6.0
