# tests/python/test_coop_waves.py — wave intrinsics in [CUDAKernel] functions launched from
# Python (shadegrad.slangtorch and SlangPy's _thread_count, whose last block is partial), checked
# against torch; and the located error for a wave intrinsic in a function called per element.
import pytest
import torch

import shadegrad as sg
import shadegrad.slangtorch as slangtorch
from conftest import TEST_DEVICE

SOURCE = """
[CUDAKernel]
void warp_stats(TensorView<float> x, TensorView<float> sums, TensorView<float> prefix, TensorView<int> counts)
{
    uint i = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;
    if (i >= x.size(0)) return;
    float v = x[i];
    sums[i] = WaveActiveSum(v);
    prefix[i] = WavePrefixSum(v);
    counts[i] = int(WaveActiveCountBits(v > 0.0));
}

float per_element(float x) { return WaveActiveMax(x); }
"""


def reference(x, block):
    """Per wave (32 lanes of a block, the active ones: i < n): the sum, exclusive prefix sum and
    count of positives, in ascending lane order (float sums rounded as the kernel does)."""
    n = x.shape[0]
    sums, prefix, counts = torch.zeros(n), torch.zeros(n), torch.zeros(n, dtype=torch.int32)
    for start in range(0, n, 32):
        if start // block != min(start + 31, n - 1) // block:
            raise AssertionError("a wave never spans two blocks when the block is a multiple of 32")
        lanes = list(range(start, min(start + 32, n)))
        acc = torch.tensor(0.0)
        total = x[lanes[0]].clone()
        for k, i in enumerate(lanes):
            prefix[i] = acc
            acc = acc + x[i]
            if k > 0:
                total = total + x[i]
        sums[lanes] = total
        counts[lanes] = int((x[lanes] > 0).sum())
    return sums, prefix, counts


@pytest.mark.parametrize("n", [64, 77, 5])
def test_wave_operations_in_a_launch_with_a_partial_last_wave(n):
    m = slangtorch.loadModuleFromSource(SOURCE, moduleName="coop_waves")
    x = (torch.arange(n, dtype=torch.float32) * 0.37 % 1.3 - 0.6).to(TEST_DEVICE)
    sums, prefix = torch.zeros(n, device=TEST_DEVICE), torch.zeros(n, device=TEST_DEVICE)
    counts = torch.zeros(n, dtype=torch.int32, device=TEST_DEVICE)
    m.warp_stats(x, sums, prefix, counts).launchRaw(blockSize=(64, 1, 1), gridSize=((n + 63) // 64, 1, 1))
    want = reference(x.cpu(), 64)
    assert torch.equal(sums.cpu(), want[0])
    assert torch.equal(prefix.cpu(), want[1])
    assert torch.equal(counts.cpu(), want[2])


def test_wave_operations_with_thread_count():
    m = sg.Module.load_from_source(sg.create_device(), "coop_waves_tc", SOURCE)
    n = 300  # blocks of 256: the second block has 44 threads, its second wave 12 lanes
    x = torch.linspace(-1, 1, n, device=TEST_DEVICE)
    sums, prefix = torch.zeros(n, device=TEST_DEVICE), torch.zeros(n, device=TEST_DEVICE)
    counts = torch.zeros(n, dtype=torch.int32, device=TEST_DEVICE)
    m.warp_stats(x, sums, prefix, counts, _thread_count=n)
    want = reference(x.cpu(), 256)
    assert torch.equal(sums.cpu(), want[0])
    assert torch.equal(prefix.cpu(), want[1])
    assert torch.equal(counts.cpu(), want[2])


def test_wave_intrinsic_in_a_function_called_per_element_is_a_located_error(device):
    m = sg.Module.load_from_source(device, "per_element_wave", SOURCE)
    with pytest.raises(sg.CompileError, match=r"per_element_wave.slang:13:37: error: WaveActiveMax\(\) is only available in a \[CUDAKernel\]"):
        m.per_element(torch.ones(3, device=TEST_DEVICE))
