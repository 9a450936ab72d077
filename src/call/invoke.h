// src/call/invoke.h — the call layer's entries: one forward call of a kernel function
// (plan lookup, call shape, result allocation, packing, launch, autograd node) and the
// backward of one call without its forward. The host (src/call/host.h) allocates tensors and
// builds autograd nodes; the caller describes the arguments (ArgInfo) and turns the results back
// into its own objects. Everything between is here: the plan cache, every byte of the call key,
// the launch sequence.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "call/binder.h"
#include "call/call_key.h"
#include "call/call_plan.h"
#include "call/host.h"
#include "call/resolve.h"
#include "call/user_module.h"

namespace sg::call {

struct CompiledKernel;

/// What every function object of one kernel function shares: the module, what its calls
/// resolve, the module's options and the plan cache.
struct FunctionState {
    std::shared_ptr<UserModule> module;
    std::string name;          ///< callee.text(): "f", or "wsq<3>" with explicit generic arguments
    Callee callee;
    DeviceType device = DeviceType::CPU;
    int device_index = -1;
    /// The module's options (strict broadcasting, deterministic mode, fast math); a function
    /// object's own modifiers are added to them.
    CallModifiers module_options;
    uint32_t id = 0;           ///< unique per state: the first bytes of its keys
    std::string link_key;      ///< module->link_key(): appended to every call key
    std::unordered_map<CallKey, std::shared_ptr<CallPlan>, CallKeyHash> plans;
    /// The missing-[Differentiable] warning was given (once per function: Binding::undifferentiated_param).
    bool warned_not_differentiable = false;
    /// A [CUDAKernel] function (coop_launch.h): it is launched, never called element-wise.
    bool cooperative = false;
    /// A function that takes a TensorView or DiffTensorView without being a [CUDAKernel]
    /// function: its calls are launches too, as SlangPy makes them (coop_launch.h, view_call.cpp).
    bool view_function = false;
    /// Its kernel per device (CPU: -1, CUDA: the device index), compiled on the first launch.
    std::unordered_map<int64_t, std::shared_ptr<const CompiledKernel>> coop_kernels;
    /// Those of a function that takes views called with struct parameters from dicts, by the slot
    /// and which of their fields are tensors (view_call.cpp).
    std::map<std::string, std::shared_ptr<const CompiledKernel>> view_struct_kernels;

    /// A new state (a fresh id and an empty plan cache).
    static std::shared_ptr<FunctionState> make(std::shared_ptr<UserModule> module, Callee callee, DeviceType device,
                                               int device_index, const CallModifiers& module_options);
};

/// A function object's kernel-changing modifiers (fn.map, fn.deterministic, fn.fast_math) and
/// their bytes in the call key.
class Modifiers {
public:
    const CallModifiers& call() const { return call_; }
    const std::string& key_bytes() const { return key_bytes_; }
    bool empty() const { return key_bytes_.empty(); }
    /// Replaces the modifiers and recomputes their key bytes.
    void set(CallModifiers call);

private:
    CallModifiers call_;
    std::string key_bytes_;
};

/// One call's described arguments (composites' children after the top-level ones).
struct CallArgs {
    const ArgInfo* args = nullptr;
    size_t count = 0;       ///< top-level arguments
    size_t total = 0;       ///< argument nodes in all
    size_t positional = 0;  ///< top-level arguments passed by position
    const std::vector<std::string>* keywords = nullptr;  ///< names of the keyword arguments, in order
    int result_index = -1;  ///< the node of a `_result=` tensor, -1 when none is given
};

/// What a forward call produced. Kept by the caller and reused: a cached call allocates nothing.
struct CallOutcome {
    CallPlan* plan = nullptr;  ///< the call's plan (the function's cache keeps it)
    std::shared_ptr<CallPlan> uncached;  ///< holds `plan` where the cache does not
    /// The results: one tensor per result leaf that the call allocated, or, when the host
    /// replaced the autograd node's outputs, those (the result leaves first). Empty when
    /// `_result=` is the result and nothing was replaced.
    std::vector<HostRef> results;
    bool autograd = false;  ///< the results come out of an autograd node

    void clear() {
        plan = nullptr;
        if (uncached) [[unlikely]]
            uncached.reset();
        results.clear();
        autograd = false;
    }
};

/// Calls `fn` with `args`: finds or builds the plan, allocates the results through `host`,
/// launches the forward kernel on the host's current stream (CPU: the thread pool) and, when
/// grad mode is on and a differentiable input requires grad, inside an autograd node whose
/// backward runs the plan's backward kernel. Throws CallError (or a subclass) naming the
/// function and parameter for a user mistake.
void invoke(Host& host, FunctionState& fn, const Modifiers& mods, const CallArgs& args, bool grad_mode,
            CallOutcome& out);

/// The gradients one backward call computed: per argument node, a new tensor.
struct BackwardOutcome {
    std::vector<std::pair<int, HostRef>> grads;  ///< (argument node, gradient)
    bool differentiated = false;  ///< some argument takes part in differentiation
};

/// The backward of a call of `fn` with `args` (described with grad mode on: every tensor that
/// requires grad gets its gradient), given the gradient of each result leaf (`result_grads`,
/// shaped as the results, or broadcastable to them) and, per argument node, the incoming gradient
/// of a tensor the call writes (`written_grads`, nullptr where none; a missing one is zero).
/// Runs only the backward kernel; nothing is written but the gradients. Leaves `out` empty and
/// not `differentiated` when no argument requires grad.
void invoke_backward(Host& host, FunctionState& fn, const Modifiers& mods, const CallArgs& args,
                     const TensorInfo* result_grads, size_t n_result_grads, const TensorInfo* const* written_grads,
                     BackwardOutcome& out);

/// The plan of a call (built on a miss; never inside a CUDA graph capture). The reference is
/// valid until the function's next call on this thread.
const std::shared_ptr<CallPlan>& plan_for(Host& host, FunctionState& fn, const Modifiers& mods, const CallArgs& args,
                                   bool grad_mode);

/// The readable rendering of a call's key (fn.call_key(...)).
std::string render_key(FunctionState& fn, const Modifiers& mods, const CallArgs& args, bool grad_mode);

/// The generated code of the kernels a call would run (fn.debug_code(...)).
std::string debug_code(Host& host, FunctionState& fn, const Modifiers& mods, const CallArgs& args, bool grad_mode);

}  // namespace sg::call
