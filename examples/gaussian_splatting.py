# examples/gaussian_splatting.py — 2D Gaussian splatting fitted to an image: N anisotropic
# Gaussians (mean, log-scale, rotation, color, opacity logit) are rasterized per pixel by the
# differentiable kernel in gaussian_splatting.slang (front-to-back alpha compositing) and fitted
# by Adam to a procedural target image. The same model written in plain torch (vectorized over
# pixels x Gaussians) checks the kernel's image and gradients at the start and, with
# --compare-torch, is timed against it (--compare-compile: also under torch.compile, in one
# table). The default renderer is the tiled cooperative rasterizer of tiled_splatting.{slang,py}
# (per-tile Gaussian lists, groupshared batches, a reverse-walking backward); --renderer per-pixel uses gaussian_splatting.slang, whose per-pixel calls run
# unchanged under `import shadegrad as spy`.
#
#   python examples/gaussian_splatting.py [--device cpu|cuda] [--size small|full] [--steps N]
#                                         [--out DIR] [--compare-torch] [--compare-compile]
#                                         [--renderer tiled|per-pixel]
#
# Writes DIR/target.png, DIR/fitted.png and DIR/loss.png, prints a progress bar and the factor
# by which the loss fell. small: 64x64 pixels, 96 Gaussians (a CPU run of well under a minute);
# full: 256x256 pixels, 2000 Gaussians (for a GPU).
"""2D Gaussian splatting fitted to an image, with a differentiable rasterizer kernel."""

import argparse
import functools
import math
import pathlib
import sys
import time

import torch

import shadegrad as spy
from png_files import write_curve, write_image
from tiled_splatting import TiledRasterizer

HERE = pathlib.Path(__file__).resolve().parent
SIZES = {  # (pixels per side, Gaussians, default steps)
    "small": (64, 96, 150),
    "full": (256, 2000, 1500),
}
MAX_GAUSSIANS = 2048  # the kernel's [MaxIters]
BACKGROUND = (0.0, 0.0, 0.0)
LEARNING_RATES = {"means": 0.01, "log_scales": 0.03, "angles": 0.05, "colors": 0.03, "opacity_logits": 0.1}


def pixel_centers(size: int, device):
    """(x, y) of every pixel's centre in [0, 1]^2, each (size, size): x across, y down."""
    centres = (torch.arange(size, device=device) + 0.5) / size
    ys, xs = torch.meshgrid(centres, centres, indexing="ij")
    return xs, ys


def target_image(size: int, device) -> torch.Tensor:
    """A procedural picture (H, W, 3): a smooth gradient sky, concentric rings, a disc and a
    square — shapes with sharp and soft edges, in colour."""
    xs, ys = pixel_centers(size, device)
    image = torch.stack([0.15 + 0.5 * xs, 0.2 + 0.3 * ys, 0.6 - 0.4 * ys], dim=-1)
    r = torch.sqrt((xs - 0.32) ** 2 + (ys - 0.35) ** 2)
    rings = (0.5 + 0.5 * torch.cos(r * 60.0)) * (r < 0.25)
    image = image * (1 - rings[..., None]) + rings[..., None] * torch.tensor([0.95, 0.85, 0.2], device=device)
    disc = ((xs - 0.72) ** 2 + (ys - 0.7) ** 2 < 0.16**2).float()
    image = image * (1 - disc[..., None]) + disc[..., None] * torch.tensor([0.9, 0.2, 0.25], device=device)
    square = ((xs - 0.3).abs() < 0.12) & ((ys - 0.78).abs() < 0.12)
    image = torch.where(square[..., None], torch.tensor([0.15, 0.7, 0.3], device=device), image)
    return image.clamp(0, 1).contiguous()


def initial_gaussians(count: int, device) -> dict:
    """Gaussians spread over the image: random means, round footprints of about the spacing of
    a count-point grid, random angles, grey colors, opacity 0.5."""
    g = torch.Generator().manual_seed(0)
    spacing = 1.0 / math.sqrt(count)
    params = {
        "means": torch.rand(count, 2, generator=g),
        "log_scales": torch.full((count, 2), math.log(0.6 * spacing)) + 0.1 * torch.randn(count, 2, generator=g),
        "angles": torch.rand(count, generator=g) * math.pi,
        "colors": 0.4 + 0.2 * torch.rand(count, 3, generator=g),
        "opacity_logits": torch.zeros(count),
    }
    return {k: v.to(device).requires_grad_(True) for k, v in params.items()}


