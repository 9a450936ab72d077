# tests/python/test_broadcast_accuracy.py — the gradient of a (1,)-shaped parameter read by 1M
# call elements is a sum of 1M terms; shadegrad sums it as a tree (CPU: double sums per chunk,
# added pairwise; CUDA: warp, block, then the blocks in double) and rounds once, so its error
# against a float64 reference is within 4x of torch's own float32 sum of the same terms, in fast
# and deterministic mode. On the CPU backend always; on CUDA where a GPU is present.
import pytest
import torch

from conftest import TEST_DEVICE

SOURCE = """
[Differentiable]
float quad(float x, float a, float b, float c) { return a * x * x + b * x + c; }
"""
N = 1 << 20
# The terms differ from torch's in their own rounding (an element's product, not the sum): a
# relative 1e-9 of the sum covers that, far below the ~6e-8 of a float32 rounding.
TERM_SLACK = 1e-9


def rel(value: torch.Tensor, ref: torch.Tensor) -> float:
    return abs(value.double().item() - ref.item()) / abs(ref.item())


def check_accuracy(m, tdev: str, seeds=range(4)):
    for seed in seeds:
        gen = torch.Generator().manual_seed(seed)
        # Positive weights: the sums of a and c only grow, the worst case for a chain of adds.
        x = (torch.rand(N, generator=gen) * 2 - 1).to(tdev)
        g = (torch.rand(N, generator=gen) + 0.5).to(tdev)
        params = [torch.full((1,), v, device=tdev, requires_grad=True) for v in (0.5, -0.25, 0.125)]
        m.quad(x, *params).backward(g)
        xd, gd = x.double(), g.double()
        refs = [(gd * xd * xd).sum(), (gd * xd).sum(), gd.sum()]
        torch_sums = [(g * x * x).sum(), (g * x).sum(), g.sum()]
        for name, p, ref, t in zip("abc", params, refs, torch_sums):
            ours, theirs = rel(p.grad, ref), rel(t, ref)
            assert ours <= 4 * theirs + TERM_SLACK, (
                f"seed {seed}, gradient of {name}: relative error {ours:.3e}, torch's float32 sum {theirs:.3e}")


def load(sg, device, name, deterministic):
    return sg.Module.load_from_source(device, name, SOURCE, options={"deterministic": deterministic})


@pytest.mark.parametrize("deterministic", [False, True], ids=["fast", "deterministic"])
def test_broadcast_gradient_over_1m_elements_cpu(sg, deterministic):
    device = sg.create_torch_device(type=sg.DeviceType.cpu)
    check_accuracy(load(sg, device, "bcast_accuracy", deterministic), "cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("deterministic", [False, True], ids=["fast", "deterministic"])
def test_broadcast_gradient_over_1m_elements_cuda(sg, deterministic):
    device = sg.create_torch_device(type=sg.DeviceType.cuda)
    check_accuracy(load(sg, device, "bcast_accuracy_cuda", deterministic), "cuda")


def test_broadcast_gradient_over_1m_elements_many_chunks_cpu(tmp_path):
    """64 pool threads (a fresh process: the pool is made once): 256 chunks, whose sums exceed the
    launch's stack space and go to the heap, added pairwise."""
    import os
    import subprocess
    import sys
    script = (
        "import sys; sys.path.insert(0, %r)\n"
        "import shadegrad as sg, test_broadcast_accuracy as t\n"
        "device = sg.create_torch_device(type=sg.DeviceType.cpu)\n"
        "t.check_accuracy(t.load(sg, device, 'bcast_accuracy_many', False), 'cpu', seeds=range(2))\n"
        % os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, SHADEGRAD_NUM_THREADS="64", SHADEGRAD_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("seed", range(2))
def test_partial_broadcasts_beside_a_reduction(sg, device, seed):
    """quad(x, a, b, c) on (1024, 1024) with a (1,), b (1, 1024) and c (1024, 1): one backward
    kernel with a reduction and two colliding gradients summed as trees (CPU: chunk tables; CUDA:
    tree tables, whose last block also finishes the reduction), each within 4x of torch's float32
    sums of the same terms, on the test device (SHADEGRAD_TEST_DEVICE)."""
    m = sg.Module.load_from_source(device, "bcast_partial", SOURCE)
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(1024, 1024, generator=gen) * 2 - 1).to(TEST_DEVICE)
    g = (torch.rand(1024, 1024, generator=gen) + 0.5).to(TEST_DEVICE)
    a = torch.full((1,), 0.5, device=TEST_DEVICE, requires_grad=True)
    b = torch.full((1, 1024), -0.25, device=TEST_DEVICE, requires_grad=True)
    c = torch.full((1024, 1), 0.125, device=TEST_DEVICE, requires_grad=True)
    m.quad(x, a, b, c).backward(g)
    xd, gd = x.double(), g.double()
    cases = [("a", a.grad, (gd * xd * xd).sum().reshape(1), (g * x * x).sum().reshape(1)),
             ("b", b.grad, (gd * xd).sum(0, keepdim=True), (g * x).sum(0, keepdim=True)),
             ("c", c.grad, gd.sum(1, keepdim=True), g.sum(1, keepdim=True))]
    for name, ours, ref, theirs in cases:
        err = ((ours.double() - ref).norm() / ref.norm()).item()
        torch_err = ((theirs.double() - ref).norm() / ref.norm()).item()
        assert err <= 4 * torch_err + TERM_SLACK, f"gradient of {name}: {err:.3e}, torch's float32 {torch_err:.3e}"
