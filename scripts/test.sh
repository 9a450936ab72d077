#!/usr/bin/env bash
# scripts/test.sh — sets up (scripts/setup.sh) and runs every test: the C++ tests through ctest in
# the build tree build/py, then the Python tests against the installed package, in the
# repository's virtual environment .venv (or the interpreter PYTHON names; see setup.sh).
#
# Environment:
#   SG_SKIP_SETUP=1   skip scripts/setup.sh (the package and build/py must be current)
#   PYTHON            interpreter to test (default: the repository's .venv)
#   CTEST_JOBS        parallel C++ tests (default: 2)
# Extra arguments are passed to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python_env.sh

say() { printf '[test] %s\n' "$*"; }

if [ "${SG_SKIP_SETUP:-0}" != "1" ]; then
    bash scripts/setup.sh
fi
if [ ! -x "$PYTHON" ] && ! command -v "$PYTHON" >/dev/null 2>&1; then
    say "error: $PYTHON does not exist; run without SG_SKIP_SETUP=1 to set up first"
    exit 1
fi
# The environment's tools (its ctest, from the cmake wheel, where the system has none) first.
PATH="$(dirname "$(command -v "$PYTHON")"):$PATH"

# The installed package must be the one under test: the source package python/shadegrad lacks
# _core. Nothing named shadegrad sits in the repository root, so running from here imports it
# from site-packages; stop early if that ever changes.
here=$(pwd)
where=$("$PYTHON" -c "import shadegrad, os; print(os.path.dirname(shadegrad.__file__))")
case "$where" in
    "$(dirname "$(dirname "$PYTHON")")"/*) ;;  # the repository's .venv lies inside it
    "$here"/*) say "error: 'import shadegrad' resolves to the source tree ($where), not the installed package"; exit 1 ;;
esac
say "testing the package installed in $where"

status=0

say "C++ tests: ctest --test-dir build/py"
start=$SECONDS
if ! ctest --test-dir build/py --output-on-failure --no-tests=error -j "${CTEST_JOBS:-2}"; then
    status=1
fi
say "C++ tests took $((SECONDS - start)) s"

say "Python tests: pytest tests/python"
start=$SECONDS
# Exit code 5 means no test was collected: a failure here, since there are tests.
"$PYTHON" -m pytest -q -p no:cacheprovider --durations=12 tests/python "$@" || { rc=$?; status=1
    if [ $rc -eq 5 ]; then say "error: pytest collected no tests"; fi; }
say "Python tests took $((SECONDS - start)) s"

if [ $status -ne 0 ]; then
    say "FAILED"
else
    say "all tests passed"
fi
exit $status
