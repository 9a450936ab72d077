#!/usr/bin/env bash
# scripts/demo.sh — sets up (scripts/setup.sh) and runs the demo: fitting a tone curve with a
# differentiable kernel (demo/fit_lut.py). Arguments are passed to the demo (--out, --steps, ...).
#   SG_SKIP_SETUP=1   skip the setup (the package must already be installed)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ "${SG_SKIP_SETUP:-0}" != "1" ]; then
    bash scripts/setup.sh
fi
echo "[demo] $PYTHON demo/fit_lut.py $*"
"$PYTHON" demo/fit_lut.py "$@"
