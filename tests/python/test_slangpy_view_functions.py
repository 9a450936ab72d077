# tests/python/test_slangpy_view_functions.py — what SlangPy's test_tensorview.py and
# test_difftensorview.py check, in our words and in SlangPy's forms: functions that take
# TensorView / DiffTensorView parameters without being [CUDAKernel] functions, called as SlangPy
# calls them (once; `_thread_count=N` times; once per element of an sg.grid argument), their
# backward through `.bwds` with
# diff_pairs, torch autograd through such a call, and the errors SlangPy gives (docs/calling.md,
# "Functions that take views"; docs/from_slangpy.md lists SlangPy's cases). Values on
# SHADEGRAD_TEST_DEVICE; gradients against torch and float64 finite differences.
import pytest
import torch

import shadegrad as sg
from conftest import TEST_DEVICE, device_tensor as t

# The kinds of functions SlangPy's test_tensorview.slang declares (views taken by functions that
# are no kernels, a coordinate beside a view, vector and bool elements, one [CUDAKernel]), in our
# own words.
TENSORVIEW = """
void copy_tensorview(TensorView<float> src, TensorView<float> dst)
{
    uint n = src.size(0);
    for (uint k = 0; k < n; ++k)
        dst[k] = src.load(k);
}

void add_tensorview(TensorView<float> lhs, TensorView<float> rhs, TensorView<float> sum)
{
    for (uint k = 0; k < sum.size(0); ++k)
        sum.store(k, lhs[k] + rhs[k]);
}

void mark_thread(int coord, TensorView<int> markers)
{
    markers[coord] = 1;
}

void copy_tensorview_float2(TensorView<float2> src, TensorView<float2> dst)
{
    for (uint k = 0; k < dst.size(0); ++k)
        dst[k] = src[k];
}

void copy_tensorview_float4(TensorView<float4> src, TensorView<float4> dst)
{
    for (uint k = 0; k < dst.size(0); ++k)
        dst.store(k, src.load(k));
}

void copy_tensorview_bool(TensorView<bool> src, TensorView<bool> dst)
{
    for (uint k = 0; k < dst.size(0); ++k)
        dst[k] = src[k];
}

void negate_tensorview_bool(TensorView<bool> src, TensorView<bool> dst)
{
    for (uint k = 0; k < dst.size(0); ++k)
        dst[k] = !src[k];
}

[CUDAKernel]
void fill_thread_ids(uint count, TensorView<int> ids)
{
    uint g = cudaThreadIdx().x + cudaBlockDim().x * cudaBlockIdx().x;
    if (g < count)
        ids[g] = int(g);
}

void mark_cell(int2 c, TensorView<int> cells, int scale)
{
    cells[c.y, c.x] = scale * (c.y * 100 + c.x);
}

void mark_voxel(uint3 c, TensorView<int> voxels)
{
    voxels.store(c.z, c.y, c.x, int(c.z * 10000 + c.y * 100 + c.x));
}

void bump(TensorView<int> counter, int by)
{
    InterlockedAdd(counter[0], by);
}

void scatter_add(int at, float value, TensorView<float> out)
{
    InterlockedAdd(out[at], value);
}

void put_scaled(uint i, float3 v, TensorView<float3> out)
{
    out[i] = v * 2.0;
}

void mark_valued(int value, int2 c, TensorView<int> cells)
{
    cells[c.y, c.x] = value;
}

// SlangPy's common form: a value per call, read from a view at a per-call coordinate.
float sample(TensorView<float> table, float2 uv)
{
    uint x = min(uint(uv.x * float(table.size(1))), table.size(1) - 1);
    uint y = min(uint(uv.y * float(table.size(0))), table.size(0) - 1);
    return table[y, x];
}

float3 lookup(TensorView<float3> colors, int i) { return colors[i] * 0.5; }

int total(TensorView<int> v)
{
    int s = 0;
    for (uint k = 0; k < v.size(0); ++k) s += v[k];
    return s;
}

float4x4 returns_matrix(TensorView<float> x) { return float4x4(1.0); }
void takes_float(float f, TensorView<float> x) { x[0] = f; }
"""

