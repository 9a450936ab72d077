# tests/python/test_coop_launch.py — cooperative kernels ([CUDAKernel]) launched from Python:
# shadegrad.slangtorch's loadModule / loadModuleFromSource with defines and include paths and
# `.launchRaw(blockSize, gridSize)` over 1-, 2- and 3-D launches with partial blocks; SlangPy's
# `module.kernel(args..., _thread_count=N)`; TensorView binding (dtypes, vector elements, strided
# tensors) and its errors naming the function and parameter; a faulting view access; and the
# error for a [CUDAKernel] function called per element.
import pytest
import torch

import shadegrad as sg
import shadegrad.slangtorch as slangtorch
from conftest import TEST_DEVICE

REDUCE = """
groupshared float partial[BLOCK];

[AutoPyBindCUDA]
[CUDAKernel]
void block_sums(TensorView<float> x, TensorView<float> sums)
{
    uint t = cudaThreadIdx().x;
    uint i = cudaBlockIdx().x * BLOCK + t;
    partial[t] = i < x.size(0) ? x[i] * SCALE : 0.0;
    GroupMemoryBarrierWithGroupSync();
    for (uint stride = BLOCK / 2; stride > 0; stride /= 2)
    {
        if (t < stride) partial[t] += partial[t + stride];
        GroupMemoryBarrierWithGroupSync();
    }
    if (t == 0) sums[cudaBlockIdx().x] = partial[0];
}

[CUDAKernel]
void fill2d(TensorView<int> out)
{
    uint2 p = cudaBlockIdx().xy * cudaBlockDim().xy + cudaThreadIdx().xy;
    if (p.x < out.size(0) && p.y < out.size(1))
        out[p.x, p.y] = int(p.x * 100 + p.y);
}

[CUDAKernel]
void fill3d(TensorView<float> out, float base)
{
    uint3 p = cudaBlockIdx() * cudaBlockDim() + cudaThreadIdx();
    if (p.x < out.size(0) && p.y < out.size(1) && p.z < out.size(2))
        out[p] = base + p.x * 100 + p.y * 10 + p.z;
}

[CUDAKernel]
void count(TensorView<int> hist, TensorView<int> values)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i < values.size(0)) InterlockedAdd(hist[values[i]], 1);
}

[CUDAKernel]
void swap_xy(TensorView<float2> p)
{
    uint i = cudaThreadIdx().x;
    p[i] = p[i].yx;
}

float plain(float x) { return x + 1; }
"""


def load(defines=None):
    return slangtorch.loadModuleFromSource(REDUCE, moduleName="coop", defines=defines or {"BLOCK": 64, "SCALE": 1})


def test_launch_raw_block_reduction_with_defines():
    m = load()
    x = torch.arange(200, dtype=torch.float32, device=TEST_DEVICE)
    sums = torch.zeros(4, device=TEST_DEVICE)
    m.block_sums(x=x, sums=sums).launchRaw(blockSize=(64, 1, 1), gridSize=(4, 1, 1))
    want = torch.stack([x[i * 64:(i + 1) * 64].sum() for i in range(4)])
    assert torch.equal(sums.cpu(), want.cpu())
    # Other defines: another module (and kernel); the same defines: the cached module.
    m2 = load({"BLOCK": 32, "SCALE": 2})
    assert m2 is not m and load() is m
    sums2 = torch.zeros(7, device=TEST_DEVICE)
    m2.block_sums(x, sums2).launchRaw(blockSize=(32, 1, 1), gridSize=(7, 1, 1))
    want2 = torch.stack([2 * x[i * 32:(i + 1) * 32].sum() for i in range(7)])
    assert torch.equal(sums2.cpu(), want2.cpu())


def test_two_and_three_dimensional_launches_with_partial_blocks():
    m = load()
    out = torch.full((7, 5), -1, dtype=torch.int32, device=TEST_DEVICE)
    m.fill2d(out).launchRaw(blockSize=(4, 2, 1), gridSize=(2, 3, 1))
    want = torch.arange(7).unsqueeze(1) * 100 + torch.arange(5).unsqueeze(0)
    assert torch.equal(out.cpu(), want.int())
    out3 = torch.zeros(3, 4, 5, device=TEST_DEVICE)
    m.fill3d(out3, 0.5).launchRaw(blockSize=(2, 2, 2), gridSize=(2, 2, 3))
    i, j, k = torch.meshgrid(torch.arange(3), torch.arange(4), torch.arange(5), indexing="ij")
    assert torch.equal(out3.cpu(), (0.5 + i * 100 + j * 10 + k).float())


