# tests/python/test_spy_details.py — SlangPy's documented call details: dicts for vector
# parameters (with and without `_type`, which also decides a generic vector's size),
# sg.diff_pair for backward calls on torch tensors, DeviceType.automatic, and
# Module.load_from_file searching the device's include_paths.
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
float f(float2 v) { return v.x * 10.0 + v.y; }
int g(int3 v) { return v.x + v.y * 10 + v.z * 100; }
void copy_vector<let N : int>(vector<float, N> src, out vector<float, N> dest) { dest = src; }
void copy(float4 src, out float4 dest) { dest = src; }
[Differentiable] float sq(float x) { return x * x; }
[Differentiable] void sq_out(float x, out float y) { y = x * x; }
[Differentiable] float dot2(float2 a, float2 b) { return a.x * b.x + a.y * b.y; }
[Differentiable] void scale_into(IDiffTensor<float, 1> a, IWDiffTensor<float, 1> out_t, int i) { out_t[i] = 3.0 * a[i] * a[i]; }
"""


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "spy_details", SOURCE)


# ---------------------------------------------------------------- dicts for vectors


def test_dict_for_a_vector_parameter(sg, m):
    assert m.f({"x": 1, "y": 2}) == 12.0
    assert m.f({"y": 2.0, "x": 1.0}) == 12.0  # by name, in any order
    assert m.f({"_type": "float2", "x": 1, "y": 2}) == 12.0
    assert m.g({"x": 1, "y": 2, "z": 3}) == 321
    # A component may be a tensor (vectorized) or a generator, as in SlangPy's nested-types page.
    got = m.f({"x": torch.tensor([1.0, 2.0], device=TEST_DEVICE), "y": 2.0})
    assert got.cpu().tolist() == [12.0, 22.0]
    dest = torch.zeros(6, 4, device=TEST_DEVICE)
    m.copy(src={"x": 1.0, "y": sg.rand_float(min=0, max=1, dim=1), "z": 0.0, "w": 1.0}, dest=dest)
    d = dest.cpu()
    assert (d[:, 0] == 1).all() and (d[:, 2] == 0).all() and (d[:, 3] == 1).all()
    assert (d[:, 1] >= 0).all() and (d[:, 1] < 1).all() and len(set(d[:, 1].tolist())) == 6


def test_dict_type_decides_a_generic_vector(sg, m):
    dest = torch.zeros(3, 4, device=TEST_DEVICE)
    m.copy_vector(src={"_type": "float4", "x": 1.0, "y": 2.0, "z": 3.0, "w": 4.0}, dest=dest)
    assert dest.cpu().tolist() == [[1.0, 2.0, 3.0, 4.0]] * 3
    out = m.copy_vector.map(src="float2", dest="float2")(src={"x": 5.0, "y": 6.0}, dest=torch.zeros(2, 2, device=TEST_DEVICE))
    assert out is None


def test_dict_for_a_vector_errors_name_the_parameter(sg, m):
    with pytest.raises(TypeError, match=r"f\(\): parameter 'v' of type float2 got a dict without component 'y' "
                                        r"\(a dict for float2 has the keys x, y, one each\)"):
        m.f({"x": 1})
    with pytest.raises(TypeError, match=r"got a dict with key 'q', which float2 does not have \(its components: x, y\)"):
        m.f({"x": 1, "y": 2, "q": 3})
    with pytest.raises(TypeError, match=r"parameter 'v' of type float2 got a dict with _type 'float3'"):
        m.f({"_type": "float3", "x": 1, "y": 2})
    with pytest.raises(TypeError, match=r"a dict binds to a struct or a vector"):
        m.sq({"x": 1.0})


# ---------------------------------------------------------------- diff_pair


def test_diff_pair_accumulates_the_gradient_into_the_given_buffer(sg, m):
    x = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE)
    x_grad = torch.ones(3, device=TEST_DEVICE)
    m.sq.bwds(sg.diff_pair(x, x_grad), torch.tensor([1.0, 0.5, 2.0], device=TEST_DEVICE))
    # d(x^2)/dx * dy added to the buffer's 1.
    assert x_grad.cpu().tolist() == [1.0 + 2.0, 1.0 + 2.0, 1.0 + 12.0]
    assert x.grad is None and not x.requires_grad


def test_diff_pair_for_a_written_parameter_is_its_incoming_gradient(sg, m):
    x = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE)
    x_grad = torch.zeros(3, device=TEST_DEVICE)
    y = torch.zeros(3, device=TEST_DEVICE)
    m.sq_out.bwds(sg.diff_pair(x, x_grad), sg.diff_pair(y, torch.full((3,), 2.0, device=TEST_DEVICE)))
    assert x_grad.cpu().tolist() == [4.0, 8.0, 12.0]
    assert y.cpu().tolist() == [0.0, 0.0, 0.0]  # backward writes gradients only
    # A writable differentiable tensor parameter (IWDiffTensor) takes its incoming gradient the same way.
    a = torch.tensor([1.0, 2.0], device=TEST_DEVICE)
    a_grad = torch.zeros(2, device=TEST_DEVICE)
    o = torch.zeros(2, device=TEST_DEVICE)
    m.scale_into.bwds(sg.diff_pair(a, a_grad), sg.diff_pair(o, torch.ones(2, device=TEST_DEVICE)),
                      torch.arange(2, dtype=torch.int32, device=TEST_DEVICE))
    assert a_grad.cpu().tolist() == [6.0, 12.0]
    with pytest.raises(TypeError, match=r"sq_out.bwds\(\): a diff_pair for a parameter the function writes needs its "
                                        r"incoming gradient as a tensor"):
        m.sq_out.bwds(sg.diff_pair(x, x_grad), sg.diff_pair(y, None))


def test_diff_pair_of_vectors_matches_torch(sg, m):
    a = torch.randn(5, 2, dtype=torch.float32, device=TEST_DEVICE)
    b = torch.randn(5, 2, dtype=torch.float32, device=TEST_DEVICE)
    ga, gb = torch.zeros_like(a), torch.zeros_like(b)
    dy = torch.randn(5, device=TEST_DEVICE)
    m.dot2.bwds(sg.diff_pair(a, ga), sg.diff_pair(b, gb), dy)
    torch.testing.assert_close(ga, b * dy[:, None])
    torch.testing.assert_close(gb, a * dy[:, None])


# ---------------------------------------------------------------- DeviceType.automatic


def test_automatic_device_is_cuda_when_there_is_one(sg):
    d = sg.create_device(type=sg.DeviceType.automatic)
    usable = sg.cuda_status()["available"] and torch.cuda.is_available()
    assert d.type == (sg.DeviceType.cuda if usable else sg.DeviceType.cpu)
    assert sg.create_torch_device(type=sg.DeviceType.automatic).type == d.type
    assert sg.DeviceType.automatic not in (sg.DeviceType.cpu, sg.DeviceType.cuda)


# ---------------------------------------------------------------- load_from_file


def test_load_from_file_searches_the_include_paths(sg, tmp_path, monkeypatch, cpu_device):
    kernels = tmp_path / "kernels"
    (kernels / "lib").mkdir(parents=True)
    (kernels / "lib" / "helpers.slang").write_text("float twice(float x) { return 2.0 * x; }\n")
    (kernels / "example.slang").write_text('import "lib/helpers";\nfloat add(float a, float b) { return twice(a) + b; }\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    device = sg.create_device(include_paths=[tmp_path / "nothing_here", kernels])
    module = sg.Module.load_from_file(device, "example.slang")
    assert module.add(1.0, 2.0) == 4.0 and module.add(a=1.0, b=2.0) == 4.0
    # A path that names a file (here, relative to the working directory) is used as it is.
    (elsewhere / "local.slang").write_text("float one() { return 1.0; }\n")
    assert sg.Module.load_from_file(device, "local.slang").one() == 1.0
    with pytest.raises(ValueError, match=r"cannot read kernel file 'missing.slang': not found \(tried 'missing.slang', '.*"
                                         r"nothing_here/missing.slang', '.*kernels/missing.slang'\)"):
        sg.Module.load_from_file(device, "missing.slang")
    with pytest.raises(ValueError, match=r"create_device\(include_paths=\[\.\.\.\]\) names folders to search"):
        sg.Module.load_from_file(cpu_device, "example.slang")
