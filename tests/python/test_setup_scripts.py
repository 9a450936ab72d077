# tests/python/test_setup_scripts.py — the setup scripts' choices of Python, checked without a
# build: the repository's virtual environment by default (its name in .gitignore and in the
# README's first lines), an externally-managed system Python refused with what to do instead,
# a missing base interpreter named. The full system-Python path (a .venv made from Debian's
# /usr/bin/python3, then the build and every test) is what CI runs (.ci/run).
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO


def _setup(env_extra: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "SG_VENV", "SG_VENV_FROM")}
    env.update({"SG_BUILD_TESTS": "0", "SG_VENV": str(tmp_path / "venv")})
    env.update(env_extra)
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "setup.sh")], env=env, capture_output=True, text=True, timeout=120
    )


def _externally_managed(python: str) -> bool:
    code = (
        "import os, sys, sysconfig; "
        "print(os.path.exists(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')) "
        "and sys.prefix == sys.base_prefix)"
    )
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return proc.stdout.strip() == "True"


def test_the_environment_is_the_repositorys_and_ignored():
    lines = (REPO / ".gitignore").read_text().splitlines()
    assert "/.venv/" in lines
    env = (REPO / "scripts" / "python_env.sh").read_text()
    assert "SG_VENV=${SG_VENV:-.venv}" in env
    for script in ("setup.sh", "demo.sh", "test.sh"):
        assert "source scripts/python_env.sh" in (REPO / "scripts" / script).read_text(), script
    head = "\n".join((REPO / "README.md").read_text().splitlines()[:16])
    assert ".venv" in head and "source .venv/bin/activate" in head


@pytest.mark.skipif(
    not (os.path.exists("/usr/bin/python3") and _externally_managed("/usr/bin/python3")),
    reason="needs an externally-managed /usr/bin/python3 (Debian, Ubuntu)",
)
def test_an_externally_managed_python_is_refused_with_the_way_out(tmp_path):
    proc = _setup({"PYTHON": "/usr/bin/python3"}, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "PYTHON=/usr/bin/python3 is an externally-managed system Python" in proc.stderr
    assert "SG_VENV_FROM=/usr/bin/python3" in proc.stderr
    assert not (tmp_path / "venv").exists()


def test_a_missing_base_interpreter_is_named(tmp_path):
    proc = _setup({"SG_VENV_FROM": str(tmp_path / "no-python")}, tmp_path)
    assert proc.returncode == 1
    assert f"SG_VENV_FROM={tmp_path / 'no-python'}: no such interpreter" in proc.stderr


def test_skip_setup_without_an_environment_says_so(tmp_path):
    env = dict(os.environ, SG_SKIP_SETUP="1", SG_VENV=str(tmp_path / "absent"))
    env.pop("PYTHON", None)
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "demo.sh")], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert "does not exist; run without SG_SKIP_SETUP=1 to set up first" in proc.stderr
