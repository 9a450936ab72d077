# tests/python/test_buffer_fields.py — structs with buffer fields passed from Python as dicts:
# the tensor of a StructuredBuffer field is bound whole, the other fields as usual; a
# RWStructuredBuffer field is written in place; a differentiable function reads weights through
# the field with no gradient to them and the right one to its own input.
import pytest
import torch
from conftest import TEST_DEVICE

SOURCE = """
struct Scene { StructuredBuffer<float> data; int n; };
float total(Scene s)
{
    float t = 0;
    for (int i = 0; i < s.n; i++)
        t += s.data[i];
    return t;
}
struct Sink { RWStructuredBuffer<float> dst; float scale; };
void put(Sink s, int i, float v) { s.dst[i] = v * s.scale; }
struct Model { StructuredBuffer<double> w; };
[Differentiable]
double poly(no_diff Model m, double x) { return m.w[0] * x * x + m.w[1] * x; }
"""


def test_a_dict_binds_a_struct_with_a_buffer_field(sg, device):
    m = sg.Module.load_from_source(device, "buffer_fields", SOURCE)
    data = torch.tensor([1.0, 2.0, 3.0, 4.0], device=TEST_DEVICE)
    assert m.total({"data": data, "n": 3}).item() == 6.0
    n = torch.tensor([1, 2, 4], dtype=torch.int32, device=TEST_DEVICE)
    assert torch.equal(m.total({"data": data, "n": n}), torch.tensor([1.0, 3.0, 10.0], device=TEST_DEVICE))


def test_a_read_write_buffer_field_is_written_in_place(sg, device):
    m = sg.Module.load_from_source(device, "buffer_fields", SOURCE)
    out = torch.zeros(4, device=TEST_DEVICE)
    m.put({"dst": out, "scale": 0.5}, torch.tensor([0, 2], dtype=torch.int32, device=TEST_DEVICE), torch.tensor([4.0, 10.0], device=TEST_DEVICE))
    assert torch.equal(out, torch.tensor([2.0, 0.0, 5.0, 0.0], device=TEST_DEVICE))


def test_gradient_through_a_buffer_field_reader(sg, device):
    m = sg.Module.load_from_source(device, "buffer_fields", SOURCE)
    w = torch.tensor([3.0, 0.5], dtype=torch.float64, device=TEST_DEVICE)
    x = torch.tensor([2.0, -1.0, 0.25], dtype=torch.float64, requires_grad=True, device=TEST_DEVICE)
    y = m.poly({"w": w}, x)
    assert torch.allclose(y.detach(), 3.0 * x.detach() ** 2 + 0.5 * x.detach())
    y.sum().backward()
    assert torch.allclose(x.grad, 6.0 * x.detach() + 0.5)
    eps = 1e-6
    fd = (m.poly({"w": w}, x.detach() + eps) - m.poly({"w": w}, x.detach() - eps)) / (2 * eps)
    assert torch.allclose(x.grad, fd, atol=1e-6)


def test_a_buffer_of_structs_that_hold_a_buffer_is_refused_by_name(sg, device):
    # A tensor of values has nothing to give the inner buffer: the binder names the field and the
    # way that works (before, it asked for a tensor of one int per element and the kernel then
    # faulted at the inner read).
    src = SOURCE + "float first(StructuredBuffer<Scene> scenes, int i) { return scenes[0].data[i]; }\n"
    m = sg.Module.load_from_source(device, "buffer_of_scenes", src)
    with pytest.raises(TypeError, match=r"first\(\): parameter 'scenes' of type StructuredBuffer<Scene>: struct Scene "
                                        r"holds a buffer or tensor \(field 'data' of type StructuredBuffer<float>\), "
                                        r"which a tensor of its values cannot give; pass the struct itself, a dict "
                                        r"with a tensor for 'data'"):
        m.first(torch.zeros(2, 1, dtype=torch.int32, device=TEST_DEVICE), torch.zeros(4, dtype=torch.int32, device=TEST_DEVICE))
