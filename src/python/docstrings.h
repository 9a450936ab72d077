// src/python/docstrings.h — the docstrings and signatures of the names shadegrad._core binds
// (help(), IDEs): one place for the user-facing text of module.cpp's bindings.
#pragma once

namespace sg::py::doc {

constexpr const char* kDeviceType =
    "The kind of device a module runs on: DeviceType.cpu (generated C++, compiled by the host\n"
    "compiler) or DeviceType.cuda (generated CUDA, compiled by NVRTC, run on torch's streams).";

constexpr const char* kDevice =
    "Where a module's kernels run: made by shadegrad.create_device() / create_torch_device().\n"
    "\n"
    "Attributes: type (a DeviceType), index (the CUDA device index; -1 for the CPU) and\n"
    "include_paths (folders searched for a module's imports and includes, after the folder of\n"
    "the importing file).";

constexpr const char* kCreateDevice =
    "Checks and describes a device; use shadegrad.create_device() / create_torch_device().\n"
    "\n"
    "Raises RuntimeError for a CUDA device that cannot run kernels here (no CUDA build of torch, no\n"
    "driver, no NVRTC, no such device index), saying why and how to fix it.";

constexpr const char* kModule =
    "A module of kernel-language source, parsed and checked when it is loaded.\n"
    "\n"
    "Its functions are attributes (m.f, m[\"f\"]) that return shadegrad Function objects; its\n"
    "structs are shadegrad Struct objects (m.S). Kernels are generated and compiled per call plan,\n"
    "on first use.\n"
    "\n"
    "Example:\n"
    "    device = shadegrad.create_torch_device(type=shadegrad.DeviceType.cpu)\n"
    "    m = shadegrad.Module.load_from_source(device, \"example\", '''\n"
    "        [Differentiable] float sq(float x) { return x * x; }''')\n"
    "    y = m.sq(torch.tensor([1.0, 2.0], requires_grad=True))   # tensor([1., 4.])";

constexpr const char* kLoadFromSourceSig =
    "def load_from_source(device: Device, name: str, source: str, options: dict | None = None, "
    "link: collections.abc.Sequence[Module] | None = None) -> Module";
constexpr const char* kLoadFromSource =
    "Loads a module from kernel-language source text.\n"
    "\n"
    "Args:\n"
    "    device: where its kernels run (shadegrad.create_torch_device()).\n"
    "    name: the module's name in diagnostics (\"name.slang\" in `file:line:col`).\n"
    "    source: the kernel-language text (Slang-compatible; `import slangpy;` is built in).\n"
    "    options: module options, each False by default: strict_broadcasting (no implicit rank\n"
    "        padding), deterministic (bitwise reproducible gradients), fast_math (approximate\n"
    "        float intrinsics on CUDA).\n"
    "    link: modules whose `export static const` values fill this module's `extern` constants.\n"
    "\n"
    "Returns: the Module.\n"
    "Raises: shadegrad.CompileError listing every error with file:line:col and a caret;\n"
    "    ValueError for an unknown option; TypeError for a `link` entry that is not a Module.";

constexpr const char* kLoadFromFileSig =
    "def load_from_file(device: Device, path: str, options: dict | None = None, "
    "link: collections.abc.Sequence[Module] | None = None) -> Module";
constexpr const char* kLoadFromFile =
    "Loads a module from a kernel file (its imports are found beside it, then in the device's\n"
    "include_paths). Arguments, result and errors as for load_from_source; ValueError when the\n"
    "file cannot be read.";

constexpr const char* kFindFunctionSig = "def find_function(self, name: str) -> Function | None";
constexpr const char* kRequireFunctionSig = "def require_function(self, name: str) -> Function";
constexpr const char* kFindStructSig = "def find_struct(self, name: str) -> Struct | None";
constexpr const char* kRequireStructSig = "def require_struct(self, name: str) -> Struct";
constexpr const char* kFindFunctionInStructSig =
    "def find_function_in_struct(self, struct_name: str, name: str) -> Function | None";
constexpr const char* kFindFunction =
    "The Function of that name (\"f\", \"S.method\", \"f<3>\" for explicit generic arguments), or\n"
    "None when the module has none.";
constexpr const char* kRequireFunction = "As find_function, but raises ValueError when the module has no such function.";
constexpr const char* kFindStruct = "The Struct of that name, or None.";
constexpr const char* kRequireStruct = "As find_struct, but raises ValueError when the module has no such struct.";
constexpr const char* kFindFunctionInStruct = "The method `name` of struct `struct_name` as a Function, or None.";
constexpr const char* kFunctionNames = "The names of the module's functions, in source order.";
constexpr const char* kStructNames = "The names of the module's structs, in source order.";

constexpr const char* kFunction =
    "A kernel function of a Module, called like a Python function on tensors and values.\n"
    "\n"
    "fn(*args, **kwargs) vectorizes the function over the tensors' shapes and returns a torch\n"
    "tensor (Python values for a call without tensors). Under autograd the result has a grad_fn\n"
    "when the function is [Differentiable] and a differentiable argument requires grad.\n"
    "Keyword `_result=` takes a tensor to write, or \"torch\" / \"numpy\" for the kind of result.\n"
    "\n"
    "Raises TypeError / ValueError naming the function and the parameter for arguments that do\n"
    "not bind (type, dtype, shape, device), CompileError for code that does not compile.\n"
    "\n"
    "Modifiers return a new Function sharing this one's plan cache: map, set, return_type, bind,\n"
    "constants, deterministic, fast_math. fn.bwds(...) is the backward call.\n"
    "\n"
    "Example:\n"
    "    out = m.mul2(shadegrad.grid((64, 64)), a, b)    # a (64, 64) tensor\n"
    "    out.sum().backward()";

constexpr const char* kCallSig = "def call(self, *args, **kwargs) -> typing.Any";
constexpr const char* kCall = "The same as calling the function: fn.call(*args) is fn(*args).";
constexpr const char* kDebugCodeSig = "def debug_code(self, *args, **kwargs) -> str";
constexpr const char* kDebugCode =
    "The code a call with these arguments runs, without running it: the call plan's key, the\n"
    "forward glue (kernel language) and kernel, and under autograd the backward glue and kernel.";
constexpr const char* kKeyOfCallSig = "def call_key(self, *args, **kwargs) -> str";
constexpr const char* kKeyOfCall =
    "The readable call key of a call with these arguments: calls with equal keys share a plan.";
constexpr const char* kMapSig = "def map(self, *args: tuple[int, ...] | str, **kwargs: tuple[int, ...] | str) -> Function";
constexpr const char* kMap =
    "The function with arguments mapped, by position or by parameter name: a tuple gives, per\n"
    "argument dimension, the call dimension it goes to; a type name (\"float3\") reads the\n"
    "argument as that type.\n"
    "\n"
    "Example: fn.map((1, 0), b=(0,))(a, b) transposes a's dimensions onto the call.\n"
    "Raises TypeError for a parameter the function does not have.";
constexpr const char* kSetSig =
    "def set(self, values: dict | collections.abc.Callable[..., dict] = ..., /, **kwargs: object) -> Function";
constexpr const char* kSet =
    "The function with values every call gets (SlangPy's set): keyword arguments, a dict, or a\n"
    "callable returning one (called per call, with the function object when it takes an argument).\n"
    "A name that is a global of the module (a global buffer, a uniform global) binds that global;\n"
    "another name is a value for a parameter the call does not pass. Sets add up; a later one wins.";
constexpr const char* kBindSig = "def bind(self, this: object) -> Function";
constexpr const char* kBind = "A struct method with its `this` given (m.S.method.bind(value)).";
constexpr const char* kReturnTypeSig = "def return_type(self, type: object) -> Function";
constexpr const char* kReturnType =
    "The function whose calls return that kind of result: \"torch\" / torch.Tensor or \"numpy\" /\n"
    "numpy.ndarray (as `_result=` for every call).";
constexpr const char* kConstantsSig = "def constants(self, values: dict) -> Function";
constexpr const char* kConstants =
    "The function with these `extern static const` values (by name); its calls get plans of\n"
    "their own.";
constexpr const char* kDeterministicSig = "def deterministic(self, enabled: bool = True) -> Function";
constexpr const char* kDeterministic =
    "The function whose backward gives bitwise the same gradients on every run (fixed-order\n"
    "reductions instead of float atomics).";
constexpr const char* kFastMathSig = "def fast_math(self, enabled: bool = True) -> Function";
constexpr const char* kFastMath =
    "The function whose CUDA kernels use approximate float intrinsics and division (no effect on\n"
    "the CPU).";

constexpr const char* kCallGroupShapeSig = "def call_group_shape(self, shape: Sequence[int] | int | None) -> Function";
constexpr const char* kCallGroupShape =
    "The function whose calls run in SlangPy's call groups of `shape` elements (padded with\n"
    "leading 1s to the call's rank; at most 1024 elements): each group is one launch block, so\n"
    "the function may use groupshared memory, barriers and wave operations, and reads its ids\n"
    "with CallShapeInfo (import slangpy). Part of the call key; None: no call groups.";

constexpr const char* kStruct =
    "A struct of a Module (m.S): .name, .fields ({field: type name}); its methods are attributes\n"
    "(m.S.method), Functions taking `this` first or through .bind(this).";

constexpr const char* kGridArg =
    "The call index as an argument (made by shadegrad.grid(shape, offset, stride)).";

constexpr const char* kTorchBridgeStatus =
    "Which torch bridge is active: a dict with 'active' (\"native\" or \"fallback\"), 'reason'\n"
    "(why that one) and 'native_path' (the native bridge library looked for).";
constexpr const char* kCudaStatus =
    "What CUDA support this process found: a dict with 'driver' and 'nvrtc' (the library loaded,\n"
    "or why none was), 'available' (bool) and 'device_count'.";
constexpr const char* kDebugMode = "Whether debug mode is on (see set_debug_mode).";

}  // namespace sg::py::doc
