# tests/python/test_examples.py — the example programs in examples/ run unchanged (they import
# shadegrad as spy) on the backend under test, each in a fresh interpreter, and report "ok".
import subprocess
import sys

import pytest

from conftest import REPO, TEST_DEVICE

EXAMPLES = {
    "image_pipeline.py": ["--size", "32"],
    "particles.py": ["--count", "64"],
    "fit_parameters.py": ["--samples", "256"],
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name):
    path = REPO / "examples" / name
    assert "import shadegrad as spy" in path.read_text()
    proc = subprocess.run(
        [sys.executable, str(path), *EXAMPLES[name], "--device", TEST_DEVICE],
        capture_output=True,
        text=True,
        timeout=600,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "ok"
