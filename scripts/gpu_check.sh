#!/usr/bin/env bash
# scripts/gpu_check.sh — the GPU check, in one command, on a machine with an NVIDIA GPU and no
# internet: builds and installs the package (no build isolation: the bridge builds against the
# installed torch), runs the C++ tests, the Python suite on the CUDA backend and on the CPU
# backend, compute-sanitizer's memcheck over the CUDA autograd tests, then the benchmarks and the
# Gaussian splatting example at full size. Writes the logs, summary.md, the benchmark table
# (bench.md, bench.json) and the example's pictures into the folder given as $1 (default: $OUT,
# else ./gpu-results). Exit status: non-zero when any step failed.
#
#   bash scripts/gpu_check.sh [OUT_DIR] [--quick]     (--quick: skip memcheck and benchmarks)
#   bash scripts/gpu_check.sh OUT_DIR --steps=build,ctest,pytest_cuda
#
# --steps=LIST runs only the named steps, so that the check fits calls of a limited length on
# one warm machine (the build directory and the installed package stay between them): build,
# ctest, pytest_cuda, pytest_cpu, bench, first_call, fwd_bwd_host, train_step, splatting,
# memcheck, coop_sanitizers, and row6x20 (row 6 in 20 fresh processes; only when named). The
# build step is cheap when build/gpu is already up to date.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-results}}
mode=${2:-full}   # full | --quick (no memcheck, no benchmarks) | --no-memcheck | --memcheck-only | --steps=...
quick=0
[ "$mode" = "--quick" ] && quick=1
steps=""
case "$mode" in --steps=*) steps=",${mode#--steps=}," ;; esac
want() {  # want ID: whether step ID runs in this mode
    if [ -n "$steps" ]; then [[ "$steps" == *",$1,"* ]]; return; fi
    case "$1" in
        build) return 0 ;;
        ctest | pytest_cuda) [ "$mode" != "--memcheck-only" ] ;;
        pytest_cpu) [ "$mode" != "--memcheck-only" ] && [ $quick -eq 0 ] ;;
        memcheck | coop_sanitizers) [ $quick -eq 0 ] && [ "$mode" != "--no-memcheck" ] ;;
        *) [ $quick -eq 0 ] && [ "$mode" != "--memcheck-only" ] ;;
    esac
}
mkdir -p "$out"
summary="$out/summary.md"
status=0
export PYTHONUNBUFFERED=1
export SHADEGRAD_CACHE_DIR="${SHADEGRAD_CACHE_DIR:-$(mktemp -d)}"
jobs=$(nproc)

step() {  # step NAME LOGFILE COMMAND...: runs, records pass/fail and the time
    local name=$1 log=$2
    shift 2
    local t0=$SECONDS
    echo "== $name"
    if "$@" >"$out/$log" 2>&1; then
        echo "| $name | pass | $((SECONDS - t0)) s | $log |" >>"$summary"
    else
        echo "| $name | FAIL ($?) | $((SECONDS - t0)) s | $log |" >>"$summary"
        status=1
        tail -n 30 "$out/$log"
    fi
}

{
    echo "# GPU check $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /'
    python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
    echo
    echo "| step | result | time | log |"
    echo "| --- | --- | --- | --- |"
} >"$summary"

want build && step "build and install" build.log \
    python3 -m pip install --no-build-isolation --no-deps -v . \
    -Ccmake.define.SG_BUILD_TESTS=ON -Cbuild-dir=build/gpu -Ccmake.build-type=Release \
    -Cbuild.tool-args=-j"$jobs"
if ! python3 -c "import shadegrad as sg; print(sg.torch_bridge_status()); print(sg.cuda_status())" >>"$out/build.log" 2>&1; then
    echo "| import shadegrad | FAIL | | build.log |" >>"$summary"
    cat "$summary"
    exit 1  # nothing else can run
fi

if want ctest && [ -d build/gpu/tests/cpp ]; then
    step "C++ tests (ctest)" ctest.log ctest --test-dir build/gpu --output-on-failure -j"$jobs"
fi

# The Python suite on the CUDA backend; the subprocess-per-case tests run in parallel workers.
xdist=""
python3 -c "import xdist" 2>/dev/null && xdist="-n ${SG_XDIST:-12}"
want pytest_cuda && step "pytest (CUDA backend)" pytest_cuda.log \
    env SHADEGRAD_TEST_DEVICE=cuda python3 -m pytest -v -rfE $xdist -p no:cacheprovider tests/python
want pytest_cpu && step "pytest (CPU backend)" pytest_cpu.log \
    env SHADEGRAD_TEST_DEVICE=cpu python3 -m pytest -v -rfE $xdist -p no:cacheprovider tests/python

