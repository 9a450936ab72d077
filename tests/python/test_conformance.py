# tests/python/test_conformance.py — the shared conformance kernels through the Python call API
# on the CPU backend: values and gradients against the hand-computed figures in each file's
# header (// call: ... and // bwd: ... lines), vectorized over tensors of those values.
import re
import textwrap

import pytest
import torch

from conftest import CONFORMANCE, TEST_DEVICE, conformance_source, run_python

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


# ---------------------------------------------------------------- through the value API and .bwds


def parse_value(text: str):
    """A // call: argument: a number, a (tuple) for a vector, a {name=value, ...} for a struct."""
    text = text.strip()
    if text.startswith("("):
        return tuple(parse_value(p) for p in _split(text[1:-1]))
    if text.startswith("{"):
        return {k.strip(): parse_value(v) for k, v in (p.split("=", 1) for p in _split(text[1:-1]))}
    return float(text) if any(c in text for c in ".e") else int(text)


def _split(text: str):
    parts, depth, cur = [], 0, ""
    for c in text:
        if c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur)
    return parts


def all_cases():
    """(file, fn, args, result, {path: grad}, dresult) for every // call: line with a plain result,
    in the tier-1 files and in tier2/."""
    out = []
    for path in sorted(CONFORMANCE.glob("T*.slang")) + sorted(CONFORMANCE.glob("tier2/T*.slang")):
        lines = path.read_text().splitlines()
        name = path.name[:3] if path.parent == CONFORMANCE else f"{path.parent.name}/{path.name[:3]}"
        for i, line in enumerate(lines):
            m = re.match(r"//\s*call:\s*(\w+)\((.*)\)\s*->\s*(.+)$", line)
            if not m or "=" in m.group(3):
                continue  # out-parameter results (T08) have their own test
            args = {k.strip(): parse_value(v) for k, v in (p.split("=", 1) for p in _split(m.group(2)))}
            grads, dresult = None, None
            if i + 1 < len(lines):
                b = re.match(r"//\s*bwd:\s*dresult=([-\d.]+)\s*->\s*(.+)$", lines[i + 1])
                if b:
                    dresult = float(b.group(1))
                    grads = {k.strip(): parse_value(v) for k, v in (p.split("=", 1) for p in _split(b.group(2)))}
            out.append((name, m.group(1), args, parse_value(m.group(3)), grads, dresult))
    return out


def to_value(sg, v, type_name=""):
    """A header value as a Python call argument: a tuple is a value type (sg.float3), or a list
    where the parameter is an array (`float[N] x`)."""
    if isinstance(v, tuple):
        if "[" in type_name:
            return [float(x) for x in v]
        return getattr(sg, f"float{len(v)}")(*v)
    if isinstance(v, dict):
        return {k: to_value(sg, x) for k, x in v.items()}
    return v


def approx_equal(actual, expected, rel=1e-5):
    if isinstance(expected, tuple):
        return all(approx_equal(a, e, rel) for a, e in zip(list(actual), expected)) and len(list(actual)) == len(expected)
    return actual == pytest.approx(expected, rel=rel, abs=1e-6)


CASES = all_cases()
CASE_IDS = [f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)]


