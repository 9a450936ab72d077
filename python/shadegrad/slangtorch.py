# python/shadegrad/slangtorch.py — slangtorch's API over shadegrad: a slangtorch program imports
# `shadegrad.slangtorch` instead of `slangtorch` and keeps its kernels and launches unchanged.
"""slangtorch-compatible loading and launching of [CUDAKernel] functions.

    import shadegrad.slangtorch as slangtorch
    m = slangtorch.loadModule("splat.slang", defines={"TILE": 16})
    m.rasterize(xy=xy, out=image).launchRaw(blockSize=(16, 16, 1), gridSize=(8, 8, 1))

A module's attributes are its [CUDAKernel] functions (`[AutoPyBindCUDA]` marks them for
slangtorch; shadegrad accepts it and needs nothing else). Calling one with its arguments (by
position or name: a torch tensor per TensorView parameter, numbers for scalars) returns a
launchable whose `launchRaw(blockSize=(x, y, z), gridSize=(x, y, z))` runs it on the tensors'
device, on torch's current stream; `.bwd(...)` / `.fwd(...)` give the derivative kernels of a
[Differentiable] one, with (values, gradient) pairs for DiffTensorView arguments. `defines` become preprocessor macros defined before the file
is read; they are part of the module cache's key.
"""
from __future__ import annotations

import hashlib
import os
from typing import Any, Optional

from . import DeviceType, Module, create_device

__all__ = ["loadModule", "loadModuleFromSource", "LaunchableKernel", "KernelFunction", "SlangTorchModule"]

_cache: dict = {}


def _define_items(defines: Optional[dict]) -> list:
    if defines is None:
        return []
    if not isinstance(defines, dict):
        raise TypeError(f"defines takes a dict of macro names to values, got {type(defines).__name__}")
    return sorted((str(k), str(v)) for k, v in defines.items())


def _options(defines: list) -> dict:
    return {"defines": dict(defines)} if defines else {}


class LaunchableKernel:
    """One call's arguments for a [CUDAKernel] function, ready to launch."""

    def __init__(self, function, args: tuple, kwargs: dict, pass_: int = 0):
        self._function = function
        self._args = args
        self._kwargs = kwargs
        self._pass = pass_

    def launchRaw(self, blockSize=(1, 1, 1), gridSize=(1, 1, 1)) -> None:
        """Runs the kernel with `blockSize` threads per block and `gridSize` blocks (x, y, z)."""
        self._function._launch(tuple(self._args), dict(self._kwargs), _shape(blockSize), _shape(gridSize), None,
                               self._pass)

    def __repr__(self) -> str:
        suffix = {0: "", 1: ".bwd", 2: ".fwd"}[self._pass]
        return f"<shadegrad.slangtorch launchable {self._function.name}{suffix}>"


class KernelFunction:
    """A [CUDAKernel] function of a module: calling it with arguments gives a launchable;
    `.bwd(...)` and `.fwd(...)` give its derivative kernels' launchables ([Differentiable]
    kernels), which take a (values, gradient) pair of tensors for each DiffTensorView argument
    (a lone tensor: no gradient there)."""

    def __init__(self, function):
        self._function = function
        self.__name__ = function.name

    def __call__(self, *args, **kwargs) -> LaunchableKernel:
        self._check_keywords("", kwargs)
        return LaunchableKernel(self._function, args, kwargs)

    def bwd(self, *args, **kwargs) -> LaunchableKernel:
        """The backward kernel (bwd_diff of the kernel), launched with the same block and grid:
        a DiffTensorView's gradient receives the gradient of its loads (added) and gives the
        gradient of its stores (`store` consumes it: reads and clears; `storeOnce` reads it)."""
        self._check_keywords(".bwd", kwargs)
        return LaunchableKernel(self._function, args, kwargs, 1)

    def fwd(self, *args, **kwargs) -> LaunchableKernel:
        """The forward-mode derivative kernel (fwd_diff of the kernel): a DiffTensorView's
        gradient holds the tangent of its values; its stores write the tangent of theirs."""
        self._check_keywords(".fwd", kwargs)
        return LaunchableKernel(self._function, args, kwargs, 2)

    def _check_keywords(self, suffix: str, kwargs: dict) -> None:
        # SlangPy's launch keyword would only be stored here and the call would run nothing.
        if "_thread_count" in kwargs:
            raise TypeError(
                f"{self._function.name}{suffix}(): _thread_count= is SlangPy's launch form; a shadegrad.slangtorch "
                "kernel runs when you call .launchRaw(blockSize=..., gridSize=...) on what this call returns "
                "(or load the module with shadegrad.Module.load_from_file to launch with _thread_count=)"
            )

    def __repr__(self) -> str:
        return f"<shadegrad.slangtorch kernel {self._function.name}>"


def _shape(value) -> tuple:
    if isinstance(value, int):
        return (value,)
    return tuple(value)


class SlangTorchModule:
    """A loaded module: its [CUDAKernel] functions by name."""

    def __init__(self, module: Module):
        self._module = module
        self._kernels: dict = {}

    @property
    def module(self) -> Module:
        """The shadegrad Module underneath (its other functions are called the shadegrad way)."""
        return self._module

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        fn = self._kernels.get(name)
        if fn is None:
            fn = self._module.find_function(name)
            if fn is None:
                raise AttributeError(f"module '{self._module.name}' has no function '{name}'")
            if not fn.cooperative:
                raise AttributeError(
                    f"'{name}' is not a [CUDAKernel] function: a slangtorch module exposes its [AutoPyBindCUDA] "
                    f"[CUDAKernel] functions (call other functions through .module, the shadegrad way)")
            fn = self._kernels[name] = KernelFunction(fn)
        return fn

    def __repr__(self) -> str:
        return f"<shadegrad.slangtorch module {self._module.name}>"


def loadModule(fileName, skipNinjaCheck: bool = False, verbose: bool = False, defines: Optional[dict] = None,
               includePaths=None, **_ignored) -> SlangTorchModule:
    """Loads a .slang file (includes and imports beside it, then in `includePaths`) with
    `defines` as preprocessor macros. The same file, defines and include paths give the same
    module object while the file's contents stay the same."""
    path = os.path.abspath(os.fspath(fileName))
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    items = _define_items(defines)
    paths = tuple(os.fspath(p) for p in (includePaths or []))
    key = ("file", path, digest, tuple(items), paths)
    if key in _cache:
        return _cache[key]
    if verbose:
        print(f"shadegrad.slangtorch: loading {path} with defines {dict(items)}")
    device = create_device(DeviceType.cpu, include_paths=list(paths))
    module = SlangTorchModule(Module.load_from_file(device, path, options=_options(items)))
    _cache[key] = module
    return module


def loadModuleFromSource(source: str, moduleName: str = "module", verbose: bool = False,
                         defines: Optional[dict] = None, includePaths=None, **_ignored) -> SlangTorchModule:
    """Loads kernel-language `source` (named `moduleName` in diagnostics) like loadModule."""
    items = _define_items(defines)
    paths = tuple(os.fspath(p) for p in (includePaths or []))
    key = ("source", moduleName, hashlib.sha256(source.encode()).hexdigest(), tuple(items), paths)
    if key in _cache:
        return _cache[key]
    if verbose:
        print(f"shadegrad.slangtorch: loading {moduleName} from source with defines {dict(items)}")
    device = create_device(DeviceType.cpu, include_paths=list(paths))
    module = SlangTorchModule(Module.load_from_source(device, moduleName, source, options=_options(items)))
    _cache[key] = module
    return module