# The kinds of functions SlangPy's test_difftensorview.slang declares (DiffTensorView copies and
# sums, a [Differentiable] square over a loop, the same as a [CUDAKernel]), in our own words.
DIFFTENSORVIEW = """
void copy_difftensorview(DiffTensorView<float> src, DiffTensorView<float> dst)
{
    for (uint k = 0; k < dst.size(0); ++k)
        dst[k] = src[k];
}

void add_difftensorview(DiffTensorView<float> lhs, DiffTensorView<float> rhs, DiffTensorView<float> sum)
{
    for (uint k = 0; k < sum.size(0); ++k)
        sum.store(k, lhs.load(k) + rhs.load(k));
}

[Differentiable]
void diff_square(DiffTensorView<float> src, DiffTensorView<float> dst)
{
    [MaxIters(256)]
    for (uint k = 0; k < dst.size(0); ++k)
    {
        float v = src.load(k);
        dst.store(k, v * v);
    }
}

[Differentiable]
[CUDAKernel]
void diff_square_kernel(uint count, DiffTensorView<float> input, DiffTensorView<float> output)
{
    uint g = cudaThreadIdx().x + cudaBlockDim().x * cudaBlockIdx().x;
    if (g < count)
        output[g] = input[g] * input[g];
}

[Differentiable]
void wave_poly(DiffTensorView<double> x, DiffTensorView<double> y, double a)
{
    [MaxIters(64)]
    for (uint i = 0; i < x.size(0); i++)
    {
        double v = x.load(i);
        y.store(i, a * v * v + sin(v) * x.load((i + 1) % x.size(0)));
    }
}

[Differentiable]
void scale_at(int i, DiffTensorView<double> x, DiffTensorView<double> y)
{
    double v = x.load(i);
    y.store(i, 3.0 * v * v);
}

void plain(DiffTensorView<float> x) { x.store(0, 1.0); }

[Differentiable]
float read_square(DiffTensorView<float> x, int i) { return x[i] * x[i]; }
"""

SLICES = [(6, slice(0, 3)), (6, slice(1, 4)), (6, slice(None, None, 2))]


@pytest.fixture(scope="module")
def tv(device):
    return sg.Module.load_from_source(device, "slangpy_view_functions", TENSORVIEW)


@pytest.fixture(scope="module")
def dtv(device):
    return sg.Module.load_from_source(device, "slangpy_diff_view_functions", DIFFTENSORVIEW)


# ---- test_tensorview.py, as SlangPy calls it

def test_copy_is_one_call(tv):
    x, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), torch.zeros(5, device=TEST_DEVICE)
    assert tv.copy_tensorview(x, out) is None
    assert torch.equal(out, x)


def test_add(tv):
    a, b, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), t([10.0, 20.0, 30.0, 40.0, 50.0]), torch.zeros(5, device=TEST_DEVICE)
    tv.add_tensorview(a, b, out)
    assert torch.equal(out, a + b)


def test_grid_dispatch_marks_each_element(tv):
    markers = torch.zeros(5, dtype=torch.int32, device=TEST_DEVICE)
    tv.mark_thread(sg.grid((5,)), markers)
    assert torch.equal(markers.cpu(), torch.ones(5, dtype=torch.int32))


def test_grid_dispatch_of_a_part(tv):
    markers = torch.zeros(7, dtype=torch.int32, device=TEST_DEVICE)
    tv.mark_thread(sg.grid((3,)), markers=markers)
    assert markers.cpu().tolist() == [1, 1, 1, 0, 0, 0, 0]


def test_two_d_grid_gives_x_the_last_dimension(tv):
    cells = torch.full((3, 300), -1, dtype=torch.int32, device=TEST_DEVICE)  # 900 threads: several blocks
    tv.mark_cell(sg.grid((3, 300)), cells, 2)
    rows, cols = torch.meshgrid(torch.arange(3), torch.arange(300), indexing="ij")
    assert torch.equal(cells.cpu(), (2 * (rows * 100 + cols)).int())


def test_three_d_grid(tv):
    voxels = torch.zeros(2, 3, 4, dtype=torch.int32, device=TEST_DEVICE)
    tv.mark_voxel(sg.grid((2, 3, 4)), voxels)
    z, y, x = torch.meshgrid(torch.arange(2), torch.arange(3), torch.arange(4), indexing="ij")
    assert torch.equal(voxels.cpu(), (z * 10000 + y * 100 + x).int())


def test_empty_grid_runs_nothing(tv):
    markers = torch.zeros(3, dtype=torch.int32, device=TEST_DEVICE)
    tv.mark_thread(sg.grid((0,)), markers)
    assert int(markers.sum()) == 0


