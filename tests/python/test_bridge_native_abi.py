# tests/python/test_bridge_native_abi.py — the native torch bridge through its C ABI (ctypes),
# checked against the Python fallback bridge (python/shadegrad/_torch_fallback.py).
#
# The library is found through SG_BRIDGE_PATH, else in a build folder of the repository or next
# to an installed shadegrad package; the module is skipped when there is none. Tests that take a
# `bridge` parameter run the same scenario through the native bridge (ctypes callbacks stand in
# for the core's kernels) and through the fallback (a Python handle), so both must agree.
import ctypes
import gc
import glob
import importlib.util
import itertools
import os
import random
import weakref

import pytest

torch = pytest.importorskip("torch")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB_NAME = "libshadegrad_torch_bridge.so"


def _load_fallback():
    # By path: shadegrad/__init__ imports the compiled core, which this test does not need.
    path = os.path.join(REPO, "python", "shadegrad", "_torch_fallback.py")
    spec = importlib.util.spec_from_file_location("_sg_torch_fallback_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fb = _load_fallback()


def _find_bridge():
    path = os.environ.get("SG_BRIDGE_PATH")
    if path:
        if not os.path.exists(path):
            pytest.fail(f"SG_BRIDGE_PATH={path} does not exist")
        return path
    candidates = sorted(glob.glob(os.path.join(REPO, "build*", "**", LIB_NAME), recursive=True))
    candidates += glob.glob(os.path.join(REPO, "python", "shadegrad", LIB_NAME))
    spec = importlib.util.find_spec("shadegrad")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidates += glob.glob(os.path.join(location, LIB_NAME))
    if not candidates:
        pytest.skip("native torch bridge not built (set SG_BRIDGE_PATH)", allow_module_level=True)
    return max(candidates, key=os.path.getmtime)


# ---------------------------------------------------------------------------------------------
# The C ABI in ctypes (src/bridge/bridge_abi.h, src/call/tensor_info.h)

MAX_RANK = 8


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("shape", ctypes.c_int64 * MAX_RANK),
        ("strides", ctypes.c_int64 * MAX_RANK),
        ("ndim", ctypes.c_int32),
        ("dtype", ctypes.c_int32),
        ("device_type", ctypes.c_int32),
        ("device_index", ctypes.c_int32),
        ("requires_grad", ctypes.c_uint8),
        ("is_leaf", ctypes.c_uint8),
        ("reserved", ctypes.c_uint8 * 6),
        ("numel", ctypes.c_int64),
        ("version", ctypes.c_uint64),
    ]


assert ctypes.sizeof(TensorInfo) == 176 == fb.TENSOR_INFO_SIZE

FORWARD_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
BACKWARD_FN = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.POINTER(TensorInfo),
    ctypes.c_int,
    ctypes.POINTER(TensorInfo),
    ctypes.c_int,
    ctypes.POINTER(TensorInfo),
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_size_t,
)
RELEASE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class AutogradSpec(ctypes.Structure):
    _fields_ = [
        ("inputs", ctypes.POINTER(ctypes.py_object)),
        ("n_inputs", ctypes.c_int),
        ("outputs", ctypes.POINTER(ctypes.py_object)),
        ("n_outputs", ctypes.c_int),
        ("output_is_input_dirty", ctypes.POINTER(ctypes.c_uint8)),
        ("forward", FORWARD_FN),
        ("ctx", ctypes.c_void_p),
        ("backward", BACKWARD_FN),
        ("release", RELEASE_FN),
        ("input_takes_grad", ctypes.POINTER(ctypes.c_uint8)),
    ]


class BridgeApi(ctypes.Structure):
    _fields_ = [
        ("api_version", ctypes.c_uint32),
        ("tensor_info_size", ctypes.c_uint32),
        ("torch_version", ctypes.c_char_p),
        ("is_tensor", ctypes.c_void_p),
        ("describe", ctypes.c_void_p),
        ("empty", ctypes.c_void_p),
        ("current_stream", ctypes.c_void_p),
        ("grad_enabled", ctypes.c_void_p),
        ("apply_autograd", ctypes.c_void_p),
    ]


# PYFUNCTYPE: these entries are called with the GIL held, as the core does.
IS_TENSOR = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)
DESCRIBE = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
)
EMPTY = ctypes.PYFUNCTYPE(
    # PyObject* (a new reference) as an address: a py_object restype crashes ctypes on NULL.
    ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_int64),
    ctypes.c_int,
    ctypes.c_int32,
    ctypes.c_int32,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.c_char_p,
    ctypes.c_size_t,
)
CURRENT_STREAM = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_int32, ctypes.c_int)
GRAD_ENABLED = ctypes.PYFUNCTYPE(ctypes.c_int)
APPLY_AUTOGRAD = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(AutogradSpec), ctypes.c_char_p, ctypes.c_size_t
)

_py_decref = ctypes.pythonapi.Py_DecRef
_py_decref.argtypes = [ctypes.c_void_p]
_py_decref.restype = None

SG_BRIDGE_API_VERSION = 3
ERR_SIZE = 1024


