# tests/python/test_fuzz_calls.py — the differential call fuzzer (fuzz_calls.py) in CI: a fixed
# seed and a random one (both printed), and every stored regression case replayed.
import os
import random

import fuzz_calls
from conftest import TEST_DEVICE

# CI budget: 2,000 calls on the CPU (SHADEGRAD_FUZZ_CALLS overrides).
CALLS = int(os.environ.get("SHADEGRAD_FUZZ_CALLS", "2000"))


def run_seed(sg, seed, calls):
    print(f"fuzz_calls: seed {seed} ({calls} calls); replay: python tests/python/fuzz_calls.py --seed {seed} --calls {calls}")
    failures = fuzz_calls.fuzz(sg, seed, calls, TEST_DEVICE)
    assert not failures, "\n\n".join(f"{f['failure']}\n{f['source']}" for f in failures)


def test_fuzz_fixed_seed(sg):
    run_seed(sg, 20261201, CALLS * 3 // 4)


def test_fuzz_random_seed(sg):
    run_seed(sg, random.randrange(1 << 31), CALLS - CALLS * 3 // 4)


def test_fuzz_regressions(sg):
    # Shrunk failing cases the fuzzer found (fuzz_calls.py --save), each replayed.
    runner = fuzz_calls.Runner(sg, TEST_DEVICE)
    for case in fuzz_calls.load_regressions():
        runner.run(case)
