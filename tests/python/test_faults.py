# tests/python/test_faults.py — kernel faults reach Python as RuntimeErrors that name the function,
# the parameter and the fault (index and extent, [MaxIters] bound, division by zero), on the CPU
# at the faulting call, on CUDA (SHADEGRAD_TEST_DEVICE=cuda) at the next call on the device or at
# shadegrad.synchronize() — or at the faulting call in debug mode.
import pytest
import torch

from conftest import TEST_DEVICE, device_tensor as t

# Line numbers below are part of the expected messages (faults.slang:L:C).
SOURCE = """import slangpy;

float lookup(float x, ITensor<float, 1> lut)
{
    int i = int(x);
    return lut[i];
}

[Differentiable]
float power(float x, int n)
{
    float y = x;
    [MaxIters(4)]
    for (int i = 0; i < n; i++)
        y = y * x;
    return y;
}

int quotient(int a, int b)
{
    return a / b;
}

int remainder(int a, int b)
{
    return a % b;
}

float pick(int i)
{
    float a[4] = { 1.0, 2.0, 3.0, 4.0 };
    return a[i];
}
"""

LUT_FAULT = (
    r"^lookup\(\): parameter 'lut': index 300 out of bounds for dimension 0 of extent 256 at faults\.slang:6:\d+; "
    r"the access was skipped; the results of that call are not valid"
)
DIV_FAULT = r"^quotient\(\): integer division or remainder by zero at faults\.slang:21:\d+"
REM_FAULT = r"^remainder\(\): integer division or remainder by zero at faults\.slang:26:\d+"
LOOP_FAULT = (
    r"^power\(\) backward: a loop at faults\.slang:14:5 ran past its \[MaxIters\(4\)\] bound \(iteration 5\): "
    r"its reverse pass cannot replay it"
)
PICK_FAULT = r"^pick\(\): index 7 out of range of a local array, vector or matrix of 4 elements"


@pytest.fixture(scope="module")
def device(sg):
    return sg.create_torch_device(type=getattr(sg.DeviceType, TEST_DEVICE))


@pytest.fixture(scope="module")
def m(sg, device):
    return sg.Module.load_from_source(device, "faults", SOURCE)


@pytest.fixture
def debug(sg):
    was = sg.debug_mode()
    sg.set_debug_mode(True)
    yield
    sg.set_debug_mode(was)


def lut():
    return torch.arange(256, dtype=torch.float32, device=TEST_DEVICE)


def expect_fault(sg, m, call, pattern):
    """The fault of `call()` raises where this backend raises it, and the next call works again."""
    if TEST_DEVICE == "cpu":
        with pytest.raises(RuntimeError, match=pattern):
            call()
    else:
        call()  # asynchronous: the kernel records the fault, nothing waits for it
        torch.cuda.synchronize()
        with pytest.raises(RuntimeError, match=pattern) as info:
            m.lookup(t([1.0]), lut())  # the next shadegrad call on the device raises it
        assert "launched earlier on cuda:0" in str(info.value)
    # The record was cleared: calls work again.
    assert m.lookup(t([3.0, 5.0]), lut()).tolist() == [3.0, 5.0]


def test_index_out_of_bounds_names_function_parameter_index_and_extent(sg, m):
    expect_fault(sg, m, lambda: m.lookup(t([300.0]), lut()), LUT_FAULT)


def test_negative_index_out_of_bounds(sg, m):
    pattern = r"^lookup\(\): parameter 'lut': index -2 out of bounds for dimension 0 of extent 256"
    expect_fault(sg, m, lambda: m.lookup(t([-2.0]), lut()), pattern)


def test_integer_division_by_zero(sg, m):
    expect_fault(sg, m, lambda: m.quotient(t([7], torch.int32), t([0], torch.int32)), DIV_FAULT)


def test_integer_remainder_by_zero(sg, m):
    expect_fault(sg, m, lambda: m.remainder(t([7], torch.int32), t([0], torch.int32)), REM_FAULT)


def test_division_without_zero_divisors_is_no_fault(sg, m):
    assert m.quotient(t([7, -9], torch.int32), t([2, 4], torch.int32)).tolist() == [3, -2]
    assert m.remainder(t([7, 9], torch.int32), t([2, 4], torch.int32)).tolist() == [1, 1]


def test_local_array_index_out_of_range(sg, m):
    expect_fault(sg, m, lambda: m.pick(t([7], torch.int32)), PICK_FAULT)
    assert m.pick(t([0, 3], torch.int32)).tolist() == [1.0, 4.0]


def test_loop_past_max_iters_faults_in_backward(sg, m):
    x = t([1.5], torch.float32).requires_grad_(True)
    y = m.power(x, 6)  # the forward pass keeps no tape: six iterations are fine there
    assert y.item() == pytest.approx(1.5**7)

    def backward():
        y.backward(torch.ones_like(y))

    expect_fault(sg, m, backward, LOOP_FAULT)


def test_loop_within_max_iters_is_no_fault(sg, m):
    x = t([1.5, 0.5], torch.float32).requires_grad_(True)
    y = m.power(x, 4)  # exactly MaxIters iterations
    assert y.tolist() == pytest.approx([1.5**5, 0.5**5])
    y.sum().backward()
    assert x.grad is not None


