# tests/python/test_messages.py — call errors a new user meets, worded as they should be: the
# article before a dtype or type name, a tensor on a device shadegrad does not run on (meta), and
# a struct dict whose key is misspelled (the unknown key is named beside the missing field).
import pytest
import torch

SOURCE = """
struct Particle { float3 pos; float mass; };
float twice(float x) { return 2.0f * x; }
float weight(Particle p) { return p.mass * p.pos.x; }
int count(int n) { return n + 1; }
"""


@pytest.fixture(scope="module")
def m(sg, cpu_device):
    return sg.Module.load_from_source(cpu_device, "messages", SOURCE)


def test_dtype_names_take_their_article(sg, m):
    with pytest.raises(TypeError, match=r"twice\(\): parameter 'x' of type float needs a float32 tensor, got an int64 tensor of shape \(3,\)"):
        m.twice(torch.arange(3))
    with pytest.raises(TypeError, match=r"count\(\): parameter 'n' of type int needs an int32 tensor, got a float32 tensor"):
        m.count(torch.ones(2))
    with pytest.raises(TypeError, match=r"twice\(\): _result= needs a float32 tensor, got an int32 tensor"):
        m.twice(torch.ones(2), _result=torch.zeros(2, dtype=torch.int32))
    with pytest.raises(TypeError, match=r"cannot take an int2"):
        m.twice(sg.int2(1, 2))


def test_a_meta_tensor_is_named_as_such(sg, m):
    with pytest.raises(ValueError) as info:
        m.twice(torch.ones(3, device="meta"))
    text = str(info.value)
    assert "twice(): parameter 'x' of type float got a tensor on meta, which shadegrad cannot run on" in text
    assert "other" not in text


def test_a_misspelled_dict_key_is_named_with_the_missing_field(sg, m):
    with pytest.raises(TypeError) as info:
        m.weight({"pos": sg.float3(1, 2, 3), "mas": 2.0})
    assert str(info.value) == (
        "weight(): parameter 'p' of type Particle got a dict without field 'mass' of struct Particle, and with "
        "key 'mas', which struct Particle does not have (its fields: pos, mass)"
    )
    # Only missing: no list of keys.
    with pytest.raises(TypeError, match=r"without field 'mass' of struct Particle$"):
        m.weight({"pos": sg.float3(1, 2, 3)})
    assert m.weight({"pos": sg.float3(1, 2, 3), "mass": 2.0}) == 2.0


def test_compile_warnings_reach_python(sg, cpu_device):
    source = (
        "int3 trunc3(float3 a) { int3 v = float3(a.x, 2.5, 1.0); return v; }\n"
        "float3 positive(float x) { return x > 0.0; }\n"
    )
    with pytest.warns(sg.CompileWarning) as caught:
        m = sg.Module.load_from_source(cpu_device, "lossy", source)
    assert len(caught) == 1
    text = str(caught[0].message)
    assert text.startswith("module 'lossy' compiled with warnings:\n")
    assert "lossy.slang:1:34: warning 30081: implicit conversion from 'float3' to 'int3' is not recommended" in text
    assert "lossy.slang:2:37: warning 30081: implicit conversion from 'bool' to 'float3' is not recommended" in text
    assert m.trunc3(sg.float3(3.5, 0, 0)) == sg.int3(3, 2, 1)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", sg.CompileWarning)
        sg.Module.load_from_source(cpu_device, "clean", "float twice(float x) { return 2.0 * x; }")
