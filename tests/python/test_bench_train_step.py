# tests/python/test_bench_train_step.py — bench/bench_train_step.py computes the step it times:
# the shadegrad step's gradients and parameter updates are torch's, and the script writes its
# table (the CPU smoke run CI does; graph replay only on CUDA).
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench_train_step import SIDES, Step, worker
from conftest import TEST_DEVICE

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_train_step.py"


def test_gradients_match_torch():
    step = Step(TEST_DEVICE, (6, 5))
    reference = step.reference_grads()
    leaves = [p.detach().clone().requires_grad_(True) for p in step.params]
    got = torch.autograd.grad(step.sg_loss(*leaves), leaves)
    for g, r in zip(got, reference):
        assert g.shape == r.shape
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-7)
    # Hand value: with x = 0, h = softplus(b) = log(1 + e^b), y = h * v.
    step.x.zero_()
    b, v, t = step.b.detach(), step.v.detach(), step.target
    h = torch.log1p(torch.exp(b))
    want_v = 2 * (h * v - t) * h / v.numel()
    leaves = [p.detach().clone().requires_grad_(True) for p in step.params]
    got = torch.autograd.grad(step.sg_loss(*leaves), leaves)
    torch.testing.assert_close(got[2], want_v, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(got[0], torch.zeros_like(got[0]))  # d/dw of x * w with x = 0


def test_sgd_steps_match_torch():
    sg_step, torch_step = Step(TEST_DEVICE, (4, 3)), Step(TEST_DEVICE, (4, 3))
    for _ in range(3):
        sg_step.step(sg_step.sg_loss)
        torch_step.step(torch_step.torch_loss)
    for a, b in zip(sg_step.params, torch_step.params):
        torch.testing.assert_close(a.detach(), b.detach(), rtol=1e-5, atol=1e-6)


def test_worker_times_a_block():
    assert worker("sg", TEST_DEVICE, (4, 4), 3) > 0


@pytest.mark.skipif(TEST_DEVICE != "cpu", reason="the CPU smoke run of the script (CI)")
def test_script_writes_its_table(tmp_path):
    out = tmp_path / "step.md"
    proc = subprocess.run([sys.executable, str(BENCH), "--device", "cpu", "--quick", "--processes", "1",
                           "--markdown", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert SIDES["torch"] in text and SIDES["sg"] in text
    assert SIDES["sg_graph"] not in text  # graph replay needs CUDA
    proc = subprocess.run([sys.executable, str(BENCH), "--device", "cpu", "--worker", "sg_graph"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and "needs --device cuda" in proc.stderr
