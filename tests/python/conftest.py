# tests/python/conftest.py — shared fixtures: the bridge parameter (native / fallback), module
# loading helpers, and a subprocess runner for fresh-process cases.
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CONFORMANCE = Path(os.environ.get("SG_CONFORMANCE_DIR", SHARED / "conformance"))


def conformance_source(name: str) -> str:
    matches = sorted(CONFORMANCE.glob(name + "*.slang"))
    if not matches:
        pytest.fail(f"conformance kernel {name} not found in {CONFORMANCE}")
    return matches[0].read_text()


def run_python(code: str, bridge: str = "native", timeout: int = 600) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter with the given torch bridge forced."""
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
