# tests/python/test_slangpy_more_examples.py — SlangPy's example programs `nested`, `autodiff` in
# its spy.Tensor form and `soft-rasterizer-pytorch` (its computing part: a target image, a few
# Adam steps on a triangle's vertices and colour through torch autograd), reproduced. Each program
# is written here in our own words but makes the same calls as the published one, under
# `import shadegrad as spy`, with the device type the only change; the test then checks what the
# program printed or plotted: values against hand results and a float64 torch reference,
# gradients against torch autograd in float64 and central finite differences.
#
# What differs, and why: `nested` writes into a texture made by device.create_texture and shows
# it with tev; shadegrad has no textures (tier 3), so its destination is a Tensor of float4 of the
# texture's 128 x 128 shape (the calls into it are the example's), and the test reads it back
# instead of showing it. The rasterizer's matplotlib animation (400 frames) is left out: the
# program runs its `step` a few times and keeps the losses and gradients it would plot.
import textwrap

import numpy as np
import pytest
import torch

from conftest import TEST_DEVICE

DEVICE = "spy.DeviceType.cuda" if TEST_DEVICE == "cuda" else "spy.DeviceType.cpu"

PROLOGUE = f"""
import pathlib
import numpy as np
import shadegrad as spy

device = spy.create_device(type={DEVICE}, include_paths=[pathlib.Path.cwd()])
module = spy.Module.load_from_file(device, "example.slang")
"""


def run_program(tmp_path, monkeypatch, files: dict, body: str, prologue: str = PROLOGUE) -> dict:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(textwrap.dedent(prologue + body), "example_main.py", "exec"), scope)
    return scope


# ---------------------------------------------------------------- nested

NESTED_SLANG = """
import "slangpy";

void copy(float4 src, out float4 dest)
{
    dest = src;
}

void copy_vector<let N : int>(vector<float, N> src, out vector<float, N> dest)
{
    dest = src;
}

void copy_generic<T>(T src, out T dest)
{
    dest = src;
}
"""

# The example's calls, each into its own destination so that the test can read every result.
NESTED = """
def make_destination():
    # SlangPy: device.create_texture(width=128, height=128, format=spy.Format.rgba32_float, ...)
    return spy.Tensor.empty(device, shape=(128, 128), dtype="float4")

source = np.random.default_rng(3).random(128 * 128 * 4).reshape(128, 128, 4).astype(np.float32)
tex_numpy = make_destination()
module.copy(src=source, dest=tex_numpy)

tex_dict = make_destination()
module.copy(src={"x": 1.0, "y": spy.rand_float(min=0, max=1, dim=1), "z": 0.0, "w": 1.0}, dest=tex_dict)

untyped_error = None
tex_untyped = make_destination()
try:
    module.copy_vector(src={"x": 1.0, "y": spy.rand_float(min=0, max=1, dim=1), "z": 0.0, "w": 1.0},
                       dest=tex_untyped)
except Exception as e:
    untyped_error = e

tex_specialized = make_destination()
copy_func = module.require_function("copy_vector<4>")
copy_func(src={"x": 1.0, "y": spy.rand_float(min=0, max=1, dim=1), "z": 0.0, "w": 1.0}, dest=tex_specialized)

tex = make_destination()
module.copy_vector(
    src={"_type": "float4", "x": 1.0, "y": spy.rand_float(min=0, max=1, dim=1), "z": 0.0, "w": 1.0},
    dest=tex,
)

tex_mapped = make_destination()
module.copy_generic.map(src="float4", dest="float4")(
    src={"x": 1.0, "y": spy.rand_float(min=0, max=1, dim=1), "z": 0.0, "w": 1.0},
    dest=tex_mapped,
)
shown = tex.to_numpy()
"""


def _wang(seed: int) -> int:
    seed &= 0xFFFFFFFF
    seed = ((seed ^ 61) ^ (seed >> 16)) * 9 & 0xFFFFFFFF
    seed ^= seed >> 4
    seed = seed * 0x27D4EB2D & 0xFFFFFFFF
    return seed ^ (seed >> 15)


