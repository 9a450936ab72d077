// src/python/function.cpp — Module and Function: loading, the call hot path and the autograd
// wiring through the active torch bridge.
#include "python/function.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "call/call_options.h"
#include "call/errors.h"
#include "call/kernel_faults.h"
#include "python/compile_support.h"
#include "python/torch_ops.h"

namespace sg::py {

using call::ArgInfo;
using call::ArgKind;

namespace {

std::atomic<uint32_t> g_next_function_id{1};

// Per-thread scratch space: a cached call allocates nothing here after warm-up.
thread_local std::vector<ArgInfo> t_args;
thread_local std::vector<std::string> t_keywords;
thread_local call::CallKey t_key;
thread_local std::vector<uint8_t> t_block;

/// Launches larger than this release the GIL while the thread pool runs.
constexpr int64_t kReleaseGilThreads = 1 << 16;

/// A gradient of zero for outputs torch passes no gradient for: every stride 0 over a static
/// zero buffer large enough for any element type (4x4 doubles).
alignas(64) const unsigned char kZeros[256] = {};

TensorInfo zero_view(const TensorInfo& like, void* zeros) {
    TensorInfo z = like;
    z.data = zeros;
    for (int d = 0; d < kMaxTensorRank; ++d) z.strides[d] = 0;
    return z;
}

void describe_one(TorchOps& ops, PyObject* o, ArgInfo& a) {
    a.kind = ArgKind::None;
    a.object = o;
    a.type_name = nullptr;
    if (PyFloat_Check(o)) {
        a.kind = ArgKind::Float;
        a.number = PyFloat_AS_DOUBLE(o);
        return;
    }
    if (PyBool_Check(o)) {
        a.kind = ArgKind::Bool;
        a.integer = o == Py_True;
        a.number = double(a.integer);
        return;
    }
    if (PyLong_Check(o)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) call::throw_value_error("integer argument does not fit in 64 bits");
        a.kind = ArgKind::Int;
        a.integer = v;
        a.number = double(v);
        return;
    }
    if (nb::isinstance<GridArg>(o)) {
        const GridArg& g = nb::cast<const GridArg&>(nb::handle(o));
        a.kind = ArgKind::Grid;
        std::memset(&a.tensor, 0, sizeof(a.tensor));
        a.tensor.ndim = int32_t(g.shape.size());
        for (size_t d = 0; d < g.shape.size(); ++d) a.tensor.shape[d] = g.shape[d];
        return;
    }
    if (ops.is_tensor(o)) {
        a.kind = ArgKind::Tensor;
        ops.describe(o, a.tensor);
        return;
    }
    a.type_name = Py_TYPE(o)->tp_name;
}

/// What the autograd node keeps of a call: the plan, the arguments as described at forward,
/// the call shape, and which tensors are the node's inputs and outputs.
struct AutogradCtx {
    std::shared_ptr<call::CallPlan> plan;
    std::vector<ArgInfo> args;
    int64_t call_shape[8] = {};
    TensorInfo result{};
    bool has_result = false;
    std::vector<int> input_bindings;   ///< binding index of each autograd input
    std::vector<int> output_bindings;  ///< -1 for the result, else the binding index
    std::vector<uint8_t> forward_block;
    void* stream = nullptr;            ///< the forward's CUDA stream (backward runs there too)
    void* zeros = nullptr;             ///< a zero-filled buffer on the call's device
};

void copy_error(const std::exception& e, char* err, size_t size) {
    std::snprintf(err, size, "%s", e.what());
}

int autograd_forward(void* p, char* err, size_t size) {
    try {
        auto* c = static_cast<AutogradCtx*>(p);
        call::CallPlan::launch(c->plan->forward(), c->forward_block, c->stream, c->plan->binding().function);
        return 0;
    } catch (const std::exception& e) {
        copy_error(e, err, size);
        return 1;
    }
}

/// Zero-fills the gradient buffers the bridge allocated (contiguous, contents unspecified: see
/// bridge_abi.h) on `stream`, one fill per run of adjacent buffers (the native bridge carves them
/// from one allocation).
void zero_gradient_buffers(const AutogradCtx& c, const TensorInfo* buffers, int n, void* stream) {
    struct Range {
        char* data;
        size_t bytes;
    };
    std::vector<Range> ranges;
    for (int i = 0; i < n; ++i)
        if (buffers[i].data && buffers[i].numel > 0)
            ranges.push_back({static_cast<char*>(buffers[i].data),
                              size_t(buffers[i].numel) * size_t(dtype_size(buffers[i].dtype))});
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.data < b.data; });
    for (size_t i = 0; i < ranges.size();) {
        char* begin = ranges[i].data;
        char* end = begin + ranges[i].bytes;
        for (++i; i < ranges.size() && ranges[i].data <= end; ++i)
            end = std::max(end, ranges[i].data + ranges[i].bytes);
        // The forward kernel names the device (and its context) the buffers live on.
        call::CallPlan::zero(c.plan->forward(), begin, size_t(end - begin), stream);
    }
}

