# examples/particles.py — a particle update in SlangPy's style: particles go in as dicts (one
# particle of Python values, or a dict of tensors for many), come back as structs (dicts), and a
# drag coefficient is recovered from observed positions by gradient descent through the update.
# Runs unchanged under `import shadegrad as spy`.
#
#   python examples/particles.py [--count 256] [--device cpu|cuda]
"""Particle update taking dicts and returning structs."""

import argparse

import torch

import shadegrad as spy

SOURCE = """
import slangpy;

struct Particle : IDifferentiable
{
    float3 pos;
    float3 vel;
    no_diff float mass;
};

[Differentiable]
Particle step(Particle p, float3 gravity, float drag, float dt)
{
    Particle q = p;
    float3 force = gravity * p.mass - drag * p.vel;
    q.vel = p.vel + force / p.mass * dt;
    q.pos = p.pos + q.vel * dt;
    return q;
}

[Differentiable]
float3 position_after(Particle p, float3 gravity, float drag, float dt)
{
    Particle q = step(p, gravity, drag, dt);
    return q.pos;
}
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    device = spy.create_torch_device(type=getattr(spy.DeviceType, args.device))
    m = spy.Module.load_from_source(device, "particles", SOURCE)
    gravity = spy.float3(0, -9.81, 0)

    # One particle: Python values in, a dict of value types out.
    one = m.step({"pos": spy.float3(0, 10, 0), "vel": spy.float3(1, 0, 0), "mass": 2.0}, gravity, 0.1, 0.01)
    print("one particle:", one)
    assert isinstance(one["pos"], spy.float3) and one["mass"] == 2.0

    # Many particles: a dict of tensors in, a dict of tensors out.
    n = args.count
    torch.manual_seed(1)
    state = {
        "_type": "Particle",
        "pos": torch.rand(n, 3, device=args.device) * 10,
        "vel": torch.randn(n, 3, device=args.device),
        "mass": torch.rand(n, device=args.device) + 0.5,
    }
    true_drag = 0.35
    observed = []
    s = dict(state)
    for _ in range(20):
        s = dict(m.step(s, gravity, true_drag, 0.05), _type="Particle")
        observed.append(s["pos"])
    assert s["pos"].shape == (n, 3) and s["mass"].shape == (n,)

    # Recover the drag from one step of observations.
    drag = torch.zeros(n, device=args.device, requires_grad=True)
    optimizer = torch.optim.Adam([drag], lr=0.05)
    for it in range(200):
        optimizer.zero_grad()
        predicted = m.position_after(state, gravity, drag, 0.05)
        loss = ((predicted - observed[0]) ** 2).sum()
        loss.backward()
        optimizer.step()
    error = (drag.detach() - true_drag).abs().max().item()
    print(f"recovered drag {drag.mean().item():.4f} (true {true_drag}), max error {error:.2e}")
    assert error < 5e-2, error
    print("ok")


if __name__ == "__main__":
    main()