@pytest.mark.parametrize("name,expect", [("copy_tensorview_bool", lambda x: x), ("negate_tensorview_bool", lambda x: ~x)])
def test_bool_elements(tv, name, expect):
    x = t([True, False, True, False, True], torch.bool)
    out = torch.zeros(5, dtype=torch.bool, device=TEST_DEVICE)
    getattr(tv, name)(x, out)
    assert torch.equal(out, expect(x))


def test_float2_with_thread_count(tv):
    x, out = t([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), torch.zeros(3, 2, device=TEST_DEVICE)
    tv.copy_tensorview_float2(x, out, _thread_count=1)
    assert torch.equal(out, x)


def test_float4_with_thread_count(tv):
    x, out = t([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]), torch.zeros(2, 4, device=TEST_DEVICE)
    tv.copy_tensorview_float4(x, out, _thread_count=1)
    assert torch.equal(out, x)


@pytest.mark.parametrize("threads", [1, 255, 256, 1000])
def test_thread_count_runs_the_function_that_many_times(tv, threads):
    # every thread adds into one element: the count is exact only if each ran once, atomically
    counter = torch.zeros(1, dtype=torch.int32, device=TEST_DEVICE)
    tv.bump(counter, 3, _thread_count=threads)
    assert int(counter.item()) == 3 * threads


def test_thread_count_fill_ids(tv):
    out = torch.zeros(64, dtype=torch.int32, device=TEST_DEVICE)
    tv.fill_thread_ids(count=64, ids=out, _thread_count=64)
    assert torch.equal(out.cpu(), torch.arange(64, dtype=torch.int32))


def test_thread_count_on_an_auto_vectorized_call_is_an_error(tv):
    # SlangPy's case: coord from a tensor gives the call a dimension of its own
    coords, markers = t([0, 1, 2], torch.int32), torch.zeros(4, dtype=torch.int32, device=TEST_DEVICE)
    with pytest.raises(ValueError, match="mark_thread\\(\\): _thread_count is only valid for kernels with call "
                                         "dimensionality 0, and parameter 'coord'"):
        tv.mark_thread(coords, markers, _thread_count=3)
    assert int(markers.sum()) == 0


def test_thread_count_with_a_grid_is_an_error(tv):
    markers = torch.zeros(4, dtype=torch.int32, device=TEST_DEVICE)
    with pytest.raises(ValueError, match="_thread_count is only valid for kernels with call dimensionality 0"):
        tv.mark_thread(sg.grid((4,)), markers, _thread_count=4)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_sliced_input(tv, size, slicer):
    x = torch.arange(1.0, size + 1.0, device=TEST_DEVICE)[slicer]
    out = torch.zeros(3, device=TEST_DEVICE)
    tv.copy_tensorview(x, out)
    assert torch.equal(out, x)


@pytest.mark.parametrize("size,slicer", SLICES + [(9, "diagonal")])
def test_sliced_output(tv, size, slicer):
    full = torch.full((size,), -1.0, device=TEST_DEVICE)
    cut = (lambda v: v.reshape(3, 3).diagonal()) if slicer == "diagonal" else (lambda v: v[slicer])
    x = t([10.0, 20.0, 30.0])
    tv.copy_tensorview(x, cut(full))
    expect = torch.full((size,), -1.0, device=TEST_DEVICE)
    cut(expect)[:] = x
    assert torch.equal(full, expect)


@pytest.mark.parametrize("size,slicer", SLICES)
def test_add_sliced(tv, size, slicer):
    a = torch.arange(1.0, size + 1.0, device=TEST_DEVICE)[slicer]
    b = torch.arange(10.0, 10.0 + size, device=TEST_DEVICE)[slicer]
    out = torch.zeros(3, device=TEST_DEVICE)
    tv.add_tensorview(a, b, out)
    assert torch.equal(out, a + b)


# ---- errors

def test_a_tensor_beside_views_gives_one_element_per_call(tv):
    # SlangPy vectorizes the other arguments and binds the view whole
    markers = torch.zeros(6, dtype=torch.int32, device=TEST_DEVICE)
    tv.mark_thread(t([0, 2, 5], torch.int32), markers)
    assert markers.cpu().tolist() == [1, 0, 1, 0, 0, 1]


def test_per_element_tensors_under_contention(tv):
    gen = torch.Generator().manual_seed(4)
    at = torch.randint(0, 10, (3000,), generator=gen, dtype=torch.int32).to(TEST_DEVICE)
    value = torch.rand(3000, generator=gen).to(TEST_DEVICE).mul(8).round().div(8)  # exact sums
    out = torch.zeros(10, device=TEST_DEVICE)
    tv.scatter_add(at, value, out)
    want = torch.zeros(10).index_add_(0, at.cpu().long(), value.cpu())
    assert torch.equal(out.cpu(), want)


def test_per_element_vectors_and_a_number(tv):
    v = torch.arange(12, dtype=torch.float32, device=TEST_DEVICE).reshape(4, 3)
    out = torch.zeros(4, 3, device=TEST_DEVICE)
    tv.put_scaled(torch.tensor([3, 2, 1, 0], dtype=torch.int32, device=TEST_DEVICE).view(torch.uint32), v, out)
    assert torch.equal(out, 2.0 * v.flip(0))


def test_a_tensor_and_a_grid_share_the_call_shape(tv):
    values = torch.arange(6, dtype=torch.int32, device=TEST_DEVICE).reshape(2, 3) * 7
    cells = torch.zeros(2, 3, dtype=torch.int32, device=TEST_DEVICE)
    tv.mark_valued(values, sg.grid((2, 3)), cells)
    assert torch.equal(cells, values)
    with pytest.raises(ValueError, match="mark_valued\\(\\): parameter 'c' \\(int2\\): its call shape \\(3, 2\\) "
                                         "does not broadcast with \\(2, 3\\) of parameter 'value' \\(dimension 1 of "
                                         "the call: 2 against 3\\)"):
        tv.mark_valued(values, sg.grid((3, 2)), cells)


def test_a_per_element_tensor_that_requires_grad_of_a_plain_function(tv):
    # scatter_add is not [Differentiable]: the tensor's values are read, no gradient is made
    value = torch.ones(2, device=TEST_DEVICE, requires_grad=True)
    out = torch.zeros(2, device=TEST_DEVICE)
    tv.scatter_add(t([0, 1], torch.int32), value, out)
    assert out.cpu().tolist() == [1.0, 1.0] and out.grad_fn is None


def test_a_grid_for_a_float_is_refused(tv):
    with pytest.raises(TypeError, match="takes_float\\(\\): parameter 'f' \\(float\\) is given an sg.grid"):
        tv.takes_float(sg.grid((2,)), torch.zeros(2, device=TEST_DEVICE))


def test_a_grid_of_another_rank_is_refused(tv):
    with pytest.raises(TypeError, match="parameter 'c' \\(int2\\) takes the coordinate of a 2-D grid, got a 1-D"):
        tv.mark_cell(sg.grid((4,)), torch.zeros(2, 2, dtype=torch.int32, device=TEST_DEVICE), 1)


def test_a_strided_grid_is_refused(tv):
    with pytest.raises(TypeError, match="stride or offset"):
        tv.mark_thread(sg.grid((2,), stride=(2,)), torch.zeros(4, dtype=torch.int32, device=TEST_DEVICE))


def test_results_one_per_call(tv):
    table = torch.arange(12, dtype=torch.float32, device=TEST_DEVICE).reshape(3, 4)
    uv = torch.tensor([[[0.0, 0.0], [0.99, 0.0]], [[0.3, 0.5], [0.99, 0.99]]], device=TEST_DEVICE)
    got = tv.sample(table, uv)
    assert got.shape == (2, 2) and got.dtype == torch.float32 and got.device.type == TEST_DEVICE
    assert got.cpu().tolist() == [[0.0, 3.0], [5.0, 11.0]]
    colors = torch.arange(9, dtype=torch.float32, device=TEST_DEVICE).reshape(3, 3)
    out = tv.lookup(colors, sg.grid((3,)))
    assert out.shape == (3, 3) and torch.equal(out, colors * 0.5)
    assert tv.lookup(colors, t([2, 2, 0, 1], torch.int32)).cpu().tolist() == \
        [[3.0, 3.5, 4.0], [3.0, 3.5, 4.0], [0.0, 0.5, 1.0], [1.5, 2.0, 2.5]]


def test_a_single_call_returns_a_zero_dimensional_tensor(tv):
    got = tv.total(t([1, 2, 3, 4], torch.int32))
    assert got.shape == () and got.dtype == torch.int32 and int(got) == 10
    assert tv.lookup(torch.ones(2, 3, device=TEST_DEVICE), 1).shape == (3,)
    assert tv.sample(torch.ones(2, 2, device=TEST_DEVICE), torch.zeros(0, 2, device=TEST_DEVICE)).shape == (0,)


def test_a_matrix_result(tv):
    # the same value as a call per element gives (a scalar splat to every element)
    got = tv.returns_matrix(torch.zeros(2, device=TEST_DEVICE))
    assert got.shape == (4, 4) and torch.equal(got.cpu(), torch.ones(4, 4))


def test_a_view_of_another_dtype_is_refused(tv):
    with pytest.raises(TypeError, match="copy_tensorview\\(\\): parameter 'dst' \\(TensorView<float>\\) takes a "
                                        "float32 tensor, got int32"):
        tv.copy_tensorview(t([1.0]), torch.zeros(1, dtype=torch.int32, device=TEST_DEVICE))


def test_map_of_a_view_is_refused(tv):
    # a view is bound whole: it has no call dimensions to map
    with pytest.raises(TypeError, match="copy_tensorview\\(\\): parameter 'src' \\(TensorView<float>\\): map\\(\\) "
                                        "applies to a tensor read per element beside views, not to a view"):
        tv.copy_tensorview.map((0,), (0,))(t([1.0]), torch.zeros(1, device=TEST_DEVICE))


# ---- test_difftensorview.py, as SlangPy calls it

def test_diff_copy(dtv):
    x, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), torch.zeros(5, device=TEST_DEVICE)
    dtv.copy_difftensorview(x, out)
    assert torch.equal(out, x)


