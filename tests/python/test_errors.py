# tests/python/test_errors.py — every user mistake is a Python exception naming the function and
# parameter, never a crash.
import re

import pytest
import torch

MUL2 = """
import slangpy;
[Differentiable]
float mul2(no_diff int2 pix, IDiffTensor<float, 2> a, IDiffTensor<float, 2> b)
{
    return a[uint2(pix.x, pix.y)] * b[uint2(pix.x, pix.y)];
}

float add(float x, float y) { return x + y; }
"""


@pytest.fixture(scope="module")
def m(sg, cpu_device):
    return sg.Module.load_from_source(cpu_device, "errs", MUL2)


def test_compile_error_has_location_line_and_caret(sg, cpu_device):
    src = "float f(float x)\n{\n    return x * undefined_thing;\n}\n"
    with pytest.raises(sg.CompileError) as info:
        sg.Module.load_from_source(cpu_device, "bad", src)
    text = str(info.value)
    assert "bad.slang:3:16: error 30015: unknown name 'undefined_thing'" in text
    lines = text.splitlines()
    i = next(k for k, l in enumerate(lines) if "unknown name" in l)
    assert lines[i + 1].strip() == "return x * undefined_thing;"
    caret_col = lines[i + 2].index("^")
    assert lines[i + 1][caret_col:].startswith("undefined_thing")


def test_compile_error_carries_structured_diagnostics(sg, cpu_device):
    src = "float f(float x) { return x +; }\n\nfloat g()\n{\n\treturn 1.0 *;\n}\n"
    with pytest.raises(sg.CompileError) as info:
        sg.Module.load_from_source(cpu_device, "diag", src)
    text = str(info.value)
    # Resolved in C++ when reported: the module's sources are gone by the time Python sees them.
    errors = [d for d in info.value.diagnostics if d.severity == "error"]
    assert [tuple(d) for d in errors] == [
        ("diag.slang", 1, 30, 0, "error", "expected an expression, found ';'"),
        ("diag.slang", 5, 14, 0, "error", "expected an expression, found ';'"),  # a tab is one column
    ]
    for d in info.value.diagnostics:
        assert f"{d.file}:{d.line}:{d.col}: {d.severity}" in text
    assert "diagnostics" in sg.CompileError.__doc__


def test_compile_error_diagnostics_of_a_later_phase(sg, cpu_device):
    src = "float f(float x)\n{\n    return x * undefined_thing;\n}\n"
    with pytest.raises(sg.CompileError) as info:
        sg.Module.load_from_source(cpu_device, "bad", src)
    d = info.value.diagnostics[0]
    assert (d.file, d.line, d.col) == ("bad.slang", 3, 16)
    assert d.message == "unknown name 'undefined_thing'"
    assert d.code == 30015  # Slang's number for an undefined identifier
    assert type(d).__name__ == "Diagnostic" and isinstance(d, tuple)


def test_compile_error_diagnostic_without_location(sg, cpu_device):
    src = "".join(f"float f{i}() {{ return 1 +; }}\n" for i in range(120))
    with pytest.raises(sg.CompileError) as info:
        sg.Module.load_from_source(cpu_device, "many", src)
    diagnostics = info.value.diagnostics
    assert len([d for d in diagnostics if d.severity == "error"]) == 100
    assert diagnostics[-1] == (None, None, None, 0, "note", "too many errors; stopping")


def test_several_errors_are_all_reported(sg, cpu_device):
    src = "float f(float x) { return x +; }\nfloat g(float y) { return y *; }\n"
    with pytest.raises(sg.CompileError) as info:
        sg.Module.load_from_source(cpu_device, "bad2", src)
    text = str(info.value)
    assert "bad2.slang:1:30: error: expected an expression, found ';'" in text
    assert "bad2.slang:2:30: error: expected an expression, found ';'" in text
    src = "float f(float x) { return q; }\nfloat g(float y) { return y + float3(1, 2); }\n"
    with pytest.raises(sg.CompileError) as info:
        sg.Module.load_from_source(cpu_device, "bad3", src)
    text = str(info.value)
    assert "bad3.slang:1:27: error 30015: unknown name 'q'" in text
    assert "bad3.slang:2:31: error: cannot construct float3 from (int, int)" in text


def test_wrong_argument_count(sg, m):
    with pytest.raises(TypeError, match=r"add\(\) takes 2 arguments but 3 were given"):
        m.add(torch.ones(3), torch.ones(3), torch.ones(3))
    with pytest.raises(TypeError, match=r"add\(\) missing required argument 'y'"):
        m.add(torch.ones(3))


def test_wrong_keyword_name(sg, m):
    with pytest.raises(TypeError, match=r"add\(\) got an unexpected keyword argument 'z'"):
        m.add(x=torch.ones(3), z=torch.ones(3))
    with pytest.raises(TypeError, match=r"add\(\) got multiple values for argument 'x'"):
        m.add(torch.ones(3), x=torch.ones(3))


