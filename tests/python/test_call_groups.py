# tests/python/test_call_groups.py — SlangPy's call groups: fn.call_group_shape(shape) cuts a
# vectorized call's shape into groups, each run as one launch block. The ids a function reads
# through CallShapeInfo (import slangpy) against hand-computed ones in 1-, 2- and 3-D, with
# partial groups and a group shape padded with leading 1s; groupshared memory shared by the
# elements of a group behind barriers (values that come out wrong without the barrier: the CPU
# runs the group's elements one after another unless it meets them there); gradients of a
# call in call groups against torch; the call key; and the errors, each naming the function
# and the parameter with SlangPy's phrases.
import itertools

import pytest
import torch

import shadegrad as sg
from conftest import TEST_DEVICE

SOURCE = """
import slangpy;

// (group id, id in the group, call id) of dimension d, packed 10 bits each
int ids(int3 cell, int d)
{
    int g = CallShapeInfo::get_call_group_id().shape[d];
    int t = CallShapeInfo::get_call_group_thread_id().shape[d];
    int c = CallShapeInfo::get_call_id().shape[d];
    return (g << 20) | (t << 10) | c;
}
int ids2(int2 cell, int d) { return ids(int3(cell, 0), d); }
int ids1(int cell, int d) { return ids(int3(cell, 0, 0), d); }
int rank_of(int2 cell) { return CallShapeInfo::get_call_id().dimensionality; }

// Each element of a 1-D group of G publishes its value, then reads its neighbour's (the next
// live element of its group, cyclically): wrong unless every element has written first.
groupshared float row[64];
float rotate(float x, int n, int G)
{
    int g = CallShapeInfo::get_call_group_id().shape[0];
    int t = CallShapeInfo::get_call_group_thread_id().shape[0];
    row[t] = x;
    GroupMemoryBarrierWithGroupSync();
    int live = min(G, n - g * G);
    return row[(t + 1) % live];
}

// The sum over a 2-D group's live elements (tile[ty][tx]), two barriers: the second keeps the
// group from overwriting the tile while others still read it (the loop runs twice).
groupshared float tile[4][8];
float group_sum(float x, int h, int w)
{
    CallShapeInfo g = CallShapeInfo::get_call_group_id();
    CallShapeInfo t = CallShapeInfo::get_call_group_thread_id();
    float result = 0.0;
    for (int round = 0; round < 2; round++)
    {
        tile[t.shape[0]][t.shape[1]] = x + float(round);
        GroupMemoryBarrierWithGroupSync();
        float s = 0.0;
        for (int y = 0; y < min(4, h - g.shape[0] * 4); y++)
            for (int x2 = 0; x2 < min(8, w - g.shape[1] * 8); x2++)
                s += tile[y][x2];
        result += s;
        GroupMemoryBarrierWithGroupSync();
    }
    return result;
}

// A 3-D group counts its live elements with an atomic on groupshared memory.
groupshared int count;
int live_in_group(int3 cell)
{
    CallShapeInfo t = CallShapeInfo::get_call_group_thread_id();
    if (t.shape[0] == 0 && t.shape[1] == 0 && t.shape[2] == 0) count = 0;
    GroupMemoryBarrierWithGroupSync();
    InterlockedAdd(count, 1);
    GroupMemoryBarrierWithGroupSync();
    return count;
}

[Differentiable]
float scaled(float a)
{
    int g = CallShapeInfo::get_call_group_id().shape[0];
    return a * a * float(g + 1);
}

float plain(float a) { return a + 1.0; }
float uses_shared(float a) { row[0] = a; return row[0]; }
"""


@pytest.fixture(scope="module")
def m(device):
    return sg.Module.load_from_source(device, "call_groups", SOURCE)


def unpack(v):
    v = v.cpu().to(torch.int64)
    return v >> 20, (v >> 10) & 1023, v & 1023