def test_nested(tmp_path, monkeypatch):
    import shadegrad as spy

    s = run_program(tmp_path, monkeypatch, {"example.slang": NESTED_SLANG}, NESTED)
    np.testing.assert_array_equal(s["tex_numpy"].to_numpy(), s["source"])
    # SlangPy's rand_float(dim=1): one hash of the element's index and the (host-hashed) default seed.
    seed = _wang(2640457667)
    want_y = np.array([(_wang(k ^ seed) & 0x7FFFFF) / 8388608.0 for k in range(128 * 128)], dtype=np.float32)
    for name in ("tex_dict", "tex_untyped", "tex_specialized", "tex", "tex_mapped"):
        got = s[name].to_numpy() if name != "tex" else s["shown"]
        assert got.shape == (128, 128, 4), name
        assert np.all(got[..., 0] == 1.0) and np.all(got[..., 2] == 0.0) and np.all(got[..., 3] == 1.0), name
        np.testing.assert_array_equal(got[..., 1].reshape(-1), want_y, err_msg=name)
    # Without `_type` the dict says nothing about N. SlangPy's documentation calls the call into its
    # texture an error; shadegrad takes N from the other argument (a Tensor of float4), so it runs.
    assert s["untyped_error"] is None


# ---------------------------------------------------------------- autodiff, spy.Tensor form

POLYNOMIAL_SLANG = """
import "slangpy";

[Differentiable]
float polynomial(float a, float b, float c, float x) {
    return a * x * x + b * x + c;
}
"""

AUTODIFF = """
x = spy.Tensor.from_numpy(device, np.array([1, 2, 3, 4], dtype=np.float32)).with_grads(zero=True)

result: spy.Tensor = module.polynomial(a=2, b=8, c=-1, x=x, _result="tensor")
printed_result = result.to_numpy()

result = result.with_grads()
result.grad.storage.copy_from_numpy(np.array([1, 1, 1, 1], dtype=np.float32))

module.polynomial.bwds(a=2, b=8, c=-1, x=x, _result=result)
printed_grad = x.grad.to_numpy()
"""


def test_autodiff_with_spy_tensors(tmp_path, monkeypatch):
    import shadegrad as spy

    s = run_program(tmp_path, monkeypatch, {"example.slang": POLYNOMIAL_SLANG}, AUTODIFF)
    assert isinstance(s["result"], spy.Tensor)
    assert s["printed_result"].tolist() == [9.0, 23.0, 41.0, 63.0]  # 2x^2 + 8x - 1
    assert s["printed_grad"].tolist() == [12.0, 16.0, 20.0, 24.0]  # 4x + 8
    # A second backward accumulates into x.grad, as SlangPy's does.
    s["module"].polynomial.bwds(a=2, b=8, c=-1, x=s["x"], _result=s["result"])
    assert s["x"].grad.to_numpy().tolist() == [24.0, 32.0, 40.0, 48.0]


# ---------------------------------------------------------------- soft-rasterizer-pytorch

