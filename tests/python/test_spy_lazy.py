# tests/python/test_spy_lazy.py — a module that declares texture and sampler functions beside
# plain ones (as SlangPy examples do) loads: those functions are set aside and checked lazily,
# an error naming the construct when something calls them — from Python (a TypeError) or from
# another function of the module (the compile error gets a note saying why the callee is gone).
import pytest

SOURCE = """import "slangpy";
float add_floats(float a, float b) { return a + b; }
float4 sample_texture_at_uv(float2 uv, SamplerState sampler, Texture2D<float4> texture)
{
    return texture.SampleLevel(sampler, uv, 0);
}
Texture2D<float> make_texture(int n) { return {}; }
float3 add_vectors(float3 a, float3 b) { return a + b; }
"""


def test_the_rest_of_the_module_loads(sg, device):
    m = sg.Module.load_from_source(device, "lazy", SOURCE)
    assert m.add_floats(1.0, 2.0) == 3.0
    assert m.add_vectors(sg.float3(1, 2, 3), sg.float3(1, 1, 1)) == sg.float3(2, 3, 4)
    assert "sample_texture_at_uv" not in m.function_names()


def test_calling_a_set_aside_function_names_the_construct(sg, device):
    m = sg.Module.load_from_source(device, "lazy", SOURCE)
    with pytest.raises(TypeError, match=r"module 'lazy': sample_texture_at_uv\(\) cannot be used: its parameter 'sampler' "
                                        r"has type SamplerState \(textures and samplers are not supported yet; the rest of "
                                        r"the module loaded without it\)"):
        m.sample_texture_at_uv
    with pytest.raises(TypeError, match=r"make_texture\(\) cannot be used: its result has type Texture2D"):
        m.make_texture


def test_a_call_from_the_module_is_an_error_with_the_reason(sg, device):
    bad = SOURCE + "float4 h(float2 uv) { return sample_texture_at_uv(uv); }\n"
    with pytest.raises(sg.CompileError) as e:
        sg.Module.load_from_source(device, "lazy_bad", bad)
    text = str(e.value)
    assert "unknown name 'sample_texture_at_uv'" in text
    assert "note: sample_texture_at_uv() cannot be used: its parameter 'sampler' has type SamplerState" in text
    # An unrelated error gets no such note.
    with pytest.raises(sg.CompileError) as e:
        sg.Module.load_from_source(device, "lazy_other", SOURCE + "float k() { return nosuch; }\n")
    assert "cannot be used" not in str(e.value)