class KernelRenderer:
    """The image from the shadegrad kernel: one call over the pixel grid."""

    def __init__(self, device_type: str, size: int):
        device = spy.create_torch_device(type=getattr(spy.DeviceType, device_type))
        self.module = spy.Module.load_from_file(device, str(HERE / "gaussian_splatting.slang"))
        self.size = size

    def __call__(self, p: dict) -> torch.Tensor:
        return self.module.rasterize(
            spy.grid((self.size, self.size)),
            spy.float2(self.size, self.size),
            p["means"],
            p["log_scales"],
            p["angles"],
            p["colors"],
            p["opacity_logits"],
            spy.float3(*BACKGROUND),
        )


def torch_render(p: dict, size: int, cumprod=torch.cumprod) -> torch.Tensor:
    """The same model in plain torch, vectorized over pixels x Gaussians."""
    device = p["means"].device
    xs, ys = pixel_centers(size, device)
    d = torch.stack([xs, ys], dim=-1).reshape(-1, 1, 2) - p["means"]  # (pixels, N, 2)
    c, s = torch.cos(p["angles"]), torch.sin(p["angles"])
    inv_scale = torch.exp(-p["log_scales"])
    qx = (c * d[..., 0] + s * d[..., 1]) * inv_scale[:, 0]
    qy = (c * d[..., 1] - s * d[..., 0]) * inv_scale[:, 1]
    alpha = torch.clamp(torch.sigmoid(p["opacity_logits"]) * torch.exp(-0.5 * (qx * qx + qy * qy)), max=0.99)
    left = cumprod(1 - alpha, dim=1)  # transmittance behind each Gaussian
    before = torch.cat([torch.ones_like(left[:, :1]), left[:, :-1]], dim=1)
    image = (before * alpha) @ p["colors"] + left[:, -1:] * torch.tensor(BACKGROUND, device=device)
    return image.reshape(size, size, 3)


def loss_of(image, target):
    return ((image - target) ** 2).mean()


def relative_error(a, b) -> float:
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def check_against_torch(render, params, size, target, rtol=1e-3):
    """The kernel's image and gradients at the initial parameters against the torch model's."""
    grads = []
    for fn in (render, lambda p: torch_render(p, size)):
        image = fn(params)
        loss = loss_of(image, target)
        grads.append((image.detach(), torch.autograd.grad(loss, list(params.values()))))
    (image_k, grad_k), (image_t, grad_t) = grads
    errors = {"image": relative_error(image_k, image_t)}
    errors.update({name: relative_error(a, b) for name, a, b in zip(params, grad_k, grad_t)})
    worst = max(errors, key=errors.get)
    print(f"kernel vs torch at the start: worst relative error {errors[worst]:.1e} ({worst})")
    assert errors[worst] < rtol, errors


def time_step(render, params, target, device, repeats: int) -> float:
    """Seconds per forward + backward of `render`."""

    def step():
        loss = loss_of(render(params), target)
        torch.autograd.grad(loss, list(params.values()))

    step()  # warm-up (compiles the kernels on the first call)
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeats


@functools.cache
def opaque_cumprod():
    """torch.cumprod as an operator torch.compile does not look into (torch.library.custom_op),
    with its gradient in torch ops: the compiled model keeps torch's own scan kernel for it, and
    everything around it is still compiled and fused. torch.compile of the model as written was
    still compiling after 8 minutes on an H100 (the CPU compiles it in 13 s); in this form it
    compiles in seconds there too."""
    aten_cumprod = torch.cumprod

    @torch.library.custom_op("gaussian_splatting::cumprod", mutates_args=())
    def cumprod(x: torch.Tensor, dim: int) -> torch.Tensor:
        return aten_cumprod(x, dim)

    @cumprod.register_fake
    def _(x, dim):
        return torch.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output)
        ctx.dim = inputs[1]

    def backward(ctx, grad):
        # d/dx_i of sum_j grad_j * prod_{k<=j} x_k = (sum_{j>=i} grad_j * out_j) / x_i; here
        # x = 1 - alpha >= 0.01, never zero.
        x, out = ctx.saved_tensors
        return (grad * out).flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim) / x, None

    cumprod.register_autograd(backward, setup_context=setup_context)
    return lambda x, dim: cumprod(x, dim)


def compiled_torch_render(size):
    """The plain-torch model under torch.compile (its cumprod kept as torch's own kernel:
    opaque_cumprod), or (None, why) where torch.compile cannot work here (no torch.compile, no
    compiler for its backend, a Python it does not support)."""
    if not hasattr(torch, "compile"):
        return None, "this torch has no torch.compile"
    if not hasattr(torch.library, "custom_op"):
        return None, "this torch has no torch.library.custom_op"
    try:
        cumprod = opaque_cumprod()
        compiled = torch.compile(lambda p: torch_render(p, size, cumprod))
        return compiled, None
    except Exception as e:  # noqa: BLE001 - any refusal means: skip it, saying why
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def check_compiled(compiled, params, size, target, rtol=1e-3):
    """The compiled model's image and gradients against plain torch's (the timing is of the same
    computation)."""
    results = []
    for fn in (compiled, lambda p: torch_render(p, size)):
        image = fn(params)
        results.append([image.detach(), *torch.autograd.grad(loss_of(image, target), list(params.values()))])
    worst = max(relative_error(a, b) for a, b in zip(*results))
    print(f"torch.compile vs plain torch: worst relative error {worst:.1e} (image and gradients)")
    assert worst < rtol, worst


