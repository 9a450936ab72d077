# tests/python/test_conformance.py — the shared conformance kernels through the Python call API
# on the CPU backend: values and gradients against the hand-computed figures in each file's
# header (// call: ... and // bwd: ... lines), vectorized over tensors of those values.
import re
import textwrap

import pytest
import torch

from conftest import TEST_DEVICE, conformance_source, run_python

REL = 1e-5


def parse_cases(source: str):
    """[(fn, {arg: value}, result or None, {arg: grad} or None, dresult)] from the header lines."""
    cases = []
    for line in source.splitlines():
        m = re.match(r"//\s*call:\s*(\w+)\((.*)\)\s*->\s*(.+)$", line)
        if m:
            args = {}
            for part in re.findall(r"(\w+)=([-\d.e]+)", m.group(2)):
                args[part[0]] = float(part[1]) if "." in part[1] or "e" in part[1] else int(part[1])
            result = m.group(3).strip()
            cases.append([m.group(1), args, result, None, None])
            continue
        m = re.match(r"//\s*bwd:\s*dresult=([-\d.]+)\s*->\s*(.+)$", line)
        if m and cases:
            grads = {k: float(v) for k, v in re.findall(r"(\w+)=([-\d.e]+)", m.group(2))}
            cases[-1][3] = grads
            cases[-1][4] = float(m.group(1))
    return cases


def run_case(sg, device, source, fn, args, result, grads, dresult, n=4):
    m = sg.Module.load_from_source(device, "conformance", source)
    kwargs = {}
    tensors = {}
    for name, value in args.items():
        if isinstance(value, float) or (grads and name in grads):
            t = torch.full((n,), float(value), dtype=torch.float32, device=TEST_DEVICE)
            t.requires_grad_(bool(grads and name in grads))
            tensors[name] = t
            kwargs[name] = t
        else:
            kwargs[name] = value  # integers go in as Python ints (uniforms)
    out = getattr(m, fn)(**kwargs)
    expected = float(result)
    assert out.shape == (n,)
    torch.testing.assert_close(out.detach().cpu(), torch.full((n,), expected), rtol=REL, atol=1e-6)
    if grads:
        out.backward(torch.full((n,), dresult, device=TEST_DEVICE))
        for name, g in grads.items():
            torch.testing.assert_close(tensors[name].grad.cpu(), torch.full((n,), g), rtol=REL, atol=1e-6)
    return m


@pytest.mark.parametrize("name", ["T01", "T10", "T11"])
def test_scalar_kernels(sg, device, name):
    source = conformance_source(name)
    cases = parse_cases(source)
    assert cases, f"{name} has no call lines"
    for fn, args, result, grads, dresult in cases:
        run_case(sg, device, source, fn, args, result, grads, dresult)


def test_t17_switch_and_do_while(sg, device):
    # The scalar functions of T17 (a switch on an int uniform, a differentiated do-while); its
    # vector cases (typealias, write swizzles) run in the C++ conformance tests.
    source = conformance_source("tier2/T17")
    cases = [c for c in parse_cases(source) if c[0] in ("piece", "halve3")]
    assert len(cases) == 4
    for fn, args, result, grads, dresult in cases:
        run_case(sg, device, source, fn, args, result, grads, dresult)


def test_t11_has_no_gradient_storage_for_integers(sg, device):
    m = sg.Module.load_from_source(device, "t11", conformance_source("T11"))
    a = torch.ones(4, device=TEST_DEVICE, requires_grad=True)
    b = torch.full((4,), 5.0, device=TEST_DEVICE, requires_grad=True)
    code = m.ramp.debug_code(a=a, b=b, i=1, n=8)
    glue = code.split("// ---- backward glue (kernel language)")[1].split("// ---- backward kernel")[0]
    assert "_p_a_grad" in glue and "_p_b_grad" in glue
    assert "_p_i_grad" not in glue and "_p_n_grad" not in glue
    assert "int _p_i" in glue and "int _p_n" in glue


def test_t01_against_torch_and_finite_differences(sg, device):
    m = sg.Module.load_from_source(device, "t01", conformance_source("T01"))
    x = torch.linspace(-3, 3, 101, device=TEST_DEVICE, requires_grad=True)
    y = m.f(x)
    ref = x.detach() * x.detach() * torch.sin(x.detach())
    torch.testing.assert_close(y.detach(), ref, rtol=1e-6, atol=1e-6)
    y.sum().backward()
    xd = x.detach().double()
    fd = ((xd + 1e-6) ** 2 * torch.sin(xd + 1e-6) - (xd - 1e-6) ** 2 * torch.sin(xd - 1e-6)) / 2e-6
    torch.testing.assert_close(x.grad.double(), fd, rtol=1e-5, atol=1e-5)


def test_t01_gradcheck_float64(sg, device):
    # The T01 function in double precision: gradcheck needs float64 end to end.
    source = conformance_source("T01").replace("float", "double")
    m = sg.Module.load_from_source(device, "t01d", source)
    x = torch.randn(7, dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: m.f(t), (x,), eps=1e-6, atol=1e-8)
    x2 = torch.randn(3, 4, dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: m.f(t), (x2,), eps=1e-6, atol=1e-8)


T02_CASE = textwrap.dedent(
    """
    def case(m, sg, torch, ra, rb):
        a = torch.tensor([1.0, 2.0, 3.0], device=DEVICE, requires_grad=ra)
        b = torch.tensor([4.0, 5.0, 6.0], device=DEVICE, requires_grad=rb)
        o = torch.zeros(3, device=DEVICE)
        m.emul(sg.grid((3,)), a, b, o)
        assert torch.equal(o.detach().cpu(), torch.tensor([4.0, 10.0, 18.0])), o
        if not (ra or rb):
            assert o.grad_fn is None, "no input requires grad, yet o has an autograd node"
            return
        o.backward(torch.tensor([1.0, 0.5, 2.0], device=DEVICE))
        if ra:
            assert torch.equal(a.grad.cpu(), torch.tensor([4.0, 2.5, 12.0])), a.grad
        else:
            assert a.grad is None
        if rb:
            assert torch.equal(b.grad.cpu(), torch.tensor([1.0, 1.0, 6.0])), b.grad
        else:
            assert b.grad is None
    """
)


def _t02_program(body: str) -> str:
    return (
        "import torch\nimport shadegrad as sg\n"
        + f"DEVICE = {TEST_DEVICE!r}\n"
        + T02_CASE
        + f"m = sg.Module.load_from_source(sg.create_torch_device(type=sg.DeviceType.{TEST_DEVICE}), 't02', {conformance_source('T02')!r})\n"
        + textwrap.dedent(body)
        + "\nprint('ok')\n"
    )


@pytest.mark.parametrize("bridge", ["native", "fallback"])
@pytest.mark.parametrize("ra,rb", [(False, False), (True, False), (False, True), (True, True)])
def test_t02_fresh_process(bridge, ra, rb):
    proc = run_python(_t02_program(f"case(m, sg, torch, {ra}, {rb})"), bridge)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.parametrize("bridge", ["native", "fallback"])
def test_t02_sequence(bridge):
    body = """
    for ra, rb in [(False, False), (True, False), (False, True), (True, True), (False, False), (True, True)]:
        case(m, sg, torch, ra, rb)
    """
    proc = run_python(_t02_program(body), bridge)
    assert proc.returncode == 0, proc.stderr
