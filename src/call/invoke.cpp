// src/call/invoke.cpp — the forward and backward entries of a call: the plan cache and the
// complete call key, the call shape, result allocation, packing and launch, and the autograd
// node's inputs and outputs.
#include "call/launch.h"
#include "call/invoke.h"

#include <atomic>
#include <chrono>
#include <cstring>

#include "call/autograd_node.h"
#include "call/call_group.h"
#include "call/written_checks.h"
#include "call/compile_kernel.h"
#include "call/coop_launch.h"
#include "call/call_options.h"
#include "call/errors.h"
#include "call/graph_capture.h"
#include "call/kernel_faults.h"
#include "call/kernel_index.h"
#include "call/value_kind.h"
#include "runtime/module_cache.h"  // ms_since

namespace sg::call {

namespace {

std::atomic<uint32_t> g_next_function_id{1};

// Per-thread scratch, one object (one TLS guard): a cached call allocates nothing here after
// warm-up.
struct ThreadScratch {
    CallKey key;
    std::vector<uint8_t> block;
    std::vector<TensorInfo> results;
    /// A plan made for a call whose key already maps to a plan for other element extents
    /// (plan_for: not cached), kept until the thread's next such call.
    std::shared_ptr<CallPlan> uncached;
};
thread_local ThreadScratch t_scratch;

/// CPU launches of at least this many threads unlock the host while the thread pool runs.
constexpr int64_t kUnlockHostThreads = 1 << 16;

/// Builds the complete key of a call into `key`: the arguments' facts, grad mode, the option
/// bits, the function object's modifiers and the module's link-time values.
void build_key(CallKey& key, const FunctionState& fn, const Modifiers& mods, const CallArgs& a, bool grad_mode,
               uint32_t options) {
    build_call_key(key, fn.id, a.args, a.count, a.total, *a.keywords, grad_mode, options, mods.key_bytes());
    if (!fn.link_key.empty()) [[unlikely]]
        append_link_key(key, fn.link_key);
}

/// The output_is_input_dirty flag of a tensor the call writes under autograd (host.h): 1,
/// written in place (its history is rebased onto the call's node), or, for a leaf that requires
/// grad, 2: a fresh output of the node (the bridges support it, but check_written_tensors refuses
/// such write-only leaves first, as torch refuses in-place writes to them); an inout one is
/// refused here, naming the parameter. `binding` is -1 for a `_result=` tensor.
[[gnu::noinline]] uint8_t written_dirty_flag(const Binding& b, int binding, const TensorInfo& t) {
    if (!(t.is_leaf && t.requires_grad)) return 1;
    if (binding >= 0 && b.params[size_t(binding)].dir == lang::ParamDir::InOut)
        throw_value_error(b.function + "(): parameter '" + b.params[size_t(binding)].name +
                          "' is inout and got a leaf tensor that requires grad; torch does not allow writing such "
                          "a tensor in place (pass a clone, e.g. x.clone(), and use the written clone)");
    return 2;
}

/// The shape of result leaf `leaf` of a call of shape `call_shape` (rank b.call_rank) into
/// `shape`; returns its rank.
int result_shape(const Binding& b, const ResultLeaf& leaf, const int64_t* call_shape, int64_t* shape) {
    int ndim = b.call_rank;
    for (int d = 0; d < ndim; ++d) shape[d] = call_shape[d];
    for (int64_t e : leaf.elem_shape) shape[ndim++] = e;
    return ndim;
}

/// Runs the forward kernel of a call under an autograd node: its inputs are every tensor the
/// kernels read, its outputs the results and the tensors the function writes.
void launch_with_autograd(Host& host, const std::shared_ptr<CallPlan>& plan, const CallArgs& a,
                          const int64_t* call_shape, size_t n_results, const LaunchData& data, void* stream,
                          CallOutcome& out) {
    const Binding& b = plan->binding();
    const bool result_given = a.result_index >= 0;
    auto ctx = std::make_unique<AutogradCtx>();
    ctx->host = &host;
    ctx->plan = plan;
    ctx->args.assign(a.args, a.args + a.total);
    std::memcpy(ctx->call_shape, call_shape, sizeof(ctx->call_shape));
    ctx->results.assign(data.result, data.result + n_results);
    ctx->stream = stream;
    ctx->zeros = device_zeros(host, b.device, b.device_index, stream, b.function);
    std::vector<void*> inputs, outputs;
    std::vector<uint8_t> dirty;
    std::vector<uint8_t> takes_grad;  // per input: a no_diff / read-only one gets no gradient
    std::vector<HostRef> old_values;  // inout tensors' values before the call (kept by the node)
    for (size_t k = 0; k < n_results; ++k) {
        outputs.push_back(result_given ? a.args[size_t(a.result_index)].object : out.results[k].get());
        dirty.push_back(result_given ? written_dirty_flag(b, -1, a.args[size_t(a.result_index)].tensor) : 0);
        ctx->output_bindings.push_back(-1 - int(k));
    }
    for (size_t i = 0; i < b.params.size(); ++i) {
        const ParamBinding& p = b.params[i];
        const ArgInfo& arg = a.args[size_t(p.arg)];
        if (arg.kind != ArgKind::Tensor) continue;
        if (p.is_output) {
            outputs.push_back(arg.object);
            dirty.push_back(written_dirty_flag(b, int(i), arg.tensor));
            ctx->output_bindings.push_back(int(i));
            if (p.dir != lang::ParamDir::InOut) continue;
            // An inout tensor's old value is an input: a copy taken before the kernel writes the
            // tensor, in the graph (the copy's backward passes its gradient to the tensor's history).
            old_values.emplace_back(host, host.clone(arg.object));
            inputs.push_back(old_values.back().get());
        } else {
            inputs.push_back(arg.object);
        }
        takes_grad.push_back(p.requires_grad ? 1 : 0);
        ctx->input_bindings.push_back(int(i));
    }
    launch::pack(plan->forward(), plan->forward_glue(), b, data, ctx->forward_block);
    AutogradSpec spec;
    spec.inputs = inputs.data();
    spec.n_inputs = int(inputs.size());
    spec.outputs = outputs.data();
    spec.n_outputs = int(outputs.size());
    spec.output_is_input_dirty = dirty.data();
    spec.input_takes_grad = takes_grad.data();
    spec.forward = autograd_forward;
    spec.backward = autograd_backward;
    spec.release = autograd_release;
    spec.ctx = ctx.release();  // owned by the node from here on (released on failure too)
    std::vector<void*> replaced;
    host.attach_autograd(spec, replaced);
    if (!replaced.empty() && n_results) {
        // The host handed back new output objects: the results are its first ones.
        std::vector<HostRef> refs;
        for (void* r : replaced) refs.emplace_back(host, r);
        refs.resize(n_results);
        out.results = std::move(refs);
    }
    out.autograd = true;
}

/// The once-per-function warning for a call of a function without [Differentiable] that got a
/// tensor that requires grad in a parameter the attribute would differentiate.
[[gnu::noinline]] void warn_not_differentiable(Host& host, FunctionState& fn, const Binding& b) {
    host.warn_not_differentiable(
        b.function + "() is not [Differentiable], so its result carries no gradient, but parameter '" +
        b.undifferentiated_param +
        "' got a tensor that requires grad; add [Differentiable] before the function's declaration to "
        "differentiate it (or pass a tensor that does not require grad, e.g. x.detach()). Said once per "
        "function; silence it with warnings.filterwarnings('ignore', "
        "category=shadegrad.NotDifferentiableWarning)");
    fn.warned_not_differentiable = true;  // not when the warnings filter made it an error
}

}  // namespace

std::shared_ptr<FunctionState> FunctionState::make(std::shared_ptr<UserModule> module, Callee callee,
                                                   DeviceType device, int device_index,
                                                   const CallModifiers& module_options) {
    auto fn = std::make_shared<FunctionState>();
    fn->module = std::move(module);
    fn->name = callee.text();
    fn->callee = std::move(callee);
    fn->device = device;
    fn->device_index = device_index;
    fn->module_options = module_options;
    fn->id = g_next_function_id++;
    fn->link_key = fn->module->link_key();
    fn->cooperative = is_cooperative(*fn->module, fn->callee);
    fn->view_function = !fn->cooperative && is_view_function(*fn->module, fn->callee);
    return fn;
}

void Modifiers::set(CallModifiers call) {
    call_ = std::move(call);
    // 'M', then per parameter its map (u8 size, u8 dims), then 'T' and per parameter its type
    // name (u8 size, the name); then 'D' in deterministic mode, then 'F' in fast math (the
    // parameter count is fixed per function, so these never read as each other).
    key_bytes_.clear();
    if (!call_.dim_maps.empty() || !call_.type_maps.empty()) {
        key_bytes_ = "M";
        for (const std::vector<int>& dims : call_.dim_maps) {
            key_bytes_.push_back(char(dims.size()));
            for (int d : dims) key_bytes_.push_back(char(d));
        }
        key_bytes_.push_back('T');
        for (const std::string& t : call_.type_maps) {
            key_bytes_.push_back(char(t.size()));
            key_bytes_ += t;
        }
    }
    if (call_.deterministic) key_bytes_.push_back('D');
    if (call_.fast_math) key_bytes_.push_back('F');
    if (call_.has_call_group) {  // 'G', the count, each extent in two bytes (at most 1024)
        key_bytes_.push_back('G');
        key_bytes_.push_back(char(call_.call_group.size()));
        for (int e : call_.call_group) {
            key_bytes_.push_back(char(e & 0xff));
            key_bytes_.push_back(char(e >> 8));
        }
    }
}

namespace {

/// plan_for with the thread's scratch `t` looked up by the caller (each lookup of a thread-local
/// in a shared library is a call: an entry makes one).
const std::shared_ptr<CallPlan>& plan_in(ThreadScratch& t, Host& host, FunctionState& fn, const Modifiers& mods,
                                         const CallArgs& a, bool grad_mode) {
    const uint32_t options = call_options(a.args, a.total);
    build_key(t.key, fn, mods, a, grad_mode, options);
    auto it = fn.plans.find(t.key);
    // A plan whose binding read element extents the key does not carry (an (N, 5) tensor as
    // float[5]) serves only calls with those extents; others look under a key that has theirs.
    for (int level = 0; it != fn.plans.end(); ++level) {
        const std::vector<ExtentCheck>& checks = it->second->binding().extent_checks;
        if (checks.empty() || extents_match(checks, a.args)) [[likely]]
            return it->second;
        if (level == 4) break;
        append_extent_key(t.key, checks, a.args);
        it = fn.plans.find(t.key);
    }
    if (fn.cooperative) [[unlikely]]  // never cached: every call of one comes here
        throw_type_error(fn.name + "() is a [CUDAKernel] function: it runs once per thread of a launch, not per "
                                   "element of its arguments; launch it with " + fn.name +
                         "(args..., _thread_count=N), or with shadegrad.slangtorch (" + fn.name +
                         "(args...).launchRaw(blockSize=..., gridSize=...))");
    CallModifiers modifiers = mods.call();
    modifiers.strict_broadcasting |= fn.module_options.strict_broadcasting;
    modifiers.deterministic |= fn.module_options.deterministic;
    modifiers.fast_math |= fn.module_options.fast_math;
    const auto bind_start = std::chrono::steady_clock::now();
    Binding binding = resolve_call(*fn.module, fn.callee, a.args, a.positional, *a.keywords, grad_mode, fn.device,
                                   modifiers, a.result_index);
    add_plan_stats(PlanStats{.plans = 1, .bind_ms = runtime::ms_since(bind_start)});
    // A new plan compiles its kernel: never inside a CUDA graph capture (graph_capture.h).
    if (binding.device == DeviceType::CUDA) [[unlikely]]
        refuse_during_capture(fn.name, "forward kernel", binding.device, binding.device_index,
                              host.current_stream(binding.device, binding.device_index));
    codegen::CodegenOptions codegen = codegen_options(options, fn.device, debug_mode());
    if (modifiers.has_call_group) apply_call_group(binding, modifiers, codegen);  // call_group.cpp
    auto plan = std::make_shared<CallPlan>(*fn.module, std::move(binding), t.key, codegen, fn.module);
    if (it == fn.plans.end()) return fn.plans.emplace(t.key, std::move(plan)).first->second;
    t.uncached = std::move(plan);
    return t.uncached;
}

}  // namespace

const std::shared_ptr<CallPlan>& plan_for(Host& host, FunctionState& fn, const Modifiers& mods, const CallArgs& a,
                                          bool grad_mode) {
    return plan_in(t_scratch, host, fn, mods, a, grad_mode);
}

void invoke(Host& host, FunctionState& fn, const Modifiers& mods, const CallArgs& a, bool grad_mode,
            CallOutcome& out) {
    out.clear();
    ThreadScratch& t = t_scratch;
    const std::shared_ptr<CallPlan>& plan = plan_in(t, host, fn, mods, a, grad_mode);
    out.plan = plan.get();
    if (&plan == &t.uncached) [[unlikely]]
        out.uncached = plan;  // the caller reads its binding after a nested call may replace it
    const Binding& b = plan->binding();
    if (!b.undifferentiated_param.empty() && !fn.warned_not_differentiable) [[unlikely]]
        warn_not_differentiable(host, fn, b);
    if (b.writes_tensors) check_written_tensors(b, a.args, grad_mode);
    int64_t call_shape[16];
    compute_call_shape(b, a.args, call_shape);
    int64_t total = 1;
    for (int d = 0; d < b.call_rank; ++d) total *= call_shape[d];

    const size_t n_results = b.result_leaves.size();
    if (t.results.size() < n_results) t.results.resize(n_results);
    for (size_t k = 0; k < n_results; ++k) {
        if (a.result_index >= 0) {
            // Checked by the binder; the caller writes it back where it is a view of its own.
            t.results[k] = a.args[size_t(a.result_index)].tensor;
            continue;
        }
        int64_t shape[kMaxTensorRank * 2];
        const int ndim = result_shape(b, b.result_leaves[k], call_shape, shape);
        out.results.emplace_back(host, host.empty(shape, ndim, dtype_of(b.result_leaves[k].scalar), b.device,
                                                  b.device_index, false, t.results[k]));
    }
    if (total == 0) return;  // zero-size call: nothing to launch

    LaunchData data;
    data.args = a.args;
    data.call_shape = call_shape;
    data.result = t.results.data();
    void* stream = b.device == DeviceType::CUDA ? host.current_stream(b.device, b.device_index) : nullptr;
    if (b.autograd) {
        launch_with_autograd(host, plan, a, call_shape, n_results, data, stream, out);
        return;
    }
    launch::pack(plan->forward(), plan->forward_glue(), b, data, t.block);
    if (b.device == DeviceType::CPU && total >= kUnlockHostThreads) {
        // A long CPU launch lets the host's other threads run meanwhile (Python: the GIL).
        Host::Unlocked unlocked(host);
        launch::run(plan->forward(), t.block, stream, fn.name);
    } else {
        launch::run(plan->forward(), t.block, stream, fn.name);
    }
}

void invoke_backward(Host& host, FunctionState& fn, const Modifiers& mods, const CallArgs& a,
                     const TensorInfo* result_grads, size_t n_result_grads, const TensorInfo* const* written_grads,
                     BackwardOutcome& out) {
    out.grads.clear();
    out.differentiated = false;
    std::shared_ptr<CallPlan> plan = plan_for(host, fn, mods, a, /*grad_mode=*/true);  // kept: host calls follow
    const Binding& b = plan->binding();
    if (!b.autograd || plan->grad_mask() == 0) return;  // no differentiable argument requires grad
    out.differentiated = true;
    int64_t call_shape[16];
    compute_call_shape(b, a.args, call_shape);
    int64_t total = 1;
    for (int d = 0; d < b.call_rank; ++d) total *= call_shape[d];
    void* stream = b.device == DeviceType::CUDA ? host.current_stream(b.device, b.device_index) : nullptr;
    void* zeros = device_zeros(host, b.device, b.device_index, stream, b.function);

    // The result leaves' gradients, as views over the results' shapes (a broadcast gradient
    // reads with stride 0 where its extent is 1 or its dim is missing); zero where not given.
    const size_t n_results = b.result_leaves.size();
    if (n_result_grads > n_results)
        throw_type_error(b.function + "(): got " + std::to_string(n_result_grads) + " result gradients for " +
                         std::to_string(n_results) + " results");
    std::vector<TensorInfo> result_grad_views(n_results);
    for (size_t k = 0; k < n_results; ++k) {
        const ResultLeaf& leaf = b.result_leaves[k];
        TensorInfo view{};
        view.ndim = result_shape(b, leaf, call_shape, view.shape);
        view.dtype = dtype_of(leaf.scalar);
        view.device_type = b.device;
        view.device_index = b.device_index;
        view.numel = 1;
        for (int d = 0; d < view.ndim; ++d) view.numel *= view.shape[d];
        if (k >= n_result_grads || !result_grads[k].data) {
            result_grad_views[k] = zero_view(view, zeros);
            continue;
        }
        const TensorInfo& g = result_grads[k];
        if (g.dtype != view.dtype || g.device_type != b.device)
            throw_type_error(b.function + "(): the gradient of the result must be " + with_article(dtype_name(view.dtype)) +
                             " tensor on the call's device, got " + with_article(dtype_name(g.dtype)) + " tensor");
        if (g.ndim > view.ndim)
            throw_value_error(b.function + "(): the gradient of the result has " + std::to_string(g.ndim) +
                              " dimensions, the result " + std::to_string(view.ndim));
        view.data = g.data;
        for (int d = 0; d < view.ndim; ++d) {
            const int gd = d - (view.ndim - g.ndim);
            if (gd < 0 || g.shape[gd] == 1) {
                view.strides[d] = 0;
            } else if (g.shape[gd] == view.shape[d]) {
                view.strides[d] = g.strides[gd];
            } else {
                throw_value_error(b.function + "(): the gradient of the result has extent " +
                                  std::to_string(g.shape[gd]) + " in dimension " + std::to_string(gd) +
                                  " where the result has " + std::to_string(view.shape[d]));
            }
        }
        result_grad_views[k] = view;
    }

    // A new buffer per differentiable tensor argument that requires grad; the incoming gradients
    // of written tensors (out: the binding's gradient; inout: beside its old value's buffer).
    std::vector<TensorInfo> buffers(b.params.size());
    std::vector<TensorInfo> written_views(b.params.size());
    std::vector<const TensorInfo*> grads(b.params.size(), nullptr);
    std::vector<const TensorInfo*> out_grads(b.params.size(), nullptr);
    std::vector<bool> stored(b.params.size(), false);
    uint64_t mask = 0;
    for (size_t i = 0; i < b.params.size(); ++i) {
        const ParamBinding& p = b.params[i];
        const ArgInfo& arg = a.args[size_t(p.arg)];
        if (arg.kind != ArgKind::Tensor) continue;
        if (p.is_output) {
            const TensorInfo* given = written_grads ? written_grads[p.arg] : nullptr;
            written_views[i] = given ? *given : zero_view(arg.tensor, zeros);
            (p.dir == lang::ParamDir::InOut ? out_grads : grads)[i] = &written_views[i];
            if (p.dir != lang::ParamDir::InOut) continue;
        }
        if (!p.requires_grad) continue;
        const TensorInfo& t = arg.tensor;
        out.grads.emplace_back(int(p.arg), HostRef(host, host.empty(t.shape, t.ndim, t.dtype, t.device_type, t.device_index,
                                                                     false, buffers[i])));
        grads[i] = &buffers[i];
        stored[i] = p.grad_strategy == GradStrategy::Store;
        mask |= uint64_t(1) << i;
    }
    if (mask == 0 || total == 0) {
        zero_gradient_buffers(*plan, buffers.data(), int(buffers.size()), stream, {});
        return;
    }
    // Tables read only at the call element's own index, shaped as the call: stored too.
    CallPlan::Backward& bw = backward_for(*plan, mask, stream);
    for (size_t i = 0; i < b.params.size(); ++i)
        if (grads[i] == &buffers[i] && b.params[i].grad_strategy == GradStrategy::Collide)
            stored[i] = stores_every_entry(bw, int(i), buffers[i], call_shape);
    zero_gradient_buffers(*plan, buffers.data(), int(buffers.size()), stream, stored);
    BackwardLaunch l;
    l.backward = &bw;
    l.args = a.args;
    l.call_shape = call_shape;
    l.result_grads = result_grad_views.data();
    l.binding_grads = grads.data();
    l.binding_out_grads = out_grads.data();
    l.mask = mask;
    l.stream = stream;
    run_backward(host, *plan, l);
}

std::string render_key(FunctionState& fn, const Modifiers& mods, const CallArgs& a, bool grad_mode) {
    CallKey key;
    build_key(key, fn, mods, a, grad_mode, call_options(a.args, a.total));
    return render_call_key(key);
}

std::string debug_code(Host& host, FunctionState& fn, const Modifiers& mods, const CallArgs& a, bool grad_mode) {
    const std::shared_ptr<CallPlan> plan = plan_for(host, fn, mods, a, grad_mode);
    std::string out = "// call plan " + plan->key_text() + "\n";
    out += "// ---- forward glue (kernel language)\n" + plan->forward_glue().source;
    const UserModule& module = *fn.module;
    out += "// ---- forward kernel (" + plan->forward().generated.entry + ", device prelude omitted)\n" +
           kernel_body(module, plan->forward_glue(), plan->forward());
    if (plan->binding().autograd && plan->grad_mask() != 0) {
        const CallPlan::Backward& bw = plan->backward(plan->grad_mask());
        out += "// ---- backward glue (kernel language)\n" + bw.glue.source;
        out += "// ---- backward kernel (" + bw.kernel.generated.entry + ", device prelude omitted)\n" +
               kernel_body(module, bw.glue, bw.kernel);
        if (bw.kernel.fixed_scan)
            out += "// ---- backward kernel, fixed-point scan variant (" + bw.kernel.fixed_scan->generated.entry +
                   ", launched first)\n" + kernel_body(module, bw.glue, *bw.kernel.fixed_scan);
    }
    return out;
}

}  // namespace sg::call