def test_every_conformance_file_with_cases_is_covered():
    files = {c[0] for c in CASES}
    assert {"T01", "T03", "T04", "T05", "T06", "T07", "T09", "T10", "T11"} <= files, files
    assert {"tier2/T13", "tier2/T14", "tier2/T15", "tier2/T16", "tier2/T17"} <= files, files
    # Every // call: line of tier 2 runs (none has an out-parameter result).
    for name in ("T13", "T14", "T15", "T16", "T17"):
        lines = [l for l in conformance_source(f"tier2/{name}").splitlines() if re.match(r"//\s*call:", l)]
        assert len(lines) == sum(1 for c in CASES if c[0] == f"tier2/{name}"), name


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_case_through_python_values_and_bwds(sg, device, case):
    name, fn, args, result, grads, dresult = case
    m = sg.Module.load_from_source(device, name.replace("/", "_"), conformance_source(name))
    f = getattr(m, fn)
    types = {p[0]: p[2] for p in f.parameters}
    out = f(**{k: to_value(sg, v, types.get(k, "")) for k, v in args.items()})
    assert approx_equal(out, result), (out, result)
    if grads is None:
        return
    pairs = {}

    def wrap(path, v):
        if isinstance(v, dict):
            return {k: wrap(f"{path}.{k}", x) for k, x in v.items()}
        if path in grads:
            pairs[path] = sg.diffPair(to_value(sg, v, types.get(path, "")))
            return pairs[path]
        return to_value(sg, v, types.get(path, ""))

    call_args = {k: wrap(k, v) for k, v in args.items()}
    f.bwds(**call_args, _result_grad=dresult)
    for path, g in grads.items():
        assert approx_equal(pairs[path].grad, g, rel=1e-4), (path, pairs[path].grad, g)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_case_through_tensors_and_autograd(sg, device, case, n=3):
    """The same case vectorized over n threads: every float (and every value with a gradient) is a
    tensor of n copies, integers without gradients are Python ints; gradients through torch."""
    name, fn, args, result, grads, dresult = case
    m = sg.Module.load_from_source(device, name.replace("/", "_"), conformance_source(name))
    tensors = {}

    def build(path, v):
        if isinstance(v, dict):
            return {k: build(f"{path}.{k}", x) for k, x in v.items()}
        if isinstance(v, int) and not (grads and path in grads):
            return v
        data = torch.tensor([float(x) for x in v] if isinstance(v, tuple) else float(v), dtype=torch.float32)
        t = data.expand(n, *data.shape).clone().to(TEST_DEVICE).requires_grad_(bool(grads and path in grads))
        tensors[path] = t
        return t

    out = getattr(m, fn)(**{k: build(k, v) for k, v in args.items()})
    expected = torch.tensor([float(x) for x in result] if isinstance(result, tuple) else float(result))
    assert out.shape == (n, *expected.shape), out.shape
    torch.testing.assert_close(out.detach().cpu(), expected.expand(n, *expected.shape), rtol=REL, atol=1e-6)
    if grads is None:
        return
    out.backward(torch.full_like(out, dresult))
    for path, g in grads.items():
        want = torch.tensor([float(x) for x in g] if isinstance(g, tuple) else float(g))
        torch.testing.assert_close(tensors[path].grad.cpu(), want.expand(n, *want.shape), rtol=1e-4, atol=1e-6)


def test_t13_explicit_arguments_and_length_mismatch(sg, device):
    m = sg.Module.load_from_source(device, "t13", conformance_source("tier2/T13"))
    assert m["wsq<3>"]([1.0, 2.0, 3.0], [0.5, 0.25, 2.0]) == pytest.approx(19.5)
    assert m["wsq<3>"] is m["wsq< 3 >"]
    with pytest.raises(TypeError, match=r"wsq<4>\(\): parameter 'x' of type float\[4\] needs 4 items, got a Python list of 3 items"):
        m["wsq<4>"]([1.0, 2.0, 3.0], [0.5, 0.25, 2.0])
    x = torch.tensor([[1.0, 2.0, 3.0]], device=TEST_DEVICE)
    with pytest.raises(TypeError, match=r"wsq<4>\(\): parameter 'x' of type float\[4\] needs a tensor whose last dims are \(4,\), got a float32 tensor of shape \(1, 3\)"):
        m["wsq<4>"](x, x)


def test_t14_double_and_half(sg, device):
    m = sg.Module.load_from_source(device, "t14", conformance_source("tier2/T14"))
    d = lambda v: torch.tensor([v], dtype=torch.float64, device=TEST_DEVICE, requires_grad=True)
    x, a, b = d(-1.5), d(2.0), d(0.25)
    y = m.cubic(x, a, b)
    assert y.dtype == torch.float64
    assert abs(y.item() - -7.125) < 1e-12
    y.backward(torch.ones_like(y))
    assert abs(x.grad.item() - 13.75) < 1e-12 and abs(a.grad.item() - -3.375) < 1e-12 and abs(b.grad.item() - -1.5) < 1e-12
    h = lambda v: torch.tensor([v], dtype=torch.float16, device=TEST_DEVICE)
    assert m["cubic<half>"](h(2.0), h(0.5), h(-1.0)).item() == pytest.approx(2.0, rel=1e-3)
    assert m.cubic(h(2.0), h(0.5), h(-1.0)).dtype == torch.float16


