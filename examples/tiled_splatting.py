# examples/tiled_splatting.py — the driver of the tiled 2-D Gaussian rasterizer in
# tiled_splatting.slang, in slangtorch's style (it uses only shadegrad.slangtorch and torch):
#
#   1. project: each Gaussian's conic (the quadratic form of its footprint), opacity and colour
#      from its parameters, in torch (differentiable by torch autograd);
#   2. bound: the pixel rectangle outside which its alpha is below the kernel's ALPHA_MIN;
#   3. per-tile lists: one (tile, Gaussian) pair per tile the rectangle touches, sorted with
#      torch by tile then depth (the Gaussian's index: the model composites in index order);
#   4. rasterize: one cooperative kernel launch, a block per tile; its backward (`.bwd`) walks
#      each tile's Gaussians in reverse.
#
# TiledRasterizer(size)(params) gives the (size, size, 3) image of examples/gaussian_splatting.py's
# parameters (means, log_scales, angles, colors, opacity_logits) and takes part in torch autograd.
"""Tiled 2-D Gaussian rasterizer driven through shadegrad.slangtorch."""

import pathlib

import torch

import shadegrad.slangtorch as slangtorch

HERE = pathlib.Path(__file__).resolve().parent
ALPHA_MIN = 1.0e-7  # as in tiled_splatting.slang


def project(params: dict):
    """(means, conics, opacities, colors) of the Gaussians: q = A dx^2 + B dx dy + C dy^2 with
    (A, B, C) the conic, so that alpha = opacity * exp(-q / 2)."""
    c, s = torch.cos(params["angles"]), torch.sin(params["angles"])
    inv2 = torch.exp(-2.0 * params["log_scales"])  # 1 / scale^2
    conics = torch.stack([c * c * inv2[:, 0] + s * s * inv2[:, 1],
                          2.0 * c * s * (inv2[:, 0] - inv2[:, 1]),
                          s * s * inv2[:, 0] + c * c * inv2[:, 1]], dim=-1)
    opacities = torch.sigmoid(params["opacity_logits"])
    return params["means"].contiguous(), conics.contiguous(), opacities.contiguous(), params["colors"].contiguous()


def tile_lists(params: dict, opacities: torch.Tensor, size: int, tile: int):
    """(order, ranges): the Gaussians of every tile in depth order, tile after tile (int32), and
    each tile's [start, end) in it ((tiles * tiles, 2) int32)."""
    with torch.no_grad():
        device = params["means"].device
        n = params["means"].shape[0]
        tiles = (size + tile - 1) // tile
        c, s = torch.cos(params["angles"]), torch.sin(params["angles"])
        scale2 = torch.exp(2.0 * params["log_scales"])
        # Where alpha = opacity * exp(-q/2) falls below ALPHA_MIN: q = radius^2.
        radius = torch.sqrt(2.0 * torch.log(torch.clamp(opacities / ALPHA_MIN, min=1.0)))
        half_x = radius * torch.sqrt(c * c * scale2[:, 0] + s * s * scale2[:, 1]) * size
        half_y = radius * torch.sqrt(s * s * scale2[:, 0] + c * c * scale2[:, 1]) * size
        centre = params["means"] * size - 0.5  # in pixel indices
        x0 = torch.floor((centre[:, 0] - half_x) / tile).long()
        x1 = torch.floor((centre[:, 0] + half_x) / tile).long()
        y0 = torch.floor((centre[:, 1] - half_y) / tile).long()
        y1 = torch.floor((centre[:, 1] + half_y) / tile).long()
        visible = (radius > 0) & (x1 >= 0) & (y1 >= 0) & (x0 < tiles) & (y0 < tiles)
        x0, x1 = x0.clamp(0, tiles - 1), x1.clamp(0, tiles - 1)
        y0, y1 = y0.clamp(0, tiles - 1), y1.clamp(0, tiles - 1)
        width = x1 - x0 + 1
        counts = torch.where(visible, width * (y1 - y0 + 1), torch.zeros_like(width))
        gid = torch.repeat_interleave(torch.arange(n, device=device), counts)
        first = torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)
        within = torch.arange(gid.shape[0], device=device) - first
        tile_id = (y0[gid] + within // width[gid]) * tiles + x0[gid] + within % width[gid]
        keys, _ = torch.sort(tile_id * n + gid)  # by tile, then depth (the index)
        order = (keys % n).int().contiguous()
        sorted_tiles = keys // n
        ids = torch.arange(tiles * tiles, device=device)
        ranges = torch.stack([torch.searchsorted(sorted_tiles, ids), torch.searchsorted(sorted_tiles, ids, right=True)],
                             dim=-1).int().contiguous()
        return order, ranges


class _Rasterize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, renderer, means, conics, opacities, colors, order, ranges):
        size = renderer.size
        image = torch.zeros(size, size, 3, device=means.device)
        final_t = torch.zeros(size, size, device=means.device)
        renderer.module.rasterize(means=means, conics=conics, opacities=opacities, colors=colors, order=order,
                                  ranges=ranges, image=image, final_T=final_t, size=size,
                                  background=renderer.background).launchRaw(blockSize=renderer.block,
                                                                            gridSize=renderer.grid)
        ctx.renderer = renderer
        ctx.save_for_backward(means, conics, opacities, colors, order, ranges, image, final_t)
        return image

    @staticmethod
    def backward(ctx, grad_image):
        means, conics, opacities, colors, order, ranges, image, final_t = ctx.saved_tensors
        r = ctx.renderer
        grads = [torch.zeros_like(t) for t in (means, conics, opacities, colors)]
        r.module.rasterize.bwd(means=(means, grads[0]), conics=(conics, grads[1]), opacities=(opacities, grads[2]),
                               colors=(colors, grads[3]), order=order, ranges=ranges,
                               image=(image, grad_image.contiguous().clone()), final_T=final_t, size=r.size,
                               background=r.background).launchRaw(blockSize=r.block, gridSize=r.grid)
        return (None, *grads, None, None)


class TiledRasterizer:
    """The image (size, size, 3) of a dict of Gaussian parameters, tile by tile."""

    def __init__(self, size: int, tile: int = 16, background=(0.0, 0.0, 0.0)):
        self.module = slangtorch.loadModule(str(HERE / "tiled_splatting.slang"), defines={"TILE": tile})
        self.size = size
        self.tile = tile
        tiles = (size + tile - 1) // tile
        self.block = (tile, tile, 1)
        self.grid = (tiles, tiles, 1)
        self.background = tuple(float(b) for b in background)

    def __call__(self, params: dict) -> torch.Tensor:
        means, conics, opacities, colors = project(params)
        order, ranges = tile_lists(params, opacities.detach(), self.size, self.tile)
        return _Rasterize.apply(self, means, conics, opacities, colors, order, ranges)


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(HERE))
    from gaussian_splatting import initial_gaussians, relative_error, torch_render

    size = 64
    params = initial_gaussians(96, "cpu")
    image = TiledRasterizer(size)(params)
    error = relative_error(image.detach(), torch_render(params, size).detach())
    order, _ = tile_lists(params, torch.sigmoid(params["opacity_logits"]).detach(), size, 16)
    print(f"tiled vs torch, {size}x{size}: relative error {error:.1e}; "
          f"{order.numel() / ((size + 15) // 16) ** 2:.1f} Gaussians per tile on average")