def test_unknown_function(sg, m):
    with pytest.raises(AttributeError, match=r"module 'errs' has no function or type named 'nope'"):
        m.nope


def test_shapes_that_do_not_broadcast(sg, m):
    with pytest.raises(ValueError, match=r"add\(\): parameter 'y' of shape \(4,\) does not broadcast with 'x' of shape \(3,\)"):
        m.add(torch.ones(3), torch.ones(4))
    with pytest.raises(ValueError, match=r"mul2\(\)|add\(\)"):
        m.add(torch.ones(2, 3), torch.ones(5, 3))


def test_dtype_mismatch(sg, m):
    with pytest.raises(TypeError, match=r"add\(\): parameter 'x' of type float needs a float32 tensor, got a float64 tensor"):
        m.add(torch.ones(3, dtype=torch.float64), torch.ones(3))
    with pytest.raises(TypeError, match=r"mul2\(\): parameter 'a' of type IDiffTensor<float, 2> needs a float32 tensor, got an int32 tensor"):
        m.mul2(sg.grid((2, 2)), torch.ones(2, 2, dtype=torch.int32), torch.ones(2, 2))


def test_rank_mismatch_for_tensor_parameter(sg, m):
    with pytest.raises(TypeError, match=r"mul2\(\): parameter 'a' .* needs a tensor of rank 2"):
        m.mul2(sg.grid((2, 2)), torch.ones(4), torch.ones(2, 2))


def test_tensor_on_another_device(sg):
    # Unchecked: the binder's device check runs before anything needs CUDA (create_device refuses a
    # CUDA device on a machine without one, test_help_and_devices.py).
    cuda = sg._core.create_device(sg.DeviceType.cuda, 0, [], "create_device", False)
    cuda_module = sg.Module.load_from_source(cuda, "errs", MUL2)
    with pytest.raises(ValueError, match=r"add\(\): parameter 'x' of type float got a tensor on cpu, but the module's device is cuda"):
        cuda_module.add(torch.ones(3), torch.ones(3))


def test_unsupported_argument_type(sg, m):
    with pytest.raises(TypeError, match=r"add\(\): parameter 'x' of type float cannot take a Python str"):
        m.add("hello", torch.ones(3))
    with pytest.raises(TypeError, match=r"cannot take a Python NoneType"):
        m.add(None, torch.ones(3))


def test_grid_of_wrong_rank(sg, m):
    with pytest.raises(ValueError, match=r"mul2\(\): parameter 'pix' of type int2 cannot take grid\(\(2, 2, 2\)\)"):
        m.mul2(sg.grid((2, 2, 2)), torch.ones(2, 2), torch.ones(2, 2))


def test_empty_tensors_return_empty_results(sg, m):
    out = m.add(torch.ones(0), torch.ones(0))
    assert out.shape == (0,)
    out = m.mul2(sg.grid((0, 5)), torch.ones(0, 5), torch.ones(0, 5))
    assert out.shape == (0, 5)


def test_python_float_for_int_parameter(sg, cpu_device):
    mod = sg.Module.load_from_source(cpu_device, "ints", "int twice(int i) { return i * 2; }")
    with pytest.raises(TypeError, match=r"twice\(\): parameter 'i' of type int cannot take a Python float"):
        mod.twice(1.5)


def test_out_of_bounds_tensor_index_raises_instead_of_crashing(sg, m):
    # The grid is larger than the tensors: every read past the end is caught, none is made.
    fault = r"mul2\(\): parameter '[ab]': index \d+ out of bounds for dimension [01] of extent 2 at errs\.slang:6:\d+; the access was skipped"
    with pytest.raises(RuntimeError, match=fault):
        m.mul2(sg.grid((64, 64)), torch.ones(2, 2), torch.ones(2, 2))
    a = torch.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match=fault):
        m.mul2(sg.grid((64, 64)), a, torch.ones(2, 2))


def test_broadcast_arguments_pass_bounds_checks(sg, cpu_device):
    m = sg.Module.load_from_source(cpu_device, "bc", "[Differentiable] float add(float x, float y) { return x + y; }")
    x = torch.rand(5, 1, requires_grad=True)
    y = torch.rand(1, 7, requires_grad=True)
    out = m.add(x, y)
    assert out.shape == (5, 7)
    torch.testing.assert_close(out, x + y)
    out.sum().backward()
    torch.testing.assert_close(x.grad, torch.full((5, 1), 7.0))
    torch.testing.assert_close(y.grad, torch.full((1, 7), 5.0))
    s = torch.rand(7, requires_grad=True)  # rank padding: one row shared by every call row
    out = m.add(x, s)
    out.sum().backward()
    torch.testing.assert_close(s.grad, torch.full((7,), 5.0))