def test_strided_views_and_vector_elements():
    m = load()
    base = torch.zeros(5, 9, device=TEST_DEVICE, dtype=torch.int32)
    view = base[:, ::2]  # strides (9, 2): read through the view's strides
    m.fill2d(view).launchRaw(blockSize=(8, 8, 1), gridSize=(1, 1, 1))
    assert torch.equal(view.cpu(), (torch.arange(5).unsqueeze(1) * 100 + torch.arange(5)).int())
    assert int(base[:, 1::2].abs().sum()) == 0
    p = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=TEST_DEVICE)
    m.swap_xy(p).launchRaw(blockSize=(3, 1, 1), gridSize=(1, 1, 1))
    assert p.cpu().tolist() == [[2.0, 1.0], [4.0, 3.0], [6.0, 5.0]]


def test_thread_count_and_atomics_under_contention():
    m = sg.Module.load_from_source(sg.create_device(), "coop_tc", REDUCE.replace("BLOCK", "64").replace("SCALE", "1"))
    values = torch.randint(0, 10, (1000,), dtype=torch.int32, device=TEST_DEVICE)
    hist = torch.zeros(10, dtype=torch.int32, device=TEST_DEVICE)
    m.count(hist, values, _thread_count=1000)
    assert torch.equal(hist.cpu(), torch.bincount(values.cpu().long(), minlength=10).int())
    # Threads past the count do not run: 1000 threads, blocks of 256, the last one partial.
    hist.zero_()
    m.count(hist=hist, values=values, _thread_count=10)
    assert int(hist.sum()) == 10


def test_argument_errors_name_function_and_parameter():
    m = load()
    x = torch.zeros(8, device=TEST_DEVICE)
    with pytest.raises(TypeError, match=r"block_sums\(\): parameter 'sums' \(TensorView<float>\) takes a float32 tensor, got int32"):
        m.block_sums(x, torch.zeros(2, dtype=torch.int32, device=TEST_DEVICE)).launchRaw(blockSize=(64, 1, 1))
    with pytest.raises(TypeError, match=r"block_sums\(\): parameter 'x' .* takes a tensor, got"):
        m.block_sums(1.0, x).launchRaw(blockSize=(64, 1, 1))
    with pytest.raises(TypeError, match=r"block_sums\(\): parameter 'sums' has no argument"):
        m.block_sums(x).launchRaw(blockSize=(64, 1, 1))
    with pytest.raises(ValueError, match=r"swap_xy\(\): parameter 'p' .* last dimension holds the 2 components"):
        m.swap_xy(torch.zeros(4, 3, device=TEST_DEVICE)).launchRaw(blockSize=(4, 1, 1))
    with pytest.raises(ValueError, match=r"at most 1024 threads"):
        m.block_sums(x, x).launchRaw(blockSize=(64, 32, 1))
    with pytest.raises(ValueError, match=r"gridSize must be positive|blockSize and gridSize must be positive"):
        m.block_sums(x, x).launchRaw(blockSize=(64, 1, 1), gridSize=(0, 1, 1))
    with pytest.raises(AttributeError, match=r"'plain' is not a \[CUDAKernel\] function"):
        m.plain


def test_cuda_kernel_called_per_element_is_an_error():
    m = sg.Module.load_from_source(sg.create_device(), "coop_vec", REDUCE.replace("BLOCK", "64").replace("SCALE", "1"))
    x = torch.zeros(8, device=TEST_DEVICE)
    with pytest.raises(TypeError, match=r"block_sums\(\) is a \[CUDAKernel\] function: it runs once per thread"):
        m.block_sums(x, x)
    with pytest.raises(TypeError, match=r"plain\(\) is not a \[CUDAKernel\] function"):
        m.plain._launch((1.0,), {}, (1,), (1,))


def test_out_of_range_view_access_is_reported():
    src = """
[CUDAKernel]
void shifted(TensorView<float> a, int shift)
{
    a[cudaThreadIdx().x + shift] = 1.0;
}
"""
    m = slangtorch.loadModuleFromSource(src, moduleName="oob")
    a = torch.zeros(4, device=TEST_DEVICE)
    with pytest.raises(RuntimeError, match=r"shifted\(\): parameter 'a': index 4 out of bounds for dimension 0 of extent 4"):
        m.shifted(a, 1).launchRaw(blockSize=(4, 1, 1), gridSize=(1, 1, 1))
        sg.synchronize()


def test_load_module_from_file_with_include_paths(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "scale.h").write_text("float scaled(float x) { return x * FACTOR; }\n")
    (tmp_path / "k.slang").write_text("""#include "scale.h"
[AutoPyBindCUDA]
[CUDAKernel]
void apply(TensorView<float> x)
{
    uint i = cudaThreadIdx().x;
    x[i] = scaled(x[i]);
}
""")
    m = slangtorch.loadModule(str(tmp_path / "k.slang"), defines={"FACTOR": 3}, includePaths=[str(inc)])
    x = torch.tensor([1.0, 2.0, 3.0], device=TEST_DEVICE)
    m.apply(x).launchRaw(blockSize=(3, 1, 1), gridSize=(1, 1, 1))
    assert x.cpu().tolist() == [3.0, 6.0, 9.0]
    assert slangtorch.loadModule(str(tmp_path / "k.slang"), defines={"FACTOR": 3}, includePaths=[str(inc)]) is m
    m5 = slangtorch.loadModule(str(tmp_path / "k.slang"), defines={"FACTOR": 5}, includePaths=[str(inc)])
    assert m5 is not m
    m5.apply(x).launchRaw(blockSize=(3, 1, 1), gridSize=(1, 1, 1))
    assert x.cpu().tolist() == [15.0, 30.0, 45.0]


