// src/bridge/torch_autograd.cpp — apply_autograd: the core's kernels as a torch custom function.
//
// The forward/backward callbacks are wrapped in a torch C++ custom autograd function
// (torch::autograd::Function), so that outputs get a grad_fn whose backward calls the core.
//
// Ownership: the core's `ctx` is wrapped in an AutogradCall at entry; from then on exactly one
// release happens, when the last reference dies: at the end of apply_autograd when no node is
// attached (failure, or nothing requires grad), otherwise when torch destroys the node (its
// AutogradContext holds the call in saved_data). Backward never releases it, which is what
// retain_graph=True and repeated backward need.
//
// The graph mirrors python/shadegrad/_torch_fallback.py, which does the same with
// torch.autograd.Function; the tests run every scenario through both.
#include <Python.h>

#include <cstring>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/GradMode.h>
#include <c10/util/strides.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/python_variable.h>

#include "bridge/bridge_internal.h"

namespace sg::bridge {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Keep these texts identical to the Python fallback's (_torch_fallback.py).
constexpr const char* kDoubleBackwardMessage =
    "shadegrad: double backward is not supported (the generated backward kernel is "
    "differentiable once)";
constexpr const char* kCallKey = "shadegrad.call";

/// The gradient buffers of the inputs that need one: contiguous, uninitialized (the core
/// zero-fills them before its kernel accumulates into them, bridge_abi.h); broadcast inputs get
/// their full expanded shape and torch's expand backward does the reduction. When all share a
/// dtype and device they are views of one allocation, which the core fills at once.
void allocate_gradient_buffers(AutogradContext* ctx, const variable_list& saved, variable_list& grads) {
    std::vector<std::size_t> needed;
    int64_t total = 0;
    bool uniform = true;
    for (std::size_t i = 0; i < saved.size(); ++i) {
        if (!ctx->needs_input_grad(i)) continue;
        if (!needed.empty()) {
            const at::Tensor& first = saved[needed.front()];
            uniform = uniform && saved[i].scalar_type() == first.scalar_type() &&
                      saved[i].device() == first.device();
        }
        needed.push_back(i);
        total += saved[i].numel();
    }
    if (needed.empty()) return;
    auto options_of = [](const at::Tensor& t) {
        return at::TensorOptions().dtype(t.scalar_type()).device(t.device());
    };
    if (needed.size() == 1 || !uniform) {
        for (std::size_t i : needed) grads[i] = at::empty(saved[i].sizes(), options_of(saved[i]));
        return;
    }
    const at::Tensor flat = at::empty({total}, options_of(saved[needed.front()]));
    int64_t offset = 0;
    for (std::size_t i : needed) {
        const at::Tensor& input = saved[i];
        grads[i] = flat.as_strided(input.sizes(), c10::contiguous_strides(input.sizes()), offset);
        offset += input.numel();
    }
}

/// The core's callbacks and context, owned by the autograd node. Stored in the node's
/// AutogradContext::saved_data as an IValue capsule, so torch's own node lifetime drives release.
struct AutogradCall final : torch::CustomClassHolder {
    explicit AutogradCall(const SgAutogradSpec& spec)
        : ctx(spec.ctx),
          backward(spec.backward),
          release(spec.release),
          n_inputs(spec.n_inputs),
          n_outputs(spec.n_outputs) {}
    AutogradCall(const AutogradCall&) = delete;
    AutogradCall& operator=(const AutogradCall&) = delete;
    ~AutogradCall() override {
        if (release != nullptr) release(ctx);
    }

