# tests/python/test_torch_compile.py — torch.compile over shadegrad calls (CPU backend): a compiled
# training step matches eager in values and gradients with fullgraph=True (no graph break), with
# dynamic shapes without recompiling, and the eager cached call still runs no Python afterwards.
import pytest
import torch
import torch._dynamo
from mul2_kernels import python_frames_during  # bench/, put on sys.path by conftest.py
from torch._dynamo.testing import CompileCounterWithBackend

from conftest import run_python

# These run on every torch the project meets (2.13 in CI, 2.11 on the H200 image): Dynamo traces a
# Function call through the Python stand-in found as `Function.__call__` on the class
# (docs/torch_compile.md, "Torch versions").

SOURCE = """
import slangpy;

[Differentiable]
float mul2(no_diff int2 pix, IDiffTensor<float, 2> a, IDiffTensor<float, 2> b)
{
    return a[uint2(pix.x, pix.y)] * b[uint2(pix.x, pix.y)];
}

[Differentiable]
float poly(float x, float w, no_diff int k)
{
    return w * x * x + float(k) * x;
}

[Differentiable]
float3 scale3(float3 v, float s)
{
    return v * s;
}

float index_of(int i)
{
    return float(i);
}

void set_first(RWTensor<float, 1> t)
{
    t[0] = 1.0;
}
"""


@pytest.fixture(scope="module")
def m(sg, cpu_device):
    return sg.Module.load_from_source(cpu_device, "compiled", SOURCE)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def training_step(sg, m):
    def step(x, w, target):
        y = m.poly(x, w, 3)
        z = m.mul2(sg.grid(x.shape), y, w)
        v = m.scale3(torch.stack([x, w, z], -1), 0.5)
        return ((v.sum(-1) - target) ** 2).mean()

    return step


def eager_and_compiled(step, compiled, *shapes_and_seeds):
    """Values and gradients of x and w from both, per shape."""
    out = []
    for shape, seed in shapes_and_seeds:
        gen = torch.Generator().manual_seed(seed)
        x = torch.rand(shape, generator=gen, requires_grad=True)
        w = torch.rand(shape, generator=gen, requires_grad=True)
        target = torch.rand(shape, generator=gen)
        results = []
        for fn in (step, compiled):
            x.grad = w.grad = None
            loss = fn(x, w, target)
            loss.backward()
            results.append((loss.detach(), x.grad.clone(), w.grad.clone()))
        out.append(results)
    return out


def assert_close(results):
    for (eager, compiled) in results:
        for a, b in zip(eager, compiled):
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)


def test_compiled_training_step_matches_eager_inductor(sg, m):
    step = training_step(sg, m)
    compiled = torch.compile(step, fullgraph=True)
    assert_close(eager_and_compiled(step, compiled, ((6, 5), 0)))


def test_compiled_loss_in_an_optimizer_loop_matches_eager(sg, m):
    # What docs/getting_started.md says works: the loss compiled with fullgraph=True, the
    # optimizer's zero_grad/step and backward() outside it (inside, torch itself refuses).
    loss_fn = training_step(sg, m)
    compiled = torch.compile(loss_fn, fullgraph=True, backend="aot_eager")
    gen = torch.Generator().manual_seed(3)
    x0, w0, target = (torch.rand(4, 6, generator=gen) for _ in range(3))
    finals = []
    for fn in (loss_fn, compiled):
        x = x0.clone().requires_grad_(True)
        w = w0.clone().requires_grad_(True)
        opt = torch.optim.Adam([x, w], lr=0.05)
        for _ in range(4):
            opt.zero_grad()
            loss = fn(x, w, target)
            loss.backward()
            opt.step()
        finals.append((loss.detach(), x.detach(), w.detach()))
    for a, b in zip(*finals):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    assert not torch.equal(finals[1][1], x0)  # the optimizer moved it


