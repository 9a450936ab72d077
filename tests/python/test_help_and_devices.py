# tests/python/test_help_and_devices.py — what a new user meets first: every public name is
# documented, help(shadegrad) leads with the public API, reprs say what an object is, and a CUDA
# device that cannot work fails at its creation with the reason and the fix.
import inspect
import os
import pydoc

import pytest
import torch

from conftest import run_python


def _own_doc(obj) -> str:
    """The docstring without a leading signature line (nanobind puts the signature first)."""
    doc = inspect.getdoc(obj) or ""
    name = getattr(obj, "__name__", "")
    lines = doc.splitlines()
    if lines and name and lines[0].startswith(name + "("):
        lines = lines[1:]
    return "\n".join(lines).strip()


def test_every_public_name_has_a_docstring(sg):
    missing = []
    for name in sg.__all__:
        if name == "__version__":
            continue
        obj = getattr(sg, name)
        if len(_own_doc(obj)) < 20:
            missing.append(name)
    assert not missing, f"public names without a docstring: {missing}"


@pytest.mark.parametrize("cls", ["Module", "Function", "Device", "Struct"])
def test_public_methods_have_docstrings_and_signatures(sg, cls):
    klass = getattr(sg, cls)
    missing, vague = [], []
    for name, member in vars(klass).items():
        if name.startswith("_") or name in ("device_type", "device_index"):
            continue
        if len(_own_doc(member)) < 10:
            missing.append(name)
        first = (inspect.getdoc(member) or "").splitlines()[:1]
        if first and first[0].startswith(name + "(") and first[0].endswith("-> object"):
            vague.append(first[0])
    assert not missing, f"{cls} members without a docstring: {missing}"
    assert not vague, f"{cls} members without a real signature: {vague}"
    assert "(...)" not in (inspect.getdoc(sg.Module.load_from_source) or "")
    assert inspect.getdoc(sg.Module.load_from_source).startswith("load_from_source(device: Device, name: str")


def test_help_leads_with_the_public_api(sg):
    text = pydoc.render_doc(sg, renderer=pydoc.plaintext)
    first_screen = "\n".join(text.splitlines()[:40])
    for name in ("Module", "Function", "create_device", "create_torch_device", "DeviceType"):
        assert name in first_screen, name
    # The value types' shared methods are documented once, on ValueType, and the containers'
    # once, on Tensor (its kinds show their own names only); Tensor and its kinds take ~250 lines.
    assert len(text.splitlines()) < 1750, len(text.splitlines())


def test_reprs_say_what_an_object_is(sg, cpu_device):
    m = sg.Module.load_from_source(
        cpu_device,
        "reprs",
        "struct P { float x; int n; };\n"
        "[Differentiable] float f(float a, no_diff float b) { return a * b; }\n"
        "float g(P p) { return p.x; }\nfloat g(float v) { return v; }\n",
    )
    assert repr(m) == "<shadegrad Module 'reprs' on cpu: functions f, g; structs P>"
    assert repr(m.f) == "<shadegrad Function [Differentiable] float f(float a, float b) on cpu>"
    assert repr(m.g) == "<shadegrad Function float g(P p), 2 overloads on cpu>"
    assert repr(m.P) == "<shadegrad struct P { float x; int n; }>"
    assert repr(cpu_device) == "Device(type=cpu)"
    assert repr(sg.create_device(include_paths=["/k"])) == "Device(type=cpu, include_paths=['/k'])"
    assert repr(sg.float3(1, 2, 3)) == "float3(1, 2, 3)"
    assert repr(sg.grid((2, 3))) == "grid((2, 3))"
    assert repr(sg.floatRef(2.0)) == "ValueRef(2.0)"


def test_value_types_keep_their_members(sg):
    v = sg.float2x2(1, 2, 3, 4)
    assert v[1] == sg.float2(3, 4) and v.to_list() == [[1.0, 2.0], [3.0, 4.0]]
    assert sg.float3(1, 2, 3).y == 2.0 and "to_numpy" in dir(sg.float3(1, 2, 3))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without a usable CUDA setup")
def test_cuda_device_without_cuda_fails_at_creation(sg):
    for create in (sg.create_device, sg.create_torch_device):
        with pytest.raises(RuntimeError) as info:
            create(type=sg.DeviceType.cuda)
        text = str(info.value)
        assert text.startswith(f"{create.__name__}(type=DeviceType.cuda, index=0): CUDA kernels cannot run")
        if torch.version.cuda is None:
            assert "is a CPU-only build; install a CUDA build of torch" in text
        assert "Use type=DeviceType.cpu" in text
    assert sg.create_device(type=sg.DeviceType.cpu).type == sg.DeviceType.cpu


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without a usable CUDA setup")
def test_cuda_device_reasons_name_the_driver_and_nvrtc():
    proc = run_python(
        """
        import shadegrad as sg
        try:
            sg.create_torch_device(type=sg.DeviceType.cuda, index=1)
        except RuntimeError as e:
            print(e)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    if not sg_cuda_driver_present():
        assert "CUDA driver not found" in out and "NVIDIA GPU with its driver installed" in out
    # A bad SHADEGRAD_NVRTC is a reason of its own, with its fix.
    os.environ["SHADEGRAD_NVRTC"] = "/nonexistent/libnvrtc.so"
    try:
        env_proc = run_python(
            "import shadegrad as sg\n"
            "try:\n    sg.create_device(type=sg.DeviceType.cuda)\nexcept RuntimeError as e:\n    print(e)\n"
        )
    finally:
        del os.environ["SHADEGRAD_NVRTC"]
    assert env_proc.returncode == 0, env_proc.stderr
    assert "NVRTC not found: SHADEGRAD_NVRTC names a library that cannot be used" in env_proc.stdout
    assert "point SHADEGRAD_NVRTC at a usable libnvrtc.so, or unset it" in env_proc.stdout


def sg_cuda_driver_present() -> bool:
    import shadegrad

    return shadegrad.cuda_status()["available"]