def test_cooperative_constructs_in_a_function_called_per_element_are_located_errors(device):
    m = sg.Module.load_from_source(device, "per_element", """
groupshared float s[4];
float uses_shared(float x) { s[0] = x; return s[0]; }
float uses_id(float x) { return x + cudaThreadIdx().x; }
float calls_barrier(float x) { GroupMemoryBarrierWithGroupSync(); return x; }
float uses_view(TensorView<float> v, int i) { return v[i]; }
""")
    x = torch.ones(3, device=TEST_DEVICE)
    with pytest.raises(sg.CompileError, match=r"per_element.slang:3:30: error: groupshared variable 's' is only available in a \[CUDAKernel\]"):
        m.uses_shared(x)
    with pytest.raises(sg.CompileError, match=r"per_element.slang:4:37: error: cudaThreadIdx\(\) is only available"):
        m.uses_id(x)
    with pytest.raises(sg.CompileError, match=r"per_element.slang:5:32: error: a barrier is only available"):
        m.calls_barrier(x)
    # A function that takes a view is called as SlangPy calls it (test_slangpy_view_functions.py).
    assert m.uses_view(torch.tensor([5.0, 6.0, 7.0], device=TEST_DEVICE),
                       torch.tensor([2, 0], dtype=torch.int32, device=TEST_DEVICE)).cpu().tolist() == [7.0, 5.0]


def test_thread_count_on_a_vectorized_function_is_an_error():
    m = sg.Module.load_from_source(sg.create_device(), "coop_tc_err", REDUCE.replace("BLOCK", "64").replace("SCALE", "1"))
    with pytest.raises(TypeError, match=r"plain\(\) is not a \[CUDAKernel\] function"):
        m.plain(torch.ones(3, device=TEST_DEVICE), _thread_count=3)
    with pytest.raises(TypeError, match=r"count\(\): _thread_count must be an int"):
        m.count(torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32), _thread_count=2.0)
    with pytest.raises(ValueError, match=r"count\(\): _thread_count must be a positive number of threads"):
        m.count(torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32), _thread_count=0)


def test_interlocked_on_buffer_and_tensor_elements_in_functions_called_per_element(device):
    m = sg.Module.load_from_source(device, "hist", """
import slangpy;
void to_buffer(int v, RWStructuredBuffer<int> hist) { InterlockedAdd(hist[v], 1); }
void to_tensor(int v, RWTensor<int, 2> hist) { int old; InterlockedMax(hist[v, 0], v * 3, old); InterlockedAdd(hist[v, 1], old + 1); }
""")
    values = torch.randint(0, 6, (500,), dtype=torch.int32, device=TEST_DEVICE)
    hist = torch.zeros(6, dtype=torch.int32, device=TEST_DEVICE)
    m.to_buffer(values, hist)
    assert torch.equal(hist.cpu(), torch.bincount(values.cpu().long(), minlength=6).int())
    h2 = torch.zeros(6, 2, dtype=torch.int32, device=TEST_DEVICE)
    m.to_tensor(values, h2)
    counts = torch.bincount(values.cpu().long(), minlength=6)
    # column 0: the max of v * 3 over its hits; column 1: the first hit saw 0 (+1), the others v*3 (+1)
    want0 = torch.where(counts > 0, torch.arange(6) * 3, torch.zeros(6, dtype=torch.long))
    want1 = torch.where(counts > 0, 1 + (counts - 1) * (torch.arange(6) * 3 + 1), torch.zeros(6, dtype=torch.long))
    assert h2.cpu()[:, 0].tolist() == want0.tolist()
    assert h2.cpu()[:, 1].tolist() == want1.tolist()


def test_thread_count_on_a_slangtorch_kernel_is_an_error_not_a_silent_no_op():
    # slangtorch's kernels run at .launchRaw(); SlangPy's _thread_count= keyword would be kept as
    # an argument and nothing would run, so it is refused, naming the function.
    m = load()
    x = torch.zeros(8, device=TEST_DEVICE)
    for call, name in ((m.block_sums, "block_sums"), (m.block_sums.bwd, "block_sums.bwd")):
        with pytest.raises(TypeError, match=rf"{name}\(\): _thread_count= is SlangPy's launch form"):
            call(x, x, _thread_count=8)
