# tests/python/test_first_call_split.py — _core._compile_stats()["ms"] splits a warm first call's
# CUDA-side work (the primary context's first retain, the fault record, each entry's function
# lookup and launch configuration, each entry's first launch) beside the module load, which
# scripts/first_call_profile.py --device cuda prints. On the CPU the CUDA steps stay zero; on the
# GPU check (SHADEGRAD_TEST_DEVICE=cuda) a first call in a fresh process records each of them.
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import TEST_DEVICE

CUDA_STEPS = ("cuda_context", "cuda_fault_record", "cuda_function", "cuda_first_launch")

CHILD = textwrap.dedent(
    r'''
    import json, sys
    import torch
    import shadegrad as sg
    from shadegrad import _core

    device = sys.argv[1]
    kind = sg.DeviceType.cuda if device == "cuda" else sg.DeviceType.cpu
    m = sg.Module.load_from_source(sg.create_torch_device(type=kind), "split",
                                   "[Differentiable] float f(float a, float b) { return a * b + 1.0; }")
    before = _core._compile_stats()["ms"]
    a = torch.rand(64, device=device)
    y = m.f(a, a)
    assert torch.allclose(y, a * a + 1)
    after = _core._compile_stats()["ms"]
    print(json.dumps({k: after[k] - before[k] for k in after}))
    '''
)


def first_call_split(device: str, cache: str) -> dict:
    env = dict(os.environ, SHADEGRAD_CACHE_DIR=cache)
    proc = subprocess.run([sys.executable, "-c", CHILD, device], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_split_names_the_cuda_steps(sg):
    from shadegrad import _core

    ms = _core._compile_stats()["ms"]
    for step in CUDA_STEPS + ("device_load",):
        assert step in ms and ms[step] >= 0.0


def test_cpu_first_call_has_no_cuda_steps(tmp_path):
    split = first_call_split("cpu", str(tmp_path / "cache"))
    for step in CUDA_STEPS:
        assert split[step] == 0.0, split


def test_a_warm_first_call_splits_out_the_index_key(tmp_path):
    # The kernel index's key (the compiler's identity, hashing) is a part of the index's own time.
    cache = str(tmp_path / "cache")
    first_call_split(TEST_DEVICE, cache)
    warm = first_call_split(TEST_DEVICE, cache)
    assert 0.0 < warm["index_key"] <= warm["index"], warm


@pytest.mark.skipif(TEST_DEVICE != "cuda", reason="the GPU check (SHADEGRAD_TEST_DEVICE=cuda)")
def test_warm_cuda_first_call_records_each_step(tmp_path):
    cache = str(tmp_path / "cache")
    first_call_split("cuda", cache)  # cold: compiles into the cache
    warm = first_call_split("cuda", cache)
    assert warm["compile"] == 0.0 and warm["codegen"] == 0.0, warm
    for step in CUDA_STEPS[1:] + ("device_load",):
        assert warm[step] > 0.0, (step, warm)
