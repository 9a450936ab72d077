#!/usr/bin/env bash
# scripts/setup.sh — prepares a fresh machine and installs shadegrad from this checkout.
#
# Idempotent: installs only what is missing (GoogleTest from Debian; torch, nanobind, pillow,
# pytest, numpy, NVRTC and the build tools from PyPI), then builds and installs the package into the
# current Python environment. The build tree build/py also holds the C++ test binaries, so ctest
# runs from there without a second compile (scripts/test.sh).
#
# Environment:
#   PYTHON              interpreter to install into (default: python3)
#   SG_SETUP_VERBOSE=1  show the full CMake/ninja output of the package build
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
say() { printf '[setup] %s\n' "$*"; }

# --- system packages ---------------------------------------------------------------------------
if dpkg-query -W -f='${Status}' libgtest-dev 2>/dev/null | grep -q "install ok installed"; then
    say "libgtest-dev: present"
else
    say "libgtest-dev: missing, installing with apt-get"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q libgtest-dev
fi

# --- Python packages ---------------------------------------------------------------------------
# import name -> pip requirement. torch is pinned: that release is the CPU wheel on this image's
# disk; an unpinned request would download a multi-GB CUDA build.
missing=()
while read -r module requirement; do
    if "$PYTHON" -c "import $module" >/dev/null 2>&1; then
        say "python: $module present"
    else
        say "python: $module missing"
        missing+=("$requirement")
    fi
done <<'EOF'
torch torch==2.13.0
nanobind nanobind>=2.0
PIL pillow
pytest pytest
numpy numpy
scikit_build_core scikit-build-core>=0.10
ninja ninja
cmake cmake>=3.24
EOF
if [ ${#missing[@]} -gt 0 ]; then
    say "pip install ${missing[*]}"
    "$PYTHON" -m pip install "${missing[@]}"
fi

# NVRTC for the CUDA compile checks of the C++ tests (compiling needs no GPU). Found by the same
# search as at run time: nvidia/cu13/lib under a sys.path entry.
if "$PYTHON" - <<'PY'
import glob, os, sys
sys.exit(0 if any(glob.glob(os.path.join(p, "nvidia", "cu13", "lib", "libnvrtc.so*")) for p in sys.path) else 1)
PY
then
    say "python: NVRTC (nvidia-cuda-nvrtc) present"
else
    say "python: NVRTC missing, pip install nvidia-cuda-nvrtc"
    "$PYTHON" -m pip install "nvidia-cuda-nvrtc>=13,<14"
fi

# --- the package -------------------------------------------------------------------------------
# --no-build-isolation: the native torch bridge is compiled against the torch installed above
# (an isolated build environment has no torch and would silently build without the bridge).
pip_verbose=()
if [ "${SG_SETUP_VERBOSE:-0}" = "1" ]; then pip_verbose=(-v); fi
say "building and installing shadegrad (build tree build/py; a first build takes ~5 min on 2 cores)"
start=$SECONDS
"$PYTHON" -m pip install ${pip_verbose[@]+"${pip_verbose[@]}"} --no-build-isolation \
    -Ccmake.define.SG_BUILD_TESTS=ON -Cbuild-dir=build/py .
say "shadegrad installed in $((SECONDS - start)) s"

# Check the installed package from outside the source tree, with its bridge.
(cd / && "$PYTHON" -c "import shadegrad; print('[setup] torch bridge:', shadegrad.torch_bridge_status())")
