#!/usr/bin/env bash
# scripts/setup.sh — prepares a fresh machine and installs shadegrad from this checkout into a
# virtual environment in the repository (.venv), or into the Python that PYTHON names.
#
# Idempotent: installs only what is missing (GoogleTest and, when the interpreter cannot make a
# virtual environment, python3-venv from Debian; torch, nanobind, pillow, pytest, numpy, NVRTC
# and the build tools from PyPI), then builds and installs the package. The build shows its
# progress (ninja's [n/N] lines, with the time since the start) and says how long it took. The
# build tree build/py also holds the C++ test binaries, so ctest runs from there without a
# second compile (scripts/test.sh).
#
# Environment:
#   PYTHON=INTERP        install into this interpreter's environment instead of .venv (conda,
#                        pyenv, a venv of yours); an externally-managed system Python is refused
#   SG_VENV=DIR          the repository's virtual environment (default .venv)
#   SG_VENV_FROM=INTERP  the interpreter it is made from (default python3)
#   SG_BUILD_TESTS=0     build without the C++ tests (scripts/demo.sh does; default 1)
#   SG_SETUP_VERBOSE=1   show the full pip/CMake/ninja output instead of the progress lines
# ccache is used when it is installed (CMAKE_CXX_COMPILER_LAUNCHER, unless already set).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python_env.sh

say() { printf '[setup] %s\n' "$*"; }
fail() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt_install() {
    say "apt-get install $*"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "$@"
}
setup_start=$SECONDS

# --- system packages ---------------------------------------------------------------------------
build_tests=${SG_BUILD_TESTS:-1}
if [ "$build_tests" != "0" ]; then
    if dpkg-query -W -f='${Status}' libgtest-dev 2>/dev/null | grep -q "install ok installed"; then
        say "libgtest-dev: present"
    else
        say "libgtest-dev: missing"
        apt_install libgtest-dev
    fi
fi

# --- the Python environment --------------------------------------------------------------------
if [ "$SG_USE_VENV" = "1" ]; then
    if [ -x "$PYTHON" ] && "$PYTHON" -c "import sys" >/dev/null 2>&1; then
        say "virtual environment: $SG_VENV (present)"
    else
        base=$(command -v "$SG_VENV_FROM" || true)
        [ -n "$base" ] || fail "SG_VENV_FROM=$SG_VENV_FROM: no such interpreter"
        "$base" -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
            fail "$base is Python $("$base" -c 'import sys; print(sys.version.split()[0])'); shadegrad needs 3.9 or newer"
        # Debian and Ubuntu ship venv's pip bootstrap (ensurepip) in a package of its own.
        if ! "$base" -c "import venv, ensurepip" >/dev/null 2>&1; then
            version=$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
            say "$base cannot make virtual environments (no ensurepip)"
            command -v apt-get >/dev/null 2>&1 ||
                fail "install the venv module of $base (python$version-venv), or set PYTHON to an interpreter to install into"
            apt_install "python$version-venv"
        fi
        say "making the virtual environment $SG_VENV from $base ($("$base" -c 'import sys; print(sys.version.split()[0])'))"
        rm -rf "$SG_VENV"
        "$base" -m venv "$SG_VENV"
    fi
else
    command -v "$PYTHON" >/dev/null 2>&1 || fail "PYTHON=$PYTHON: no such interpreter"
    # PEP 668: pip refuses to install into a distribution's own Python.
    if "$PYTHON" - <<'PY'
import os, sys, sysconfig
managed = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
sys.exit(0 if managed and sys.prefix == sys.base_prefix else 1)
PY
    then
        fail "PYTHON=$PYTHON is an externally-managed system Python (pip cannot install into it);
        leave PYTHON unset to use the repository's virtual environment, made from it with
        SG_VENV_FROM=$PYTHON"
    fi
    say "python: $PYTHON (PYTHON=, no virtual environment of ours)"
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
    "$PYTHON" -m pip install --progress-bar off "${missing[@]}"
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
    "$PYTHON" -m pip install --progress-bar off "nvidia-cuda-nvrtc>=13,<14"
fi

# --- the package -------------------------------------------------------------------------------
# --no-build-isolation: the native torch bridge is compiled against the torch installed above
# (an isolated build environment has no torch and would silently build without the bridge).
# The environment's bin folder first on PATH: its cmake and ninja build the package.
PATH="$(dirname "$PYTHON"):$PATH"
if command -v ccache >/dev/null 2>&1 && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
    say "ccache: used"
fi
tests_flag=ON
if [ "$build_tests" = "0" ]; then tests_flag=OFF; fi
say "building and installing shadegrad into $("$PYTHON" -c 'import sys; print(sys.prefix)')"
say "  (build tree build/py, C++ tests $tests_flag; a first build takes ~2.5 min on 2 cores without the C++ tests, ~4 min with them; a rebuild seconds)"
mkdir -p build
log=build/setup-build.log
start=$SECONDS
# --config-settings, not -C: Debian 12's pip (23.0) predates the short form.
pip_args=(install --no-build-isolation --progress-bar off -v
          "--config-settings=cmake.define.SG_BUILD_TESTS=$tests_flag" --config-settings=build-dir=build/py .)
# Progress: ninja's "[n/N] Building CXX object ..." lines, errors and pip's outcome, each with
# the time since the build started; everything goes to the log.
progress() {
    local line elapsed
    while IFS= read -r line; do
        case "$line" in
            *"["[0-9]*/[0-9]*"]"* | *rror* | "Successfully installed"*)
                elapsed=$((SECONDS - start))
                printf '[setup %2d:%02d] %s\n' $((elapsed / 60)) $((elapsed % 60)) "${line#"${line%%[![:space:]]*}"}" ;;
        esac
    done
}
set +e
if [ "${SG_SETUP_VERBOSE:-0}" = "1" ]; then
    "$PYTHON" -m pip "${pip_args[@]}" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
else
    "$PYTHON" -m pip "${pip_args[@]}" 2>&1 | tee "$log" | progress
    status=${PIPESTATUS[0]}
fi
set -e
elapsed=$((SECONDS - start))
if [ "$status" -ne 0 ]; then
    say "the build failed after $((elapsed / 60)) min $((elapsed % 60)) s; the end of $log:"
    tail -n 40 "$log" >&2
    exit "$status"
fi
say "shadegrad built and installed in $((elapsed / 60)) min $((elapsed % 60)) s (full log: $log)"

# Check the installed package from outside the source tree, with its bridge.
(cd / && "$PYTHON" -c "import shadegrad; print('[setup] torch bridge:', shadegrad.torch_bridge_status())")
total=$((SECONDS - setup_start))
say "setup done in $((total / 60)) min $((total % 60)) s"
if [ "$SG_USE_VENV" = "1" ]; then
    say "the environment is $SG_VENV: 'source $SG_VENV/bin/activate' to use it (or run $SG_VENV/bin/python)"
fi
