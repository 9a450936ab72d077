# examples/fit_parameters.py — an optimisation loop over nn.Parameter in SlangPy's style: a small
# differentiable model (a cubic per colour channel, taking its coefficients as a float4 per
# channel) is fitted with torch.optim to samples of a target curve. Runs unchanged under
# `import shadegrad as spy`.
#
#   python examples/fit_parameters.py [--samples 512] [--device cpu|cuda]
"""Optimisation loop over nn.Parameter."""

import argparse

import torch

import shadegrad as spy

SOURCE = """
import slangpy;

[Differentiable]
float cubic(float x, float4 c) { return ((c.w * x + c.z) * x + c.y) * x + c.x; }
"""


class Curve(torch.nn.Module):
    def __init__(self, kernels):
        super().__init__()
        self.kernels = kernels
        self.coefficients = torch.nn.Parameter(torch.zeros(3, 4))  # one cubic per channel

    def forward(self, x):  # x: (N, 3)
        return self.kernels.cubic(x, self.coefficients)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    device = spy.create_torch_device(type=getattr(spy.DeviceType, args.device))
    m = spy.Module.load_from_source(device, "fit_parameters", SOURCE)

    torch.manual_seed(2)
    x = torch.rand(args.samples, 3, device=args.device)
    target = torch.stack([x[:, 0] ** 2, 0.5 + 0.25 * x[:, 1], x[:, 2] ** 3 - x[:, 2]], dim=-1)

    model = Curve(m).to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for step in range(600):
        optimizer.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
    print(f"loss after 600 steps: {loss.item():.2e}")
    print("coefficients (c0..c3 per channel):")
    print(model.coefficients.detach().cpu())
    assert loss.item() < 1e-3, loss.item()
    print("ok")


if __name__ == "__main__":
    main()
