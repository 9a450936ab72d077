# tests/python/test_ddp.py — DistributedDataParallel training through shadegrad kernels
# (examples/ddp_tone_model.py): 2 processes (gloo on the CPU backend, NCCL with one GPU each on
# CUDA) end with the parameters of one process trained on the concatenated batch.
import sys
from pathlib import Path

import pytest
import torch

from conftest import TEST_DEVICE

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import ddp_tone_model as example  # noqa: E402

STEPS, BATCH, SIZE, LR = 12, 8, 24, 0.5


def test_ddp_matches_one_process_on_the_whole_batch():
    if TEST_DEVICE == "cuda" and torch.cuda.device_count() < 2:
        pytest.skip(f"NCCL DDP needs 2 GPUs; this machine has {torch.cuda.device_count()}")
    if not torch.distributed.is_available():
        pytest.skip("this torch build has no torch.distributed")
    ddp = example.run_ddp(2, TEST_DEVICE, BATCH, SIZE, STEPS, LR)
    single = example.run_single(TEST_DEVICE, BATCH, SIZE, STEPS, LR, 2)
    # Training did something: the loss fell and both kernels' parameters moved.
    assert ddp["losses"][-1] < 0.5 * ddp["losses"][0]
    assert (ddp["lut"] - torch.linspace(0.0, 1.0, example.LUT_SIZE)).abs().max() > 1e-3
    init = 0.1 * torch.randn(example.MLP_WEIGHTS, generator=torch.Generator().manual_seed(7))
    assert (ddp["w"] - init).abs().max() > 1e-3
    # DDP averaged the shards' gradients: the same parameters as one process on all images.
    torch.testing.assert_close(ddp["lut"], single["lut"], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ddp["w"], single["w"], rtol=1e-5, atol=1e-6)