def expected(shape, group, d):
    """SlangPy's ids at every element of a call of `shape` in groups of `group` (padded with
    leading 1s), dimension d: the group's id, the element's id in it, the call id."""
    group = (1,) * (len(shape) - len(group)) + tuple(group)
    out = [torch.zeros(shape, dtype=torch.int64) for _ in range(3)]
    for idx in itertools.product(*[range(e) for e in shape]):
        out[0][idx] = idx[d] // group[d]
        out[1][idx] = idx[d] % group[d]
        out[2][idx] = idx[d]
    return out


@pytest.mark.parametrize(
    "shape,group",
    [((8,), (2,)), ((9,), (2,)), ((1,), (4,)), ((9, 7), (2, 3)), ((1, 1), (4, 4)), ((3, 5), (10, 10)),
     ((4, 4), ()), ((4, 4), (4,)), ((9, 7, 5), (2, 3, 2)), ((8, 4, 12), (4, 8, 6)), ((32, 32), (32, 1))],
)
def test_ids_of_every_element_in_1_2_and_3_d(m, shape, group):
    fn = {1: m.ids1, 2: m.ids2, 3: m.ids}[len(shape)]
    for d in range(len(shape)):
        got = unpack(fn.call_group_shape(group)(sg.grid(shape), d))
        for g, w in zip(got, expected(shape, group, d)):
            assert torch.equal(g, w), (shape, group, d)


def test_ids_without_a_call_group_are_those_of_groups_of_one(m):
    shape = (5, 3)
    for d in range(2):
        g, t, c = unpack(m.ids2(sg.grid(shape), d))
        assert torch.equal(g, c) and torch.equal(t, torch.zeros_like(t))
        assert torch.equal(c, expected(shape, (), d)[2])
    assert torch.equal(m.rank_of(sg.grid(shape)).cpu(), torch.full(shape, 2, dtype=torch.int32))
    assert torch.equal(m.rank_of.call_group_shape((2, 2))(sg.grid(shape)).cpu(), torch.full(shape, 2, dtype=torch.int32))


@pytest.mark.parametrize("n,G", [(16, 4), (10, 4), (3, 8), (64, 64), (70, 32)])
def test_groupshared_memory_behind_a_barrier_with_partial_groups(m, n, G):
    x = torch.arange(n, dtype=torch.float32, device=TEST_DEVICE) * 1.5 + 2.0
    got = m.rotate.call_group_shape((G,))(x, n, G).cpu()
    want = torch.empty(n)
    for i in range(n):
        g, t = divmod(i, G)
        live = min(G, n - g * G)
        want[i] = x.cpu()[g * G + (t + 1) % live]
    assert torch.equal(got, want)


@pytest.mark.parametrize("h,w", [(8, 16), (10, 13), (3, 5)])
def test_a_2d_group_sums_its_tile_behind_two_barriers(m, h, w):
    x = (torch.arange(h * w, dtype=torch.float32, device=TEST_DEVICE).reshape(h, w) * 0.25) % 3.0
    got = m.group_sum.call_group_shape((4, 8))(x, h, w).cpu()
    xc = x.cpu()
    want = torch.empty(h, w)
    for y in range(h):
        for c in range(w):
            gy, gx = y // 4 * 4, c // 8 * 8
            block = xc[gy:gy + 4, gx:gx + 8]
            want[y, c] = block.sum() + (block + 1.0).sum()
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-5)


def test_a_3d_group_counts_its_live_elements_with_an_atomic(m):
    shape, group = (5, 3, 6), (2, 2, 4)
    got = m.live_in_group.call_group_shape(group)(sg.grid(shape)).cpu()
    want = torch.empty(shape, dtype=torch.int32)
    for idx in itertools.product(*[range(e) for e in shape]):
        want[idx] = 1
        for d in range(3):
            start = idx[d] // group[d] * group[d]
            want[idx] *= min(group[d], shape[d] - start)
    assert torch.equal(got, want)


