# tests/python/test_modules.py — modules from files: imports beside the file and through the
# device's include paths, #include, link=[...] with export/extern constants, fn.constants({...})
# (a new function whose values are part of the call key), and device options.
import pytest
import torch

from conftest import TEST_DEVICE


@pytest.fixture()
def device(sg):
    return sg.create_torch_device(type=getattr(sg.DeviceType, TEST_DEVICE))


def _write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_load_from_file_imports_beside_the_file(sg, device, tmp_path):
    _write(tmp_path, "helpers.slang", "float scale(float x) { return 3 * x; }\n")
    _write(tmp_path, "defs.h", "#define OFFSET 1\n")
    main = _write(tmp_path, "main.slang",
                  'import helpers;\n#include "defs.h"\nfloat f(float x) { return scale(x) + OFFSET; }\n')
    m = sg.Module.load_from_file(device, str(main))
    x = torch.tensor([1.0, 2.0], device=TEST_DEVICE)
    assert m.f(x).tolist() == [4.0, 7.0]


def test_imports_through_include_paths(sg, tmp_path):
    lib = tmp_path / "lib"
    _write(lib, "shared_math.slang", "float cube(float x) { return x * x * x; }\n")
    dev = sg.create_torch_device(type=getattr(sg.DeviceType, TEST_DEVICE), include_paths=[str(lib)])
    assert dev.include_paths == [str(lib)]
    m = sg.Module.load_from_source(dev, "uses", "import shared_math;\nfloat f(float x) { return cube(x); }\n")
    assert m.f(2.0) == 8.0
    # The same source on a device without the path cannot find the module.
    plain = sg.create_torch_device(type=getattr(sg.DeviceType, TEST_DEVICE))
    with pytest.raises(sg.CompileError, match=r"uses.slang:1:8: error 1: cannot open file 'shared_math.slang'"):
        sg.Module.load_from_source(plain, "uses", "import shared_math;\nfloat f(float x) { return cube(x); }\n")


def test_error_in_an_imported_file_names_it_and_the_import(sg, device, tmp_path):
    _write(tmp_path, "bad.slang", "float g()\n{\n    return nope;\n}\n")
    main = _write(tmp_path, "main.slang", "import bad;\nfloat f() { return g(); }\n")
    with pytest.raises(sg.CompileError) as info:
        sg.Module.load_from_file(device, str(main))
    text = str(info.value)
    assert "in module imported from " + str(main) + ":1" in text
    assert "bad.slang:3:12: error 30015: unknown name 'nope'" in text
    d = info.value.diagnostics[0]
    assert d.file.endswith("bad.slang") and (d.line, d.col) == (3, 12)


def test_link_fills_externs_from_exports(sg, device):
    consts = sg.Module.load_from_source(device, "consts", "export static const int N = 4;\nexport static const float K = 0.5;\n")
    src = "extern static const int N;\nextern static const float K = 2.0;\nfloat f(float x) { return x * N * K; }\n"
    m = sg.Module.load_from_source(device, "user", src, link=[consts])
    assert m.f(3.0) == 6.0
    # Without link=, K keeps its default and N has no value: compiling a kernel names it.
    alone = sg.Module.load_from_source(device, "user", src)
    with pytest.raises(sg.CompileError, match="extern static const 'N' has no value"):
        alone.f(3.0)


def test_constants_change_the_result_and_the_key(sg, device):
    src = "extern static const int N = 2;\nfloat f(float x) { return x * N; }\n"
    m = sg.Module.load_from_source(device, "consts_key", src)
    x = torch.tensor([1.0, 2.0], device=TEST_DEVICE)
    f3 = m.f.constants({"N": 3})
    f5 = m.f.constants({"N": 5})
    assert m.f(x).tolist() == [2.0, 4.0]
    assert f3(x).tolist() == [3.0, 6.0]
    assert f5(x).tolist() == [5.0, 10.0]
    assert f3(x).tolist() == [3.0, 6.0]
    assert (m.f.plan_count, f3.plan_count, f5.plan_count) == (1, 1, 1)
    assert "link{N=3}" in f3.call_key(x) and "link{N=5}" in f5.call_key(x)
    assert f3.call_key(x) != f5.call_key(x)


def test_constants_override_linked_exports(sg, device):
    consts = sg.Module.load_from_source(device, "c", "export static const float GAIN = 10.0;\n")
    m = sg.Module.load_from_source(device, "u", "extern static const float GAIN;\nfloat f(float x) { return x * GAIN; }\n",
                                   link=[consts])
    assert m.f(1.5) == 15.0
    assert m.f.constants({"GAIN": 0.25})(2.0) == 0.5


def test_constants_vector_and_bad_values(sg, device):
    m = sg.Module.load_from_source(device, "vec", "extern static const float3 V = float3(0, 0, 0);\n"
                                                  "float f(float x) { return x * (V.x + V.y + V.z); }\n")
    assert m.f.constants({"V": [1, 2, 3.5]})(2.0) == 13.0
    with pytest.raises(ValueError, match="has no extern static const 'W'.*it has: V"):
        m.f.constants({"W": 1})
    with pytest.raises(TypeError, match="the value of 'V' must be"):
        m.f.constants({"V": "text"})


def test_unknown_device_and_module_options_raise(sg, tmp_path):
    with pytest.raises(TypeError, match="create_device\\(\\) got an unknown option 'enable_fancy'"):
        sg.create_device(type=sg.DeviceType.cpu, enable_fancy=True)
    with pytest.raises(TypeError, match="create_torch_device\\(\\) got an unknown option 'bogus'"):
        sg.create_torch_device(type=sg.DeviceType.cpu, bogus=1)
    dev = sg.create_device(type=sg.DeviceType.cpu)
    with pytest.raises(ValueError, match="unknown module option 'nope'"):
        sg.Module.load_from_source(dev, "m", "float f() { return 1; }\n", options={"nope": 1})
    with pytest.raises(TypeError, match="link: expected shadegrad Modules"):
        sg.Module.load_from_source(dev, "m", "float f() { return 1; }\n", link=["not a module"])
