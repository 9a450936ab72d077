# tests/python/test_tiled_splatting.py — the tiled 2-D Gaussian rasterizer of
# examples/tiled_splatting.{slang,py} (slangtorch style: per-tile lists, a cooperative forward
# kernel batching Gaussians through groupshared memory, a backward kernel walking them in
# reverse) against the plain-torch model of examples/gaussian_splatting.py: image and gradients
# of every parameter to 1e-4 relative, on an image whose size is not a multiple of the tile
# (partial tiles) and with tiles of more than one batch.
import pathlib
import sys

import pytest
import torch

from conftest import TEST_DEVICE

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import gaussian_splatting as gs  # noqa: E402
import tiled_splatting as ts  # noqa: E402


def relative(a, b):
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


@pytest.mark.parametrize("size,count,tile", [(40, 60, 16), (24, 300, 8)])
def test_tiled_rasterizer_matches_the_torch_model(size, count, tile):
    params = gs.initial_gaussians(count, TEST_DEVICE)
    target = gs.target_image(size, TEST_DEVICE)
    renderer = ts.TiledRasterizer(size, tile=tile)
    results = []
    for render in (renderer, lambda p: gs.torch_render(p, size)):
        image = render(params)
        loss = gs.loss_of(image, target)
        results.append((image.detach(), torch.autograd.grad(loss, list(params.values()))))
    (image_k, grads_k), (image_t, grads_t) = results
    assert relative(image_k, image_t) < 1e-4
    for name, a, b in zip(params, grads_k, grads_t):
        assert relative(a, b) < 1e-4, name
    # The lists: every tile's Gaussians in depth (index) order; with 300 Gaussians and 8x8 tiles
    # (64 threads) some tiles take several batches.
    order, ranges = ts.tile_lists(params, torch.sigmoid(params["opacity_logits"]).detach(), size, tile)
    lengths = (ranges[:, 1] - ranges[:, 0]).cpu()
    assert int(lengths.sum()) == order.numel()
    for start, end in ranges.cpu().tolist():
        ids = order[start:end].cpu()
        assert torch.all(ids[1:] > ids[:-1])
    if count == 300:
        assert int(lengths.max()) > tile * tile
