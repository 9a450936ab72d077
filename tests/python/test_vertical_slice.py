# tests/python/test_vertical_slice.py — the scenario SlangPy crashed on: a differentiable kernel
# on two tensors, with every combination of requires_grad, on both torch bridges, in fresh
# processes and in one process over the cached path. Gradients must be exact.
import textwrap

import pytest

from conftest import TEST_DEVICE, native_bridge_available, native_bridge_built, run_python

MUL2 = """
import slangpy;
[Differentiable]
float mul2(no_diff int2 pix, IDiffTensor<float, 2> a, IDiffTensor<float, 2> b)
{
    return a[uint2(pix.x, pix.y)] * b[uint2(pix.x, pix.y)];
}
"""

# One case per call: builds tensors, calls, checks forward, backward and the gradients exactly.
CASE = textwrap.dedent(
    '''
    def case(m, sg, torch, ra, rb, H=33, W=47, k=3.0):
        a = torch.rand(H, W, device=DEVICE).requires_grad_(ra)
        b = torch.rand(H, W, device=DEVICE).requires_grad_(rb)
        out = m.mul2(sg.grid((H, W)), a, b)
        assert out.shape == (H, W), out.shape
        assert torch.equal(out.detach(), (a * b).detach()), "forward differs from a * b"
        if not (ra or rb):
            assert out.grad_fn is None, "no input requires grad, yet an autograd node exists"
            assert not out.requires_grad
            return
        assert out.grad_fn is not None
        (out * k).sum().backward()
        if ra:
            assert torch.equal(a.grad, k * b.detach()), "a.grad != k * b"
        else:
            assert a.grad is None
        if rb:
            assert torch.equal(b.grad, k * a.detach()), "b.grad != k * a"
        else:
            assert b.grad is None
    '''
)

PRELUDE = (
    "import torch\nimport shadegrad as sg\n"
    + f"DEVICE = {TEST_DEVICE!r}\n"
    + CASE
    + f"\nSRC = {MUL2!r}\n"
    + f"dev = sg.create_torch_device(type=sg.DeviceType.{TEST_DEVICE})\n"
    + "m = sg.Module.load_from_source(dev, 'm', SRC)\n"
)

BRIDGES = ["native", "fallback"]


def _check_bridge(bridge):
    if bridge == "native" and not native_bridge_built():
        pytest.skip("the native torch bridge is not built in this installation")
    if bridge == "native" and not native_bridge_available():
        pytest.fail("the native torch bridge is not active; it must be built with the package")


@pytest.mark.parametrize("bridge", BRIDGES)
@pytest.mark.parametrize("ra,rb", [(False, False), (True, False), (False, True), (True, True)])
def test_fresh_process(bridge, ra, rb):
    _check_bridge(bridge)
    code = PRELUDE + f"assert sg.torch_bridge_status()['active'] == {bridge!r}, sg.torch_bridge_status()\n"
    code += f"case(m, sg, torch, {ra}, {rb})\nprint('ok')\n"
    proc = run_python(code, bridge)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.parametrize("bridge", BRIDGES)
def test_sequence_in_one_process(bridge):
    _check_bridge(bridge)
    # none, a, b, both, none, both — twice over, so the second round runs on cached plans.
    code = PRELUDE + textwrap.dedent(
        """
        seq = [(False, False), (True, False), (False, True), (True, True), (False, False), (True, True)]
        for _ in range(2):
            for ra, rb in seq:
                case(m, sg, torch, ra, rb)
        # one plan per (grad mask, grad mode) class seen: none, a, b, both
        assert m.mul2.plan_count == 4, m.mul2.plan_count
        print('ok')
        """
    )
    proc = run_python(code, bridge)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.parametrize("bridge", BRIDGES)
def test_slangpy_names(bridge):
    """The same program with `import shadegrad as spy` and SlangPy's names."""
    _check_bridge(bridge)
    code = textwrap.dedent(
        f"""
        import torch
        import shadegrad as spy
        device = spy.create_torch_device(type=spy.DeviceType.{TEST_DEVICE})
        module = spy.Module.load_from_source(device, "m", {MUL2!r})
        a = torch.rand(8, 9, device={TEST_DEVICE!r}, requires_grad=True)
        b = torch.rand(8, 9, device={TEST_DEVICE!r})
        out = module.mul2(spy.grid((8, 9)), a, b)
        out.sum().backward()
        assert torch.equal(a.grad, b)
        assert b.grad is None
        print('ok')
        """
    )
    proc = run_python(code, bridge)
    assert proc.returncode == 0, proc.stderr


def test_no_grad_mode_has_no_node(sg, device):
    import torch

    m = sg.Module.load_from_source(device, "m", MUL2)
    a = torch.rand(4, 4, device=TEST_DEVICE, requires_grad=True)
    b = torch.rand(4, 4, device=TEST_DEVICE, requires_grad=True)
    with torch.no_grad():
        out = m.mul2(sg.grid((4, 4)), a, b)
    assert out.grad_fn is None
    # ...and the next call with grad mode on gets a node again (the grad bit is in the key).
    out = m.mul2(sg.grid((4, 4)), a, b)
    assert out.grad_fn is not None
    with torch.inference_mode():
        out = m.mul2(sg.grid((4, 4)), a, b)
    assert out.grad_fn is None


def test_backward_kernel_has_no_gradient_for_inputs_outside_the_mask(sg, device):
    import torch

    m = sg.Module.load_from_source(device, "m", MUL2)
    a = torch.rand(4, 4, device=TEST_DEVICE, requires_grad=True)
    b = torch.rand(4, 4, device=TEST_DEVICE)
    code = m.mul2.debug_code(sg.grid((4, 4)), a, b)
    bwd_glue = code.split("// ---- backward glue (kernel language)")[1].split("// ---- backward kernel")[0]
    assert "DiffTensor<float, 2> _p_a" in bwd_glue
    assert "PrimalTensor<float, 2> _p_b" in bwd_glue
    # The generated backward kernel binds a gradient buffer for a only, and writes only there.
    bwd_kernel = code.split("// ---- backward kernel")[1]
    assert "sg_diff_tensor<float, 2> u__p_a;" in bwd_kernel
    assert "sg_tensor<float, 2> u__p_b;" in bwd_kernel
    # (mul2 reads a only at the call element's own index: its gradient is stored, with no zero
    # fill; src/codegen/stored_grads.cpp)
    assert "sg_grad_store(P.u__p_a" in bwd_kernel
    assert "u__p_b.grad" not in bwd_kernel and "sg_grad_add(P.u__p_b" not in bwd_kernel
    assert "sg_grad_store(P.u__p_b" not in bwd_kernel
    assert "sg_grad_add_chunk(P.u__p_b" not in bwd_kernel and "sg_chunk_table_final(P.header, P.u__p_b" not in bwd_kernel
    assert "sg_grad_add_private(P.u__p_b" not in bwd_kernel and "sg_private_flush(params.u__p_b" not in bwd_kernel
    # mask b only: the roles swap
    code = m.mul2.debug_code(sg.grid((4, 4)), b, a)
    bwd_glue = code.split("// ---- backward glue (kernel language)")[1].split("// ---- backward kernel")[0]
    assert "PrimalTensor<float, 2> _p_a" in bwd_glue
    assert "DiffTensor<float, 2> _p_b" in bwd_glue
    # neither: no backward at all
    code = m.mul2.debug_code(sg.grid((4, 4)), b, b)
    assert "backward" not in code
