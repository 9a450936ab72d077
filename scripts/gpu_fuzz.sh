#!/usr/bin/env bash
# scripts/gpu_fuzz.sh — the call fuzzer's long runs (tests/python/fuzz_calls.py) on a machine with
# a GPU, with the package already installed (scripts/gpu_check.sh installs it): CUDA_CALLS calls
# on the CUDA backend split over PROCS processes, optionally CPU_CALLS calls on the CPU backend
# split over CPU_PROCS processes, and compute-sanitizer memcheck over MEMCHECK_CALLS CUDA calls.
# Each process has its own seed (printed); the logs are joined into OUT/fuzz.log and the figures
# into OUT/fuzz.md. Exit status: non-zero when any run failed or memcheck reported an error.
#
#   CUDA_CALLS=20000 PROCS=4 MEMCHECK_CALLS=500 CPU_CALLS=0 CPU_PROCS=8 bash scripts/gpu_fuzz.sh OUT
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-results}}
mkdir -p "$out"
logs=$(mktemp -d)
export PYTHONUNBUFFERED=1
export SHADEGRAD_CACHE_DIR="${SHADEGRAD_CACHE_DIR:-$(mktemp -d)}"
cuda_calls=${CUDA_CALLS:-20000}
procs=${PROCS:-4}
cpu_calls=${CPU_CALLS:-0}
cpu_procs=${CPU_PROCS:-8}
memcheck_calls=${MEMCHECK_CALLS:-500}
base_seed=${SEED:-$RANDOM$RANDOM}
status=0
start=$SECONDS

launch() {  # launch DEVICE CALLS PROCS TAG: PROCS background runs of CALLS/PROCS calls each
    local device=$1 calls=$2 n=$3 tag=$4 k share
    for ((k = 0; k < n; k++)); do
        share=$((calls / n + (k < calls % n ? 1 : 0)))  # the shares add up to CALLS
        python3 tests/python/fuzz_calls.py --device "$device" --seed $((base_seed + k)) \
            --calls "$share" >"$logs/$tag-$k.log" 2>&1 &
    done
}
[ "$cuda_calls" -gt 0 ] && launch cuda "$cuda_calls" "$procs" cuda
[ "$cpu_calls" -gt 0 ] && launch cpu "$cpu_calls" "$cpu_procs" cpu
for job in $(jobs -p); do wait "$job" || status=1; done
fuzz_s=$((SECONDS - start))

if [ "$memcheck_calls" -gt 0 ] && command -v compute-sanitizer >/dev/null; then
    t0=$SECONDS
    compute-sanitizer --tool memcheck --error-exitcode 3 --target-processes all \
        python3 tests/python/fuzz_calls.py --device cuda --seed $((base_seed + 1000)) \
        --calls "$memcheck_calls" >"$logs/memcheck.log" 2>&1 || status=1
    echo "memcheck over $memcheck_calls CUDA calls: $((SECONDS - t0)) s" >>"$logs/memcheck.log"
fi

cat "$logs"/*.log >"$out/fuzz.log"
{
    echo "# Call fuzzer runs $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "fuzzing wall time: ${fuzz_s} s"
    grep -h "calls (.*) on .* failures" "$logs"/*.log
    grep -h "ERROR SUMMARY\|memcheck over" "$logs"/memcheck.log 2>/dev/null
    grep -h "^FAIL" "$logs"/*.log | head -n 20
    echo
    echo "status: $status"
} >"$out/fuzz.md"
cat "$out/fuzz.md"
exit $status
