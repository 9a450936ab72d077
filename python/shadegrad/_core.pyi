# python/shadegrad/_core.pyi — type stubs for the extension shadegrad._core (src/python/module.cpp),
# first generated with `python -m nanobind.stubgen -m shadegrad._core`, then given the types the
# generator cannot see. tests/python/test_packaging.py checks that every public name and member
# of the extension is declared here.
"""shadegrad core: compiler, runtime and call dispatch"""

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple, Optional

class Diagnostic(NamedTuple):
    """One diagnostic of a CompileError: see CompileError."""

    file: Optional[str]
    line: Optional[int]
    col: Optional[int]
    code: int
    severity: str
    message: str

class CompileError(Exception):
    """
    A kernel source (or the code generated for a call) did not compile.

    str(error) is the rendered report: for each diagnostic `file:line:col: error: message`,
    the source line and a caret.

    error.diagnostics is a list of Diagnostic named tuples, in the order reported:
    (file, line, col, code, severity, message)
      file      the source's name ("m.slang"; "<glue>" for code generated for a call)
      line      1-based line
      col       1-based column, counted in bytes from the start of the line
      code      Slang's diagnostic number (30510, 41022, ...), or 0
      severity  "error", "warning" or "note"
      message   the message, without location
    file, line and col are None for a diagnostic without a location.
    """

    diagnostics: list[Diagnostic]

class DeviceType(enum.Enum):
    cpu = 0
    cuda = 1
    automatic = -1

class Device:
    def __init__(self) -> None: ...
    @property
    def type(self) -> DeviceType: ...
    @property
    def index(self) -> int: ...
    @property
    def include_paths(self) -> list[str]: ...
    def __repr__(self) -> str: ...

def create_device(type: DeviceType = DeviceType.cpu, index: int = 0, include_paths: Sequence[str] = ..., caller: str = "create_device", check: bool = True) -> Device: ...

class GridArg:
    def __init__(self, shape: Sequence[int], stride: Sequence[int] = ..., offset: Sequence[int] = ...) -> None: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def stride(self) -> list[int]: ...
    @property
    def offset(self) -> list[int]: ...
    extents: tuple[int, ...]  # set by shadegrad.grid (read by torch.compile support)
    def __repr__(self) -> str: ...

class Function:
    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        """Calls the kernel function vectorized over its arguments: a torch tensor of shape
        call_shape + element_shape, or None for a void function."""
    def call(self, /, *args: Any, **kwargs: Any) -> Any:
        """The same as calling the function."""
    def debug_code(self, *args: Any, **kwargs: Any) -> str: ...
    def _launch(self, args: tuple, kwargs: dict, block: tuple, grid: tuple, thread_count: Optional[int] = None) -> None:
        """Launches a [CUDAKernel] function with `block` threads per block and `grid` blocks
        (each 1 to 3 ints), or with `thread_count` threads in 1-D (SlangPy's _thread_count)."""
    @property
    def cooperative(self) -> bool:
        """Whether this is a [CUDAKernel] function (launched, not called per element)."""
    def call_key(self, *args: Any, **kwargs: Any) -> str: ...
    def map(self, *args: Any, **kwargs: Any) -> Function:
        """A function object whose arguments map to the given call dimensions, or are read as the
        given type names ("float3", "int64_t", "float[3]", a struct)."""
    def set(self, values: dict[str, Any] | Any) -> Function:
        """A function object that passes these values (or a callback's) for parameters not given."""
    def bind(self, this: Any) -> Function:
        """An instance method with its `this` given (m.Struct.method.bind(value))."""
    def return_type(self, type: Any) -> Function:
        """A function object whose result returns as `type` ("torch", "numpy", torch.Tensor, numpy.ndarray)."""
    def constants(self, values: dict[str, Any]) -> Function:
        """The same function with these `extern static const` values (part of the call key)."""
    def deterministic(self, enabled: bool = True) -> Function:
        """The same function whose backward gives bitwise-identical gradients on every run (part of the call key)."""
    def fast_math(self, enabled: bool = True) -> Function:
        """The same function whose CUDA kernels use approximate float math (part of the call key; no effect on the CPU)."""
    def call_group_shape(self, shape: Sequence[int] | int | None) -> Function:
        """The same function run in SlangPy's call groups of `shape` elements (groupshared memory and barriers; part of the call key)."""
    bwds: Any
    @property
    def parameter_names(self) -> list[str]: ...
    @property
    def parameters(self) -> list[tuple[str, str, str]]: ...
    @property
    def parameter_defaults(self) -> dict[str, str]: ...
    @property
    def returns_value(self) -> bool: ...
    @property
    def device_type(self) -> int: ...
    @property
    def device_index(self) -> int: ...
    @property
    def plan_count(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def device(self) -> Device: ...
    def __repr__(self) -> str: ...

class Struct:
    @property
    def name(self) -> str: ...
    @property
    def fields(self) -> dict[str, str]: ...
    @property
    def module(self) -> Module: ...
    def __getattr__(self, arg: str, /) -> Function:
        """A method: static, or an instance method taking `this` first (or through .bind)."""
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Constructs values: the struct's `__init` overloads, vectorized like any call."""
    def as_struct(self) -> Struct: ...
    def __repr__(self) -> str: ...

class Module:
    @staticmethod
    def load_from_source(device: Device, name: str, source: str, options: Optional[dict[str, Any]] = None,
                         link: Optional[Sequence[Module]] = None) -> Module: ...
    @staticmethod
    def load_from_file(device: Device, path: str, options: Optional[dict[str, Any]] = None,
                       link: Optional[Sequence[Module]] = None) -> Module: ...
    def __getattr__(self, arg: str, /) -> Any: ...
    def __getitem__(self, arg: str, /) -> Any: ...
    def find_function(self, name: str) -> Optional[Function]: ...
    def require_function(self, name: str) -> Function: ...
    def find_struct(self, name: str) -> Optional[Struct]: ...
    def find_function_in_struct(self, struct_name: str, name: str) -> Optional[Function]: ...
    def require_struct(self, name: str) -> Struct: ...
    def function_names(self) -> list[str]: ...
    def struct_names(self) -> list[str]: ...
    @property
    def strict_broadcasting(self) -> bool: ...
    @property
    def deterministic(self) -> bool: ...
    @property
    def fast_math(self) -> bool: ...
    @property
    def name(self) -> str: ...
    @property
    def device(self) -> Device: ...

def torch_bridge_status() -> dict[str, str]: ...
def cuda_status() -> dict[str, Any]: ...
def synchronize() -> None: ...
def check_faults() -> None: ...
def set_debug_mode(on: bool) -> None: ...
def debug_mode() -> bool: ...