def test_diff_add(dtv):
    a, b, out = t([1.0, 2.0, 3.0, 4.0, 5.0]), t([10.0, 20.0, 30.0, 40.0, 50.0]), torch.zeros(5, device=TEST_DEVICE)
    dtv.add_difftensorview(a, b, out)
    assert torch.equal(out, a + b)


def test_diff_square_bwds(dtv):
    x = t([1.0, 2.0, 3.0, 4.0, 5.0])
    x_grad, out, out_grad = torch.zeros(5, device=TEST_DEVICE), torch.zeros(5, device=TEST_DEVICE), torch.ones(5, device=TEST_DEVICE)
    dtv.diff_square.bwds(sg.diff_pair(x, x_grad), sg.diff_pair(out, out_grad))
    torch.testing.assert_close(x_grad, 2.0 * x, atol=1e-5, rtol=0)


@pytest.mark.parametrize("size,slicer", SLICES + [(9, "diagonal")])
def test_diff_square_sliced(dtv, size, slicer):
    full = torch.arange(1.0, size + 1.0, device=TEST_DEVICE)
    x = full.reshape(3, 3).diagonal() if slicer == "diagonal" else full[slicer]
    x_grad, out, out_grad = torch.zeros(3, device=TEST_DEVICE), torch.zeros(3, device=TEST_DEVICE), torch.ones(3, device=TEST_DEVICE)
    dtv.diff_square(x, out)
    torch.testing.assert_close(out, x * x)
    dtv.diff_square.bwds(sg.diff_pair(x, x_grad), sg.diff_pair(out, out_grad))
    torch.testing.assert_close(x_grad, 2.0 * x, atol=1e-5, rtol=0)


