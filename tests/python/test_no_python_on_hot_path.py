# tests/python/test_no_python_on_hot_path.py — with the native torch bridge, a cached call (plan
# cache hit) enters no Python function: the profiler sees no Python frame during many calls.
import pytest
import torch
from mul2_kernels import MUL2_SOURCE, python_frames_during  # bench/, put on sys.path by conftest.py

CALLS = 200


@pytest.fixture(scope="module")
def module(sg, cpu_device):
    status = sg.torch_bridge_status()
    if status["active"] != "native":
        pytest.skip(f"the native torch bridge is not active ({status['active']}: {status['reason']})")
    return sg.Module.load_from_source(cpu_device, "hot_path", MUL2_SOURCE)


@pytest.mark.parametrize("requires_grad", [False, True], ids=["no_grad_inputs", "grad_inputs"])
@pytest.mark.parametrize("shape", [(4, 4), (64, 64)], ids=["4x4", "64x64"])
def test_cached_mul2_call_runs_no_python(sg, module, shape, requires_grad):
    a = torch.rand(shape, requires_grad=requires_grad)
    b = torch.rand(shape, requires_grad=requires_grad)
    grid = sg.grid(shape)  # sg.grid is a Python helper: built outside the measured calls
    module.mul2(grid, a, b)  # compiles and fills the plan cache
    frames = python_frames_during(module, "mul2", (grid, a, b), CALLS)
    assert not frames, f"{len(frames)} Python frames in {CALLS} cached calls, first: {frames[:5]}"


def test_cached_elementwise_call_runs_no_python(module):
    a = torch.rand(64, 64)
    b = torch.rand(64, 64)
    module.mul(a, b)
    frames = python_frames_during(module, "mul", (a, b), CALLS)
    assert not frames, f"{len(frames)} Python frames in {CALLS} cached calls, first: {frames[:5]}"
