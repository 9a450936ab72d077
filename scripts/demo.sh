#!/usr/bin/env bash
# scripts/demo.sh — sets up (scripts/setup.sh, without the C++ tests: a shorter first build) and
# runs the demo: fitting a tone curve with a differentiable kernel (demo/fit_lut.py), in the
# repository's virtual environment .venv (or the interpreter PYTHON names; see setup.sh).
# Arguments are passed to the demo (--out, --steps, ...).
#   SG_SKIP_SETUP=1   skip the setup (the package must already be installed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python_env.sh

if [ "${SG_SKIP_SETUP:-0}" != "1" ]; then
    SG_BUILD_TESTS=${SG_BUILD_TESTS:-0} bash scripts/setup.sh
elif [ ! -x "$PYTHON" ] && ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "[demo] error: $PYTHON does not exist; run without SG_SKIP_SETUP=1 to set up first" >&2
    exit 1
fi
echo "[demo] $PYTHON demo/fit_lut.py $*"
"$PYTHON" demo/fit_lut.py "$@"