def test_kernel_forward_and_backward_with_thread_count(dtv):
    x = t([1.0, 2.0, 3.0, 4.0, 5.0])
    out = torch.zeros(5, device=TEST_DEVICE)
    dtv.diff_square_kernel(count=5, input=x, output=out, _thread_count=5)
    torch.testing.assert_close(out, x * x)
    x_grad, out_grad = torch.zeros(5, device=TEST_DEVICE), torch.ones(5, device=TEST_DEVICE)
    dtv.diff_square_kernel.bwds(count=5, input=sg.diff_pair(x, x_grad), output=sg.diff_pair(out, out_grad),
                                _thread_count=5)
    torch.testing.assert_close(x_grad, 2.0 * x, atol=1e-5, rtol=0)


# ---- gradients: torch and float64 finite differences

def wave_poly_torch(x, a):
    return a * x * x + torch.sin(x) * torch.roll(x, -1)


def test_float64_gradients_against_torch_and_finite_differences(dtv):
    gen = torch.Generator().manual_seed(5)
    x = torch.rand(7, generator=gen, dtype=torch.float64).to(TEST_DEVICE) * 2 - 1
    gy = torch.rand(7, generator=gen, dtype=torch.float64).to(TEST_DEVICE)
    y = torch.zeros_like(x)
    dtv.wave_poly(x, y, 0.75)
    torch.testing.assert_close(y, wave_poly_torch(x, 0.75), rtol=1e-12, atol=1e-12)
    gx = torch.zeros_like(x)
    dtv.wave_poly.bwds(sg.diff_pair(x, gx), sg.diff_pair(y, gy.clone()), 0.75)
    xr = x.clone().requires_grad_()
    (wave_poly_torch(xr, 0.75) * gy).sum().backward()
    torch.testing.assert_close(gx, xr.grad, rtol=1e-12, atol=1e-12)
    eps = 1e-6
    for i in range(7):
        hi, lo = x.clone(), x.clone()
        hi[i] += eps
        lo[i] -= eps
        yh, yl = torch.zeros_like(x), torch.zeros_like(x)
        dtv.wave_poly(hi, yh, 0.75)
        dtv.wave_poly(lo, yl, 0.75)
        fd = float(((yh - yl) * gy).sum()) / (2 * eps)
        assert abs(fd - float(gx[i])) < 1e-7