def compare_times(args, render, per_pixel, params, target, size):
    """Times a forward + backward step of each renderer and prints a table: the tiled kernel, the
    per-pixel kernel, plain torch and (--compare-compile) torch under torch.compile."""
    repeats = 20 if args.device == "cuda" else 5
    rows = []
    if args.renderer == "tiled":
        rows.append(("shadegrad tiled kernel", time_step(render, params, target, args.device, repeats)))
    rows.append(("shadegrad per-pixel kernel", time_step(per_pixel, params, target, args.device, repeats)))
    t_torch = time_step(lambda p: torch_render(p, size), params, target, args.device, repeats)
    rows.append(("plain torch", t_torch))
    if args.compare_compile:
        compiled, why = compiled_torch_render(size)
        if compiled is not None:
            try:
                rows.append(("torch.compile(plain torch)", time_step(compiled, params, target, args.device, repeats)))
                check_compiled(compiled, params, size, target)
            except Exception as e:  # noqa: BLE001 - the first call compiles: a missing compiler shows here
                why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if why is not None:
            print(f"torch.compile skipped: {why}")
    print(f"time per step (forward + backward), {args.device}, {args.size} size:")
    print(f"  {'renderer':<28} {'ms / step':>10} {'torch / it':>11}")
    for name, t in rows:
        print(f"  {name:<28} {t * 1e3:>10.2f} {t_torch / t:>10.2f}x")
    return rows


def progress(step: int, steps: int, loss: float, start: float) -> None:
    width = 30
    done = round(width * step / steps)
    bar = "#" * done + "." * (width - done)
    sys.stdout.write(f"\r[{bar}] {step}/{steps} loss {loss:.3e} {time.perf_counter() - start:5.1f}s")
    if step == steps:
        sys.stdout.write("\n")
    sys.stdout.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--size", default="small", choices=sorted(SIZES))
    parser.add_argument("--steps", type=int, default=None, help="Adam steps (default: per size)")
    parser.add_argument("--out", default="out/gaussian_splatting", help="folder for the PNG files")
    parser.add_argument("--compare-torch", action="store_true", help="time a step of the plain-torch model too")
    parser.add_argument("--compare-compile", action="store_true",
                        help="as --compare-torch, and time the plain-torch model under torch.compile too (skipped, "
                             "saying why, where torch.compile cannot work)")
    parser.add_argument("--renderer", default="tiled", choices=["tiled", "per-pixel"],
                        help="tiled: the cooperative tile rasterizer of tiled_splatting.slang (shadegrad.slangtorch); "
                             "per-pixel: gaussian_splatting.slang, every pixel walking every Gaussian")
    args = parser.parse_args(argv)
    size, count, default_steps = SIZES[args.size]
    steps = args.steps if args.steps is not None else default_steps
    assert count <= MAX_GAUSSIANS
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    target = target_image(size, args.device)
    params = initial_gaussians(count, args.device)
    per_pixel = KernelRenderer(args.device, size)
    render = TiledRasterizer(size, background=BACKGROUND) if args.renderer == "tiled" else per_pixel
    print(f"{count} Gaussians, {size}x{size} pixels, {steps} steps on {args.device}, {args.renderer} renderer")
    check_against_torch(render, params, size, target)

    if args.compare_torch or args.compare_compile:
        compare_times(args, render, per_pixel, params, target, size)

    optimizer = torch.optim.Adam([{"params": [params[k]], "lr": lr} for k, lr in LEARNING_RATES.items()])
    losses = []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(render(params), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % 10 == 0 or step == steps:
            progress(step, steps, losses[-1], start)
    with torch.no_grad():
        final = loss_of(render(params), target).item()
        write_image(out / "fitted.png", render(params))
    losses.append(final)
    write_image(out / "target.png", target)
    write_curve(out / "loss.png", losses)
    factor = losses[0] / final
    print(f"loss {losses[0]:.3e} -> {final:.3e}: fell by a factor of {factor:.1f}")
    print(f"wrote {out / 'target.png'}, {out / 'fitted.png'}, {out / 'loss.png'}")
    print("ok")


if __name__ == "__main__":
    main()
