# tests/python/test_packaging.py — what the installed package ships and reports: the version,
# `python -m shadegrad` (info, clear-cache), the type stubs, and shadegradc in the scripts folder.
import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import REPO


def run_module(*args, cache_dir=None):
    env = dict(os.environ)
    if cache_dir is not None:
        env["SHADEGRAD_CACHE_DIR"] = str(cache_dir)
    return subprocess.run(
        [sys.executable, "-m", "shadegrad", *args], env=env, capture_output=True, text=True, timeout=300, cwd="/"
    )


def test_version_is_the_distribution_version(sg):
    assert re.fullmatch(r"\d+\.\d+\.\d+([.\w]*)", sg.__version__)
    assert sg.__version__ == importlib.metadata.version("shadegrad")
    source = (REPO / "python" / "shadegrad" / "_version.py").read_text()
    assert f'__version__ = "{sg.__version__}"' in source


def test_module_main_reports_the_installation(sg, tmp_path):
    proc = run_module(cache_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"shadegrad {sg.__version__} (")
    status = sg.torch_bridge_status()
    assert f"torch bridge: {status['active']} ({status['reason']})" in lines
    assert any(re.fullmatch(r"CUDA: (not )?available, \d+ device\(s\)", line) for line in lines), lines
    assert any(line.startswith("  driver: ") for line in lines)
    assert any(line.startswith("  NVRTC: ") and len(line) > len("  NVRTC: ") for line in lines)
    assert f"cache: {tmp_path} (0 files, 0.0 MB)" in lines
    assert any(line.startswith("shadegradc: ") for line in lines)


def test_module_main_version_and_usage(sg):
    proc = run_module("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == sg.__version__
    proc = run_module("no-such-command")
    assert proc.returncode == 2
    assert "unknown arguments 'no-such-command'" in proc.stderr and "clear-cache" in proc.stderr


def test_clear_cache_empties_shadegrads_folders_only(tmp_path):
    # Fill the cache from a fresh process, as a user's run would.
    code = (
        "import torch, shadegrad as sg\n"
        "m = sg.Module.load_from_source(sg.create_device(), 'cc', 'float twice(float x) { return 2 * x; }')\n"
        "assert float(m.twice(torch.ones(4))[0]) == 2.0\n"
    )
    env = dict(os.environ, SHADEGRAD_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert any((tmp_path / "cpu").rglob("*.bin")), "the call left no cache entry"
    (tmp_path / "notes.txt").write_text("not shadegrad's")

    proc = run_module("clear-cache", cache_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert re.search(rf"cache: {re.escape(str(tmp_path))}: removed [1-9]\d* files", proc.stdout), proc.stdout
    assert "left alone (not shadegrad's): notes.txt" in proc.stdout
    assert not (tmp_path / "cpu").exists()
    assert (tmp_path / "notes.txt").read_text() == "not shadegrad's"

    again = run_module("clear-cache", cache_dir=tmp_path)
    assert again.returncode == 0 and "removed 0 files" in again.stdout
    missing = run_module("clear-cache", cache_dir=tmp_path / "absent")
    assert missing.returncode == 0 and "does not exist: nothing to clear" in missing.stdout


def test_type_stubs_are_shipped_and_cover_the_extension(sg):
    package = Path(sg.__file__).parent
    assert (package / "py.typed").is_file()
    stub = (package / "_core.pyi").read_text()
    public = sorted(n for n in dir(sg._core) if not n.startswith("_"))
    missing = [n for n in public if not re.search(rf"^(class|def) {n}\b|^{n}\s*[:=]", stub, re.M)]
    assert not missing, f"_core.pyi does not declare {missing}"
    compile(stub, "_core.pyi", "exec")  # valid Python syntax


@pytest.mark.parametrize("name", ["Function", "Module", "Device", "GridArg", "DeviceType"])
def test_stub_methods_exist(sg, name):
    stub = (Path(sg.__file__).parent / "_core.pyi").read_text()
    body = re.split(rf"^class {name}\b.*:$", stub, maxsplit=1, flags=re.M)[1].split("\nclass ", 1)[0]
    declared = set(re.findall(r"def (\w+)\(", body)) | set(re.findall(r"^    (\w+)\s*[:=]", body, re.M))
    actual = {n for n in vars(getattr(sg._core, name)) if not n.startswith("_") or n in ("__call__", "__getattr__")}
    assert actual - declared == set(), f"{name}: the stub lacks {sorted(actual - declared)}"


def _installed_shadegradc() -> Path:
    for f in importlib.metadata.files("shadegrad") or []:
        if f.name == "shadegradc":
            return Path(f.locate()).resolve()
    pytest.fail("the shadegrad distribution lists no shadegradc file")


def test_shadegradc_is_installed_as_a_script(tmp_path):
    exe = _installed_shadegradc()
    assert exe.parent == Path(sysconfig.get_path("scripts")).resolve()
    assert os.access(exe, os.X_OK)
    proc = subprocess.run(
        ["shadegradc", "--help"],
        env=dict(os.environ, PATH=f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "shadegradc FILE" in proc.stdout + proc.stderr
    kernel = tmp_path / "k.slang"
    kernel.write_text("float twice(float x) { return 2 * x; }\n")
    proc = subprocess.run([str(exe), str(kernel), "--emit", "cpp"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "twice" in proc.stdout
