// src/python/function.h — the Python-visible objects: Module, Function, Struct.
// Function::call is the hot path: describe the Python arguments in C++, hand them to the call
// layer (call::invoke: plan, launch, autograd), and turn its results into Python objects.
// Modifiers (map, set, return_type) make new Function objects that share the plan cache of the
// function they came from; the ones that change the kernel are part of the call key.
#pragma once

#include <nanobind/nanobind.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "call/coop_launch.h"
#include "call/invoke.h"
#include "call/resolve.h"
#include "call/user_module.h"
#include "python/marshal.h"

namespace sg::py {

namespace nb = nanobind;

struct Device {
    DeviceType type = DeviceType::CPU;
    int index = -1;
    std::vector<std::string> include_paths;  ///< create_device(include_paths=[...])
};

/// Module options (Module.load_from_source(..., options={...})).
struct ModuleOptions {
    bool strict_broadcasting = false;
    bool deterministic = false;  ///< every function's gradients bitwise the same run to run
    bool fast_math = false;      ///< approximate float intrinsics on CUDA (codegen::CodegenOptions)
    /// Preprocessor macros defined before the source (options={"defines": {...}}).
    std::vector<std::pair<std::string, std::string>> defines;
};

/// A function object's modifiers: the kernel-changing ones (in the call key, call/invoke.h) and
/// those that only change how Python arguments and results are converted.
struct Modifiers {
    call::Modifiers kernel;         ///< dimension and type maps, deterministic, fast math
    nb::object set_values;          ///< fn.set(...): a list of dicts and callbacks (set_values.h)
    nb::object bound_this;          ///< fn.bind(this): a method's `this`, before the positional arguments
    ResultMode return_mode = ResultMode::Auto;
};

class Function {
public:
    Function(std::shared_ptr<call::FunctionState> state, Device device, Modifiers modifiers);
    ~Function();
    Function(const Function&) = delete;
    Function& operator=(const Function&) = delete;

    nb::object call(nb::args args, nb::kwargs kwargs);
    /// The call again with argument node `arg` (a vector value given to a scalar parameter) as a
    /// tensor of its components, as SlangPy reads it; false when that node is not a top-level
    /// value type this function object can replace.
    bool by_components(const CallScratch& s, const nb::args& args, const nb::kwargs& kwargs, int arg, nb::object& out);
    /// The backward of a call without its forward (fn.bwds, torch.compile's backward): `args` and
    /// `kwargs` as for a call (tensors that require grad get gradients), `result_grads` the
    /// gradients of the result leaves, `written_grads` (tensor, incoming gradient) pairs for
    /// tensors the call writes. Returns [(argument tensor, its gradient)], or None when no
    /// argument takes part in differentiation.
    nb::object backward(nb::tuple args, nb::dict kwargs, nb::list result_grads, nb::list written_grads);
    /// Launches a [CUDAKernel] function (call/coop_launch.h) with an explicit block and grid
    /// shape (each 1 to 3 numbers); `thread_count` not None: SlangPy's 1-D `_thread_count`, which
    /// chooses the shape itself.
    /// `pass`: call::CoopPass (0 the kernel, 1 its backward, 2 its forward derivative). A primal
    /// `_thread_count` launch whose DiffTensorView arguments require grad goes through
    /// shadegrad._coop_autograd (a torch autograd node around it); its result is then returned.
    nb::object launch(nb::tuple args, nb::dict kwargs, nb::tuple block, nb::tuple grid, nb::object thread_count,
                      int pass = 0);
    /// The [CUDAKernel] function's parameters: (name, kind) with kind 0 value, 1 TensorView,
    /// 2 DiffTensorView.
    nb::list coop_params() const;
    /// Whether this is a [CUDAKernel] function.
    bool cooperative() const { return state_->cooperative; }
    bool view_function() const { return state_->view_function; }
    /// The generated code of the kernels this call would run (glue, target source, IR).
    std::string debug_code(nb::args args, nb::kwargs kwargs);
    /// The readable rendering of this call's key.
    std::string call_key(nb::args args, nb::kwargs kwargs);
    /// fn.map(...): dimension mapping by position and keyword.
    Function* map(nb::args args, nb::kwargs kwargs) const;
    /// fn.set(dict | callback | **values): SlangPy's globals, or parameter values (set_values.h).
    Function* set(nb::args args, nb::kwargs kwargs) const;
    /// fn.return_type(t).
    Function* return_type(nb::handle t) const;
    /// fn.bind(this): the method with `this` given (m.Struct.method.bind(value)).
    Function* bind(nb::object self) const;
    /// fn.constants({...}): the function with these `extern static const` values. Its calls get
    /// plans of their own (the values are part of the call key).
    Function* constants(nb::dict values) const;
    /// fn.deterministic(enabled=True): the function whose backward gives bitwise the same
    /// gradients on every run (fixed-order reductions); part of the call key.
    Function* deterministic(bool enabled) const;
    /// fn.fast_math(enabled=True): the function whose CUDA kernels use approximate float
    /// intrinsics and division (no effect on the CPU); part of the call key.
    Function* fast_math(bool enabled) const;
    /// fn.call_group_shape(shape): SlangPy's call groups (call/call_group.h); part of the call
    /// key. `shape` is a sequence of ints (or an int; None: no call groups).
    Function* call_group_shape(nb::handle shape) const;
    /// Number of cached call plans (shared by every modifier of this function).
    size_t plan_count() const { return state_->plans.size(); }
    const std::string& name() const { return state_->name; }
    const call::Callee& callee() const { return state_->callee; }
    /// The binding of a call (for .bwds and tests): parameter names in order.
    std::vector<std::string> parameter_names() const;
    /// (name, "in" | "out" | "inout", type name) per parameter.
    std::vector<std::tuple<std::string, std::string, std::string>> parameters() const;
    /// The parameters that have a default value, by name, with its source text.
    std::map<std::string, std::string> parameter_defaults() const;
    bool returns_value() const;
    /// repr(fn): "<shadegrad Function [Differentiable] float f(float x) on cpu>"; overloads are
    /// counted ("f(...), 3 overloads").
    std::string repr() const;
    const Device& device() const { return device_; }
    const std::shared_ptr<call::UserModule>& user_module() const { return state_->module; }
    /// Whether this object carries modifiers (map, set, return_type); torch.compile support
    /// does not model them yet (compile_support.cpp).
    bool has_modifiers() const {
        return !mods_.kernel.call().dim_maps.empty() || !mods_.kernel.empty() ||
               (mods_.set_values.is_valid() && !mods_.set_values.is_none()) || mods_.return_mode != ResultMode::Auto ||
               mods_.bound_this.is_valid();
    }
    bool strict_broadcasting() const {
        return state_->module_options.strict_broadcasting || mods_.kernel.call().strict_broadcasting;
    }

private:
    /// The declaration parameter_names(), parameters() and returns_value() describe: the first
    /// candidate (overloads of one name normally share their parameter names and directions).
    const lang::FunctionDecl* representative() const;
    /// Describes the arguments into `s`, the thread's scratch; returns whether grad mode is on.
    /// (The scratch is thread-local: each entry looks it up once and passes it on, since every
    /// lookup of a thread-local in a shared library is a call.)
    bool describe(CallScratch& s, nb::args& args, nb::kwargs& kwargs);
    /// The described arguments in `s` as the call layer takes them.
    static call::CallArgs described(const CallScratch& s);
    /// The Python result of the call just made into `s.outcome`.
    nb::object finish(CallScratch& s);
    /// A copy of this function object with other modifiers.
    Function* with(Modifiers m) const { return new Function(state_, device_, std::move(m)); }