int autograd_backward(void* p, const TensorInfo* saved, int n_inputs, const TensorInfo* grad_outputs, int n_outputs,
                      TensorInfo* grad_inputs, void* stream, char* err, size_t size) {
    try {
        auto* c = static_cast<AutogradCtx*>(p);
        zero_gradient_buffers(*c, grad_inputs, n_inputs, stream ? stream : c->stream);
        const call::Binding& b = c->plan->binding();
        std::vector<ArgInfo> args = c->args;
        std::vector<const TensorInfo*> grads(b.params.size(), nullptr);
        uint64_t mask = 0;
        for (int i = 0; i < n_inputs; ++i) {
            int bi = c->input_bindings[size_t(i)];
            args[size_t(b.params[size_t(bi)].arg)].tensor = saved[i];
            if (grad_inputs[i].data && b.params[size_t(bi)].requires_grad) {
                grads[size_t(bi)] = &grad_inputs[i];
                mask |= uint64_t(1) << bi;
            }
        }
        if (mask == 0) return 0;  // no gradient asked for: buffers stay zero
        std::vector<TensorInfo> outs(static_cast<size_t>(n_outputs));
        const TensorInfo* result_grad = nullptr;
        bool any = false;
        for (int j = 0; j < n_outputs; ++j) {
            int bi = c->output_bindings[size_t(j)];
            const TensorInfo& like = bi < 0 ? c->result : args[size_t(b.params[size_t(bi)].arg)].tensor;
            any |= grad_outputs[j].data != nullptr;
            outs[size_t(j)] = grad_outputs[j].data ? grad_outputs[j] : zero_view(like, c->zeros);
            if (bi < 0) result_grad = &outs[size_t(j)];
            else grads[size_t(bi)] = &outs[size_t(j)];
        }
        if (!any) return 0;  // every incoming gradient is zero
        const call::CallPlan::Backward& bw = c->plan->backward(mask);
        call::LaunchData data;
        data.args = args.data();
        data.call_shape = c->call_shape;
        data.result_grad = result_grad;
        data.binding_grads = grads.data();
        std::vector<uint8_t> block;
        call::CallPlan::pack(bw.kernel, bw.glue, bw.binding, data, block);
        // Torch runs a node's backward on its forward's stream; the native bridge passes it.
        call::CallPlan::launch(bw.kernel, block, stream ? stream : c->stream, b.function);
        return 0;
    } catch (const std::exception& e) {
        copy_error(e, err, size);
        return 1;
    }
}

void autograd_release(void* p) { delete static_cast<AutogradCtx*>(p); }

/// A zero-filled buffer on a device, allocated once per device through torch and kept for the
/// process (undefined incoming gradients read it with stride 0).
void* device_zeros(TorchOps& ops, DeviceType device, int index) {
    if (device == DeviceType::CPU) return const_cast<unsigned char*>(kZeros);
    static std::vector<nb::object>* buffers = new std::vector<nb::object>();
    if (index < 0) index = 0;
    if (size_t(index) >= buffers->size()) buffers->resize(size_t(index) + 1);
    nb::object& buf = (*buffers)[size_t(index)];
    TensorInfo info{};
    int64_t n = sizeof(kZeros);
    if (!buf.is_valid() || buf.is_none()) buf = ops.empty(&n, 1, DType::UInt8, device, index, true, info);
    else ops.describe(buf.ptr(), info);
    return info.data;
}

}  // namespace

