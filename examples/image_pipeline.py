# examples/image_pipeline.py — an image pipeline over float3 tensors in SlangPy's style: exposure,
# a vignette computed from the pixel position (sg.grid), and a tone curve, each a kernel called
# on an (H, W, 3) tensor; then the exposure is fitted to a target image by gradient descent
# through the whole pipeline. Runs unchanged under `import shadegrad as spy`.
#
#   python examples/image_pipeline.py [--size 64] [--device cpu|cuda]
"""Image pipeline over float3 tensors, with a fitted exposure."""

import argparse

import torch

import shadegrad as spy

SOURCE = """
import slangpy;

[Differentiable]
float3 expose(float3 rgb, float stops) { return rgb * exp2(stops); }

[Differentiable]
float3 vignette(no_diff int2 pix, float3 rgb, no_diff float2 size, float strength)
{
    float2 uv = (float2(pix) + 0.5f) / size - 0.5f;
    return rgb * (1.0f - strength * dot(uv, uv));
}

[Differentiable]
float3 tonemap(float3 rgb) { return rgb / (1.0f + rgb); }
"""


def pipeline(m, image, stops, strength):
    h, w, _ = image.shape
    lit = m.expose(image, stops)
    framed = m.vignette(spy.grid((h, w)), lit, spy.float2(w, h), strength)
    return m.tonemap(framed)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    device = spy.create_torch_device(type=getattr(spy.DeviceType, args.device))
    m = spy.Module.load_from_source(device, "image_pipeline", SOURCE)

    torch.manual_seed(0)
    image = torch.rand(args.size, args.size, 3, device=args.device)
    target = pipeline(m, image, torch.tensor(0.75, device=args.device), 0.5).detach()

    # The same pipeline in torch, to check the kernels.
    ys, xs = torch.meshgrid(torch.arange(args.size, device=args.device), torch.arange(args.size, device=args.device), indexing="ij")
    uv = torch.stack([(xs + 0.5) / args.size - 0.5, (ys + 0.5) / args.size - 0.5], dim=-1)
    ref = image * 2 ** 0.75 * (1 - 0.5 * (uv * uv).sum(-1, keepdim=True))
    ref = ref / (1 + ref)
    torch.testing.assert_close(target, ref, rtol=1e-5, atol=1e-5)

    stops = torch.zeros((), device=args.device, requires_grad=True)
    optimizer = torch.optim.Adam([stops], lr=0.05)
    for step in range(150):
        optimizer.zero_grad()
        loss = ((pipeline(m, image, stops, 0.5) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
    print(f"fitted exposure {stops.item():.3f} stops (target 0.750), loss {loss.item():.2e}")
    assert abs(stops.item() - 0.75) < 0.02, stops.item()
    print("ok")


if __name__ == "__main__":
    main()