if true; then
    if [ -f bench/bench_gpu.py ] && want bench; then
        step "benchmarks" bench.log python3 bench/bench_gpu.py --json "$out/bench.json" --markdown "$out/bench.md"
    fi
    # Row 6 (broadcast gradients over 1M elements) in 20 fresh processes in a row (#25: its
    # float64 accuracy check passes 20 times running on the H200). A failed check makes the row
    # ERROR and the run exit non-zero, which fails the step; a missed speed target is only listed.
    # Not among the default steps.
    if [ -f bench/bench_gpu.py ] && [ -n "$steps" ] && want row6x20; then
        step "row 6, 20 fresh processes" row6x20.log bash -c '
            failed=0
            for i in $(seq 20); do
                md=$(mktemp)
                python3 bench/bench_gpu.py --only 6 --markdown "$md" >/dev/null 2>&1 || failed=$((failed + 1))
                grep -q "^| 6 " "$md" || { echo "run $i: no row 6"; failed=$((failed + 1)); }
                grep "^| 6 " "$md" | sed "s/^/run $i: /"
                rm -f "$md"
            done
            echo "runs whose accuracy check failed or that did not finish: $failed of 20"
            [ $failed -eq 0 ]'
    fi
    # Where a first call's time goes on CUDA, cold and warm (rows 5a / 5b), in fresh processes.
    if [ -f scripts/first_call_profile.py ] && want first_call; then
        step "first-call split (CUDA)" first_call.log python3 scripts/first_call_profile.py --reps 3 --device cuda
    fi
    # What the warm first call's fault record would cost made another way (row 5b).
    if [ -f scripts/probe_fault_record_alloc.py ] && want first_call; then
        step "fault-record allocation kinds" fault_record_alloc.log python3 scripts/probe_fault_record_alloc.py --reps 5
    fi
    # Forward + backward host time with each side in a process of its own (and interleaved).
    if [ -f bench/bench_fwd_bwd_host.py ] && want fwd_bwd_host; then
        step "forward + backward host time, own processes" fwd_bwd_host.log \
            python3 bench/bench_fwd_bwd_host.py --device cuda --json "$out/fwd_bwd_host.json" \
            --markdown "$out/fwd_bwd_host.md"
    fi
    # A small training step (three shadegrad kernels, a loss, SGD) against plain torch and under
    # CUDA graph replay, each side in processes of its own.
    if [ -f bench/bench_train_step.py ] && want train_step; then
        step "training step, own processes" train_step.log \
            python3 bench/bench_train_step.py --device cuda --json "$out/train_step.json" \
            --markdown "$out/train_step.md"
    fi
    # The flagship example at full size: its pictures (for docs/images/gaussian_splatting/) and
    # the time per step against the same model in plain torch, in the log.
    if [ -f examples/gaussian_splatting.py ] && want splatting; then
        step "Gaussian splatting example (full size)" gaussian_splatting.log \
            python3 examples/gaussian_splatting.py --size full --device cuda --compare-torch --compare-compile \
            --out "$out/gaussian_splatting"
    fi
    if command -v compute-sanitizer >/dev/null && want memcheck; then
        step "compute-sanitizer memcheck" memcheck.log \
            env SHADEGRAD_TEST_DEVICE=cuda compute-sanitizer --tool memcheck --error-exitcode 3 \
            --target-processes all python3 -m pytest -q -p no:cacheprovider \
            tests/python/test_cuda.py tests/python/test_conformance.py tests/python/test_vertical_slice.py \
            tests/python/test_stored_grads.py tests/python/test_collide_accuracy.py tests/python/test_global_bindings.py \
            -k "not 64bit and not cubin_cache and not reduce_overhead"
    fi
    if command -v compute-sanitizer >/dev/null && want coop_sanitizers; then
        # Cooperative kernels and call groups: shared memory, barriers and atomics under
        # racecheck (hazards) and memcheck (out-of-bounds, partial blocks and groups).
        coop_tests="tests/python/test_coop_launch.py tests/python/test_coop_diff.py tests/python/test_coop_waves.py
            tests/python/test_call_groups.py tests/python/test_slangpy_tensorview.py tests/python/test_tiled_splatting.py
            tests/python/test_slangpy_view_functions.py tests/python/test_coop_view_methods.py
            tests/python/test_view_function_derivatives.py tests/python/test_view_function_forms.py"
        for tool in racecheck memcheck; do
            # shellcheck disable=SC2086
            step "compute-sanitizer $tool (cooperative kernels, call groups)" "coop_$tool.log" \
                env SHADEGRAD_TEST_DEVICE=cuda compute-sanitizer --tool "$tool" --error-exitcode 3 \
                --target-processes all python3 -m pytest -q -p no:cacheprovider $coop_tests
        done
    fi
fi

grep -hE "^[0-9]+ (passed|failed)|passed|failed" "$out"/pytest_*.log 2>/dev/null | tail -n 3 >>"$summary"
cat "$summary"
exit $status