    void* ctx;
    SgBackwardFn backward;
    SgReleaseFn release;
    int n_inputs;
    int n_outputs;
    /// Tensors handed to the function: the n_inputs differentiable inputs, then the dirty outputs
    /// that are not among them (torch requires modified tensors to be function inputs).
    int n_forward_tensors = 0;
};

/// Everything forward() needs besides the tensors; lives on apply_autograd's stack.
struct ForwardArgs {
    const SgAutogradSpec* spec;
    c10::intrusive_ptr<AutogradCall> call;  ///< moved into the node's context by forward()
    const std::vector<at::Tensor>* outputs;
    const std::vector<at::Tensor>* dirty;
};

/// Wraps gradients computed by the (once-differentiable) backward kernel so that differentiating
/// them again raises instead of silently yielding zero second derivatives: the equivalent of
/// torch's @once_differentiable for the C++ API.
struct DoubleBackwardGuard : torch::autograd::Function<DoubleBackwardGuard> {
    static variable_list forward(AutogradContext*, at::TensorList grads, at::TensorList) {
        return grads.vec();
    }
    static variable_list backward(AutogradContext*, variable_list) {
        throw std::runtime_error(kDoubleBackwardMessage);
    }
};

/// The message a failed callback left, or a generic one when it left none.
std::string callback_message(const char* msg, const char* kernel, int rc) {
    if (msg[0] != '\0') return msg;
    return std::string("shadegrad: ") + kernel + " kernel failed with code " + std::to_string(rc);
}

void describe_or_throw(const at::Tensor& t, TensorInfo* out, const char* what, std::size_t i) {
    try {
        describe_tensor(t, out);
    } catch (const std::exception& e) {
        throw std::runtime_error(std::string("shadegrad backward: cannot describe ") + what + " " +
                                 std::to_string(i) + ": " + e.what());
    }
}

struct ShadegradFunction : torch::autograd::Function<ShadegradFunction> {
    static variable_list forward(AutogradContext* ctx, at::TensorList tensors, ForwardArgs* args) {
        // Hand the call to the node before anything can fail: a failing forward destroys the node
        // on the way out of Function::apply, and with it the call (one release).
        const AutogradCall& call = *args->call;
        ctx->saved_data[kCallKey] = c10::IValue::make_capsule(std::move(args->call));
        // Undefined grad outputs reach the core as data == nullptr (bridge_abi.h): no zero
        // tensors are allocated for outputs that do not contribute to the loss.
        ctx->set_materialize_grads(false);

        char msg[kErrorCapacity] = {};
        const int rc = args->spec->forward(call.ctx, msg, sizeof msg);
        if (rc != 0) {
            msg[sizeof msg - 1] = '\0';
            throw BridgeError(callback_message(msg, "forward", rc));
        }
        if (!args->dirty->empty()) ctx->mark_dirty(*args->dirty);
        // Saved through SavedVariable: get_saved_variables() in backward raises torch's usual
        // error if an input was modified in place in between (version counter).
        ctx->save_for_backward(variable_list(tensors.begin(), tensors.begin() + call.n_inputs));
        return *args->outputs;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        auto found = ctx->saved_data.find(kCallKey);
        TORCH_INTERNAL_ASSERT(found != ctx->saved_data.end(), "shadegrad: autograd call missing");
        const c10::intrusive_ptr<torch::CustomClassHolder> holder = found->second.toCapsule();
        const auto& call = static_cast<const AutogradCall&>(*holder);

        // One result per forward argument: the tensors, then the ForwardArgs pointer (undefined).
        variable_list grads(static_cast<std::size_t>(call.n_forward_tensors) + 1);
        const auto n_inputs = static_cast<std::size_t>(call.n_inputs);
        std::vector<TensorInfo> grad_infos(n_inputs);
        bool any_needed = false;
        for (std::size_t i = 0; i < n_inputs; ++i) any_needed |= ctx->needs_input_grad(i);
        // Dirty outputs passed only so that torch accepts mark_dirty: their previous values were
        // overwritten, so they get no gradient, and with no input needing one there is nothing
        // for the kernel to compute.
        if (!any_needed) return grads;

        const variable_list saved = ctx->get_saved_variables();  // version check happens here
        TORCH_INTERNAL_ASSERT(saved.size() == n_inputs, "shadegrad: saved input count mismatch");

        c10::Device device(c10::DeviceType::CPU);
        allocate_gradient_buffers(ctx, saved, grads);
        for (std::size_t i = 0; i < n_inputs; ++i) {
            if (!grads[i].defined()) continue;  // grad_infos[i] stays zero: data == nullptr
            describe_or_throw(grads[i], &grad_infos[i], "the gradient buffer of input", i);
            if (!device.is_cuda()) device = saved[i].device();
        }
        std::vector<TensorInfo> saved_infos(n_inputs);
        for (std::size_t i = 0; i < n_inputs; ++i) {
            describe_or_throw(saved[i], &saved_infos[i], "saved input", i);
        }
        std::vector<TensorInfo> grad_output_infos(grad_outputs.size());
        for (std::size_t o = 0; o < grad_outputs.size(); ++o) {
            describe_or_throw(grad_outputs[o], &grad_output_infos[o], "the gradient of output", o);
        }

        // The engine has made the forward's stream current on this thread; launch on it.
        c10::OptionalDeviceGuard guard;
        if (device.is_cuda()) guard.reset_device(device);
        void* stream = current_stream_of(device.is_cuda() ? DeviceType::CUDA : DeviceType::CPU,
                                         device.index());
        char msg[kErrorCapacity] = {};
        const int rc = call.backward(call.ctx, saved_infos.data(), call.n_inputs,
                                     grad_output_infos.data(),
                                     static_cast<int>(grad_outputs.size()), grad_infos.data(),
                                     stream, msg, sizeof msg);
        if (rc != 0) {
            msg[sizeof msg - 1] = '\0';
            // std::runtime_error: the engine turns it into a Python RuntimeError with exactly this
            // text (a c10::Error would add a C++ source location).
            throw std::runtime_error(callback_message(msg, "backward", rc));
        }

        // create_graph=True: the kernel's results carry no history, so make a second
        // differentiation fail loudly. Unlike torch's @once_differentiable, which looks at the
        // incoming gradients only, the saved inputs count too: the gradients depend on them.
        if (c10::GradMode::is_enabled()) {
            variable_list tracked;
            for (const at::Tensor& g : grad_outputs) {
                if (g.defined() && g.requires_grad()) tracked.push_back(g);
            }
            for (const at::Tensor& t : saved) {
                if (t.requires_grad()) tracked.push_back(t);
            }
            if (!tracked.empty()) {
                std::vector<std::size_t> where;
                variable_list computed;
                for (std::size_t i = 0; i < n_inputs; ++i) {
                    if (grads[i].defined()) {
                        where.push_back(i);
                        computed.push_back(grads[i]);
                    }
                }
                variable_list wrapped =
                    DoubleBackwardGuard::apply(at::TensorList(computed), at::TensorList(tracked));
                for (std::size_t k = 0; k < where.size(); ++k) {
                    grads[where[k]] = std::move(wrapped[k]);
                }
            }
        }
        return grads;
    }
};

/// Index of the input sharing `t`'s TensorImpl, or -1.
int find_input(const std::vector<at::Tensor>& tensors, int n, const at::Tensor& t) {
    for (int i = 0; i < n; ++i) {
        if (tensors[static_cast<std::size_t>(i)].unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) {
            return i;
        }
    }
    return -1;
}

const at::Tensor& unpack_or_throw(PyObject* obj, const char* what, int i) {
    if (obj == nullptr || !THPVariable_Check(obj)) {
        throw BridgeError(std::string("shadegrad: autograd ") + what + " " + std::to_string(i) +
                          " is not a torch.Tensor");
    }
    return THPVariable_Unpack(obj);
}

void run_autograd(const SgAutogradSpec& spec, c10::intrusive_ptr<AutogradCall> call) {
    if (spec.n_inputs < 0 || spec.n_outputs < 0 || (spec.n_inputs > 0 && spec.inputs == nullptr) ||
        (spec.n_outputs > 0 && spec.outputs == nullptr) || spec.forward == nullptr ||
        spec.backward == nullptr) {
        throw BridgeError("shadegrad: malformed autograd spec");
    }
    std::vector<at::Tensor> tensors;
    tensors.reserve(static_cast<std::size_t>(spec.n_inputs + spec.n_outputs));
    for (int i = 0; i < spec.n_inputs; ++i) {
        tensors.push_back(unpack_or_throw(spec.inputs[i], "input", i));
    }

    std::vector<at::Tensor> outputs;
    std::vector<at::Tensor> dirty;
    outputs.reserve(static_cast<std::size_t>(spec.n_outputs));
    for (int o = 0; o < spec.n_outputs; ++o) {
        const at::Tensor& t = unpack_or_throw(spec.outputs[o], "output", o);
        const bool is_dirty =
            spec.output_is_input_dirty != nullptr && spec.output_is_input_dirty[o] != 0;
        const int input = find_input(tensors, spec.n_inputs, t);
        if (is_dirty) {
            dirty.push_back(t);
            if (find_input(tensors, static_cast<int>(tensors.size()), t) < 0) tensors.push_back(t);
        } else if (input >= 0) {
            // torch would return a fresh view for it, and the core's output object would not get
            // the grad_fn.
            throw BridgeError("shadegrad: output " + std::to_string(o) + " is also input " +
                              std::to_string(input) + " but is not marked as modified in place");
        }
        outputs.push_back(t);
    }

    // torch checks this only after forward, when the kernel has already overwritten the leaf;
    // refuse before touching its memory.
    bool any_requires_grad = false;
    for (const at::Tensor& t : tensors) any_requires_grad |= t.requires_grad();
    if (c10::GradMode::is_enabled() && any_requires_grad) {
        for (std::size_t o = 0; o < outputs.size(); ++o) {
            const bool is_dirty =
                spec.output_is_input_dirty != nullptr && spec.output_is_input_dirty[o] != 0;
            if (is_dirty && outputs[o].is_leaf() && outputs[o].requires_grad()) {
                throw BridgeError("shadegrad: output " + std::to_string(o) +
                                  " is a leaf tensor that requires grad and cannot be written in "
                                  "place (a leaf Variable that requires grad is being used in an "
                                  "in-place operation)");
            }
        }
    }

    call->n_forward_tensors = static_cast<int>(tensors.size());
    ForwardArgs args{&spec, std::move(call), &outputs, &dirty};
    const variable_list results = ShadegradFunction::apply(at::TensorList(tensors), &args);
    // Every result must be the core's own tensor object, now carrying the node as grad_fn.
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        TORCH_INTERNAL_ASSERT(results[o].unsafeGetTensorImpl() == outputs[o].unsafeGetTensorImpl(),
                              "shadegrad: torch replaced output ", o, " of the autograd function");
    }
}

}  // namespace

int apply_autograd(const SgAutogradSpec* spec, char* err, std::size_t err_size) noexcept {
    if (spec == nullptr) {
        write_error(err, err_size, "shadegrad: apply_autograd() got a null spec");
        return 1;
    }
    // Take ownership of the core's ctx first, so that every path below releases it exactly once.
    c10::intrusive_ptr<AutogradCall> call;
    try {
        call = c10::make_intrusive<AutogradCall>(*spec);
    } catch (...) {
        if (spec->release != nullptr) spec->release(spec->ctx);
        write_error(err, err_size, "shadegrad: out of memory creating the autograd node");
        return 1;
    }
    return guarded(err, err_size, [&] { run_autograd(*spec, std::move(call)); });
}

}  // namespace sg::bridge