// ---------------------------------------------------------------- Function

Function::Function(std::shared_ptr<call::UserModule> module, std::string name, Device device)
    : module_(std::move(module)), name_(std::move(name)), device_(device), id_(g_next_function_id++) {
    register_live_function(this);
}

Function::~Function() { unregister_live_function(this); }

size_t Function::describe(nb::args& args, nb::kwargs& kwargs, bool& grad_mode) {
    TorchOps& ops = torch_ops();
    size_t n = args.size() + kwargs.size();
    if (t_args.size() < n) t_args.resize(n);
    size_t i = 0;
    for (nb::handle h : args) describe_one(ops, h.ptr(), t_args[i++]);
    t_keywords.clear();
    for (auto [k, v] : kwargs) {
        t_keywords.push_back(nb::cast<std::string>(k));
        describe_one(ops, v.ptr(), t_args[i++]);
    }
    positional_ = args.size();
    grad_mode = ops.grad_enabled();
    return n;
}

std::shared_ptr<call::CallPlan> Function::plan_for(size_t count, bool grad_mode) {
    const uint32_t options = call::call_options(t_args.data(), count);
    call::build_call_key(t_key, id_, t_args.data(), count, t_keywords, grad_mode, options);
    auto it = plans_.find(t_key);
    if (it != plans_.end()) [[likely]]
        return it->second;
    call::Binding binding = call::bind_call(*module_, name_, t_args.data(), positional_, count, t_keywords, grad_mode,
                                            device_.type);
    const codegen::CodegenOptions codegen_options = call::codegen_options(options, device_.type, call::debug_mode());
    auto plan = std::make_shared<call::CallPlan>(*module_, std::move(binding), t_key, codegen_options);
    plans_.emplace(t_key, plan);
    return plan;
}

nb::object Function::call(nb::args args, nb::kwargs kwargs) {
    bool grad_mode = false;
    size_t count = describe(args, kwargs, grad_mode);
    std::shared_ptr<call::CallPlan> plan = plan_for(count, grad_mode);
    const call::Binding& b = plan->binding();
    int64_t shape[16];
    call::compute_call_shape(b, t_args.data(), shape);
    int64_t total = 1;
    for (int d = 0; d < b.call_rank; ++d) total *= shape[d];

    TorchOps& ops = torch_ops();
    nb::object result = nb::none();
    TensorInfo result_info{};
    if (!b.result_type->is_void()) {
        std::vector<int64_t> elem;
        lang::ScalarKind scalar = lang::ScalarKind::Float;
        call::element_shape(b.result_type, elem, scalar);
        int ndim = b.call_rank;
        for (int64_t e : elem) shape[ndim++] = e;
        static const DType kDTypes[] = {DType::Bool,   DType::Int8,   DType::Int16,   DType::Int32,
                                        DType::Int64,  DType::UInt8,  DType::UInt16,  DType::UInt32,
                                        DType::UInt64, DType::Float16, DType::Float32, DType::Float64};
        result = ops.empty(shape, ndim, kDTypes[int(scalar)], b.device, b.device_index, false, result_info);
    }
    if (total == 0) return result;  // zero-size call: nothing to launch

    call::LaunchData data;
    data.args = t_args.data();
    data.call_shape = shape;
    data.result = &result_info;
    void* stream = b.device == DeviceType::CUDA ? ops.current_stream(b.device, b.device_index) : nullptr;
    if (!b.autograd) {
        call::CallPlan::pack(plan->forward(), plan->forward_glue(), b, data, t_block);
        if (b.device == DeviceType::CPU && total >= kReleaseGilThreads) {
            nb::gil_scoped_release release;
            call::CallPlan::launch(plan->forward(), t_block, stream, name_);
        } else {
            call::CallPlan::launch(plan->forward(), t_block, stream, name_);
        }
        return result;
    }

    // Autograd: the node's inputs are every tensor the kernels read, its outputs the result and
    // the tensors the function writes.
    auto ctx = std::make_unique<AutogradCtx>();
    ctx->plan = plan;
    ctx->args.assign(t_args.begin(), t_args.begin() + long(count));
    std::memcpy(ctx->call_shape, shape, sizeof(ctx->call_shape));
    ctx->result = result_info;
    ctx->stream = stream;
    ctx->zeros = device_zeros(ops, b.device, b.device_index);
    std::vector<PyObject*> inputs, outputs;
    std::vector<uint8_t> dirty;
    if (!b.result_type->is_void()) {
        outputs.push_back(result.ptr());
        dirty.push_back(0);
        ctx->output_bindings.push_back(-1);
    }
    for (size_t i = 0; i < b.params.size(); ++i) {
        const call::ParamBinding& p = b.params[i];
        if (t_args[size_t(p.arg)].kind != ArgKind::Tensor) continue;
        PyObject* obj = static_cast<PyObject*>(t_args[size_t(p.arg)].object);
        if (p.is_output) {
            outputs.push_back(obj);
            dirty.push_back(1);
            ctx->output_bindings.push_back(int(i));
        } else {
            inputs.push_back(obj);
            ctx->input_bindings.push_back(int(i));
        }
    }
    call::CallPlan::pack(plan->forward(), plan->forward_glue(), b, data, ctx->forward_block);
    SgAutogradSpec spec{};
    spec.inputs = inputs.data();
    spec.n_inputs = int(inputs.size());
    spec.outputs = outputs.data();
    spec.n_outputs = int(outputs.size());
    spec.output_is_input_dirty = dirty.data();
    spec.forward = autograd_forward;
    spec.backward = autograd_backward;
    spec.release = autograd_release;
    spec.ctx = ctx.release();  // owned by the bridge from here on (released on failure too)
    nb::object replaced = ops.apply_autograd(spec);
    if (!replaced.is_none() && !b.result_type->is_void()) result = nb::borrow(nb::tuple(replaced)[0]);
    return result;
}

