# tests/python/conftest.py — shared fixtures: the bridge parameter (native / fallback), module
# loading helpers, and a subprocess runner for fresh-process cases.
import functools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# The device the backend tests run on: "cpu" (default, CI) or "cuda" (the GPU check script runs
# the suite again with SHADEGRAD_TEST_DEVICE=cuda).
TEST_DEVICE = os.environ.get("SHADEGRAD_TEST_DEVICE", "cpu")



def device_tensor(values, dtype=None, **kw):
    """A tensor of `values` on the test device (float32 unless `dtype` says otherwise)."""
    import torch

    return torch.tensor(values, dtype=dtype or torch.float32, device=TEST_DEVICE, **kw)


_REPO = Path(__file__).resolve().parents[2]
# bench/mul2_kernels.py holds the kernel source and frame counter shared with the benchmarks.
sys.path.insert(0, str(_REPO / "bench"))
# The conformance kernels: the repository's own copy (tests/conformance), or SG_CONFORMANCE_DIR.
REPO = _REPO
CONFORMANCE = Path(os.environ.get("SG_CONFORMANCE_DIR") or _REPO / "tests" / "conformance")


def conformance_source(name: str) -> str:
    matches = sorted(CONFORMANCE.glob(name + "*.slang"))
    if not matches:
        pytest.fail(f"conformance kernel {name} not found in {CONFORMANCE}")
    return matches[0].read_text()


def run_python(code: str, bridge: str | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter: with the installation's own bridge (None), or with the
    given one forced. A case that asks for "native" skips where the native bridge is not built (a
    wheel from an isolated `pip wheel .` has no torch to build it against)."""
    if bridge == "native" and not native_bridge_built():
        pytest.skip("the native torch bridge is not built in this installation")
    env = dict(os.environ)
    env.pop("SHADEGRAD_TORCH_BRIDGE", None)
    if bridge == "fallback":
        env["SHADEGRAD_TORCH_BRIDGE"] = "fallback"
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@functools.lru_cache(maxsize=None)
def native_bridge_built() -> bool:
    """False only for an installation built without torch (the bridge's status says so); a
    native bridge that was built but fails to load is a failure, not a skip."""
    proc = run_python("import shadegrad as sg; print(sg.torch_bridge_status()['reason'])")
    return not (proc.returncode == 0 and proc.stdout.strip().startswith("native bridge was not built"))


@functools.lru_cache(maxsize=None)
def native_bridge_available() -> bool:
    proc = run_python("import shadegrad as sg; print(sg.torch_bridge_status()['active'])")
    return proc.returncode == 0 and proc.stdout.strip() == "native"


@pytest.fixture(scope="session")
def sg():
    import shadegrad

    return shadegrad


@pytest.fixture(scope="session")
def cpu_device(sg):
    return sg.create_torch_device(type=sg.DeviceType.cpu)


@pytest.fixture(scope="session")
def device(sg):
    """The module device of the backend under test (SHADEGRAD_TEST_DEVICE)."""
    if TEST_DEVICE == "cuda":
        import torch

        if not torch.cuda.is_available():
            pytest.fail("SHADEGRAD_TEST_DEVICE=cuda but torch sees no CUDA device")
        return sg.create_torch_device(type=sg.DeviceType.cuda)
    return sg.create_torch_device(type=sg.DeviceType.cpu)
