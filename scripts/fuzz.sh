#!/usr/bin/env bash
# scripts/fuzz.sh — builds the libFuzzer front-end target with clang, ASan and UBSan in its own
# build tree and fuzzes the compiler front end for a given time (docs/fuzzing.md).
#
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer arguments...]      (default: 60 seconds)
#
# The seed corpus is every .slang file of the repository (tests/conformance and tests/lang
# included), plus the kernel snippets embedded in the C++ and Python tests. New inputs
# are kept in build-fuzz/corpus between runs. Crashes, sanitizer reports, leaks and timeouts go
# to build-fuzz/crashes/; internal compiler errors (InternalError) are collected, smallest input
# per distinct message, in build-fuzz/findings/ and summarized at the end.
#
# Exit status: 0 when the run found no crash (and, with SG_FUZZ_STRICT=1, no internal error);
# libFuzzer's status otherwise; 2 when clang or libFuzzer is missing.
#
# Environment:
#   SG_FUZZ_BUILD_DIR   build tree (default: build-fuzz)
#   SG_FUZZ_STRICT=1    abort on the first InternalError instead of collecting them
#   SG_FUZZ_JOBS        parallel fuzzing processes (default 1; each one is a full core)
#   CXX                 the clang++ to use (default: clang++)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

seconds=${1:-60}
if [ $# -gt 0 ]; then shift; fi
case $seconds in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [libFuzzer args...]" >&2; exit 2 ;; esac

build=${SG_FUZZ_BUILD_DIR:-build-fuzz}
cxx=${CXX:-clang++}
jobs=${SG_FUZZ_JOBS:-1}
say() { printf '[fuzz] %s\n' "$*"; }

# --- toolchain ---------------------------------------------------------------------------------
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "[fuzz] $cxx not found: apt-get install -y clang (Debian's clang ships libFuzzer)" >&2
    exit 2
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' \
    >"$probe/probe.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" 2>"$probe/log"; then
    cat "$probe/log" >&2
    echo "[fuzz] $cxx cannot link -fsanitize=fuzzer: install libclang-rt-<version>-dev for this clang" >&2
    exit 2
fi

# --- build -------------------------------------------------------------------------------------
# RelWithDebInfo without NDEBUG: optimized enough to fuzz fast, with the IR verifier after every
# pass (after_pass verifies in builds without NDEBUG) and symbolized sanitizer reports.
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
start=$SECONDS
if [ ! -f "$build/CMakeCache.txt" ]; then
    say "configuring $build with $cxx"
    cmake -S . -B "$build" ${generator[@]+"${generator[@]}"} -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
        -DSG_SANITIZE=ON -DSG_BUILD_FUZZER=ON -DSG_BUILD_PYTHON=OFF -DSG_BUILD_TESTS=OFF >/dev/null
fi
say "building fuzz_frontend"
if ! cmake --build "$build" --target fuzz_frontend -- ${CMAKE_BUILD_PARALLEL_LEVEL:+-j"$CMAKE_BUILD_PARALLEL_LEVEL"} \
    >"$build/build.log" 2>&1; then
    tail -n 40 "$build/build.log" >&2
    echo "[fuzz] the build failed (log: $build/build.log)" >&2
    exit 2
fi
say "built in $((SECONDS - start)) s"

# --- corpus ------------------------------------------------------------------------------------
seeds="$build/seeds"
rm -rf "$seeds"
rm -rf "$build/findings"  # per run: each run reports what it found
mkdir -p "$seeds" "$build/corpus" "$build/crashes" "$build/findings"
n=0
while IFS= read -r -d '' f; do
    n=$((n + 1))
    cp "$f" "$seeds/$(printf '%04d' "$n")-$(basename "$f")"
done < <(find "$root" -name '*.slang' -type f -not -path "$root/build*" -not -path "*/.git/*" -print0 2>/dev/null)
# Kernel snippets inside the tests: C++ raw strings R"(...)" and Python triple-quoted strings.
python3 - "$seeds" "$root/tests" <<'PY'
import pathlib, re, sys
out, tests = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
pattern = {".cpp": re.compile(r'R"(\w*)\((.*?)\)\1"', re.S), ".py": re.compile(r'("""|\'\'\')(.*?)\1', re.S)}
count = 0
for path in sorted(tests.rglob("*")):
    rx = pattern.get(path.suffix)
    if rx is None or not path.is_file():
        continue
    for m in rx.finditer(path.read_text(errors="replace")):
        text = m.group(2)
        if len(text) > 20 and any(w in text for w in ("float", "void", "int ", "struct")):
            count += 1
            (out / f"snippet-{count:04d}.slang").write_text(text)
print(f"[fuzz] {count} kernel snippets from the tests")
PY
say "$n .slang seed files (the conformance kernels of tests/conformance among them)"

# --- run ---------------------------------------------------------------------------------------
export SG_FUZZ_FINDINGS_DIR="$root/$build/findings"
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
args=(-max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 -detect_leaks=1
      -dict=tests/fuzz/slang.dict -artifact_prefix="$build/crashes/" -print_final_stats=1)
if [ "$jobs" -gt 1 ]; then args+=(-fork="$jobs"); fi
say "fuzzing for $seconds s (crashes: $build/crashes/, internal errors: $build/findings/)"
# The full output goes to the log; the console gets progress, sanitizer reports and findings.
set +e
"$build/tests/fuzz/fuzz_frontend" "${args[@]}" "$@" "$build/corpus" "$seeds" 2>&1 | tee "$build/fuzz.log" |
    grep --line-buffered -E '^(#[0-9]+[[:space:]]+(INITED|DONE|pulse)|==[0-9]+==|SUMMARY|shadegrad-fuzz|stat::|Test unit written|  +[0-9]+ x )'
status=${PIPESTATUS[0]}
set -e

findings=$(find "$build/findings" -name '*.txt' | wc -l)
crashes=$(find "$build/crashes" -type f | wc -l)
say "done: exit status $status; $crashes file(s) in $build/crashes/; $findings distinct internal error(s) in $build/findings/"
say "full log: $build/fuzz.log"
exit "$status"