RASTERIZER_SLANG = """
import "slangpy";

// The view: world = (pixel / frame * 2 - 1) * scale + origin.
struct Camera
{
    float2 o;
    float2 scale;
    float2 frameDim;

    [NoDiffThis]
    float2 screenToWorld(float2 uv)
    {
        return ((uv / frameDim) * 2.0f - 1.0f) * scale + o;
    }
};

// Signed distance from p to the segment from a to b; the sign tells the side of the line a-b
// that p is on. Beyond an end it is the distance to that end.
[Differentiable]
[PreferRecompute]
float segment_distance(float2 a, float2 b, float2 p)
{
    float2 ab = b - a;
    float side = dot(float2(-ab.y, ab.x), p - a);
    if (dot(p - a, ab) < 0.f)
        return length(p - a) * sign(side);
    if (dot(p - b, a - b) < 0.f)
        return length(p - b) * sign(side);
    return side / length(float2(-ab.y, ab.x));
}

// Signed distance to the triangle a, b, c: a corner's distance where p lies outside both edges
// that meet there, else the largest edge distance (negative inside).
[Differentiable]
[PreferRecompute]
float triangle_distance(float2 p, float2 a, float2 b, float2 c)
{
    float to_ab = segment_distance(b, a, p);
    float to_bc = segment_distance(c, b, p);
    float to_ca = segment_distance(a, c, p);
    bool out_ab = to_ab > 0.f;
    bool out_bc = to_bc > 0.f;
    bool out_ca = to_ca > 0.f;
    if (out_ab && out_bc)
        return length(p - b);
    if (out_ab && out_ca)
        return length(p - a);
    if (out_bc && out_ca)
        return length(p - c);
    return max(max(to_ab, to_bc), to_ca);
}

// How much of the triangle covers p: a sigmoid of its signed distance, sigma wide.
[Differentiable]
[PreferRecompute]
float coverage(float2 p, float2 a, float2 b, float2 c, float sigma)
{
    return 1.0 / (1.0 + exp(triangle_distance(p, a, b, c) / sigma));
}

// One pixel: vertices is [3, 2], color [3], grid_cell the pixel (from spy.call_id()).
[Differentiable]
float3 rasterize_pixel(
    uniform Camera camera,
    ITensor<float, 2> vertices,
    ITensor<float, 1> color,
    float sigma,
    uint2 grid_cell)
{
    float2 corner[3];
    for (int k = 0; k < 3; k++)
        corner[k] = float2(vertices[k, 0], vertices[k, 1]);
    float3 paint = float3(color[0], color[1], color[2]);
    float2 world = camera.screenToWorld(float2(grid_cell) + 0.5);
    float hit = coverage(world, corner[0], corner[1], corner[2], sigma);
    return lerp(float3(1.0), paint, hit);  // white where the triangle does not cover
}
"""

# main() of the example without its plots: the same device, module, camera, target, learnable
# parameters, optimiser, preallocated image and step; `step` runs a few times.
RASTERIZER = f"""
import timeit
import torch
import shadegrad as spy

DEV = "{TEST_DEVICE}"
W, H = 1024, 1024

device = spy.create_torch_device({DEVICE})
module = spy.Module.load_from_file(device, "soft_rasterizer2d_itensor.slang")

camera = module.Camera(o=[0.0, 0.0], scale=[1.0, 1.0], frameDim=[float(W), float(H)])
sigma = 0.02

target_vertices = torch.tensor([[0.7, -0.3], [-0.3, 0.2], [-0.6, -0.6]], dtype=torch.float32, device=DEV)
target_color = torch.tensor([0.3, 0.8, 0.3], dtype=torch.float32, device=DEV)
target_img = module.rasterize_pixel(
    camera=camera,
    vertices=target_vertices,
    color=target_color,
    sigma=sigma,
    grid_cell=spy.grid((W, H)),
)

vertices = torch.tensor([[0.5, -0.5], [-0.5, 0.5], [-0.5, -0.5]], dtype=torch.float32, device=DEV,
                        requires_grad=True)
color = torch.tensor([0.8, 0.3, 0.3], dtype=torch.float32, device=DEV, requires_grad=True)
optim = torch.optim.Adam([vertices, color], lr=5e-3)

img = torch.empty((W, H, 3), dtype=torch.float32, device=DEV, requires_grad=True)
history = []


def step(i):
    global img
    optim.zero_grad()
    img = img.detach()

    start = timeit.default_timer()
    module.rasterize_pixel(
        camera=camera,
        vertices=vertices,
        color=color,
        sigma=sigma,
        grid_cell=spy.call_id(),
        _result=img,
    )
    end = timeit.default_timer()

    loss = torch.mean((img - target_img) ** 2)
    img.retain_grad()
    loss.backward()
    history.append(dict(loss=loss.item(), vertices=vertices.detach().clone(), color=color.detach().clone(),
                        d_vertices=vertices.grad.clone(), d_color=color.grad.clone(), img=img.detach().clone(),
                        img_grad=img.grad.detach().clone(), forward_s=end - start))
    optim.step()


for i in range(STEPS):
    step(i)
"""


