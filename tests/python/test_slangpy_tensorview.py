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
from conftest import TEST_DEVICE, device_tensor as t

TENSORVIEW = """
// Each of these runs as one thread (_thread_count=1) that walks the whole view, or as one
// thread per element.
[CUDAKernel]
void view_copy(TensorView<float> from, TensorView<float> to)
{
    int count = int(from.size(0));
    for (int j = 0; j < count; j++)
        to[j] = from[j];
}

[CUDAKernel]
void view_sum(TensorView<float> x, TensorView<float> y, TensorView<float> total)
{
    for (int j = 0; j < int(total.size(0)); j++)
        total[j] = x.load(j) + y.load(j);
}

[CUDAKernel]
void flag_each_thread(uint n, TensorView<int> flags)
{
    uint me = cudaThreadIdx().x + cudaBlockIdx().x * cudaBlockDim().x;
    if (me < n)
        flags[me] = 1;
}

[CUDAKernel]
void view_copy2(TensorView<float2> from, TensorView<float2> to)
{
    for (int j = 0; j < int(to.size(0)); j++)
        to.store(j, from[j]);
}

[CUDAKernel]
void view_copy4(TensorView<float4> from, TensorView<float4> to)
{
    for (int j = 0; j < int(to.size(0)); j++)
        to[j] = from.load(j);
}

[CUDAKernel]
void view_copy_flags(TensorView<bool> from, TensorView<bool> to)
{
    for (int j = 0; j < int(to.size(0)); j++)
        to[j] = from[j];
}

[CUDAKernel]
void view_flip_flags(TensorView<bool> from, TensorView<bool> to)
{
    for (int j = 0; j < int(to.size(0)); j++)
        to.store(j, from[j] == false);
}

[CUDAKernel]
void write_own_index(uint n, TensorView<int> ids)
{
    uint me = cudaThreadIdx().x + cudaBlockIdx().x * cudaBlockDim().x;
    if (me < n)
        ids[me] = int(me);
}

int per_element(int coord) { return coord * 2; }
"""

DIFFTENSORVIEW = """
[CUDAKernel]
void diff_view_copy(DiffTensorView<float> from, DiffTensorView<float> to)
{
    for (int j = 0; j < int(from.size(0)); j++)
        to.store(j, from.load(j));
}

[CUDAKernel]
void diff_view_sum(DiffTensorView<float> x, DiffTensorView<float> y, DiffTensorView<float> total)
{
    for (int j = 0; j < int(total.size(0)); j++)
        total.store(j, x.load(j) + y.load(j));
}

// One thread squares every element (a loop the backward runs in reverse).
[CUDAKernel]
[Differentiable]
void squares_in_one_thread(DiffTensorView<float> x, DiffTensorView<float> y)
{
    [MaxIters(1024)]
    for (int j = 0; j < int(x.size(0)); j++)
    {
        float v = x.load(j);
        y.store(j, v * v);
    }
}

// One thread per element.
[CUDAKernel]
[Differentiable]
void squares_per_thread(uint n, DiffTensorView<float> x, DiffTensorView<float> y)
{
    uint me = cudaThreadIdx().x + cudaBlockIdx().x * cudaBlockDim().x;
    if (me < n)
    {
        float v = x.load(me);
        y.store(me, v * v);
    }
}
"""

SLICES = [(10, slice(0, 5)), (10, slice(None, None, 2)), (12, slice(3, 9, 3)), (8, slice(1, 8, 2))]


@pytest.fixture(scope="module")
def tv(device):
    return sg.Module.load_from_source(device, "slangpy_tensorview", TENSORVIEW)


@pytest.fixture(scope="module")
def dtv(device):
    return sg.Module.load_from_source(device, "slangpy_difftensorview", DIFFTENSORVIEW)


# ---- test_tensorview.py

def test_copy(tv):
    x, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), torch.zeros(5, device=TEST_DEVICE)
    tv.view_copy(x, out, _thread_count=1)
    assert torch.equal(out, x)


def test_add(tv):
    a, b, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), t([10.0, 20.0, 30.0, 40.0, 50.0]), torch.zeros(5, device=TEST_DEVICE)
    tv.view_sum(a, b, out, _thread_count=1)
    assert torch.equal(out, a + b)


def test_each_thread_of_a_grid_marks_its_element(tv):
    markers = torch.zeros(5, dtype=torch.int32, device=TEST_DEVICE)
    tv.flag_each_thread(5, markers, _thread_count=5)
    assert torch.equal(markers.cpu(), torch.ones(5, dtype=torch.int32))


@pytest.mark.parametrize("name,expect", [("view_copy_flags", lambda x: x), ("view_flip_flags", lambda x: ~x)])
def test_bool_elements(tv, name, expect):
    x = t([True, False, True, False, True], torch.bool)
    out = torch.zeros(5, dtype=torch.bool, device=TEST_DEVICE)
    getattr(tv, name)(x, out, _thread_count=1)
    assert torch.equal(out, expect(x))


