# tests/python/test_slangpy_tensorview.py — the behaviour SlangPy's own test_tensorview.py and
# test_difftensorview.py check, in our words, on SHADEGRAD_TEST_DEVICE: copies and sums through
# TensorView<float>, <float2>, <float4> and <bool> (contiguous and sliced tensors), a grid of
# threads marking a TensorView, `_thread_count` launches of [CUDAKernel] functions (and its
# refusal on a function called per element), DiffTensorView copies and sums, and the gradients
# of x^2 through `.bwds(diff_pair(...), ..., _thread_count=N)`. SlangPy's functions that take
# views without being [CUDAKernel] functions run here as [CUDAKernel] functions launched with
# one thread (`_thread_count=1`), which is what SlangPy's single call of them runs; SlangPy's own
# forms, unchanged, are in test_slangpy_view_functions.py. docs/from_slangpy.md lists SlangPy's
# cases and what became of each.
import pytest
import torch

import shadegrad as sg
from conftest import TEST_DEVICE

TENSORVIEW = """
[CUDAKernel]
void copy_tensorview(TensorView<float> input, TensorView<float> output)
{
    for (uint i = 0; i < input.size(0); i++)
        output.store(i, input.load(i));
}

[CUDAKernel]
void add_tensorview(TensorView<float> a, TensorView<float> b, TensorView<float> output)
{
    for (uint i = 0; i < a.size(0); i++)
        output.store(i, a.load(i) + b.load(i));
}

// One thread per marker: thread i writes a 1 at i.
[CUDAKernel]
void mark_threads(uint count, TensorView<int> markers)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i < count) markers.store(i, 1);
}

[CUDAKernel]
void copy_tensorview_float2(TensorView<float2> input, TensorView<float2> output)
{
    for (uint i = 0; i < input.size(0); i++)
        output.store(i, input.load(i));
}

[CUDAKernel]
void copy_tensorview_float4(TensorView<float4> input, TensorView<float4> output)
{
    for (uint i = 0; i < input.size(0); i++)
        output.store(i, input.load(i));
}

[CUDAKernel]
void copy_tensorview_bool(TensorView<bool> input, TensorView<bool> output)
{
    for (uint i = 0; i < input.size(0); i++)
        output.store(i, input.load(i));
}

[CUDAKernel]
void negate_tensorview_bool(TensorView<bool> input, TensorView<bool> output)
{
    for (uint i = 0; i < input.size(0); i++)
        output.store(i, !input.load(i));
}

[CUDAKernel]
void fill_thread_ids(uint count, TensorView<int> output)
{
    uint tid = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (tid >= count)
        return;
    output.store(tid, int(tid));
}

int per_element(int coord) { return coord * 2; }
"""

DIFFTENSORVIEW = """
[CUDAKernel]
void copy_difftensorview(DiffTensorView<float> input, DiffTensorView<float> output)
{
    for (uint i = 0; i < input.size(0); i++)
        output.store(i, input.load(i));
}

[CUDAKernel]
void add_difftensorview(DiffTensorView<float> a, DiffTensorView<float> b, DiffTensorView<float> output)
{
    for (uint i = 0; i < a.size(0); i++)
        output.store(i, a.load(i) + b.load(i));
}

[CUDAKernel]
[Differentiable]
void diff_square(DiffTensorView<float> input, DiffTensorView<float> output)
{
    [MaxIters(1024)]
    for (uint i = 0; i < input.size(0); i++)
    {
        float x = input.load(i);
        output.store(i, x * x);
    }
}

[CUDAKernel]
[Differentiable]
void diff_square_kernel(uint count, DiffTensorView<float> input, DiffTensorView<float> output)
{
    uint tid = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (tid >= count)
        return;
    float x = input.load(tid);
    output.store(tid, x * x);
}
"""

SLICES = [(10, slice(0, 5)), (10, slice(None, None, 2)), (12, slice(3, 9, 3)), (8, slice(1, 8, 2))]


@pytest.fixture(scope="module")
def tv(device):
    return sg.Module.load_from_source(device, "slangpy_tensorview", TENSORVIEW)


@pytest.fixture(scope="module")
def dtv(device):
    return sg.Module.load_from_source(device, "slangpy_difftensorview", DIFFTENSORVIEW)


def t(values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype, device=TEST_DEVICE)


# ---- test_tensorview.py

def test_copy(tv):
    x, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), torch.zeros(5, device=TEST_DEVICE)
    tv.copy_tensorview(x, out, _thread_count=1)
    assert torch.equal(out, x)


def test_add(tv):
    a, b, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), t([10.0, 20.0, 30.0, 40.0, 50.0]), torch.zeros(5, device=TEST_DEVICE)
    tv.add_tensorview(a, b, out, _thread_count=1)
    assert torch.equal(out, a + b)


def test_each_thread_of_a_grid_marks_its_element(tv):
    markers = torch.zeros(5, dtype=torch.int32, device=TEST_DEVICE)
    tv.mark_threads(5, markers, _thread_count=5)
    assert torch.equal(markers.cpu(), torch.ones(5, dtype=torch.int32))


