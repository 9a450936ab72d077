// src/bridge/torch_autograd.cpp — apply_autograd: the core's kernels as a torch autograd node.
//
// The forward/backward callbacks are attached to the graph through a hand-written
// torch::autograd::Node (ShadegradBackward, named "ShadegradFunctionBackward" like the fallback's
// node), built the way torch's generated code builds its nodes (MulBackward0 & co.): the node
// takes the next edges of the inputs, saves the differentiable inputs as SavedVariables, and
// becomes the grad_fn of the outputs (set_gradient_edge for fresh outputs, rebase_history and a
// version bump for outputs modified in place). torch's generic C++ custom-function machinery
// (torch::autograd::Function / CppNode / AutogradContext) is not on this path: it costs hash
// containers, std::functions and per-tensor metadata copies per call that none of this needs.
// What it checks and does is kept, step by step (see attach_outputs, which follows torch's
// _process_backward_mode_ad). Only the create_graph=True path (DoubleBackwardGuard) still uses it.
//
// Ownership: the core's `ctx` is owned by a CtxOwner on apply_autograd's stack at entry; from then
// on exactly one release happens: at the end of apply_autograd when no node took it (failure
// before the node exists, or nothing requires grad), otherwise when the node goes away (torch
// destroys it with the last graph reference, or apply_autograd's failure drops it). Backward
// never releases it, which is what retain_graph=True and repeated backward need.
//
// The graph mirrors python/shadegrad/_torch_fallback.py, which does the same with
// torch.autograd.Function; the tests run every scenario through both.
#include <Python.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include <ATen/FuncTorchTLS.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/GradMode.h>
#include <c10/util/SmallVector.h>
#include <c10/util/strides.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/edge.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/csrc/autograd/variable.h>

#include "bridge/bridge_internal.h"

namespace sg::bridge {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::Edge;
using torch::autograd::Node;
using torch::autograd::SavedVariable;
using torch::autograd::variable_list;

// Keep these texts identical to the Python fallback's (_torch_fallback.py).
constexpr const char* kDoubleBackwardMessage =
    "shadegrad: double backward is not supported (the generated backward kernel is "
    "differentiable once)";

// ---------------------------------------------------------------------------------------------
// Node ownership across torch versions
//
// torch 2.11 (and earlier) holds nodes by std::shared_ptr<Node> (Node derives from
// enable_shared_from_this, generated code allocates with the deleteNode deleter); torch 2.13
// holds them by c10::intrusive_ptr<Node> (Node is an intrusive_ptr_target; release_resources()
// runs when the last strong reference dies). The pointer type is read off Edge::function, and
// the two partial specializations below are the only version-dependent code: each is
// instantiated only for the torch it matches, so neither needs the other's API to exist.

using NodePtr = decltype(Edge::function);

template <class Ptr>
struct NodeBase;

template <class N>
struct NodeBase<std::shared_ptr<N>> : N {
    template <class X>
    static std::shared_ptr<N> create() {
        // deleteNode (found by argument-dependent lookup) deletes long chains iteratively.
        return std::shared_ptr<N>(new X(), [](N* node) { deleteNode(node); });
    }
    std::shared_ptr<N> self() { return this->shared_from_this(); }

protected:
    /// Releases what the node owns beyond torch's members; idempotent. With shared_ptr the
    /// object is destroyed with its last strong reference, so the destructor calls it.
    virtual void drop() noexcept = 0;
};

template <class N>
struct NodeBase<c10::intrusive_ptr<N>> : N {
    template <class X>
    static c10::intrusive_ptr<N> create() {
        return c10::make_intrusive<X>();
    }
    c10::intrusive_ptr<N> self() { return this->getptr(); }