class Native:
    """The bridge's function table, callable from Python."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        entry = self.lib.shadegrad_torch_bridge
        entry.restype = ctypes.POINTER(BridgeApi)
        entry.argtypes = []
        self.table = entry().contents
        self.is_tensor = IS_TENSOR(self.table.is_tensor)
        self._describe = DESCRIBE(self.table.describe)
        self._empty = EMPTY(self.table.empty)
        self._current_stream = CURRENT_STREAM(self.table.current_stream)
        self.grad_enabled = GRAD_ENABLED(self.table.grad_enabled)
        self._apply = APPLY_AUTOGRAD(self.table.apply_autograd)

    def describe_bytes(self, obj, fill=0xAB):
        """(rc, message, 176 bytes); the buffer starts as garbage so unwritten bytes show."""
        out = ctypes.create_string_buffer(bytes([fill]) * 176, 176)
        err = ctypes.create_string_buffer(ERR_SIZE)
        rc = self._describe(obj, ctypes.addressof(out), err, ERR_SIZE)
        return rc, err.value.decode(), out.raw

    def empty(self, shape, dtype, device_type=fb.DEVICE_CPU, device_index=-1, zero=0):
        """(tensor or None, TensorInfo bytes, message)."""
        shape_array = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        out = ctypes.create_string_buffer(b"\xab" * 176, 176)
        err = ctypes.create_string_buffer(ERR_SIZE)
        address = self._empty(
            shape_array, len(shape), dtype, device_type, device_index, zero,
            ctypes.addressof(out), err, ERR_SIZE,
        )
        tensor = None
        if address:
            tensor = ctypes.cast(address, ctypes.py_object).value  # borrows: adds a reference
            _py_decref(address)  # drop the one empty() returned
        return tensor, out.raw, err.value.decode()

    def current_stream(self, device_type, device_index):
        return self._current_stream(device_type, device_index) or 0

    def apply_spec(self, spec):
        err = ctypes.create_string_buffer(ERR_SIZE)
        rc = self._apply(ctypes.byref(spec), err, ERR_SIZE)
        return rc, err.value.decode()


NATIVE = Native(_find_bridge())

# ---------------------------------------------------------------------------------------------
# Reading TensorInfo memory back as torch tensors (what a kernel would address)

_CODE_TO_DTYPE = {fb.dtype_code(d): d for d in fb._DTYPE_CODES}
_CUDA_TYPESTR = {torch.float16: "<f2", torch.float32: "<f4", torch.float64: "<f8"}


class _CudaArray:
    def __init__(self, info, dtype):
        itemsize = torch.empty((), dtype=dtype).element_size()
        self.__cuda_array_interface__ = {
            "shape": tuple(info.shape[: info.ndim]),
            "strides": tuple(s * itemsize for s in info.strides[: info.ndim]),
            "typestr": _CUDA_TYPESTR[dtype],
            "data": (info.data, False),
            "version": 2,
        }


def tensor_from_info(info):
    """A tensor aliasing the memory a TensorInfo describes; None for data == nullptr."""
    if not info.data:
        return None
    dtype = _CODE_TO_DTYPE[info.dtype]
    shape = list(info.shape[: info.ndim])
    strides = list(info.strides[: info.ndim])
    if info.device_type == fb.DEVICE_CUDA:
        return torch.as_tensor(_CudaArray(info, dtype), device=f"cuda:{info.device_index}")
    if info.numel == 0:
        return torch.empty(shape, dtype=dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    itemsize = torch.empty((), dtype=dtype).element_size()
    raw = (ctypes.c_char * (span * itemsize)).from_address(info.data)
    return torch.frombuffer(raw, dtype=dtype, count=span).as_strided(shape, strides)


# ---------------------------------------------------------------------------------------------
# A fake kernel and the two ways of running it under autograd


class Kernel:
    """Stands in for the core's generated kernels.

    out0 = a * b + sin(a); with two outputs out1 = a - b (float) or (a > 0) as int64 (not
    differentiable). Inputs and outputs share one shape (broadcasting is done by expanding the
    inputs, which makes them stride-0 views). backward accumulates into the grad buffers.
    """

    def __init__(self, inputs, outputs, fail_forward=None, fail_backward=None, backward_rc=1):
        self.inputs = inputs
        self.outputs = outputs
        self.fail_forward = fail_forward
        self.fail_backward = fail_backward
        self.backward_rc = backward_rc
        self.forward_calls = 0
        self.backward_calls = []  # one record per call

    def forward(self):
        self.forward_calls += 1
        if self.fail_forward is not None:
            raise RuntimeError(self.fail_forward)
        a, b = self.inputs
        with torch.no_grad():
            out0 = a * b + torch.sin(a)
            out1 = a - b if len(self.outputs) > 1 else None
            # Through .data, which has its own version counter: a real kernel writes memory
            # without bumping the version; mark_dirty does that.
            self.outputs[0].data.copy_(out0)
            if out1 is not None:
                target = self.outputs[1].data
                target.copy_(out1 if target.is_floating_point() else (a > 0))
        # Like the core's context, keep nothing that refers to the outputs once forward is done:
        # outputs -> grad_fn -> context -> outputs would keep the whole graph alive.
        self.inputs = self.outputs = None

    def backward(self, saved, grad_outputs, grad_inputs, extra=None):
        self.backward_calls.append(
            {
                "mask": [g is not None for g in grad_inputs],
                "grad_output_none": [g is None for g in grad_outputs],
                "grad_output_strides": [None if g is None else g.stride() for g in grad_outputs],
                **(extra or {}),
            }
        )
        if self.fail_backward is not None:
            raise RuntimeError(self.fail_backward)
        a, b = saved
        with torch.no_grad():
            g0 = grad_outputs[0] if grad_outputs[0] is not None else torch.zeros_like(a)
            ga = g0 * (b + torch.cos(a))
            gb = g0 * a
            g1 = grad_outputs[1] if len(grad_outputs) > 1 else None
            if g1 is not None and g1.is_floating_point():
                ga = ga + g1
                gb = gb - g1
            # The buffers' contents are unspecified (API version 2): like the core, zero-fill
            # them, then accumulate.
            if grad_inputs[0] is not None:
                grad_inputs[0].zero_().add_(ga)
            if grad_inputs[1] is not None:
                grad_inputs[1].zero_().add_(gb)


# ctx keys -> kernels alive in the native bridge; release counts per key.
_live = {}
_released = {}
_next_key = itertools.count(1)


def _write_err(err, err_size, message):
    data = message.encode()[: err_size - 1] + b"\0"
    ctypes.memmove(err, data, len(data))


@FORWARD_FN
def _forward_cb(ctx, err, err_size):
    try:
        _live[ctx].forward()
        return 0
    except Exception as e:  # noqa: BLE001 — reported through the ABI
        _write_err(err, err_size, str(e))
        return 1


@BACKWARD_FN
def _backward_cb(ctx, saved, n_inputs, grad_outputs, n_outputs, grad_inputs, stream, err, err_size):
    kernel = _live[ctx]
    try:
        saved_infos = [saved[i] for i in range(n_inputs)]
        grad_output_infos = [grad_outputs[i] for i in range(n_outputs)]
        grad_input_infos = [grad_inputs[i] for i in range(n_inputs)]
        extra = {
            "stream": stream or 0,
            "saved_data": [i.data or 0 for i in saved_infos],
            "grad_input_infos": [bytes(i) for i in grad_input_infos],
        }
        kernel.backward(
            [tensor_from_info(i) for i in saved_infos],
            [tensor_from_info(i) for i in grad_output_infos],
            [tensor_from_info(i) for i in grad_input_infos],
            extra,
        )
        return 0
    except Exception as e:  # noqa: BLE001 — reported through the ABI
        if str(e) != "silent":  # "silent": fail with a code but no message
            _write_err(err, err_size, str(e))
        return kernel.backward_rc


@RELEASE_FN
def _release_cb(ctx):
    _live.pop(ctx, None)
    _released[ctx] = _released.get(ctx, 0) + 1


class NativeBridge:
    name = "native"

    def empty_like(self, t):
        tensor, _, message = NATIVE.empty(list(t.shape), fb.dtype_code(t.dtype), *_device_codes(t))
        assert tensor is not None, message
        return tensor

    def apply(self, inputs, outputs, dirty, kernel):
        """Runs apply_autograd; returns (rc, message, release_count())."""
        key = next(_next_key)
        _live[key] = kernel
        input_array = (ctypes.py_object * max(1, len(inputs)))(*inputs)
        output_array = (ctypes.py_object * max(1, len(outputs)))(*outputs)
        dirty_array = (ctypes.c_uint8 * max(1, len(outputs)))(*[int(d) for d in dirty])
        spec = AutogradSpec(
            input_array, len(inputs), output_array, len(outputs), dirty_array,
            _forward_cb, key, _backward_cb, _release_cb,
        )
        rc, message = NATIVE.apply_spec(spec)
        return rc, message, lambda: _released.get(key, 0)


class _Handle:
    """The fallback's view of the core's per-call object."""

    def __init__(self, kernel):
        self.kernel = kernel

    def forward(self):
        self.kernel.forward()

    def backward(self, saved, grad_outputs, grad_inputs):
        self.kernel.backward(list(saved), list(grad_outputs), grad_inputs)


class FallbackBridge:
    name = "fallback"

    def empty_like(self, t):
        return fb.empty(list(t.shape), fb.dtype_code(t.dtype), *_device_codes(t), 0)

    def apply(self, inputs, outputs, dirty, kernel):
        handle = _Handle(kernel)
        count = [0]
        weakref.finalize(handle, lambda: count.__setitem__(0, count[0] + 1))
        try:
            fb.apply_autograd(inputs, outputs, dirty, handle)
            rc, message = 0, ""
        except (RuntimeError, TypeError, ValueError) as e:
            rc, message = 1, str(e)
        del handle
        return rc, message, lambda: count[0]


BRIDGES = [NativeBridge(), FallbackBridge()]


def _device_codes(t):
    return fb.describe(t)[5:7]


def run_fn(bridge, a, b, n_outputs=1, second_dtype=None, **kernel_args):
    """y = f(a, b) through `bridge`; returns (outputs, kernel, release_count)."""
    outputs = [bridge.empty_like(a)]
    if n_outputs > 1:
        like = a if second_dtype is None else a.to(second_dtype)
        outputs.append(bridge.empty_like(like))
    kernel = Kernel([a, b], outputs, **kernel_args)
    rc, message, released = bridge.apply([a, b], outputs, [0] * len(outputs), kernel)
    assert rc == 0, message
    return outputs, kernel, released


def expected_grads(a, b, g0=None):
    a = a.detach()
    b = b.detach()
    g0 = torch.ones_like(a) if g0 is None else g0
    return g0 * (b + torch.cos(a)), g0 * a


@pytest.fixture(autouse=True)
def _no_leaked_nodes():
    yield
    gc.collect()
    leaked = dict(_live)
    _live.clear()
    assert not leaked, f"native autograd contexts never released: {sorted(leaked)}"


# ---------------------------------------------------------------------------------------------
# The table


def test_table_versions():
    assert NATIVE.table.api_version == SG_BRIDGE_API_VERSION
    assert NATIVE.table.tensor_info_size == 176
    version = NATIVE.table.torch_version.decode()
    assert torch.__version__.split("+")[0] == version


def test_only_entry_symbol_is_exported():
    assert hasattr(NATIVE.lib, "shadegrad_torch_bridge")
    mangled = "_ZN2sg6bridge15describe_tensorERKN2at6TensorEPNS_10TensorInfoE"
    for hidden in ("describe_tensor", mangled, "apply_autograd"):
        with pytest.raises(AttributeError):
            getattr(NATIVE.lib, hidden)


def test_is_tensor():
    class Sub(torch.Tensor):
        pass

    yes = [torch.zeros(2), torch.nn.Parameter(torch.zeros(2)), torch.zeros(2).as_subclass(Sub),
           torch.zeros(()), torch.zeros(2, dtype=torch.complex64)]
    no = [3, 2.0, None, [1, 2], "x", object(), torch.float32]
    try:
        import numpy

        no.append(numpy.zeros(3))
    except ImportError:
        pass
    assert all(NATIVE.is_tensor(x) == 1 for x in yes)
    assert all(NATIVE.is_tensor(x) == 0 for x in no)


def test_python_errors_do_not_escape():
    class Broken:
        @property
        def __class__(self):  # makes isinstance() raise
            raise KeyError("no class here")

    obj = ctypes.py_object(Broken())  # PYFUNCTYPE raises if a call leaves a Python error set
    assert NATIVE.is_tensor(obj) == 0
    rc, message, _ = NATIVE.describe_bytes(obj)
    assert rc != 0 and "KeyError" in message and "no class here" in message


def test_grad_enabled():
    assert NATIVE.grad_enabled() == 1 == int(fb.grad_enabled())
    with torch.no_grad():
        assert NATIVE.grad_enabled() == 0 == int(fb.grad_enabled())
        with torch.enable_grad():
            assert NATIVE.grad_enabled() == 1 == int(fb.grad_enabled())
    with torch.inference_mode():
        assert NATIVE.grad_enabled() == 0 == int(fb.grad_enabled())


def test_current_stream_cpu():
    assert NATIVE.current_stream(fb.DEVICE_CPU, -1) == 0 == fb.current_stream(fb.DEVICE_CPU, -1)
    if not torch.cuda.is_available():
        assert NATIVE.current_stream(fb.DEVICE_CUDA, 0) == 0


# ---------------------------------------------------------------------------------------------
# describe: native bytes == fallback fields packed, for many tensors

FLOAT_DTYPES = [torch.float16, torch.float32, torch.float64]
DTYPES = FLOAT_DTYPES + [torch.int32, torch.int64, torch.uint8, torch.bool]
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]


def _base(shape, dtype, rng, device):
    if dtype == torch.bool:
        return torch.rand(shape, device=device) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, device=device).to(dtype)
    return torch.randint(0, 100, shape, device=device).to(dtype)


def make_tensor(rng, rank, dtype, layout, grad, device="cpu"):
    """A tensor of the given rank with a layout of the given kind and grad state:
    'none', 'leaf' (requires grad, no grad_fn) or 'nonleaf' (has a grad_fn)."""
    shape = [rng.randint(1, 4) for _ in range(rank)]
    if layout == "transposed" and rank >= 2:
        order = list(range(rank))
        while order == sorted(order):
            rng.shuffle(order)
        inverse = [order.index(d) for d in range(rank)]
        base = _base([shape[d] for d in order], dtype, rng, device)
        view = lambda t: t.permute(inverse)  # noqa: E731
    elif layout == "sliced":
        big = [n + rng.randint(1, 3) for n in shape] or [5]
        base = _base(big, dtype, rng, device)
        if rank == 0:
            view = lambda t: t[3]  # noqa: E731 — a 0-d view at offset 3
        else:
            steps = [rng.choice([1, 2]) for _ in shape]
            starts = [rng.randint(1, b - 1 - (n - 1) * s) if b - 1 - (n - 1) * s >= 1 else 0
                      for n, b, s in zip(shape, big, steps)]
            if all(s == 0 for s in starts):
                starts[0] = big[0] - 1 - (shape[0] - 1) * steps[0]
            index = tuple(
                slice(st, st + (n - 1) * s + 1, s) for st, n, s in zip(starts, shape, steps)
            )
            view = lambda t: t[index]  # noqa: E731
    elif layout == "expanded" and rank >= 1:
        small = [1 if rng.random() < 0.5 else n for n in shape]
        small[rng.randrange(rank)] = 1
        shape = [n if m != 1 else max(n, 2) for n, m in zip(shape, small)]
        base = _base(small, dtype, rng, device)
        view = lambda t: t.expand(shape)  # noqa: E731
    else:
        base = _base(shape, dtype, rng, device)
        view = lambda t: t  # noqa: E731

    if grad != "none" and dtype.is_floating_point:
        if grad == "leaf":
            t = view(base).detach().requires_grad_()  # a leaf with the view's layout
        else:
            t = view(base.requires_grad_()) if layout != "contiguous" else base.requires_grad_() * 1
    else:
        t = view(base)
    writable = t.dtype != torch.bool and 0 not in t.stride() and not t.requires_grad
    if writable and rng.random() < 0.3:
        t.add_(1)  # bumps the version counter
    return t


def _describe_cases(device="cpu"):
    rng = random.Random(1234)
    cases = []
    for repeat in range(2):
        for rank in range(7):
            for dtype in DTYPES:
                for layout in LAYOUTS:
                    grads = ["none", "leaf", "nonleaf"] if dtype.is_floating_point else ["none"]
                    for grad in grads:
                        cases.append(make_tensor(rng, rank, dtype, layout, grad, device))
    return cases


def _assert_same_description(t):
    rc, message, native = NATIVE.describe_bytes(t)
    assert rc == 0, message
    expected = fb.pack_tensor_info(fb.describe(t))
    assert native == expected, (t.shape, t.stride(), t.dtype, t.storage_offset())
    # A second fill over different garbage gives the same bytes: nothing is left unwritten.
    assert NATIVE.describe_bytes(t, fill=0x00)[2] == native


def test_describe_matches_fallback_for_many_tensors():
    cases = _describe_cases()
    assert len(cases) >= 500
    kinds = {"offset": 0, "stride0": 0, "noncontig": 0, "nonleaf": 0, "leaf_grad": 0, "version": 0}
    for t in cases:
        _assert_same_description(t)
        kinds["offset"] += t.storage_offset() != 0
        kinds["stride0"] += 0 in t.stride()
        kinds["noncontig"] += not t.is_contiguous()
        kinds["nonleaf"] += not t.is_leaf
        kinds["leaf_grad"] += t.is_leaf and t.requires_grad
        kinds["version"] += t._version > 0
    assert all(count > 20 for count in kinds.values()), kinds


def test_describe_fields():
    base = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)
    t = base[1:, ::2, 3]
    rc, message, raw = NATIVE.describe_bytes(t)
    assert rc == 0, message
    info = TensorInfo.from_buffer_copy(raw)
    assert info.data == base.data_ptr() + t.storage_offset() * 4
    assert list(info.shape) == [2, 2, 0, 0, 0, 0, 0, 0]
    assert list(info.strides) == [20, 10, 0, 0, 0, 0, 0, 0]
    assert (info.ndim, info.dtype, info.device_type, info.device_index) == (2, 9, 0, -1)
    assert (info.requires_grad, info.is_leaf, info.numel, info.version) == (0, 1, 4, 0)
    assert bytes(info.reserved) == b"\0" * 6


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.zeros(3, dtype=torch.complex64),  # Unknown dtype, not an error
        lambda: torch.zeros(2, dtype=torch.bfloat16),
        lambda: torch.zeros(2, dtype=torch.int8),
        lambda: torch.zeros(2, dtype=torch.int16),
        lambda: torch.zeros(0, 3),
        lambda: torch.zeros(2, 0)[:, :],
        lambda: torch.zeros([1] * 8),
        lambda: torch.nn.Parameter(torch.ones(2, 2)),
        lambda: torch.ones(4).requires_grad_().view(2, 2),
        lambda: torch.ones(3, 4).t(),
        lambda: torch.ones(5)[2:4].unsqueeze(1).expand(2, 3),
        lambda: torch.zeros(2, 2).to(memory_format=torch.contiguous_format),
        lambda: torch.zeros(1, 3, 4, 4).to(memory_format=torch.channels_last),
    ],
)
def test_describe_special_tensors(make):
    _assert_same_description(make())


def test_describe_unsigned_dtypes():
    for name, code in (("uint16", 11), ("uint32", 12), ("uint64", 13)):
        if hasattr(torch, name):
            t = torch.zeros(3, dtype=getattr(torch, name))
            _assert_same_description(t)
            assert fb.describe(t)[4] == code


def test_describe_inference_tensor_has_version_zero():
    with torch.inference_mode():
        t = torch.ones(3)
        t.add_(1)
    _assert_same_description(t)
    assert fb.describe(t)[10] == 0


def test_describe_version_counter():
    t = torch.zeros(3)
    t.add_(1)
    t.mul_(2)
    info = TensorInfo.from_buffer_copy(NATIVE.describe_bytes(t)[2])
    assert info.version == t._version == 2


@pytest.mark.parametrize(
    "obj, fragment",
    [
        (3, "expected a torch.Tensor, got int"),
        (None, "expected a torch.Tensor, got NoneType"),
        ([torch.zeros(1)], "got list"),
    ],
)
def test_describe_rejects_non_tensors(obj, fragment):
    rc, message, raw = NATIVE.describe_bytes(obj)
    assert rc != 0 and fragment in message
    assert raw == b"\0" * 176
    with pytest.raises(TypeError, match="expected a torch.Tensor"):
        fb.describe(obj)


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda: torch.zeros([1] * 9), "rank 9"),
        (lambda: torch.zeros(3, 3).to_sparse(), "strided"),
    ],
)
def test_describe_rejects_unsupported_tensors(make, fragment):
    t = make()
    rc, message, _ = NATIVE.describe_bytes(t)
    assert rc != 0 and fragment in message
    with pytest.raises(ValueError, match=fragment):
        fb.describe(t)


def test_describe_meta_tensor_agrees():
    t = torch.empty(2, 3, device="meta")
    rc, message, raw = NATIVE.describe_bytes(t)
    try:
        expected = fb.pack_tensor_info(fb.describe(t))
    except Exception:  # noqa: BLE001
        expected = None
    if expected is None:
        assert rc != 0 and message
    else:
        assert rc == 0 and raw == expected, message


# ---------------------------------------------------------------------------------------------
# empty


@pytest.mark.parametrize("shape", [[], [0], [5], [2, 3], [1, 2, 3, 4, 1, 2, 1, 2]])
@pytest.mark.parametrize("dtype", DTYPES + [torch.bfloat16, torch.int8])
def test_empty_allocates_with_torch(shape, dtype):
    code = fb.dtype_code(dtype)
    for zero in (0, 1):
        tensor, raw, message = NATIVE.empty(shape, code, zero=zero)
        assert isinstance(tensor, torch.Tensor), message
        assert list(tensor.shape) == shape and tensor.dtype == dtype and tensor.is_contiguous()
        assert tensor.device.type == "cpu" and not tensor.requires_grad
        assert raw == fb.pack_tensor_info(fb.describe(tensor))
        if zero:
            assert not tensor.any()
        reference = fb.empty(shape, code, fb.DEVICE_CPU, -1, zero)
        assert (reference.shape, reference.dtype, reference.stride()) == (
            tensor.shape, tensor.dtype, tensor.stride())


def test_empty_result_is_an_owned_reference():
    import sys

    tensor, _, _ = NATIVE.empty([4], fb.dtype_code(torch.float32))
    assert sys.getrefcount(tensor) == 2  # the local name and getrefcount's argument


@pytest.mark.parametrize(
    "shape, dtype, device_type, fragment",
    [
        ([2], 0, fb.DEVICE_CPU, "dtype code 0"),
        ([2], 99, fb.DEVICE_CPU, "dtype code 99"),
        ([1] * 9, 9, fb.DEVICE_CPU, "rank 9"),
        ([2, -1], 9, fb.DEVICE_CPU, "negative extent -1 in dimension 1"),
        ([2], 9, fb.DEVICE_OTHER, "CPU or CUDA"),
    ],
)
def test_empty_errors(shape, dtype, device_type, fragment):
    tensor, _, message = NATIVE.empty(shape, dtype, device_type, 0)
    assert tensor is None and fragment in message
    with pytest.raises(ValueError, match=fragment):
        fb.empty(shape, dtype, device_type, 0, 0)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only torch error")
def test_empty_cuda_without_cuda_fails_cleanly():
    tensor, _, message = NATIVE.empty([2], fb.dtype_code(torch.float32), fb.DEVICE_CUDA, 0)
    assert tensor is None and message


# ---------------------------------------------------------------------------------------------
# apply_autograd, through both bridges


@pytest.fixture(params=BRIDGES, ids=lambda b: b.name)
def bridge(request):
    return request.param


def test_forward_and_gradients(bridge):
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    (y,), kernel, released = run_fn(bridge, a, b)
    assert kernel.forward_calls == 1
    assert torch.allclose(y, a * b + torch.sin(a))
    assert y.grad_fn is not None and y.requires_grad
    assert released() == 0
    y.sum().backward()
    ga, gb = expected_grads(a, b)
    assert torch.allclose(a.grad, ga) and torch.allclose(b.grad, gb)
    assert kernel.backward_calls[0]["mask"] == [True, True]
    # sum()'s backward hands over an expanded (stride-0) gradient, described as such.
    assert kernel.backward_calls[0]["grad_output_strides"] == [(0, 0)]
    del y
    gc.collect()
    assert released() == 1


def test_grad_fn_is_one_node_named_alike(bridge):
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    (y0, y1), _, _ = run_fn(bridge, a, b, n_outputs=2)
    # The native node carries the name torch gives the fallback's torch.autograd.Function.
    assert y0.grad_fn.name() == "ShadegradFunctionBackward"
    assert y1.grad_fn is y0.grad_fn
    assert len(y0.grad_fn.next_functions) == 2


def test_grad_wrt_some_inputs(bridge):
    a = torch.randn(3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    (y,), kernel, _ = run_fn(bridge, a, b)
    (ga,) = torch.autograd.grad(y.sum(), a)
    assert torch.allclose(ga, expected_grads(a, b)[0]) and b.grad is None
    if bridge.name == "native":
        # The mask follows the graph task (the edge to b is not needed here), not requires_grad.
        assert kernel.backward_calls[0]["mask"] == [True, False]


def test_native_backward_sees_saved_inputs_and_contiguous_zeroed_buffers():
    a = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 2, dtype=torch.float64).t()  # non-contiguous, no grad
    (y,), kernel, _ = run_fn(NativeBridge(), a, b)
    y.backward(torch.ones_like(y))
    record = kernel.backward_calls[0]
    assert record["saved_data"] == [a.data_ptr(), b.data_ptr()]
    assert record["stream"] == 0
    grad_a = TensorInfo.from_buffer_copy(record["grad_input_infos"][0])
    assert (list(grad_a.shape[:2]), list(grad_a.strides[:2])) == ([2, 3], [3, 1])
    assert (grad_a.dtype, grad_a.requires_grad, grad_a.numel) == (10, 0, 6)
    assert record["grad_input_infos"][1] == b"\0" * 176  # no grad wanted: data == nullptr
    assert torch.allclose(a.grad, expected_grads(a, b)[0])


@pytest.mark.parametrize("which", [(True, True), (True, False), (False, True)])
def test_gradcheck(bridge, which):
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=which[0])
    b = torch.randn(3, 4, dtype=torch.float64, requires_grad=which[1])

    def fn(a, b):
        return run_fn(bridge, a, b)[0][0]

    assert torch.autograd.gradcheck(fn, (a, b))


def test_gradcheck_broadcast_input(bridge):
    # The stride-0 input gets a full-size gradient; torch's expand backward reduces it.
    a = torch.randn(4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)

    def fn(a, b):
        return run_fn(bridge, a.expand(3, 4), b)[0][0]

    assert torch.autograd.gradcheck(fn, (a, b))


def test_gradcheck_two_outputs(bridge):
    a = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)

    def fn(a, b):
        return tuple(run_fn(bridge, a, b, n_outputs=2)[0])

    assert torch.autograd.gradcheck(fn, (a, b))


def test_grad_mask_skips_inputs_without_grad(bridge):
    a = torch.randn(5, requires_grad=True)
    b = torch.randn(5)
    (y,), kernel, _ = run_fn(bridge, a, b)
    y.sum().backward()
    assert kernel.backward_calls[0]["mask"] == [True, False]
    assert b.grad is None
    assert torch.allclose(a.grad, expected_grads(a, b)[0])


def test_no_node_without_grad(bridge):
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3)
    with torch.no_grad():
        (y,), kernel, released = run_fn(bridge, a, b)
    assert y.grad_fn is None and not y.requires_grad and kernel.forward_calls == 1
    gc.collect()
    assert released() == 1  # no node kept it
    (z,), _, released = run_fn(bridge, torch.randn(3), torch.randn(3))
    assert z.grad_fn is None
    gc.collect()
    assert released() == 1


def test_undefined_grad_output_is_null(bridge):
    a = torch.randn(4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    (y0, y1), kernel, _ = run_fn(bridge, a, b, n_outputs=2)
    assert y1.grad_fn is y0.grad_fn
    y0.sum().backward()
    assert kernel.backward_calls[0]["grad_output_none"] == [False, True]
    ga, gb = expected_grads(a, b)
    assert torch.allclose(a.grad, ga) and torch.allclose(b.grad, gb)


def test_integer_output_is_not_differentiable(bridge):
    a = torch.randn(4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    (y, mask), kernel, _ = run_fn(bridge, a, b, n_outputs=2, second_dtype=torch.int64)
    assert torch.equal(mask, (a > 0).long())
    assert not mask.requires_grad and y.requires_grad
    y.sum().backward()
    assert kernel.backward_calls[0]["grad_output_none"] == [False, True]


def test_mark_dirty_on_user_output(bridge):
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 4, dtype=torch.float64)
    out = torch.zeros(3, 4, dtype=torch.float64)
    version = out._version
    kernel = Kernel([a, b], [out])
    rc, message, released = bridge.apply([a, b], [out], [1], kernel)
    assert rc == 0, message
    assert out.grad_fn is not None and out.requires_grad  # the same object got the node
    assert out._version == version + 1
    assert torch.allclose(out, a * b + torch.sin(a))
    (out * 2).sum().backward()
    assert torch.allclose(a.grad, expected_grads(a, b, torch.full_like(a, 2.0))[0])
    del out
    gc.collect()
    assert released() == 1


def test_mark_dirty_overwrites_history_of_non_leaf(bridge):
    a = torch.randn(3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64)
    w = torch.randn(3, dtype=torch.float64, requires_grad=True)
    out = w * 3  # non-leaf; its old value is overwritten, so w gets no gradient through it
    kernel = Kernel([a, b], [out])
    rc, message, _ = bridge.apply([a, b], [out], [1], kernel)
    assert rc == 0, message
    out.sum().backward()
    assert w.grad is None
    assert torch.allclose(a.grad, expected_grads(a, b)[0])


def test_dirty_output_that_is_an_input(bridge):
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    a = x * 1  # non-leaf, modified in place
    b = torch.randn(3, dtype=torch.float64)
    expected = a.detach() * b + torch.sin(a.detach())
    kernel = Kernel([a, b], [a])
    rc, message, _ = bridge.apply([a, b], [a], [1], kernel)
    assert rc == 0, message
    assert torch.allclose(a, expected) and a.grad_fn is not None
    a.sum().backward()
    # The saved input is the tensor as modified in place (torch's rule for dirty inputs).
    assert torch.allclose(x.grad, expected_grads(expected, b)[0])


def test_dirty_leaf_requiring_grad_is_rejected_before_forward(bridge):
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3)
    out = torch.zeros(3, requires_grad=True)
    kernel = Kernel([a, b], [out])
    rc, message, released = bridge.apply([a, b], [out], [1], kernel)
    assert rc != 0 and "leaf" in message and "output 0" in message
    assert kernel.forward_calls == 0 and not out.any()
    gc.collect()
    assert released() == 1


def test_dirty_output_requiring_grad_under_no_grad(bridge):
    # Like a torch in-place op under no_grad: written, version bumped, no history attached.
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3)
    out = torch.zeros(3, requires_grad=True)
    version = out._version
    kernel = Kernel([a, b], [out])
    with torch.no_grad():
        rc, message, released = bridge.apply([a, b], [out], [1], kernel)
    assert rc == 0, message
    assert torch.allclose(out.detach(), (a * b + torch.sin(a)).detach())
    assert out._version == version + 1
    assert out.is_leaf and out.requires_grad and out.grad_fn is None
    gc.collect()
    assert released() == 1


def test_output_aliasing_input_must_be_dirty(bridge):
    a = torch.randn(3, requires_grad=True) * 1
    b = torch.randn(3)
    kernel = Kernel([a, b], [a])
    rc, message, released = bridge.apply([a, b], [a], [0], kernel)
    assert rc != 0 and "not marked as modified in place" in message
    assert kernel.forward_calls == 0
    gc.collect()
    assert released() == 1


def test_in_place_modification_of_saved_input_raises(bridge):
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3)
    (y,), kernel, _ = run_fn(bridge, a, b)
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    assert kernel.backward_calls == []


def test_retain_graph_and_repeated_backward(bridge):
    a = torch.randn(4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    (y,), kernel, released = run_fn(bridge, a, b)
    loss = y.sum()
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    loss.backward()
    ga, gb = expected_grads(a, b)
    assert torch.allclose(a.grad, 3 * ga) and torch.allclose(b.grad, 3 * gb)
    assert len(kernel.backward_calls) == 3 and released() == 0
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    del y, loss
    gc.collect()
    assert released() == 1


def test_forward_failure_reports_and_releases(bridge):
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3)
    out = bridge.empty_like(a)
    kernel = Kernel([a, b], [out], fail_forward="kernel exploded: bad index 17")
    rc, message, released = bridge.apply([a, b], [out], [0], kernel)
    assert rc != 0 and "kernel exploded: bad index 17" in message
    assert out.grad_fn is None
    gc.collect()
    assert released() == 1


def test_backward_failure_raises_runtime_error(bridge):
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3)
    failure = "backward kernel: launch failed (42)"
    (y,), kernel, released = run_fn(bridge, a, b, fail_backward=failure)
    with pytest.raises(RuntimeError, match=r"backward kernel: launch failed \(42\)"):
        y.sum().backward()
    del y
    gc.collect()
    assert released() == 1


def test_native_backward_failure_without_message():
    a = torch.randn(3, requires_grad=True)
    (y,), _, _ = run_fn(NativeBridge(), a, torch.randn(3), fail_backward="silent", backward_rc=7)
    with pytest.raises(RuntimeError, match="backward kernel failed with code 7"):
        y.sum().backward()


def test_double_backward_raises(bridge):
    a = torch.randn(3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    (y,), _, _ = run_fn(bridge, a, b)
    (ga,) = torch.autograd.grad(y.sum(), a, create_graph=True)
    assert torch.allclose(ga, expected_grads(a, b)[0])
    # The gradient depends on the inputs, so it is tracked and a second derivative must fail
    # instead of silently being zero.
    assert ga.requires_grad
    with pytest.raises(RuntimeError, match="double backward is not supported"):
        ga.sum().backward()
    # The same when the incoming gradient itself requires grad.
    g = torch.ones(3, dtype=torch.float64, requires_grad=True)
    (y2,), _, _ = run_fn(bridge, a, b)
    (ga2,) = torch.autograd.grad(y2, a, g, create_graph=True)
    with pytest.raises(RuntimeError, match="double backward is not supported"):
        torch.autograd.grad(ga2.sum(), g)
    # Without create_graph nothing is tracked.
    (y3,), _, _ = run_fn(bridge, a, b)
    (ga3,) = torch.autograd.grad(y3.sum(), a)
    assert not ga3.requires_grad


def test_native_rejects_non_tensor_inputs_and_releases():
    kernel = Kernel([], [])
    rc, message, released = NativeBridge().apply([torch.zeros(1), 3], [torch.zeros(1)], [0], kernel)
    assert rc != 0 and "input 1 is not a torch.Tensor" in message
    assert kernel.forward_calls == 0
    assert released() == 1


def test_bridges_agree_on_gradients():
    torch.manual_seed(0)
    a0 = torch.randn(2, 5, dtype=torch.float64)
    b0 = torch.randn(5, dtype=torch.float64)
    w = torch.randn(2, 5, dtype=torch.float64)
    grads = []
    for bridge in BRIDGES:
        a = a0.clone().requires_grad_()
        b = b0.clone().requires_grad_()
        (y0, y1), _, _ = run_fn(bridge, a, b.expand(2, 5), n_outputs=2)
        ((y0 * w).sum() + y1.t().sum()).backward()
        grads.append((a.grad, b.grad))
    assert torch.equal(grads[0][0], grads[1][0]) and torch.equal(grads[0][1], grads[1][1])


# ---------------------------------------------------------------------------------------------
# CUDA (only where torch has CUDA and a device)

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@cuda
def test_cuda_describe_matches_fallback():
    for t in _describe_cases("cuda")[::3]:
        _assert_same_description(t)
    for index in range(torch.cuda.device_count()):
        _assert_same_description(torch.zeros(3, device=f"cuda:{index}"))


@cuda
def test_cuda_empty_and_stream():
    for index in range(torch.cuda.device_count()):
        tensor, raw, message = NATIVE.empty([3, 2], 9, fb.DEVICE_CUDA, index, 1)
        assert tensor is not None, message
        assert tensor.device == torch.device("cuda", index) and not tensor.any()
        assert raw == fb.pack_tensor_info(fb.describe(tensor))
        stream = fb.current_stream(fb.DEVICE_CUDA, index)
        assert NATIVE.current_stream(fb.DEVICE_CUDA, index) == stream
    tensor, _, message = NATIVE.empty([2], 9, fb.DEVICE_CUDA, -1, 0)
    assert tensor is not None and tensor.device.index == torch.cuda.current_device(), message
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        assert NATIVE.current_stream(fb.DEVICE_CUDA, 0) == side.cuda_stream != 0
        assert fb.current_stream(fb.DEVICE_CUDA, 0) == side.cuda_stream
        assert NATIVE.current_stream(fb.DEVICE_CUDA, -1) == side.cuda_stream
    assert NATIVE.current_stream(fb.DEVICE_CUDA, 0) == torch.cuda.current_stream().cuda_stream
    tensor, _, message = NATIVE.empty([2], 9, fb.DEVICE_CUDA, 99, 0)
    assert tensor is None and message


@cuda
def test_cuda_gradcheck_and_stream(bridge):
    a = torch.randn(3, 4, dtype=torch.float64, device="cuda", requires_grad=True)
    b = torch.randn(3, 4, dtype=torch.float64, device="cuda", requires_grad=True)

    def fn(a, b):
        return run_fn(bridge, a, b)[0][0]

    assert torch.autograd.gradcheck(fn, (a, b))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        (y,), kernel, _ = run_fn(bridge, a, b)
        y.sum().backward()
    torch.cuda.synchronize()
    if bridge.name == "native":
        # The engine runs backward on the forward's stream; the kernel is handed that stream.
        assert kernel.backward_calls[0]["stream"] == side.cuda_stream
