# tests/python/test_examples.py — the example programs in examples/ run unchanged (they import
# shadegrad as spy) on the backend under test, each in a fresh interpreter, and report "ok"; the
# Gaussian splatting example also fits its target by the factor it prints and writes valid PNGs.
import re
import struct
import subprocess
import sys
import zlib

import pytest

from conftest import REPO, TEST_DEVICE

EXAMPLES = {
    "image_pipeline.py": ["--size", "32"],
    "particles.py": ["--count", "64"],
    "fit_parameters.py": ["--samples", "256"],
}


def run_example(name, *args):
    """Runs examples/NAME unchanged in SlangPy's style on TEST_DEVICE; it must end with "ok"."""
    path = REPO / "examples" / name
    assert "import shadegrad as spy" in path.read_text()
    proc = subprocess.run(
        [sys.executable, str(path), *args, "--device", TEST_DEVICE],
        capture_output=True,
        text=True,
        timeout=600,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "ok"
    return proc


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name):
    run_example(name, *EXAMPLES[name])


def _read_png(path):
    """(width, height) of an 8-bit RGB PNG, checking its signature, chunk CRCs and pixel data."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, (path, kind)
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + length
    assert set(chunks) == {b"IHDR", b"IDAT", b"IEND"}, chunks.keys()
    width, height, depth, color, _, _, _ = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert (depth, color) == (8, 2), (depth, color)  # 8-bit RGB
    assert len(zlib.decompress(chunks[b"IDAT"])) == height * (1 + 3 * width)
    return width, height


def test_gaussian_splatting_fits_its_target(tmp_path):
    proc = run_example("gaussian_splatting.py", "--size", "small", "--out", str(tmp_path))
    # The kernel agreed with the plain-torch model at the start ...
    assert re.search(r"kernel vs torch at the start: worst relative error", proc.stdout), proc.stdout
    # ... and the loss fell by the factor printed (the small run reaches about 70x).
    found = re.search(r"loss (\S+) -> (\S+): fell by a factor of (\S+)", proc.stdout)
    assert found, proc.stdout
    first, last, factor = (float(v) for v in found.groups())
    assert factor == pytest.approx(first / last, rel=0.05)
    assert factor >= 10, proc.stdout
    assert _read_png(tmp_path / "target.png") == (64, 64)
    assert _read_png(tmp_path / "fitted.png") == (64, 64)
    assert _read_png(tmp_path / "loss.png") == (480, 240)


def test_gaussian_splatting_compare_compile_prints_the_table(tmp_path):
    # --compare-compile: one table of the tiled kernel, the per-pixel kernel, plain torch and
    # torch.compile of the torch model (or a line saying why torch.compile was skipped).
    proc = run_example("gaussian_splatting.py", "--size", "small", "--steps", "1", "--compare-compile",
                       "--out", str(tmp_path))
    out = proc.stdout
    assert "time per step (forward + backward)" in out, out
    rows = dict(re.findall(r"^  (shadegrad tiled kernel|shadegrad per-pixel kernel|plain torch|"
                           r"torch\.compile\(plain torch\))\s+([\d.]+)\s+[\d.]+x$", out, re.M))
    assert {"shadegrad tiled kernel", "shadegrad per-pixel kernel", "plain torch"} <= set(rows), out
    assert all(float(ms) > 0 for ms in rows.values())
    assert ("torch.compile(plain torch)" in rows) != ("torch.compile skipped:" in out), out


def test_gaussian_splatting_skips_torch_compile_where_it_cannot_work(monkeypatch):
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import gaussian_splatting
    finally:
        sys.path.pop(0)
    import torch

    def refuse(*args, **kwargs):
        raise RuntimeError("Dynamo is not supported on this Python")

    monkeypatch.setattr(torch, "compile", refuse)
    compiled, why = gaussian_splatting.compiled_torch_render(8)
    assert compiled is None and "RuntimeError: Dynamo is not supported" in why
    monkeypatch.delattr(torch, "compile")
    assert gaussian_splatting.compiled_torch_render(8) == (None, "this torch has no torch.compile")