    /// Runs when the last strong reference dies; the object itself may live on while weak
    /// references remain, so the core's ctx is released here (as torch's CppNode resets its
    /// context here), not only in the destructor.
    void release_resources() override {
        drop();
        N::release_resources();
    }

protected:
    virtual void drop() noexcept = 0;
};

using ShadegradNodeBase = NodeBase<NodePtr>;

// ---------------------------------------------------------------------------------------------

/// A contiguous tensor of `sizes` over `flat`'s storage from element `offset` on, with no view
/// metadata. For a plain dense tensor (what at::empty gives outside any mode) it is a TensorImpl
/// made directly, as as_strided makes its result, without the dispatcher round trip (about a
/// quarter of the backward node's own host work on the CPU backend); any other kind of tensor
/// (a subclass, a wrapper of functorch or a dispatch mode) gets as_strided below autograd and
/// ADInplaceOrView, which keeps its kind.
at::Tensor alias_of(const at::Tensor& flat, at::IntArrayRef sizes, int64_t offset) {
    const c10::TensorImpl* impl = flat.unsafeGetTensorImpl();
    const c10::DispatchKeySet keys = flat.key_set();
    const bool plain = typeid(*impl) == typeid(c10::TensorImpl) && flat.layout() == c10::kStrided &&
                       (flat.is_cpu() || flat.is_cuda()) && !keys.has(c10::DispatchKey::Python) &&
                       !keys.has(c10::DispatchKey::PythonTLSSnapshot) && !keys.has(c10::DispatchKey::Conjugate) &&
                       !keys.has(c10::DispatchKey::Negative) && !keys.has(c10::DispatchKey::Functionalize);
    if (!plain) {
        at::AutoDispatchBelowADInplaceOrView no_view_tracking;
        return flat.as_strided(sizes, c10::contiguous_strides(sizes), offset);
    }
    auto alias = c10::make_intrusive<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(flat.storage()),
                                                      keys, flat.dtype());
    alias->set_sizes_contiguous(sizes);
    alias->set_storage_offset(offset);
    return at::Tensor(std::move(alias));
}