def test_float2_elements(tv):
    x, out = t([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), torch.zeros(3, 2, device=TEST_DEVICE)
    tv.view_copy2(x, out, _thread_count=1)
    assert torch.equal(out, x)


def test_float4_elements(tv):
    x, out = t([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]), torch.zeros(2, 4, device=TEST_DEVICE)
    tv.view_copy4(x, out, _thread_count=1)
    assert torch.equal(out, x)


def test_thread_count_fills_thread_ids(tv):
    out = torch.zeros(64, dtype=torch.int32, device=TEST_DEVICE)
    tv.write_own_index(n=64, ids=out, _thread_count=64)
    assert torch.equal(out.cpu(), torch.arange(64, dtype=torch.int32))


def test_thread_count_on_a_function_called_per_element_is_refused(tv):
    with pytest.raises(TypeError, match="per_element\\(\\) is not a \\[CUDAKernel\\] function: _thread_count= launches"):
        tv.per_element(t([0, 2, 4], torch.int32), _thread_count=3)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_sliced_input(tv, size, slicer):
    x = torch.arange(size, dtype=torch.float32, device=TEST_DEVICE) * 1.5
    view = x[slicer]
    out = torch.zeros(view.shape[0], device=TEST_DEVICE)
    tv.view_copy(view, out, _thread_count=1)
    assert torch.equal(out, view)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_sliced_output(tv, size, slicer):
    full = torch.zeros(size, device=TEST_DEVICE)
    out = full[slicer]
    x = torch.arange(out.shape[0], dtype=torch.float32, device=TEST_DEVICE) + 1.0
    tv.view_copy(x, out, _thread_count=1)
    expect = torch.zeros(size, device=TEST_DEVICE)
    expect[slicer] = x
    assert torch.equal(full, expect)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_add_sliced(tv, size, slicer):
    a = (torch.arange(size, dtype=torch.float32, device=TEST_DEVICE) * 2.0)[slicer]
    b = (torch.arange(size, dtype=torch.float32, device=TEST_DEVICE) + 7.0)[slicer]
    out = torch.zeros(a.shape[0], device=TEST_DEVICE)
    tv.view_sum(a, b, out, _thread_count=1)
    assert torch.equal(out, a + b)


# ---- test_difftensorview.py

def test_diff_copy(dtv):
    x, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), torch.zeros(5, device=TEST_DEVICE)
    dtv.diff_view_copy(x, out, _thread_count=1)
    assert torch.equal(out, x)


def test_diff_add(dtv):
    a, b, out = t([1.0, 2.0, 3.0]), t([0.5, 0.25, 0.125]), torch.zeros(3, device=TEST_DEVICE)
    dtv.diff_view_sum(a, b, out, _thread_count=1)
    assert torch.equal(out, a + b)


def test_diff_square_backward_through_diff_pairs(dtv):
    x = t([1.0, 2.0, 3.0, 4.0, 5.0])
    x_grad = torch.zeros(5, device=TEST_DEVICE)
    out, out_grad = torch.zeros(5, device=TEST_DEVICE), torch.ones(5, device=TEST_DEVICE)
    dtv.squares_in_one_thread(x, out, _thread_count=1)
    assert torch.equal(out, x * x)
    dtv.squares_in_one_thread.bwds(sg.diff_pair(x, x_grad), sg.diff_pair(out, out_grad), _thread_count=1)
    torch.testing.assert_close(x_grad, 2.0 * x)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_diff_square_sliced(dtv, size, slicer):
    x = (torch.arange(size, dtype=torch.float32, device=TEST_DEVICE) * 0.5 - 1.0)[slicer]
    n = x.shape[0]
    x_grad = torch.zeros(n, device=TEST_DEVICE)
    out, out_grad = torch.zeros(n, device=TEST_DEVICE), torch.ones(n, device=TEST_DEVICE)
    dtv.squares_in_one_thread(x, out, _thread_count=1)
    dtv.squares_in_one_thread.bwds(sg.diff_pair(x, x_grad), sg.diff_pair(out, out_grad), _thread_count=1)
    torch.testing.assert_close(x_grad, 2.0 * x)


def test_kernel_forward_with_thread_count(dtv):
    x, out = t([1.0, -2.0, 3.0, 0.5, 5.0]), torch.zeros(5, device=TEST_DEVICE)
    dtv.squares_per_thread(n=5, x=x, y=out, _thread_count=5)
    torch.testing.assert_close(out, x * x)


def test_kernel_backward_with_thread_count(dtv):
    x = t([1.0, -2.0, 3.0, 0.5, 5.0])
    x_grad = torch.zeros(5, device=TEST_DEVICE)
    out, out_grad = torch.zeros(5, device=TEST_DEVICE), t([1.0, 2.0, 3.0, 4.0, 5.0])
    dtv.squares_per_thread.bwds(n=5, x=sg.diff_pair(x, x_grad), y=sg.diff_pair(out, out_grad),
                                _thread_count=5)
    torch.testing.assert_close(x_grad, 2.0 * x * t([1.0, 2.0, 3.0, 4.0, 5.0]))