@pytest.mark.parametrize("name,expect", [("copy_tensorview_bool", lambda x: x), ("negate_tensorview_bool", lambda x: ~x)])
def test_bool_elements(tv, name, expect):
    x = t([True, False, True, False, True], torch.bool)
    out = torch.zeros(5, dtype=torch.bool, device=TEST_DEVICE)
    getattr(tv, name)(x, out, _thread_count=1)
    assert torch.equal(out, expect(x))


def test_float2_elements(tv):
    x, out = t([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), torch.zeros(3, 2, device=TEST_DEVICE)
    tv.copy_tensorview_float2(x, out, _thread_count=1)
    assert torch.equal(out, x)


def test_float4_elements(tv):
    x, out = t([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]), torch.zeros(2, 4, device=TEST_DEVICE)
    tv.copy_tensorview_float4(x, out, _thread_count=1)
    assert torch.equal(out, x)


def test_thread_count_fills_thread_ids(tv):
    out = torch.zeros(64, dtype=torch.int32, device=TEST_DEVICE)
    tv.fill_thread_ids(count=64, output=out, _thread_count=64)
    assert torch.equal(out.cpu(), torch.arange(64, dtype=torch.int32))


def test_thread_count_on_a_function_called_per_element_is_refused(tv):
    with pytest.raises(TypeError, match="per_element\\(\\) is not a \\[CUDAKernel\\] function: _thread_count= launches"):
        tv.per_element(t([0, 2, 4], torch.int32), _thread_count=3)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_sliced_input(tv, size, slicer):
    x = torch.arange(size, dtype=torch.float32, device=TEST_DEVICE) * 1.5
    view = x[slicer]
    out = torch.zeros(view.shape[0], device=TEST_DEVICE)
    tv.copy_tensorview(view, out, _thread_count=1)
    assert torch.equal(out, view)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_sliced_output(tv, size, slicer):
    full = torch.zeros(size, device=TEST_DEVICE)
    out = full[slicer]
    x = torch.arange(out.shape[0], dtype=torch.float32, device=TEST_DEVICE) + 1.0
    tv.copy_tensorview(x, out, _thread_count=1)
    expect = torch.zeros(size, device=TEST_DEVICE)
    expect[slicer] = x
    assert torch.equal(full, expect)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_add_sliced(tv, size, slicer):
    a = (torch.arange(size, dtype=torch.float32, device=TEST_DEVICE) * 2.0)[slicer]
    b = (torch.arange(size, dtype=torch.float32, device=TEST_DEVICE) + 7.0)[slicer]
    out = torch.zeros(a.shape[0], device=TEST_DEVICE)
    tv.add_tensorview(a, b, out, _thread_count=1)
    assert torch.equal(out, a + b)


# ---- test_difftensorview.py

def test_diff_copy(dtv):
    x, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), torch.zeros(5, device=TEST_DEVICE)
    dtv.copy_difftensorview(x, out, _thread_count=1)
    assert torch.equal(out, x)


def test_diff_add(dtv):
    a, b, out = t([1.0, 2.0, 3.0]), t([0.5, 0.25, 0.125]), torch.zeros(3, device=TEST_DEVICE)
    dtv.add_difftensorview(a, b, out, _thread_count=1)
    assert torch.equal(out, a + b)


def test_diff_square_backward_through_diff_pairs(dtv):
    x = t([1.0, 2.0, 3.0, 4.0, 5.0])
    x_grad = torch.zeros(5, device=TEST_DEVICE)
    out, out_grad = torch.zeros(5, device=TEST_DEVICE), torch.ones(5, device=TEST_DEVICE)
    dtv.diff_square(x, out, _thread_count=1)
    assert torch.equal(out, x * x)
    dtv.diff_square.bwds(sg.diff_pair(x, x_grad), sg.diff_pair(out, out_grad), _thread_count=1)
    torch.testing.assert_close(x_grad, 2.0 * x)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_diff_square_sliced(dtv, size, slicer):
    x = (torch.arange(size, dtype=torch.float32, device=TEST_DEVICE) * 0.5 - 1.0)[slicer]
    n = x.shape[0]
    x_grad = torch.zeros(n, device=TEST_DEVICE)
    out, out_grad = torch.zeros(n, device=TEST_DEVICE), torch.ones(n, device=TEST_DEVICE)
    dtv.diff_square(x, out, _thread_count=1)
    dtv.diff_square.bwds(sg.diff_pair(x, x_grad), sg.diff_pair(out, out_grad), _thread_count=1)
    torch.testing.assert_close(x_grad, 2.0 * x)


def test_kernel_forward_with_thread_count(dtv):
    x, out = t([1.0, -2.0, 3.0, 0.5, 5.0]), torch.zeros(5, device=TEST_DEVICE)
    dtv.diff_square_kernel(count=5, input=x, output=out, _thread_count=5)
    torch.testing.assert_close(out, x * x)


def test_kernel_backward_with_thread_count(dtv):
    x = t([1.0, -2.0, 3.0, 0.5, 5.0])
    x_grad = torch.zeros(5, device=TEST_DEVICE)
    out, out_grad = torch.zeros(5, device=TEST_DEVICE), t([1.0, 2.0, 3.0, 4.0, 5.0])
    dtv.diff_square_kernel.bwds(count=5, input=sg.diff_pair(x, x_grad), output=sg.diff_pair(out, out_grad),
                                _thread_count=5)
    torch.testing.assert_close(x_grad, 2.0 * x * t([1.0, 2.0, 3.0, 4.0, 5.0]))