def reference_image(vertices, color, W, H, sigma=0.02):
    """rasterize_pixel over a W x H grid in float64 torch (the same formulas, differentiable)."""
    vertices, color = vertices.double(), color.double()
    # The image is (W, H, 3); element [i, j] is grid_cell (j, i) (call_id and grid list the last
    # dim first, as SlangPy's vectors do), so its x is j / W and its y i / H.
    gi, gj = torch.meshgrid(torch.arange(W, dtype=torch.float64), torch.arange(H, dtype=torch.float64), indexing="ij")
    xy = torch.stack([(gj + 0.5) / W * 2 - 1, (gi + 0.5) / H * 2 - 1], dim=-1)  # camera: o 0, scale 1

    def dist_vertex(p, v):
        return torch.linalg.norm(p - v, dim=-1)

    def dist_edge(u, v, pt):
        e = v - u
        n = torch.stack([-e[1], e[0]])
        n_dot_d = ((pt - u) * n).sum(-1)
        first = ((pt - u) * (v - u)).sum(-1) < 0
        second = ((pt - v) * (u - v)).sum(-1) < 0
        inner = n_dot_d / torch.linalg.norm(n)
        return torch.where(first, dist_vertex(pt, u) * torch.sign(n_dot_d),
                           torch.where(second, dist_vertex(pt, v) * torch.sign(n_dot_d), inner))

    v1, v2, v3 = vertices[0], vertices[1], vertices[2]
    d1, d2, d3 = dist_edge(v2, v1, xy), dist_edge(v3, v2, xy), dist_edge(v1, v3, xy)
    s1, s2, s3 = torch.sign(d1) > 0, torch.sign(d2) > 0, torch.sign(d3) > 0
    d = torch.where(s1 & s2, dist_vertex(xy, v2),
                    torch.where(s1 & s3, dist_vertex(xy, v1),
                                torch.where(s2 & s3, dist_vertex(xy, v3), torch.maximum(torch.maximum(d1, d2), d3))))
    hit = (1.0 / (1.0 + torch.exp(d / sigma)))[..., None]
    return hit * color + (1.0 - hit)


def diff_kernel() -> str:
    """The kernel with its two learnable inputs declared IDiffTensor (slang-torch's original, which
    the example ports, takes them as DiffTensorView): the one change that gives them gradients."""
    return (RASTERIZER_SLANG.replace("ITensor<float, 2> vertices", "IDiffTensor<float, 2> vertices")
            .replace("ITensor<float, 1> color", "IDiffTensor<float, 1> color"))


def check_image_and_its_gradient(s, h):
    W, H = s["W"], s["H"]
    ref_img = reference_image(h["vertices"].cpu(), h["color"].cpu(), W, H)
    torch.testing.assert_close(h["img"].cpu().double(), ref_img, atol=2e-5, rtol=0)
    # img.grad, which the example plots, is d loss / d img.
    target32 = s["target_img"].detach().cpu().double()
    torch.testing.assert_close(h["img_grad"].cpu().double(), 2 * (h["img"].cpu().double() - target32) / (W * H * 3),
                               atol=1e-12, rtol=1e-4)