    std::shared_ptr<call::FunctionState> state_;
    Device device_;
    Modifiers mods_;
};

/// A struct of a module: its name and fields (m.find_struct / m.require_struct / m.Particle).
struct StructInfo {
    std::string name;
    std::vector<std::pair<std::string, std::string>> fields;  ///< (name, type name)
    nb::object module;  ///< the Module it came from (m.Struct.method looks methods up there)
};

class Module {
public:
    /// `path` is the file's path for load_from_file ("" for a source string); `linked` the
    /// exports of the link=[...] modules, in order.
    Module(Device device, std::string name, std::string source, ModuleOptions options = {}, std::string path = "",
           std::vector<lang::LinkConstants> linked = {});
    /// The `export static const` values this module gives the modules that link it.
    const lang::LinkConstants& exports() const { return module_->exports(); }
    /// The function named `name`; throws AttributeError (m.nosuch) when there is none.
    nb::object function(const std::string& name);
    /// Raises the TypeError that says why function or method `name` ("S.m") was set aside at load
    /// (textures, samplers); returns when it was not.
    void throw_if_set_aside(const std::string& name) const;
    nb::object find_function(const std::string& name);
    /// A method of a struct (`struct_name` may spell nesting "A::B"); None when absent.
    nb::object find_function_in_struct(const std::string& struct_name, const std::string& name);
    std::shared_ptr<StructInfo> find_struct(const std::string& name) const;
    std::vector<std::string> function_names() const { return module_->function_names(); }
    std::vector<std::string> struct_names() const { return module_->struct_names(); }
    const std::string& name() const { return module_->name(); }
    /// The warnings of the load, rendered (file:line:col, the line, a caret); "" when none.
    std::string load_warnings() const { return module_->warnings(); }
    Device device() const { return device_; }
    const ModuleOptions& options() const { return options_; }

private:
    Device device_;
    ModuleOptions options_;
    std::shared_ptr<call::UserModule> module_;
    std::unordered_map<std::string, nb::object> functions_;
};

}  // namespace sg::py
