# tests/python/test_spy_generators.py — SlangPy's generator signatures and numbers: wang_hash(dim,
# seed, warmup, hash_seed) and rand_float(min, max, dim, seed, ...) give the values SlangPy 0.43.1's
# own generator code gives on real Slang (data/slangpy_generator_values.json, made by
# scripts/slangpy_generator_values.py), wang_hash binds to int / intN, call_id / thread_id take
# `dims`, grid(shape, offset, stride) takes -1 extents from the other arguments, and the old
# rand_float(min, max, seed) form is refused with a message saying what changed.
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE
from test_generators import thread_hashes

ORACLE = json.loads((Path(__file__).parent / "data" / "slangpy_generator_values.json").read_text())

SOURCE = """
uint hs(uint v) { return v; }
uint2 hv2(uint2 v) { return v; }
uint3 hv3(uint3 v) { return v; }
int2 iv2(int2 v) { return v; }
int ints(int v) { return v; }
float fs(float v) { return v; }
float2 fv2(float2 v) { return v; }
float3 fv3(float3 v) { return v; }
int2 myfunc(int2 value) { return value; }
int2 myfuncarray(int[2] value) { return int2(value[0], value[1]); }
int3 myfunc3d(int3 value) { return value; }
float add(float a, float b) { return a + b; }
"""

FUNCTIONS = {("wang_hash", 0): "hs", ("wang_hash", 2): "hv2", ("wang_hash", 3): "hv3",
             ("rand_float", 0): "fs", ("rand_float", 2): "fv2", ("rand_float", 3): "fv3"}


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "spy_generators", SOURCE)


def run_case(sg, m, case):
    """Calls the generator of one oracle case over as many threads as it has values."""
    n, comps = len(case["values"]), case["components"]
    shape = (n, comps) if comps else (n,)
    # The oracle's seed is what the kernel receives: pass it with hash_seed=False.
    common = dict(seed=case["seed"], warmup=case["warmup"], hash_seed=False)
    if case["kind"] == "wang_hash":
        gen = sg.wang_hash(**common)
        out = torch.zeros(shape, dtype=torch.uint32, device=TEST_DEVICE)
    else:
        gen = sg.rand_float(case["min"], case["max"], **common)
        out = torch.zeros(shape, dtype=torch.float32, device=TEST_DEVICE)
    return getattr(m, FUNCTIONS[(case["kind"], comps)])(gen, _result=out).cpu()


@pytest.mark.parametrize("index", range(len(ORACLE)))
def test_values_are_slangpys(sg, m, index):
    case = ORACLE[index]
    got = run_case(sg, m, case)
    if case["kind"] == "wang_hash":
        assert [int(v) & 0xFFFFFFFF for v in got.flatten().tolist()] == list(np.array(case["values"]).flatten())
    elif TEST_DEVICE == "cpu":
        # Bit for bit: the same float operations in the same order.
        assert got.flatten().tolist() == list(np.array(case["values"], dtype=np.float32).flatten())
    else:
        # On CUDA, NVRTC contracts `min + (max - min) * u` into one fused multiply-add (as it does
        # for SlangPy's own CUDA code), which may round the last bit differently from the CPU's
        # two roundings: within a couple of ulps of the range's magnitude, and the same hash bits.
        want = np.array(case["values"], dtype=np.float32).flatten()
        ulp = np.spacing(np.float32(max(abs(case["min"]), abs(case["max"]))))
        np.testing.assert_allclose(got.flatten().numpy(), want, rtol=0, atol=2 * float(ulp))


def test_default_seed_is_hashed_on_the_host(sg, m):
    # SlangPy's default seed (2640457667), hashed once on the host, reaches the kernel.
    g = sg.wang_hash()
    assert (g.dims, g.seed, g.warmup, g.hash_seed) == (-1, 2640457667, 0, True)
    assert g.kernel_seed == sg._values.wang_hash_int(2640457667)
    a = m.hs(g, _result=torch.zeros(4, dtype=torch.uint32, device=TEST_DEVICE))
    b = m.hs(sg.wang_hash(seed=g.kernel_seed, hash_seed=False), _result=torch.zeros(4, dtype=torch.uint32, device=TEST_DEVICE))
    assert torch.equal(a, b)
    r = sg.rand_float()
    assert (r.min, r.max, r.dims, r.seed, r.warmup, r.hash_seed) == (0.0, 1.0, -1, 2640457667, 0, True)


def test_wang_hash_into_int_parameters_gives_the_bits(sg, m):
    u = m.hv2(sg.wang_hash(seed=5), _result=torch.zeros(6, 2, dtype=torch.uint32, device=TEST_DEVICE))
    i = m.iv2(sg.wang_hash(seed=5), _result=torch.zeros(6, 2, dtype=torch.int32, device=TEST_DEVICE))
    assert torch.equal(u.cpu().view(torch.int32), i.cpu())
    s = m.ints(sg.wang_hash(seed=5), _result=torch.zeros(3, dtype=torch.int32, device=TEST_DEVICE))
    h = m.hs(sg.wang_hash(seed=5), _result=torch.zeros(3, dtype=torch.uint32, device=TEST_DEVICE))
    assert torch.equal(h.cpu().view(torch.int32), s.cpu())