def test_no_diff_and_read_only_tensors_get_none_under_compile(sg, cpu_device):
    # As in eager mode (test_no_gradient.py): no gradient, and no zero-filled one, for them.
    nd = sg.Module.load_from_source(
        cpu_device,
        "compiled_no_diff",
        "import slangpy;\n[Differentiable]\n"
        "float mixc(float x, no_diff float s, ITensor<float, 1> t) { return x * s + x * t[0]; }",
    )
    compiled = torch.compile(lambda x, s, t: nd.mixc(x, s, t=t).sum(), fullgraph=True, backend="aot_eager")
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    t = torch.tensor([1.5, 7.0], requires_grad=True)
    compiled(x, s, t).backward()
    assert s.grad is None and t.grad is None
    torch.testing.assert_close(x.grad, s.detach() + 1.5)


OVERLOADED_NO_DIFF = """import slangpy;
[Differentiable] float mixo(float x, no_diff float s) { return x * s; }
[Differentiable] float mixo(float x, no_diff float s, float w) { return x * s + w; }
[Differentiable] T mixg<T : IFloat>(T x, no_diff T s, ITensor<T, 1> t) { return x * s + x * t[0]; }
struct Scaler {
    [Differentiable] static float apply(float x, no_diff float s) { return x * s * 2.0; }
};
"""