/// The gradient buffers of the inputs that need one: contiguous, uninitialized (the core
/// zero-fills them before its kernel accumulates into them, bridge_abi.h); broadcast inputs get
/// their full expanded shape and torch's expand backward does the reduction. When all share a
/// dtype and device they are views of one allocation, which the core fills at once.
void allocate_gradient_buffers(const bool* needs, const variable_list& saved,
                               variable_list& grads) {
    c10::SmallVector<std::size_t, 8> needed;
    int64_t total = 0;
    bool uniform = true;
    for (std::size_t i = 0; i < saved.size(); ++i) {
        if (!needs[i]) continue;
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
    // Plain aliases of `flat`: nothing differentiates through them, and torch's view tracking
    // (view metadata, a shared version counter) costs more than the allocation it saves.
    // AccumulateGrad takes them over as it takes any fresh gradient.
    int64_t offset = 0;
    for (std::size_t i : needed) {
        grads[i] = alias_of(flat, saved[i].sizes(), offset);
        offset += saved[i].numel();
    }
}

/// Wraps gradients computed by the (once-differentiable) backward kernel so that differentiating
/// them again raises instead of silently yielding zero second derivatives: the equivalent of
/// torch's @once_differentiable for the C++ API. Only reached with create_graph=True.
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

/// The core's ctx and release callback until a node takes them; releases on scope exit.
struct CtxOwner {
    void* ctx = nullptr;
    SgReleaseFn release = nullptr;
    CtxOwner(void* c, SgReleaseFn r) : ctx(c), release(r) {}
    CtxOwner(const CtxOwner&) = delete;
    CtxOwner& operator=(const CtxOwner&) = delete;
    ~CtxOwner() {
        if (release != nullptr) release(ctx);
    }
};

/// The grad_fn of a shadegrad call's outputs. Inputs of the node (in torch's sense: one per
/// forward output) are the outputs' gradients; its next edges are those of the forward tensors:
/// the n_inputs differentiable inputs, then the dirty outputs that are not among them (their
/// previous history is kept reachable, as a custom Function that must take them as inputs
/// does; they receive no gradient, their old values having been overwritten).
struct ShadegradBackward final : ShadegradNodeBase {
    ShadegradBackward() = default;
    ~ShadegradBackward() override { drop(); }

    /// The name torch gives the Python fallback's node (the backward class of its
    /// ShadegradFunction), so that both bridges build graphs that look the same.
    std::string name() const override { return "ShadegradFunctionBackward"; }

    void release_variables() override {
        std::lock_guard<std::mutex> lock(this->mutex_);
        for (SavedVariable& s : saved_) s.reset_data();
    }

    // Set once by apply_autograd before the node is reachable from any output.
    void* ctx = nullptr;
    SgBackwardFn backward = nullptr;
    SgReleaseFn release = nullptr;
    /// One per differentiable input, saved after forward (version-checked on unpack).
    std::vector<SavedVariable> saved_;
    /// Some saved input is also an output of this node (a dirty input): unpacking it then needs
    /// the node itself as its grad_fn.
    bool saved_output_ = false;

protected:
    variable_list apply(variable_list&& grad_outputs) override;

    void drop() noexcept override {
        saved_.clear();
        SgReleaseFn fn = release;
        release = nullptr;
        if (fn != nullptr) fn(ctx);
    }
};

variable_list ShadegradBackward::apply(variable_list&& grad_outputs) {
    std::lock_guard<std::mutex> lock(this->mutex_);
    const std::size_t n_inputs = saved_.size();
    // One result per next edge (the forward tensors); dirty outputs that are not inputs get none.
    variable_list grads(this->num_outputs());

    // Which inputs the engine wants a gradient for in this graph task (trimmed by
    // torch.autograd.grad(inputs=...), invalid edges for inputs without requires_grad).
    c10::SmallVector<bool, 8> needs(n_inputs);
    bool any_needed = false;
    for (std::size_t i = 0; i < n_inputs; ++i) {
        needs[i] = this->task_should_compute_output(i);
        any_needed |= needs[i];
    }
    // With no input needing one there is nothing for the kernel to compute.
    if (!any_needed) return grads;

    // Unpacking checks the version counters (torch's "modified by an inplace operation" error)
    // and that the graph was not freed ("backward through the graph a second time").
    variable_list saved;
    saved.reserve(n_inputs);
    {
        NodePtr self_ptr;
        if (saved_output_) self_ptr = this->self();
        for (const SavedVariable& s : saved_) saved.push_back(s.unpack(self_ptr));
    }

    c10::Device device(c10::DeviceType::CPU);
    allocate_gradient_buffers(needs.data(), saved, grads);
    c10::SmallVector<TensorInfo, 4> grad_infos(n_inputs);
    for (std::size_t i = 0; i < n_inputs; ++i) {
        if (!grads[i].defined()) continue;  // grad_infos[i] stays zero: data == nullptr
        describe_or_throw(grads[i], &grad_infos[i], "the gradient buffer of input", i);
        if (!device.is_cuda()) device = saved[i].device();
    }
    c10::SmallVector<TensorInfo, 4> saved_infos(n_inputs);
    for (std::size_t i = 0; i < n_inputs; ++i) {
        describe_or_throw(saved[i], &saved_infos[i], "saved input", i);
    }
    c10::SmallVector<TensorInfo, 4> grad_output_infos(grad_outputs.size());
    for (std::size_t o = 0; o < grad_outputs.size(); ++o) {
        // Undefined gradients (outputs that do not reach the loss) are described as data ==
        // nullptr (bridge_abi.h): no zero tensors are materialized for them.
        describe_or_throw(grad_outputs[o], &grad_output_infos[o], "the gradient of output", o);
    }

    // The engine has made the forward's stream current on this thread; launch on it.
    c10::OptionalDeviceGuard guard;
    if (device.is_cuda()) guard.reset_device(device);
    void* stream = current_stream_of(device.is_cuda() ? DeviceType::CUDA : DeviceType::CPU,
                                     device.index());
    char msg[kErrorCapacity] = {};
    const int rc = backward(ctx, saved_infos.data(), static_cast<int>(n_inputs),
                            grad_output_infos.data(), static_cast<int>(grad_outputs.size()),
                            grad_infos.data(), stream, msg, sizeof msg);
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

/// Index of the tensor sharing `t`'s TensorImpl among the first n, or -1.
int find_tensor(const at::Tensor* const* tensors, int n, const at::Tensor& t) {
    for (int i = 0; i < n; ++i) {
        if (tensors[i]->unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return i;
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

bool is_dirty(const SgAutogradSpec& spec, int o) {
    return spec.output_is_input_dirty != nullptr && spec.output_is_input_dirty[o] == 1;
}

/// A user tensor the kernel overwrote: modified in place (1) or made a fresh output (2).
bool is_written(const SgAutogradSpec& spec, int o) {
    return spec.output_is_input_dirty != nullptr && spec.output_is_input_dirty[o] != 0;
}

/// Makes `node` the grad_fn of the outputs and bumps the versions of the dirty ones: what
/// torch's custom Function does after forward (_process_backward_mode_ad with
/// get_and_bump_dirty), for a function without non-differentiable marks and whose only inputs
/// returned as outputs are dirty ones. `node` is null when nothing requires grad. Outputs are
/// never replaced: they stay the core's objects.
void attach_outputs(const SgAutogradSpec& spec, const at::Tensor* const* outputs,
                    const at::Tensor* const* tensors, int n_tensors, const NodePtr& node) {
    const int n_outputs = spec.n_outputs;
    // Modified in place: one version bump per tensor, like a torch in-place op.
    for (int o = 0; o < n_outputs; ++o) {
        if (!is_written(spec, o)) continue;
        bool seen = false;
        for (int p = 0; p < o && !seen; ++p) {
            seen = is_written(spec, p) &&
                   outputs[p]->unsafeGetTensorImpl() == outputs[o]->unsafeGetTensorImpl();
        }
        if (!seen) outputs[o]->unsafeGetTensorImpl()->bump_version();
    }

    int n_differentiable = 0;
    for (int o = 0; o < n_outputs; ++o) {
        const at::Tensor& var = *outputs[o];
        const bool modified = is_dirty(spec, o);
        const auto output_nr = static_cast<uint32_t>(o);
        const bool differentiable =
            node && torch::autograd::isDifferentiableType(var.scalar_type());
        if (node) {
            if (differentiable) {
                node->add_input_metadata(var);
            } else {
                node->add_input_metadata(Node::undefined_input());
            }
        }
        if (!differentiable) {
            // Not part of the graph. A tensor that requires grad keeps its history when it is a
            // dirty input written under no_grad (like a torch in-place op there); a fresh result
            // that requires grad is detached, as torch does with custom Function outputs.
            if (var.requires_grad() && !modified &&
                find_tensor(tensors, n_tensors, var) < 0 && !var.is_view()) {
                var.detach_();
            }
        } else if (modified) {
            // Rejected before forward already (run_autograd); kept as torch's own guard.
            TORCH_CHECK(!(var.is_leaf() && var.requires_grad()),
                        "a leaf Variable that requires grad has been used in an in-place "
                        "operation.");
            // If the input is a view, the rebase will need to rewrite the graph and this only
            // works if we have a single output to this Function.
            TORCH_CHECK(
                !(var.is_view() && n_outputs > 1),
                "If your Function modifies inplace an input that is a view"
                " of another Tensor, your Function cannot return more than one Tensor. This is "
                "not supported by the current autograd engine. You should either make sure the "
                "input is not a view (using .clone() for example) or make your Function only "
                "return one Tensor (potentially splitting it into two Functions: one doing the "
                "inplace that returns a single Tensor and a second one that does the other "
                "operations). You can ask on the forum https://discuss.pytorch.org/ if you need "
                "help to do this change.");
            // Transplant the grad_fn in the graph: grad_fn <- variable <- self  ==>
            // grad_fn <- self <- variable.
            var.mutable_grad().reset();
            torch::autograd::impl::clear_hooks(var);
            if (auto grad_acc_fn = torch::autograd::impl::try_get_grad_accumulator(var)) {
                auto& grad_acc = dynamic_cast<torch::autograd::AccumulateGrad&>(*grad_acc_fn);
                grad_acc.variable.reset();
            }
            torch::autograd::impl::rebase_history(var, Edge(node, output_nr));
        } else {
            torch::autograd::impl::set_gradient_edge(var, Edge(node, output_nr));
        }
        // A view returned by a custom function must not be modified in place later (torch's
        // NOTE [ View + Inplace detection ]). Fresh results are never views.
        if (!modified && var.is_view()) {
            torch::autograd::impl::get_view_autograd_meta(var)->set_creation_meta(
                torch::autograd::CreationMeta::IN_CUSTOM_FUNCTION);
        }
        n_differentiable += differentiable ? 1 : 0;
    }
    if (n_differentiable > 1) {
        for (int o = 0; o < n_outputs; ++o) {
            auto* view_meta = torch::autograd::impl::get_view_autograd_meta(*outputs[o]);
            if (view_meta != nullptr && view_meta->has_bw_view()) {
                view_meta->set_creation_meta(torch::autograd::CreationMeta::MULTI_OUTPUT_NODE);
            }
        }
    }
}

void run_autograd(const SgAutogradSpec& spec, CtxOwner& owner) {
    if (spec.n_inputs < 0 || spec.n_outputs < 0 || (spec.n_inputs > 0 && spec.inputs == nullptr) ||
        (spec.n_outputs > 0 && spec.outputs == nullptr) || spec.forward == nullptr ||
        spec.backward == nullptr) {
        throw BridgeError("shadegrad: malformed autograd spec");
    }
    // Like torch's custom functions: functorch transforms (vmap, grad, ...) refuse them.
    if (const auto& functorch_tls = at::functorch::functorchTLSAccessor()) {
        functorch_tls->checkSupportsCppAutogradFunction();
    }

    // The forward tensors: the differentiable inputs, then the dirty outputs that are not among
    // them. Borrowed from the Python objects, which outlive this call.
    c10::SmallVector<const at::Tensor*, 8> tensors;
    tensors.reserve(static_cast<std::size_t>(spec.n_inputs + spec.n_outputs));
    for (int i = 0; i < spec.n_inputs; ++i) {
        tensors.push_back(&unpack_or_throw(spec.inputs[i], "input", i));
    }
    c10::SmallVector<const at::Tensor*, 4> outputs;
    outputs.reserve(static_cast<std::size_t>(spec.n_outputs));
    for (int o = 0; o < spec.n_outputs; ++o) {
        const at::Tensor& t = unpack_or_throw(spec.outputs[o], "output", o);
        if (is_dirty(spec, o)) {
            if (find_tensor(tensors.data(), static_cast<int>(tensors.size()), t) < 0) {
                tensors.push_back(&t);
            }
        } else if (const int input = find_tensor(tensors.data(), spec.n_inputs, t); input >= 0) {
            // torch would return a fresh view for it, and the core's output object would not get
            // the grad_fn.
            throw BridgeError("shadegrad: output " + std::to_string(o) + " is also input " +
                              std::to_string(input) + " but is not marked as modified in place");
        }
        outputs.push_back(&t);
    }
    const int n_tensors = static_cast<int>(tensors.size());

    bool any_requires_grad = false;
    for (const at::Tensor* t : tensors) any_requires_grad |= t->requires_grad();
    const bool executable = c10::GradMode::is_enabled() && any_requires_grad;
    // torch checks this only after forward, when the kernel has already overwritten the leaf;
    // refuse before touching its memory.
    if (executable) {
        for (int o = 0; o < spec.n_outputs; ++o) {
            if (is_dirty(spec, o) && outputs[o]->is_leaf() && outputs[o]->requires_grad()) {
                throw BridgeError("shadegrad: output " + std::to_string(o) +
                                  " is a leaf tensor that requires grad and cannot be written in "
                                  "place (a leaf Variable that requires grad is being used in an "
                                  "in-place operation)");
            }
        }
    }
    // Forward-mode AD: a C++ custom function has no jvp; torch raises this after the forward
    // kernel ran, refuse before it runs.
    for (const at::Tensor* t : tensors) {
        if (t->_fw_grad(/*level=*/0).defined()) {
            throw BridgeError(
                "jvp is not implemented for the c++ API of custom Function yet.Please open a "
                "feature request on GitHub if you need this.");
        }
    }

    // The node takes the ctx before forward runs: should forward fail, dropping the node
    // releases it (one release).
    NodePtr node;
    ShadegradBackward* raw = nullptr;
    if (executable) {
        node = ShadegradNodeBase::create<ShadegradBackward>();
        raw = static_cast<ShadegradBackward*>(node.get());
        raw->ctx = owner.ctx;
        raw->backward = spec.backward;
        raw->release = owner.release;
        owner.release = nullptr;
        torch::autograd::edge_list edges;
        edges.reserve(static_cast<std::size_t>(n_tensors));
        for (int i = 0; i < n_tensors; ++i) {
            // An input the call does not differentiate gets an invalid edge: the engine then
            // neither asks this node for its gradient nor accumulates one (its .grad stays None).
            const bool takes_grad = i >= spec.n_inputs || spec.input_takes_grad == nullptr ||
                                    spec.input_takes_grad[i] != 0;
            edges.push_back(takes_grad ? torch::autograd::impl::gradient_edge(*tensors[static_cast<std::size_t>(i)])
                                       : Edge());
        }
        node->set_next_edges(std::move(edges));
    }

    {
        const c10::AutoGradMode no_grad(false);
        char msg[kErrorCapacity] = {};
        const int rc = spec.forward(owner.ctx, msg, sizeof msg);
        if (rc != 0) {
            msg[sizeof msg - 1] = '\0';
            throw BridgeError(callback_message(msg, "forward", rc));
        }
    }

    attach_outputs(spec, outputs.data(), tensors.data(), n_tensors, node);

    if (raw != nullptr) {
        // Saved after the outputs got their history (and the dirty ones their version bump), as
        // torch does: a dirty input is saved as it is after forward, as an output of this node.
        raw->saved_.reserve(static_cast<std::size_t>(spec.n_inputs));
        for (int i = 0; i < spec.n_inputs; ++i) {
            const at::Tensor& t = *tensors[static_cast<std::size_t>(i)];
            const bool is_output = torch::autograd::impl::grad_fn_unsafe(t) == raw;
            raw->saved_output_ |= is_output;
            raw->saved_.emplace_back(t, is_output);
        }
    }
}

}  // namespace

int apply_autograd(const SgAutogradSpec* spec, char* err, std::size_t err_size) noexcept {
    if (spec == nullptr) {
        write_error(err, err_size, "shadegrad: apply_autograd() got a null spec");
        return 1;
    }
    // Take ownership of the core's ctx first, so that every path below releases it exactly once.
    CtxOwner owner(spec->ctx, spec->release);
    return guarded(err, err_size, [&] { run_autograd(*spec, owner); });
}

}  // namespace sg::bridge