def test_torch_autograd_through_a_call(dtv):
    x = (torch.linspace(-1.0, 1.0, 6, dtype=torch.float64, device=TEST_DEVICE)).requires_grad_()
    y = torch.zeros(6, dtype=torch.float64, device=TEST_DEVICE)
    out = dtv.wave_poly(x, y, 1.5)
    assert out is y and y.grad_fn is not None
    (y * y).sum().backward()
    xr = x.detach().clone().requires_grad_()
    yr = wave_poly_torch(xr, 1.5)
    (yr * yr).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-12, atol=1e-12)


def test_per_element_index_and_its_backward(dtv):
    x = t([0.5, -1.0, 2.0, 3.0], torch.float64)
    y = torch.zeros(4, dtype=torch.float64, device=TEST_DEVICE)
    idx = t([3, 1, 0], torch.int32)  # element 2 is not touched
    dtv.scale_at(idx, x, y)
    assert y.cpu().tolist() == [0.75, 3.0, 0.0, 27.0]
    gx, gy = torch.zeros_like(x), t([1.0, 2.0, 3.0, 4.0], torch.float64)
    dtv.scale_at.bwds(idx, sg.diff_pair(x, gx), sg.diff_pair(y, gy))
    assert gx.cpu().tolist() == [6.0 * 0.5 * 1.0, 6.0 * -1.0 * 2.0, 0.0, 6.0 * 3.0 * 4.0]


def test_grid_calls_and_their_backward(dtv):
    x = t([0.5, -1.0, 2.0, 3.0], torch.float64)
    y = torch.zeros(4, dtype=torch.float64, device=TEST_DEVICE)
    dtv.scale_at(sg.grid((4,)), x, y)
    torch.testing.assert_close(y, 3.0 * x * x)
    gx, gy = torch.zeros_like(x), t([1.0, 2.0, 3.0, 4.0], torch.float64)
    dtv.scale_at.bwds(sg.grid((4,)), sg.diff_pair(x, gx), sg.diff_pair(y, gy))
    torch.testing.assert_close(gx, 6.0 * x * t([1.0, 2.0, 3.0, 4.0], torch.float64))


def test_bwds_of_a_function_that_is_not_differentiable(dtv):
    x = t([1.0])
    with pytest.raises(TypeError, match="plain.bwds\\(\\): plain is not \\[Differentiable\\]"):
        dtv.plain.bwds(sg.diff_pair(x, torch.zeros_like(x)))


def test_a_differentiable_result_and_its_derivative(dtv):
    # the derivative of a result: tests/python/test_view_function_derivatives.py has the rest
    x = t([1.0, 2.0, 3.0])
    assert dtv.read_square(x, t([2, 0], torch.int32)).cpu().tolist() == [9.0, 1.0]
    gx = torch.zeros_like(x)
    dtv.read_square.bwds(sg.diff_pair(x, gx), t([2, 0], torch.int32), t([1.0, 0.5]))
    assert gx.cpu().tolist() == [1.0, 0.0, 6.0]
    xr = x.clone().requires_grad_()
    dtv.read_square(xr, t([2, 0], torch.int32)).sum().backward()
    assert xr.grad.cpu().tolist() == [2.0, 0.0, 6.0]
