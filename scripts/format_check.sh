#!/usr/bin/env bash
# scripts/format_check.sh — checks that the C++ sources match .clang-format (changes nothing).
# Installs the clang-format wheel from PyPI when no clang-format is on PATH.
# Exit status 1 and a list of files when any file would change.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! command -v clang-format >/dev/null 2>&1; then
    echo "[format] clang-format missing: pip install clang-format"
    "$PYTHON" -m pip install -q clang-format
fi
echo "[format] $(clang-format --version)"

mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
    'src/*.cpp' 'src/*.h' 'tools/*.cpp' 'tools/*.h' 'tests/cpp/*.cpp' 'tests/cpp/*.h')
bad=()
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    if ! clang-format --dry-run -Werror --style=file "$f" >/dev/null 2>&1; then
        bad+=("$f")
    fi
done
if [ ${#bad[@]} -gt 0 ]; then
    printf '[format] would reformat: %s\n' "${bad[@]}"
    echo "[format] ${#bad[@]} of ${#files[@]} files need clang-format -i"
    exit 1
fi
echo "[format] all ${#files[@]} files are formatted"
