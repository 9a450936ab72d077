# python/shadegrad/__main__.py — `python -m shadegrad`: what this installation uses (version, torch
# bridge, CUDA, NVRTC, kernel cache), and `python -m shadegrad clear-cache` to empty the cache.
"""Usage: python -m shadegrad [info | clear-cache | --version | --help]"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import shadegrad
from shadegrad import _core

# The folders shadegrad writes under the cache directory (src/runtime: entries per backend,
# temporaries, kept sources of failed compiles, debug copies; src/call: the kernel index).
# Nothing else there is removed: SHADEGRAD_CACHE_DIR may point at a folder that holds other
# files too.
CACHE_FOLDERS = ("cpu", "cuda", "index", "tmp", "failed", "debug")


def _folder_size(path: Path) -> tuple:
    files = size = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            files += 1
            size += p.stat().st_size
    return files, size


def info() -> int:
    import torch

    bridge = shadegrad.torch_bridge_status()
    cuda = shadegrad.cuda_status()
    cache = Path(_core._cache_directory())
    files, size = _folder_size(cache) if cache.is_dir() else (0, 0)
    compiler = shutil.which("shadegradc")
    print(f"shadegrad {shadegrad.__version__} ({Path(shadegrad.__file__).parent})")
    print(f"torch {torch.__version__}")
    print(f"torch bridge: {bridge['active']} ({bridge['reason']})")
    print(f"CUDA: {'available' if cuda['available'] else 'not available'}, {cuda['device_count']} device(s)")
    print(f"  driver: {cuda['driver']}")
    print(f"  NVRTC: {cuda['nvrtc']}")
    print(f"cache: {cache} ({files} files, {size / 1e6:.1f} MB)")
    print(f"shadegradc: {compiler or 'not on PATH'}")
    return 0


def clear_cache() -> int:
    cache = Path(_core._cache_directory())
    if not cache.is_dir():
        print(f"cache: {cache} does not exist: nothing to clear")
        return 0
    files = size = 0
    for name in CACHE_FOLDERS:
        folder = cache / name
        if folder.is_dir() and not folder.is_symlink():
            n, s = _folder_size(folder)
            files, size = files + n, size + s
            shutil.rmtree(folder)
    others = sorted(p.name for p in cache.iterdir())
    print(f"cache: {cache}: removed {files} files ({size / 1e6:.1f} MB)")
    if others:
        print(f"  left alone (not shadegrad's): {', '.join(others)}")
    return 0


def main(argv: list) -> int:
    command = argv[0] if argv else "info"
    if command in ("-h", "--help", "help"):
        print(__doc__)
        return 0
    if command in ("-V", "--version"):
        print(shadegrad.__version__)
        return 0
    if len(argv) > 1 or command not in ("info", "clear-cache"):
        print(f"python -m shadegrad: unknown arguments {' '.join(argv)!r}\n{__doc__}", file=sys.stderr)
        return 2
    return info() if command == "info" else clear_cache()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