def test_loop_within_max_iters_has_exact_gradients(sg, m):
    x = t([1.5, 0.5], torch.float32).requires_grad_(True)
    m.power(x, 4).sum().backward()
    assert x.grad.tolist() == pytest.approx([5 * 1.5**4, 5 * 0.5**4])


def test_fault_in_a_broadcast_grid_call_names_one_parameter(sg, device):
    mod = sg.Module.load_from_source(
        device,
        "grid_faults",
        "import slangpy;\n[Differentiable]\nfloat mul2(no_diff int2 pix, IDiffTensor<float, 2> a, IDiffTensor<float, 2> b)\n"
        "{\n    return a[uint2(pix.x, pix.y)] * b[uint2(pix.x, pix.y)];\n}\n",
    )
    pattern = r"^mul2\(\): parameter '[ab]': index \d+ out of bounds for dimension [01] of extent 2"
    ones = torch.ones(2, 2, device=TEST_DEVICE)
    if TEST_DEVICE == "cpu":
        with pytest.raises(RuntimeError, match=pattern):
            mod.mul2(sg.grid((16, 16)), ones, ones)
    else:
        mod.mul2(sg.grid((16, 16)), ones, ones)
        with pytest.raises(RuntimeError, match=pattern):
            sg.synchronize()
    sg.synchronize()  # cleared: nothing left to raise


def test_synchronize_and_check_faults_without_pending_faults(sg, m):
    m.lookup(t([1.0]), lut())
    sg.synchronize()
    sg.check_faults()


@pytest.mark.skipif(TEST_DEVICE != "cuda", reason="CUDA faults: run with SHADEGRAD_TEST_DEVICE=cuda on a GPU")
def test_cuda_fault_raises_at_synchronize(sg, m):
    m.lookup(t([300.0]), lut())
    with pytest.raises(RuntimeError, match=LUT_FAULT):
        sg.synchronize()
    sg.check_faults()  # cleared


@pytest.mark.skipif(TEST_DEVICE != "cuda", reason="CUDA faults: run with SHADEGRAD_TEST_DEVICE=cuda on a GPU")
def test_cuda_fault_in_backward_raises_at_the_next_call(sg, m):
    x = t([1.5], torch.float32).requires_grad_(True)
    m.power(x, 6).backward(torch.ones(1, device="cuda"))
    torch.cuda.synchronize()
    with pytest.raises(RuntimeError, match=LOOP_FAULT):
        m.lookup(t([1.0]), lut())


@pytest.mark.skipif(TEST_DEVICE != "cuda", reason="CUDA faults: run with SHADEGRAD_TEST_DEVICE=cuda on a GPU")
@pytest.mark.parametrize(
    "case",
    ["lut", "div", "rem", "pick"],
)
def test_cuda_debug_mode_raises_at_the_faulting_call(sg, m, debug, case):
    calls = {
        "lut": (lambda: m.lookup(t([300.0]), lut()), LUT_FAULT),
        "div": (lambda: m.quotient(t([7], torch.int32), t([0], torch.int32)), DIV_FAULT),
        "rem": (lambda: m.remainder(t([7], torch.int32), t([0], torch.int32)), REM_FAULT),
        "pick": (lambda: m.pick(t([7], torch.int32)), PICK_FAULT),
    }
    call, pattern = calls[case]
    with pytest.raises(RuntimeError, match=pattern) as info:
        call()
    assert "launched earlier" not in str(info.value)  # found by the launch's own wait
    sg.check_faults()


@pytest.mark.skipif(TEST_DEVICE != "cuda", reason="CUDA faults: run with SHADEGRAD_TEST_DEVICE=cuda on a GPU")
def test_cuda_debug_mode_raises_in_backward(sg, m, debug):
    x = t([1.5], torch.float32).requires_grad_(True)
    y = m.power(x, 6)
    with pytest.raises(RuntimeError, match=LOOP_FAULT):
        y.backward(torch.ones_like(y))


def test_debug_mode_from_the_environment(tmp_path):
    from conftest import run_python

    proc = run_python("import os; os.environ['SHADEGRAD_DEBUG']='1'; import shadegrad as sg; print(sg.debug_mode())")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"


def test_constant_index_out_of_range_of_a_vector_is_a_fault_not_a_compile_crash(sg, device):
    # A constant index past a vector's end used to be folded into a static component access,
    # which the code generator refused with an internal error; it stays a checked access.
    src = """
float pick(float x) { float4 v = float4(x, 2, 3, 4); int i = 4; return v[i]; }
float pick_in_loop(float x)
{
    float4 v = float4(x, 20, 30, 40);
    float s = 0;
    for (int i = 0; i = 4; i += 2) { s += v[i]; break; }
    return s;
}
"""
    m = sg.Module.load_from_source(device, "constant_index", src)
    for fn in (m.pick, m.pick_in_loop):
        with pytest.raises(RuntimeError, match=r"index 4 out of range of a local array, vector or matrix of 4 elements"):
            fn(torch.ones(3, device=TEST_DEVICE))
            if TEST_DEVICE == "cuda":
                torch.cuda.synchronize()
                sg.synchronize()