def test_gradients_of_a_call_in_call_groups_match_torch(m):
    a = torch.linspace(-1.0, 2.0, 11, device=TEST_DEVICE, requires_grad=True)
    y = m.scaled.call_group_shape((4,))(a)
    scale = (torch.arange(11, device=TEST_DEVICE) // 4 + 1).to(torch.float32)
    torch.testing.assert_close(y, a.detach() ** 2 * scale)
    y.sum().backward()
    torch.testing.assert_close(a.grad, 2 * a.detach() * scale)


def test_the_call_group_is_part_of_the_call_key(m):
    x = torch.ones(8, device=TEST_DEVICE)
    assert m.plain.call_key(x) != m.plain.call_group_shape((2,)).call_key(x)
    before = m.plain.plan_count
    for group in [None, (2,), (4,), (2,), (4,), None]:
        torch.testing.assert_close(m.plain.call_group_shape(group)(x), x + 1)
    assert m.plain.plan_count - before == 3  # a plan per group shape: none, (2,), (4,)


def test_groupshared_memory_needs_a_call_group(m):
    x = torch.ones(4, device=TEST_DEVICE)
    with pytest.raises(sg.CompileError, match="groupshared variable 'row'.*call_group_shape"):
        m.uses_shared(x)
    torch.testing.assert_close(m.uses_shared.call_group_shape((1,))(x), x)


@pytest.mark.parametrize(
    "group,fragments",
    [((2, 0), ["call_group_shape[1] = 0", "must be >= 1", "extent 1 is 0"]),
     ((2, -1), ["call_group_shape[1] = -1", "must be >= 1"]),
     ((0, -1), ["call_group_shape[0] = 0"]),
     ((64, 32), ["more than 1024 elements"]),
     ((1,) * 9, ["has 9 dimensions"])],
)
def test_bad_call_group_shapes_name_the_function_and_parameter(m, group, fragments):
    with pytest.raises(ValueError) as e:
        m.plain.call_group_shape(group)
    text = str(e.value)
    assert "plain(): call_group_shape(): parameter 'shape'" in text
    for f in fragments:
        assert f in text


@pytest.mark.parametrize("group,call_rank", [((2, 2, 2), 2), ((1, 1, 1, 1, 1), 1)])
def test_a_call_group_of_more_dimensions_than_the_call(m, group, call_rank):
    fn = m.ids2 if call_rank == 2 else m.ids1
    with pytest.raises(ValueError) as e:
        fn.call_group_shape(group)(sg.grid((4,) * call_rank), 0)
    text = str(e.value)
    assert "call_group_shape(): parameter 'shape'" in text and fn.name in text
    assert f"call_group_shape dimensionality ({len(group)})" in text
    assert f"call_shape dimensionality ({call_rank})" in text
    assert "cannot have more dimensions than call_shape" in text


def test_a_call_group_shape_of_other_values_is_a_type_error(m):
    with pytest.raises(TypeError, match="plain\\(\\): call_group_shape\\(\\): parameter 'shape' takes"):
        m.plain.call_group_shape((2.5,))
    with pytest.raises(TypeError, match="takes a tuple of ints"):
        m.plain.call_group_shape("2")


def test_call_groups_in_deterministic_mode_are_refused(m):
    with pytest.raises(TypeError, match="deterministic mode is not supported yet"):
        m.plain.call_group_shape((2,)).deterministic()(torch.ones(4, device=TEST_DEVICE))


def test_call_shape_info_in_a_cuda_kernel_is_a_located_error(device):
    mod = sg.Module.load_from_source(device, "cg_kernel", """
import slangpy;
[CUDAKernel]
void k(TensorView<int> out) { out[0] = CallShapeInfo::get_call_id().shape[0]; }
""")
    with pytest.raises(sg.CompileError, match="CallShapeInfo .* is only available in a function called per element"):
        mod.k(torch.zeros(1, dtype=torch.int32, device=TEST_DEVICE), _thread_count=1)
