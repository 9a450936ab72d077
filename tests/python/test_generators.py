# tests/python/test_generators.py — sg.grid (with stride and offset), sg.call_id, sg.thread_id,
# sg.wang_hash and sg.rand_float: values per thread against a Python model of each, with
# SlangPy's conventions (vectors x-fastest, arrays in dimension order).
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
import slangpy;
int2 v2(int2 c) { return c; }
int3 v3(int3 c) { return c; }
int a2(int c[2]) { return c[0] * 100 + c[1]; }
int s1(int c) { return c; }
uint h1(uint h) { return h; }
uint2 h2(uint2 h) { return h; }
float r1(float r) { return r; }
float3 r3(float3 r) { return r; }
float addf(float a, float b) { return a + b; }
"""


def wang_hash(seed: int) -> int:
    m = 0xFFFFFFFF
    seed = ((seed ^ 61) ^ (seed >> 16)) & m
    seed = (seed * 9) & m
    seed = seed ^ (seed >> 4)
    seed = (seed * 0x27D4EB2D) & m
    return seed ^ (seed >> 15)


def thread_hashes(index: int, n: int, kernel_seed: int, warmup: int = 0, vector: bool = True) -> list:
    """SlangPy's model: the index (times n for a vector), warmed up, xor the seed, hashed per component."""
    h = (index * n if vector else index) & 0xFFFFFFFF
    for _ in range(warmup):
        h = wang_hash(h)
    h ^= kernel_seed
    out = []
    for _ in range(n):
        h = wang_hash(h)
        out.append(h)
    return out


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "generators", SOURCE)


def test_grid_vector_gets_x_fastest_array_gets_dimension_order(sg, m):
    out = m.v2(sg.grid((2, 3))).cpu()
    assert out.shape == (2, 3, 2)
    for i in range(2):
        for j in range(3):
            assert out[i, j].tolist() == [j, i]
    out = m.a2(sg.grid((2, 3))).cpu()
    assert out.tolist() == [[0, 1, 2], [100, 101, 102]]


def test_grid_stride_and_offset(sg, m):
    out = m.v2(sg.grid((2, 3), stride=(10, 2), offset=(1, 5))).cpu()
    for i in range(2):
        for j in range(3):
            assert out[i, j].tolist() == [5 + 2 * j, 1 + 10 * i]
    assert repr(sg.grid((2, 3), stride=2)) == "grid((2, 3), stride=(2, 2))"
    with pytest.raises(ValueError, match="stride has 1 dimensions, the shape 2"):
        sg.grid((2, 3), stride=(1,))


def test_call_id_follows_the_call_shape(sg, m):
    x = torch.zeros(2, 3, 4, device=TEST_DEVICE)
    out = m.v3(sg.call_id(), _result=torch.zeros(2, 3, 4, 3, dtype=torch.int32, device=TEST_DEVICE)).cpu()
    for i, j, k in [(0, 0, 0), (1, 2, 3), (1, 0, 2)]:
        assert out[i, j, k].tolist() == [k, j, i]
    out = m.a2(sg.call_id(), _result=torch.zeros(2, 3, dtype=torch.int32, device=TEST_DEVICE)).cpu()
    assert out.tolist() == [[0, 1, 2], [100, 101, 102]]
    # Beside a tensor, call_id takes its shape from the tensor.
    del x
    t = torch.zeros(4, device=TEST_DEVICE)
    assert m.s1(sg.call_id(), _result=torch.zeros(4, dtype=torch.int32, device=TEST_DEVICE)).tolist() == [0, 1, 2, 3]
    assert m.addf(t, 1.0).tolist() == [1.0] * 4


def test_thread_id_is_the_linear_index(sg, m):
    out = m.s1(sg.thread_id(), _result=torch.zeros(2, 3, dtype=torch.int32, device=TEST_DEVICE)).cpu()
    assert out.tolist() == [[0, 1, 2], [3, 4, 5]]
    out = m.v3(sg.thread_id(), _result=torch.zeros(4, 3, dtype=torch.int32, device=TEST_DEVICE)).cpu()
    assert out.tolist() == [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]]


def test_wang_hash_matches_the_reference_hash(sg, m):
    n = 16
    seed = 12345
    out = m.h1(sg.wang_hash(seed=seed), _result=torch.zeros(n, dtype=torch.uint32, device=TEST_DEVICE)).cpu()
    expected = [thread_hashes(i, 1, wang_hash(seed), vector=False)[0] for i in range(n)]
    assert [int(v) & 0xFFFFFFFF for v in out.tolist()] == expected
    out2 = m.h2(sg.wang_hash(seed=seed, hash_seed=False), _result=torch.zeros(n, 2, dtype=torch.uint32, device=TEST_DEVICE)).cpu()
    assert [[int(v) & 0xFFFFFFFF for v in row] for row in out2.tolist()] == [thread_hashes(i, 2, seed) for i in range(n)]
    other = m.h1(sg.wang_hash(seed=seed + 1), _result=torch.zeros(n, dtype=torch.uint32, device=TEST_DEVICE)).cpu()
    assert other.tolist() != out.tolist()


def test_rand_float_is_uniform_in_range_and_deterministic(sg, m):
    n = 4096
    a = m.r1(sg.rand_float(-2.0, 3.0, seed=7), _result=torch.zeros(n, device=TEST_DEVICE)).cpu()
    b = m.r1(sg.rand_float(-2.0, 3.0, seed=7), _result=torch.zeros(n, device=TEST_DEVICE)).cpu()
    c = m.r1(sg.rand_float(-2.0, 3.0, seed=8), _result=torch.zeros(n, device=TEST_DEVICE)).cpu()
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert a.min() >= -2.0 and a.max() < 3.0
    assert abs(a.mean().item() - 0.5) < 0.1 and abs(a.std().item() - 5 / 12 ** 0.5) < 0.1
    hashes = [thread_hashes(i, 1, wang_hash(7), vector=False)[0] for i in range(8)]
    expected = [-2.0 + 5.0 * ((h & 0x7FFFFF) / 8388608.0) for h in hashes]
    torch.testing.assert_close(a[:8], torch.tensor(expected), rtol=1e-6, atol=1e-6)
    v = m.r3(sg.rand_float(seed=1), _result=torch.zeros(n, 3, device=TEST_DEVICE)).cpu()
    assert v.min() >= 0 and v.max() < 1 and not torch.equal(v[:, 0], v[:, 1])


def test_generators_check_the_parameter_type(sg, m):
    with pytest.raises(TypeError, match=r"h1\(\): parameter 'h' of type uint cannot take rand_float\(\)"):
        m.h1(sg.rand_float(), _result=torch.zeros(2, dtype=torch.uint32, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"r1\(\): parameter 'r' of type float cannot take call_id\(\)"):
        m.r1(sg.call_id(), _result=torch.zeros(2, device=TEST_DEVICE))
    with pytest.raises(ValueError, match=r"a grid of rank 2 binds to int2 or int\[2\]"):
        m.v3(sg.grid((2, 2)))