def test_warmup_and_dim_change_the_kernel_as_slangpy_does(sg, m):
    plain = m.hv2(sg.wang_hash(seed=1), _result=torch.zeros(4, 2, dtype=torch.uint32, device=TEST_DEVICE))
    warm = m.hv2(sg.wang_hash(seed=1, warmup=3), _result=torch.zeros(4, 2, dtype=torch.uint32, device=TEST_DEVICE))
    assert not torch.equal(plain, warm)
    same = m.hv2(sg.wang_hash(2, seed=1), _result=torch.zeros(4, 2, dtype=torch.uint32, device=TEST_DEVICE))
    assert torch.equal(plain, same)
    with pytest.raises(TypeError, match=r"hv2\(\): parameter 'v' of type uint2 cannot take wang_hash\(dim=3\): it has 2 "
                                        r"components, the generator asks for 3"):
        m.hv2(sg.wang_hash(3), _result=torch.zeros(4, 2, dtype=torch.uint32, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"cannot take rand_float\(dim=2\): it has 1 component"):
        m.fs(sg.rand_float(0, 1, 2), _result=torch.zeros(4, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"cannot take call_id\(dim=3\)"):
        m.myfunc(sg.call_id(3), _result=torch.zeros(4, 4, 2, dtype=torch.int32, device=TEST_DEVICE))
    with pytest.raises(TypeError, match=r"cannot take thread_id\(dim=2\)"):
        m.myfunc3d(sg.thread_id(2), _result=torch.zeros(4, 3, dtype=torch.int32, device=TEST_DEVICE))


def test_the_old_rand_float_seed_position_is_refused(sg):
    # rand_float's third argument is SlangPy's `dim`; a seed there must not silently mean a dim.
    with pytest.raises(ValueError, match=r"rand_float: dim: expected -1 \(any\) or a number of components from 1 to 4, "
                                         r"got 42 \(rand_float's third argument is `dim`, as in SlangPy: pass the seed as "
                                         r"seed=\.\.\.\)"):
        sg.rand_float(0.0, 1.0, 42)
    with pytest.raises(ValueError, match=r"wang_hash: dim: expected -1"):
        sg.wang_hash(7)
    with pytest.raises(TypeError, match="the seed must be an int"):
        sg.wang_hash(seed=1.5)
    with pytest.raises(ValueError, match="warmup must be 0 or more"):
        sg.rand_float(warmup=-1)


def test_slangpy_generator_examples(sg, m):
    # SlangPy's generators example programs (main_ids.py, main_grid.py, main_random.py).
    res = np.zeros((4, 4, 2), dtype=np.int32)
    m.myfunc(sg.call_id(), _result=res)
    assert res[0, 1].tolist() == [1, 0] and res[2, 3].tolist() == [3, 2]
    res = np.zeros((4, 4, 2), dtype=np.int32)
    m.myfuncarray(sg.call_id(), _result=res)
    assert res[0, 1].tolist() == [0, 1] and res[2, 3].tolist() == [2, 3]
    res = np.zeros((4, 4, 3), dtype=np.int32)
    m.myfunc3d(sg.thread_id(), _result=res)
    assert res.reshape(16, 3).tolist() == [[i, 0, 0] for i in range(16)]

    res = m.myfunc(sg.grid(shape=(4, 4)), _result="numpy")
    assert isinstance(res, np.ndarray) and res.shape == (4, 4, 2)
    assert res[1, 2].tolist() == [2, 1]
    res = m.myfunc(sg.grid(shape=(4, 4), stride=(2, 2)), _result="numpy")
    assert res[1, 2].tolist() == [4, 2]
    res = np.zeros((4, 4, 2), dtype=np.int32)
    m.myfunc(sg.grid(shape=(-1, -1), stride=(4, 4)), _result=res)
    assert res[1, 2].tolist() == [8, 4] and res[3, 3].tolist() == [12, 12]

    res = np.zeros((4, 4, 2), dtype=np.int32)
    m.myfunc(sg.wang_hash(), _result=res)
    seed = sg._values.wang_hash_int(2640457667)
    for t in range(16):
        want = [h - (1 << 32) if h >= 1 << 31 else h for h in thread_hashes(t, 2, seed)]
        assert res.reshape(16, 2)[t].tolist() == want
    res = np.zeros((4, 4, 2), dtype=np.float32)
    m.fv2(sg.rand_float(min=0, max=10), _result=res)
    assert res.min() >= 0 and res.max() < 10
    h = thread_hashes(5, 2, seed)
    np.testing.assert_array_equal(res.reshape(16, 2)[5], np.float32(10) * np.float32([(x & 0x7FFFFF) / 8388608.0 for x in h]))


def test_grid_minus_one_extents_and_slangpy_argument_order(sg, m):
    # grid(shape, offset, stride): SlangPy's positional order; an int is that many -1 extents.
    out = m.myfunc(sg.grid((2, 3), (1, 5), (10, 2))).cpu()
    assert out[1, 2].tolist() == [5 + 2 * 2, 1 + 10 * 1]
    g = sg.grid(2)
    assert g.shape == [-1, -1]
    out = m.myfunc(g, _result=torch.zeros(3, 2, 2, dtype=torch.int32, device=TEST_DEVICE)).cpu()
    assert out[2, 1].tolist() == [1, 2]
    # -1 beside a tensor: the tensor's extent; a concrete extent still has to agree.
    got = m.ints(sg.grid((-1,), offset=1, stride=3), _result=torch.zeros(5, dtype=torch.int32, device=TEST_DEVICE))
    assert got.cpu().tolist() == [1, 4, 7, 10, 13]
    with pytest.raises(ValueError, match="grid: extent -2 of dimension 0 is negative"):
        sg.grid((-2, 3))
    with pytest.raises(ValueError):
        m.myfunc(sg.grid((8, 8)), _result=np.zeros((4, 4, 2), dtype=np.int32))