def test_soft_rasterizer_pytorch_as_published(tmp_path, monkeypatch):
    # The published kernel reads vertices and color through ITensor, a read-only tensor: SlangPy
    # binds it as a primal Tensor, so they get no gradient there, and none here (docs/autograd.md):
    # the image is right, img is in the graph (img.retain_grad() and img.grad work), and Adam has
    # nothing to move.
    s = run_program(tmp_path, monkeypatch, {"soft_rasterizer2d_itensor.slang": RASTERIZER_SLANG},
                    RASTERIZER.replace("range(STEPS)", "range(2)").replace(
                        "d_vertices=vertices.grad.clone(), d_color=color.grad.clone()",
                        "d_vertices=vertices.grad, d_color=color.grad"), prologue="")
    W, H = s["W"], s["H"]
    target = reference_image(torch.tensor([[0.7, -0.3], [-0.3, 0.2], [-0.6, -0.6]]), torch.tensor([0.3, 0.8, 0.3]), W, H)
    assert s["target_img"].shape == (W, H, 3)
    torch.testing.assert_close(s["target_img"].cpu().double(), target, atol=2e-5, rtol=0)
    for h in s["history"]:
        check_image_and_its_gradient(s, h)
        assert h["d_vertices"] is None and h["d_color"] is None
    assert s["history"][0]["loss"] == s["history"][1]["loss"]


def test_soft_rasterizer_pytorch_learns(tmp_path, monkeypatch):
    steps = 4
    s = run_program(tmp_path, monkeypatch, {"soft_rasterizer2d_itensor.slang": diff_kernel()},
                    RASTERIZER.replace("range(STEPS)", f"range({steps})"), prologue="")
    W, H = s["W"], s["H"]
    history = s["history"]
    assert len(history) == steps
    target32 = s["target_img"].detach().cpu().double()
    for h in history:
        check_image_and_its_gradient(s, h)
        # The parameters' gradients: torch autograd through the float64 formulas.
        ref_v = h["vertices"].cpu().double().requires_grad_(True)
        ref_c = h["color"].cpu().double().requires_grad_(True)
        loss = torch.mean((reference_image(ref_v, ref_c, W, H) - target32) ** 2)
        assert h["loss"] == pytest.approx(loss.item(), rel=1e-4)
        g_v, g_c = torch.autograd.grad(loss, (ref_v, ref_c))
        torch.testing.assert_close(h["d_vertices"].cpu().double(), g_v, rtol=2e-3, atol=1e-7)
        torch.testing.assert_close(h["d_color"].cpu().double(), g_c, rtol=2e-3, atol=1e-7)
    # The loss falls as Adam moves the triangle towards the target.
    losses = [h["loss"] for h in history]
    assert all(b < a for a, b in zip(losses, losses[1:])), losses


def test_soft_rasterizer_gradients_match_finite_differences(tmp_path, monkeypatch):
    # A smaller image, the first step only: each parameter's gradient of the loss against
    # central differences of the float64 formulas.
    program = RASTERIZER.replace("range(STEPS)", "range(1)").replace("W, H = 1024, 1024", "W, H = 64, 48")
    s = run_program(tmp_path, monkeypatch, {"soft_rasterizer2d_itensor.slang": diff_kernel()}, program, prologue="")
    h = s["history"][0]
    target32 = s["target_img"].detach().cpu().double()
    v0, c0 = h["vertices"].cpu().double(), h["color"].cpu().double()

    def loss_at(v, c):
        return torch.mean((reference_image(v, c, 64, 48) - target32) ** 2).item()

    eps = 1e-6
    for got, base, which in ((h["d_vertices"], v0, "v"), (h["d_color"], c0, "c")):
        fd = torch.zeros_like(base)
        for idx in np.ndindex(*base.shape):
            plus, minus = base.clone(), base.clone()
            plus[idx] += eps
            minus[idx] -= eps
            args_p = (plus, c0) if which == "v" else (v0, plus)
            args_m = (minus, c0) if which == "v" else (v0, minus)
            fd[idx] = (loss_at(*args_p) - loss_at(*args_m)) / (2 * eps)
        torch.testing.assert_close(got.cpu().double(), fd, rtol=5e-3, atol=1e-6)