std::string Function::call_key(nb::args args, nb::kwargs kwargs) {
    bool grad_mode = false;
    size_t count = describe(args, kwargs, grad_mode);
    call::build_call_key(t_key, id_, t_args.data(), count, t_keywords, grad_mode, call::call_options(t_args.data(), count));
    return call::render_call_key(t_key);
}

std::string Function::debug_code(nb::args args, nb::kwargs kwargs) {
    bool grad_mode = false;
    size_t count = describe(args, kwargs, grad_mode);
    std::shared_ptr<call::CallPlan> plan = plan_for(count, grad_mode);
    std::string out = "// call plan " + plan->key_text() + "\n";
    out += "// ---- forward glue (kernel language)\n" + plan->forward_glue().source;
    auto body = [](const codegen::GeneratedKernel& k) { return k.source.substr(k.body_begin); };
    out += "// ---- forward kernel (" + plan->forward().generated.entry + ", device prelude omitted)\n" +
           body(plan->forward().generated);
    if (plan->binding().autograd) {
        const call::CallPlan::Backward& bw = plan->backward(plan->grad_mask());
        out += "// ---- backward glue (kernel language)\n" + bw.glue.source;
        out += "// ---- backward kernel (" + bw.kernel.generated.entry + ", device prelude omitted)\n" +
               body(bw.kernel.generated);
    }
    return out;
}

// ---------------------------------------------------------------- Module

Module::Module(Device device, std::string name, std::string source)
    : device_(device), module_(std::make_shared<call::UserModule>(std::move(name), std::move(source))) {}

nb::object Module::function(const std::string& name) {
    auto it = functions_.find(name);
    if (it != functions_.end()) return it->second;
    if (module_->functions(name).empty()) {
        std::string known;
        for (const std::string& n : module_->function_names()) known += (known.empty() ? "" : ", ") + n;
        throw nb::attribute_error(("module '" + module_->name() + "' has no function '" + name + "' (it has: " + known + ")").c_str());
    }
    nb::object fn = nb::cast(new Function(module_, name, device_), nb::rv_policy::take_ownership);
    functions_.emplace(name, fn);
    return fn;
}

}  // namespace sg::py