def test_t05_struct_from_dict_vectorized_with_gradients(sg, device):
    m = sg.Module.load_from_source(device, "t05", conformance_source("T05"))
    n = 3
    pos = torch.tensor([[1.0, 0.0, 2.0]] * n, device=TEST_DEVICE, requires_grad=True)
    vel = torch.tensor([[0.5, -1.0, 0.0]] * n, device=TEST_DEVICE, requires_grad=True)
    dt = torch.full((n,), 0.1, device=TEST_DEVICE, requires_grad=True)
    e = m.energy({"pos": pos, "vel": vel, "mass": 2.0, "_type": "Particle"}, dt)
    torch.testing.assert_close(e.detach().cpu(), torch.full((n,), 6.3625), rtol=1e-5, atol=1e-6)
    e.sum().backward()
    torch.testing.assert_close(pos.grad.cpu(), torch.tensor([[2.1, -0.2, 4.0]] * n), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(vel.grad.cpu(), torch.tensor([[1.21, -2.02, 0.40]] * n), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(dt.grad.cpu(), torch.full((n,), 1.25), rtol=1e-5, atol=1e-6)
    # mass is no_diff: a tensor for it takes part in no gradient. The call is still part of the
    # graph (SlangPy's rule: any tensor that requires grad), and backward leaves mass.grad None.
    mass = torch.full((n,), 2.0, device=TEST_DEVICE, requires_grad=True)
    e2 = m.energy({"pos": pos.detach(), "vel": vel.detach(), "mass": mass}, dt.detach())
    assert e2.grad_fn is not None
    e2.sum().backward()
    assert mass.grad is None


def test_t05_misses_and_extras_are_named(sg, device):
    m = sg.Module.load_from_source(device, "t05", conformance_source("T05"))
    with pytest.raises(TypeError, match=r"energy\(\): parameter 'p' of type Particle got a dict without field 'mass'"):
        m.energy({"pos": sg.float3(1, 0, 2), "vel": sg.float3(0, 0, 0)}, 0.1)
    with pytest.raises(TypeError, match=r"got a dict with field 'spin', which struct Particle does not have"):
        m.energy({"pos": sg.float3(1, 0, 2), "vel": sg.float3(0, 0, 0), "mass": 1.0, "spin": 1.0}, 0.1)
    with pytest.raises(TypeError, match=r"got a dict with _type 'Other'"):
        m.energy({"pos": sg.float3(1, 0, 2), "vel": sg.float3(0, 0, 0), "mass": 1.0, "_type": "Other"}, 0.1)


def test_t08_out_and_inout_params(sg, device):
    m = sg.Module.load_from_source(device, "t08", conformance_source("T08"))
    # mac(acc=2, x=3, w=0.5) leaves acc == 6.5: through a ref, a tensor and a numpy array.
    acc = sg.floatRef(2.0)
    m.mac(acc, 3.0, 0.5)
    assert acc.value == 6.5
    t = torch.tensor([2.0, 2.0], device=TEST_DEVICE)
    m.mac(t, 3.0, 0.5)
    assert t.tolist() == [6.5, 6.5]
    import numpy as np

    a = np.array([2.0], dtype=np.float32)
    m.mac(a, 3.0, 0.5)
    assert a.tolist() == [6.5]
    # polar(r=2, th=0.5) -> p=(1.7551651, 0.9588511); bwd with dp=(1,1): r.d, th.d.
    p = sg.ValueRef(sg.float2(0, 0))
    m.polar(2.0, 0.5, p)
    assert approx_equal(p.value, (1.7551651, 0.9588511))
    r, th = sg.diffPair(2.0), sg.diffPair(0.5)
    m.polar.bwds(r, th, sg.diffPair(d=sg.float2(1, 1)))
    assert r.grad == pytest.approx(1.3570081, rel=1e-5) and th.grad == pytest.approx(0.7963140, rel=1e-5)
    # The same through tensors: the out tensor carries the autograd node.
    rt = torch.tensor([2.0], device=TEST_DEVICE, requires_grad=True)
    tht = torch.tensor([0.5], device=TEST_DEVICE, requires_grad=True)
    pt = torch.zeros(1, 2, device=TEST_DEVICE)
    m.polar(rt, tht, pt)
    pt.backward(torch.ones(1, 2, device=TEST_DEVICE))
    assert rt.grad.item() == pytest.approx(1.3570081, rel=1e-5) and tht.grad.item() == pytest.approx(0.7963140, rel=1e-5)