def test_overloaded_generic_and_method_functions_give_none_for_no_diff_under_compile(sg, cpu_device):
    # The binding decides which parameter a tensor reaches (the overload, the generic instance,
    # a struct's function), and with it whether the tensor gets a gradient: None, as in eager.
    nd = sg.Module.load_from_source(cpu_device, "compiled_no_diff_overloads", OVERLOADED_NO_DIFF)
    apply = nd.Scaler.apply
    x0, s0, w0, t0 = [1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [0.25, 0.5, 0.75], [1.5, 7.0]
    cases = [
        (lambda x, s, w, t: nd.mixo(x, s).sum(), [0.5, -1.0, 2.0], None),
        (lambda x, s, w, t: nd.mixo(x, s, w).sum(), [0.5, -1.0, 2.0], [1.0, 1.0, 1.0]),
        (lambda x, s, w, t: nd.mixg(x, s, t).sum(), [2.0, 0.5, 3.5], None),
        (lambda x, s, w, t: apply(x, s=s).sum(), [1.0, -2.0, 4.0], None),
    ]
    for number, (step, want_x, want_w) in enumerate(cases):
        for run in ("eager", "compiled"):
            x, s, w, t = (torch.tensor(v, requires_grad=True) for v in (x0, s0, w0, t0))
            fn = step if run == "eager" else torch.compile(step, fullgraph=True, backend="aot_eager")
            fn(x, s, w, t).backward()
            where = f"case {number} ({run})"
            assert s.grad is None, where
            assert t.grad is None, where
            torch.testing.assert_close(x.grad, torch.tensor(want_x), msg=where)
            if want_w is None:
                assert w.grad is None, where
            else:
                torch.testing.assert_close(w.grad, torch.tensor(want_w), msg=where)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_dynamic_shapes_compile_once(sg, m, backend):
    step = training_step(sg, m)
    counter = CompileCounterWithBackend(backend)
    compiled = torch.compile(step, fullgraph=True, dynamic=True, backend=counter)
    assert_close(eager_and_compiled(step, compiled, ((4, 5), 1), ((7, 3), 2), ((2, 9), 3)))
    assert counter.frame_count == 1, f"{counter.frame_count} compiles for three shapes"


def test_inputs_without_grad_get_none_and_int_arguments_stay_symbolic(sg, m):
    counter = CompileCounterWithBackend("aot_eager")

    def step(x, w, k):
        return m.poly(x=x, w=w, k=k).sum()

    compiled = torch.compile(step, fullgraph=True, dynamic=True, backend=counter)
    x = torch.rand(8, requires_grad=True)
    w = torch.rand(8)
    for k in (2, 5):
        x.grad = None
        compiled(x, w, k).backward()
        torch.testing.assert_close(x.grad, 2 * w * x.detach() + k)
        assert w.grad is None
    assert counter.frame_count == 1


def test_grid_made_outside_the_compiled_function(sg, m):
    grid = sg.grid((3, 4))
    a = torch.rand(3, 4, requires_grad=True)
    b = torch.rand(3, 4)
    compiled = torch.compile(lambda a, b: m.mul2(grid, a, b), fullgraph=True, backend="aot_eager")
    out = compiled(a, b)
    torch.testing.assert_close(out, a.detach() * b)
    out.sum().backward()
    torch.testing.assert_close(a.grad, b)


def test_grid_stride_and_offset(sg, m):
    counter = CompileCounterWithBackend("aot_eager")
    inside = torch.compile(lambda n: m.index_of(sg.grid((n,), stride=2, offset=1)), fullgraph=True, dynamic=True,
                           backend=counter)
    for n in (4, 6):
        torch.testing.assert_close(inside(n), 1.0 + 2.0 * torch.arange(n, dtype=torch.float32))
    assert counter.frame_count == 1
    grid = sg.grid((3,), offset=5)
    outside = torch.compile(lambda: m.index_of(grid), fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(outside(), torch.tensor([5.0, 6.0, 7.0]))


def test_eager_calls_stay_off_the_custom_operator(sg, m):
    step = training_step(sg, m)
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    x = torch.rand(4, 4, requires_grad=True)
    compiled(x, torch.rand(4, 4), torch.rand(4, 4)).backward()
    if sg.torch_bridge_status()["active"] != "native":
        pytest.skip("the Python fallback bridge runs Python on every call")
    grid, a, b = sg.grid((4, 4)), torch.rand(4, 4, requires_grad=True), torch.rand(4, 4)
    m.mul2(grid, a, b)
    frames = python_frames_during(m, "mul2", (grid, a, b), 50)
    assert not frames, f"eager calls entered Python after torch.compile: {frames[:5]}"


def test_custom_operator_passes_opcheck(sg, m):
    layout = "t,t,i"
    args = (id(m.poly), layout, [torch.rand(5, requires_grad=True), torch.rand(5, requires_grad=True)], [2], [])
    torch.library.opcheck(torch.ops.shadegrad.call.default, args)


def test_unsupported_calls_say_so(sg, m):
    def write(t):
        m.set_first(t)
        return t

    with pytest.raises(Exception, match="not supported yet under torch.compile"):
        torch.compile(write, fullgraph=True, backend="aot_eager")(torch.zeros(3))
    with pytest.raises(Exception, match="not supported yet"):
        torch.compile(lambda x: m.poly(x, [1.0], 2), fullgraph=True, backend="aot_eager")(torch.zeros(3))
    mapped = m.poly.map((0,), (0,))
    with pytest.raises(Exception, match="modifiers .* not supported yet under torch.compile"):
        torch.compile(lambda x: mapped(x, x, 2), fullgraph=True, backend="aot_eager")(torch.zeros(3))


def test_fallback_bridge_in_a_fresh_process():
    # Also checks the lazy registration: torch._dynamo is imported after shadegrad here.
    proc = run_python(
        """
        import sys
        import torch, shadegrad as sg
        assert "torch._dynamo" not in sys.modules
        m = sg.Module.load_from_source(sg.create_device(), "f", "[Differentiable] float sq(float x) { return x * x; }")
        step = torch.compile(lambda x: m.sq(x).sum(), fullgraph=True, dynamic=True, backend="aot_eager")
        for n in (3, 7):
            x = torch.rand(n, requires_grad=True)
            step(x).backward()
            assert torch.allclose(x.grad, 2 * x.detach()), (x.grad, x)
        print(sg.torch_bridge_status()["active"])
        """,
        bridge="fallback",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "fallback"


def test_tracers_see_a_python_call_while_calls_keep_the_c_slot(sg, m):
    # Dynamo inlines what the class's dict holds as __call__ (a Python function); calls use the C
    # slot (test_no_python_on_hot_path.py), and an explicit fn.__call__ outside torch.compile runs
    # the call as the slot does.
    import inspect
    import types

    assert isinstance(inspect.getattr_static(type(m.poly), "__call__"), types.FunctionType)
    x = torch.rand(5, requires_grad=True)
    w = torch.rand(5)
    y = m.poly.__call__(x, w, 3)
    torch.testing.assert_close(y, m.poly(x, w, 3))
    y.sum().backward()
    torch.testing.assert_close(x.grad, 2 * w * x.detach() + 3)
