# tests/python/test_spy_lazy_methods.py — a struct whose methods take or return textures or
# samplers (as SlangPy materials and scenes often have) loads with its other members: those
# methods are set aside and checked lazily, an error naming the construct only when something
# calls them — from Python (module.S.m, find_function_in_struct, an InstanceList's method: a
# TypeError) or from the module (the compile error gets a note saying why the method is gone).
import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """import "slangpy";
struct Material
{
    float3 albedo;
    float roughness;

    __init(float3 a, float r) { albedo = a; roughness = r; }

    float4 lookup(Texture2D<float4> tex, SamplerState s, float2 uv) { return tex.SampleLevel(s, uv, 0); }

    [Differentiable]
    float3 shade(float3 n) { return albedo * max(n.z, 0.0) * (1.0 - roughness); }

    static Texture2D<float> make_texture(int n) { return {}; }

    [mutating] void fade(float k) { albedo = albedo * k; }
};

float3 shade_with(Material m, float3 n) { return m.shade(n); }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "lazy_methods", SOURCE)


def test_the_struct_and_its_other_methods_load(sg, m, device):
    mat = {"albedo": sg.float3(0.5, 1.0, 2.0), "roughness": 0.25}
    assert m.shade_with(mat, sg.float3(0, 0, 2)) == sg.float3(0.75, 1.5, 3.0)
    # Constructed from Python through its __init.
    made = m.Material(a=sg.float3(1, 2, 3), r=0.5)
    assert made["albedo"] == sg.float3(1, 2, 3) and made["roughness"] == 0.5
    # The instance method, vectorized, with its gradient against torch in float64.
    n = torch.tensor([[0.0, 0.0, 1.0], [0.3, 0.1, -0.5], [0.2, 0.2, 0.7]], device=TEST_DEVICE, requires_grad=True)
    out = m.Material.shade(mat, n)
    a = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    n64 = n.detach().cpu().double().requires_grad_(True)
    want = a * torch.clamp(n64[:, 2:3], min=0.0) * 0.75
    torch.testing.assert_close(out.detach().cpu().double(), want.detach(), rtol=1e-6, atol=1e-7)
    out.sum().backward()
    want.sum().backward()
    torch.testing.assert_close(n.grad.cpu().double(), n64.grad, rtol=1e-6, atol=1e-7)
    # [mutating] still writes back, over an InstanceList of tensors.
    albedo = torch.tensor([[1.0, 2.0, 4.0], [8.0, 6.0, 2.0]], device=TEST_DEVICE)
    lst = sg.InstanceList(m.Material.as_struct(), {"albedo": albedo, "roughness": torch.zeros(2, device=TEST_DEVICE)})
    lst.fade(0.5)
    assert albedo.cpu().tolist() == [[0.5, 1.0, 2.0], [4.0, 3.0, 1.0]]


MESSAGE = (r"module 'lazy_methods': Material\.lookup\(\) cannot be used: its parameter 'tex' has type Texture2D "
           r"\(textures and samplers are not supported yet; the rest of the module loaded without it\)")


def test_calling_a_set_aside_method_names_the_construct(sg, m):
    with pytest.raises(TypeError, match=MESSAGE):
        m.Material.lookup
    with pytest.raises(TypeError, match=MESSAGE):
        m.find_function_in_struct("Material", "lookup")
    with pytest.raises(TypeError, match=MESSAGE):
        m.require_function("Material.lookup")
    with pytest.raises(TypeError, match=r"Material\.make_texture\(\) cannot be used: its result has type Texture2D"):
        m.Material.make_texture
    lst = sg.InstanceList(m.Material.as_struct(), {"albedo": sg.float3(1, 1, 1), "roughness": 0.0})
    with pytest.raises(TypeError, match=MESSAGE):
        lst.lookup(sg.float2(0.5, 0.5))
    # A method that never was is still an AttributeError.
    with pytest.raises(AttributeError, match=r"struct 'Material' has no method or sub-type named 'nosuch'"):
        m.Material.nosuch


def test_a_call_from_the_module_is_an_error_with_the_reason(sg, device):
    bad = SOURCE + "float4 h(Material m, float2 uv) { return m.lookup(uv); }\n"
    with pytest.raises(sg.CompileError) as e:
        sg.Module.load_from_source(device, "lazy_methods_bad", bad)
    text = str(e.value)
    assert "has no member" in text and "'lookup'" in text
    assert "note: Material.lookup() cannot be used: its parameter 'tex' has type Texture2D" in text
    # An unrelated error gets no such note.
    with pytest.raises(sg.CompileError) as e:
        sg.Module.load_from_source(device, "lazy_methods_other", SOURCE + "float k() { return nosuch; }\n")
    assert "cannot be used" not in str(e.value)
