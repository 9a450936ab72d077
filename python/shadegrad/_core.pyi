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

class Device:
    def __init__(self) -> None: ...
    @property
    def type(self) -> DeviceType: ...
    @property
    def index(self) -> int: ...
    def __repr__(self) -> str: ...

def create_device(type: DeviceType = DeviceType.cpu, index: int = 0) -> Device: ...

class GridArg:
    def __init__(self, shape: Sequence[int]) -> None: ...
    @property
    def shape(self) -> list[int]: ...
    extents: tuple[int, ...]  # set by shadegrad.grid (read by torch.compile support)
    def __repr__(self) -> str: ...

class Function:
    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        """Calls the kernel function vectorized over its arguments: a torch tensor of shape
        call_shape + element_shape, or None for a void function."""
    def debug_code(self, *args: Any, **kwargs: Any) -> str: ...
    def call_key(self, *args: Any, **kwargs: Any) -> str: ...
    @property
    def plan_count(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def device(self) -> Device: ...
    def __repr__(self) -> str: ...

class Module:
    @staticmethod
    def load_from_source(device: Device, name: str, source: str) -> Module: ...
    @staticmethod
    def load_from_file(device: Device, path: str) -> Module: ...
    def __getattr__(self, arg: str, /) -> Function: ...
    def function_names(self) -> list[str]: ...
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
