// src/python/function.cpp — Module and Function: loading, lookup, modifiers, the call hot path
// and the autograd wiring through the active torch bridge.
#include "python/function.h"

#include <atomic>
#include <cstring>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "call/call_options.h"
#include "call/errors.h"
#include "call/graph_capture.h"
#include "call/kernel_faults.h"
#include "call/value_kind.h"
#include "python/autograd_call.h"
#include "python/compile_support.h"
#include "python/torch_ops.h"

namespace sg::py {

using call::ArgInfo;
using call::ArgKind;

namespace {

std::atomic<uint32_t> g_next_function_id{1};

// Per-thread scratch space: a cached call allocates nothing here after warm-up.
thread_local CallScratch t_scratch;
thread_local call::CallKey t_key;
thread_local std::vector<uint8_t> t_block;
thread_local std::vector<TensorInfo> t_results;

/// Launches larger than this release the GIL while the thread pool runs.
constexpr int64_t kReleaseGilThreads = 1 << 16;

constexpr DType kDTypes[] = {DType::Bool,   DType::Int8,   DType::Int16,   DType::Int32,   DType::Int64,  DType::UInt8,
                             DType::UInt16, DType::UInt32, DType::UInt64, DType::Float16, DType::Float32, DType::Float64};

}  // namespace

// ---------------------------------------------------------------- Function

Function::Function(std::shared_ptr<FunctionCore> core, Modifiers modifiers) : core_(std::move(core)), mods_(std::move(modifiers)) {
    register_live_function(this);
}

Function::~Function() { unregister_live_function(this); }

const lang::FunctionDecl* Function::representative() const {
    std::vector<lang::FunctionDecl*> fns = call::candidate_declarations(*core_->module, core_->callee);
    return fns.empty() ? nullptr : fns[0];
}

std::vector<std::string> Function::parameter_names() const {
    std::vector<std::string> names;
    if (const lang::FunctionDecl* fn = representative())
        for (lang::VarDecl* p : fn->params) names.push_back(p->name);
    return names;
}

std::vector<std::tuple<std::string, std::string, std::string>> Function::parameters() const {
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    const lang::FunctionDecl* fn = representative();
    if (!fn) return out;
    for (lang::VarDecl* p : fn->params) {
        const char* dir = p->dir == lang::ParamDir::In ? "in" : p->dir == lang::ParamDir::Out ? "out" : "inout";
        out.emplace_back(p->name, dir, call::param_type_text(p));
    }
    return out;
}

std::map<std::string, std::string> Function::parameter_defaults() const {
    std::map<std::string, std::string> out;
    if (const lang::FunctionDecl* fn = representative())
        for (const lang::VarDecl* p : fn->params)
            if (p->default_value) out[p->name] = p->default_text;
    return out;
}

bool Function::returns_value() const {
    const lang::FunctionDecl* fn = representative();
    if (!fn) return false;
    if (fn->result_type) return !fn->result_type->is_void();
    return !(fn->return_type && fn->return_type->name == "void" && fn->return_type->array_dims.empty());
}

bool Function::describe(nb::args& args, nb::kwargs& kwargs) {
    TorchOps& ops = torch_ops();
    CallScratch& s = t_scratch;
    s.reset();
    if (mods_.bound_this.is_valid()) [[unlikely]] {
        // fn.bind(this): `this` is the first positional argument.
        nb::list all;
        all.append(mods_.bound_this);
        for (nb::handle a : args) all.append(a);
        nb::args with_this = nb::borrow<nb::args>(nb::tuple(all));
        Modifiers m = mods_;
        m.bound_this = nb::object();
        Function unbound(core_, std::move(m));
        return unbound.describe(with_this, kwargs);
    }
    if (mods_.set_values.is_valid() && !mods_.set_values.is_none()) [[unlikely]] {
        // fn.set(): values for the parameters this call does not pass.
        nb::object values = PyCallable_Check(mods_.set_values.ptr()) ? mods_.set_values() : mods_.set_values;
        if (!nb::isinstance<nb::dict>(values))
            call::throw_type_error(core_->name + "(): set() needs a dict (or a callback returning one), got " +
                                   std::string(Py_TYPE(values.ptr())->tp_name));
        std::vector<std::string> names = parameter_names();
        nb::dict merged;
        for (auto [k, v] : nb::cast<nb::dict>(values)) {
            std::string key = nb::cast<std::string>(k);
            bool positional = false;
            for (size_t i = 0; i < args.size() && i < names.size(); ++i) positional |= names[i] == key;
            if (!positional && !kwargs.contains(k)) merged[k] = v;
        }
        for (auto [k, v] : kwargs) merged[k] = v;
        nb::kwargs kw = nb::borrow<nb::kwargs>(merged);
        describe_args(ops, args, kw, s, core_->device.type, core_->device.index);
        s.keep.push_back(std::move(merged));  // the children's key names point into it
    } else {
        describe_args(ops, args, kwargs, s, core_->device.type, core_->device.index);
    }
    return ops.grad_enabled();
}

std::shared_ptr<call::CallPlan> Function::plan_for(bool grad_mode) {
    CallScratch& s = t_scratch;
    const uint32_t options = call::call_options(s.args.data(), s.total);
    call::build_call_key(t_key, core_->id, s.args.data(), s.count, s.total, s.keywords, grad_mode, options, mods_.key_bytes);
    if (!core_->link_key.empty()) [[unlikely]]
        call::append_link_key(t_key, core_->link_key);
    auto it = core_->plans.find(t_key);
    // A plan whose binding read element extents the key does not carry (an (N, 5) tensor as
    // float[5]) serves only calls with those extents; others look under a key that has theirs.
    for (int level = 0; it != core_->plans.end(); ++level) {
        const std::vector<call::ExtentCheck>& checks = it->second->binding().extent_checks;
        if (checks.empty() || call::extents_match(checks, s.args.data())) [[likely]]
            return it->second;
        if (level == 4) break;
        call::append_extent_key(t_key, checks, s.args.data());
        it = core_->plans.find(t_key);
    }
    call::CallModifiers mods = mods_.call;
    mods.strict_broadcasting |= core_->options.strict_broadcasting;
    mods.deterministic |= core_->options.deterministic;
    mods.fast_math |= core_->options.fast_math;
    call::Binding binding = call::resolve_call(*core_->module, core_->callee, s.args.data(), s.positional, s.keywords,
                                               grad_mode, core_->device.type, mods, s.result_index);
    // A new plan compiles its kernel: never inside a CUDA graph capture (graph_capture.h).
    if (binding.device == DeviceType::CUDA) [[unlikely]]
        call::refuse_during_capture(core_->name, "forward kernel", binding.device, binding.device_index,
                                    torch_ops().current_stream(binding.device, binding.device_index));
    const codegen::CodegenOptions codegen_options = call::codegen_options(options, core_->device.type, call::debug_mode());
    auto plan = std::make_shared<call::CallPlan>(*core_->module, std::move(binding), t_key, codegen_options);
    if (it == core_->plans.end()) core_->plans.emplace(t_key, plan);
    return plan;
}

namespace {
/// Drops the Python objects a call made (the scratch is thread-local and outlives the interpreter).
struct ScratchRelease {
    ~ScratchRelease() {
        if (!t_scratch.keep.empty()) t_scratch.keep.clear();
        t_scratch.writebacks.clear();
    }
};
}  // namespace

nb::object Function::call(nb::args args, nb::kwargs kwargs) {
    ScratchRelease release;
    return call_described(describe(args, kwargs));
}

namespace {

/// The output_is_input_dirty flag of a tensor the call writes under autograd (bridge_abi.h):
/// 1, written in place (its history is rebased onto the call's node), or, for a leaf that
/// requires grad, 2: a write-only parameter's tensor becomes a fresh output of the node (torch
/// forbids in-place writes to such leaves); an inout one is refused, naming the parameter.
/// `binding` is -1 for a `_result=` tensor.
NB_NOINLINE uint8_t written_dirty_flag(const call::Binding& b, int binding, const TensorInfo& t) {
    if (!(t.is_leaf && t.requires_grad)) return 1;
    if (binding >= 0 && b.params[size_t(binding)].dir == lang::ParamDir::InOut)
        call::throw_value_error(b.function + "(): parameter '" + b.params[size_t(binding)].name +
                                "' is inout and got a leaf tensor that requires grad; torch does not allow writing such "
                                "a tensor in place (pass a clone, e.g. x.clone(), and use the written clone)");
    return 2;
}

}  // namespace

nb::object Function::call_described(bool grad_mode) {
    CallScratch& s = t_scratch;
    std::shared_ptr<call::CallPlan> plan = plan_for(grad_mode);
    const call::Binding& b = plan->binding();
    int64_t shape[16];
    call::compute_call_shape(b, s.args.data(), shape);
    int64_t total = 1;
    for (int d = 0; d < b.call_rank; ++d) total *= shape[d];

    TorchOps& ops = torch_ops();
    ResultMode mode = mods_.return_mode;
    nb::object result = nb::none();  // the first result leaf's tensor
    std::vector<nb::object> more;    // struct results: the other leaves
    const size_t n_results = b.result_leaves.size();
    if (t_results.size() < n_results) t_results.resize(n_results);
    const bool result_given = s.result_index >= 0;
    nb::object result_return;        // what `_result=` asks to get back (an ndarray)
    if (s.result_arg && !result_given) [[unlikely]]
        mode = result_mode_of(nb::handle(s.result_arg));
    for (size_t k = 0; k < n_results; ++k) {
        const call::ResultLeaf& leaf = b.result_leaves[k];
        int ndim = b.call_rank;
        for (int64_t e : leaf.elem_shape) shape[ndim++] = e;
        if (result_given) {
            // Checked by the binder; written through a torch view of an array (copied for CUDA).
            const ArgInfo& r = s.args[size_t(s.result_index)];
            result = nb::borrow(static_cast<PyObject*>(r.object));
            t_results[k] = r.tensor;
            if (r.origin == call::ArgOrigin::NumPy) result_return = nb::borrow(s.result_arg);
        } else {
            nb::object t = ops.empty(shape, ndim, kDTypes[int(leaf.scalar)], b.device, b.device_index, false, t_results[k]);
            if (k == 0) result = std::move(t);
            else more.push_back(std::move(t));
        }
    }
    auto finish = [&](nb::object first, bool autograd) -> nb::object {
        write_back(b, s);
        if (result_return.is_valid()) [[unlikely]] {
            for (const CallScratch::WriteBack& w : s.writebacks)
                if (w.arg == s.result_index)
                    nb::module_::import_("shadegrad._values").attr("numpy_store")(result_return, nb::handle(w.tensor));
            return result_return;
        }
        if (n_results == 0) return nb::none();
        if (mode == ResultMode::Torch || (mode == ResultMode::Auto && n_results == 1 && b.result_leaves[0].keys.empty() &&
                                          (b.call_rank > 0 || autograd || s.any_torch) && !(s.any_numpy && !s.any_torch))) [[likely]]
            return first;
        std::vector<nb::object> results;
        results.push_back(std::move(first));
        for (nb::object& o : more) results.push_back(o);
        return result_to_python(b, s, results, mode, autograd);
    };
    if (total == 0) return finish(result, false);  // zero-size call: nothing to launch

    call::LaunchData data;
    data.args = s.args.data();
    data.call_shape = shape;
    data.result = t_results.data();
    void* stream = b.device == DeviceType::CUDA ? ops.current_stream(b.device, b.device_index) : nullptr;
    if (!b.autograd) {
        call::CallPlan::pack(plan->forward(), plan->forward_glue(), b, data, t_block);
        if (b.device == DeviceType::CPU && total >= kReleaseGilThreads) {
            nb::gil_scoped_release release;
            call::CallPlan::launch(plan->forward(), t_block, stream, core_->name);
        } else {
            call::CallPlan::launch(plan->forward(), t_block, stream, core_->name);
        }
        return finish(result, false);
    }

    // Autograd: the node's inputs are every tensor the kernels read, its outputs the result and
    // the tensors the function writes.
    auto ctx = std::make_unique<AutogradCtx>();
    ctx->plan = plan;
    ctx->args.assign(s.args.begin(), s.args.begin() + long(s.total));
    std::memcpy(ctx->call_shape, shape, sizeof(ctx->call_shape));
    ctx->results.assign(t_results.begin(), t_results.begin() + long(n_results));
    ctx->stream = stream;
    ctx->zeros = device_zeros(ops, b.device, b.device_index, stream, core_->name);
    std::vector<PyObject*> inputs, outputs;
    std::vector<uint8_t> dirty;
    std::vector<nb::object> old_values;  // inout tensors' values before the call (kept by the node)
    for (size_t k = 0; k < n_results; ++k) {
        outputs.push_back(k == 0 ? result.ptr() : more[k - 1].ptr());
        dirty.push_back(result_given ? written_dirty_flag(b, -1, s.args[size_t(s.result_index)].tensor) : 0);
        ctx->output_bindings.push_back(-1 - int(k));
    }
    for (size_t i = 0; i < b.params.size(); ++i) {
        const call::ParamBinding& p = b.params[i];
        if (s.args[size_t(p.arg)].kind != ArgKind::Tensor) continue;
        PyObject* obj = static_cast<PyObject*>(s.args[size_t(p.arg)].object);
        if (p.is_output) {
            outputs.push_back(obj);
            dirty.push_back(written_dirty_flag(b, int(i), s.args[size_t(p.arg)].tensor));
            ctx->output_bindings.push_back(int(i));
            if (p.dir != lang::ParamDir::InOut) continue;
            // An inout tensor's old value is an input: a copy taken before the kernel writes the
            // tensor, in the graph (clone's backward passes its gradient to the tensor's history).
            old_values.push_back(nb::handle(obj).attr("clone")());
            inputs.push_back(old_values.back().ptr());
        } else {
            inputs.push_back(obj);
        }
        ctx->input_bindings.push_back(int(i));
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
    if (!replaced.is_none() && n_results) {
        // The fallback bridge hands back new output objects: the results are its first ones.
        nb::tuple outs = nb::tuple(replaced);
        result = nb::borrow(outs[0]);
        for (size_t k = 1; k < n_results; ++k) more[k - 1] = nb::borrow(outs[k]);
    }
    return finish(result, true);
}

std::string Function::call_key(nb::args args, nb::kwargs kwargs) {
    ScratchRelease release;
    bool grad_mode = describe(args, kwargs);
    CallScratch& s = t_scratch;
    call::build_call_key(t_key, core_->id, s.args.data(), s.count, s.total, s.keywords, grad_mode,
                         call::call_options(s.args.data(), s.total), mods_.key_bytes);
    call::append_link_key(t_key, core_->link_key);
    return call::render_call_key(t_key);
}

std::string Function::debug_code(nb::args args, nb::kwargs kwargs) {
    ScratchRelease release;
    bool grad_mode = describe(args, kwargs);
    std::shared_ptr<call::CallPlan> plan = plan_for(grad_mode);
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
        if (bw.kernel.fixed_scan)
            out += "// ---- backward kernel, fixed-point scan variant (" + bw.kernel.fixed_scan->generated.entry +
                   ", launched first)\n" + body(bw.kernel.fixed_scan->generated);
    }
    return out;
}

// ---------------------------------------------------------------- modifiers

namespace {
/// The kernel-changing modifiers as key bytes: 'M', then per parameter its map (u8 size, u8
/// dims) when there are maps; 'D' for deterministic mode, 'F' for fast math (the parameter count
/// is fixed per function, so these never read as each other).
void rebuild_key_bytes(Modifiers& m) {
    // 'M', then per parameter its map (u8 size, u8 dims), then 'T' and per parameter its type
    // name (u8 size, the name); then 'D' in deterministic mode, then 'F' in fast math.
    m.key_bytes.clear();
    if (!m.call.dim_maps.empty() || !m.call.type_maps.empty()) {
        m.key_bytes = "M";
        for (const std::vector<int>& dims : m.call.dim_maps) {
            m.key_bytes.push_back(char(dims.size()));
            for (int d : dims) m.key_bytes.push_back(char(d));
        }
        m.key_bytes.push_back('T');
        for (const std::string& t : m.call.type_maps) {
            m.key_bytes.push_back(char(t.size()));
            m.key_bytes += t;
        }
    }
    if (m.call.deterministic) m.key_bytes.push_back('D');
    if (m.call.fast_math) m.key_bytes.push_back('F');
}
}  // namespace

Function* Function::map(nb::args args, nb::kwargs kwargs) const {
    Modifiers m = mods_;
    std::vector<std::string> names = parameter_names();
    m.call.dim_maps.resize(names.size());
    m.call.type_maps.resize(names.size());
    // A mapping is a tuple of call dimensions (or one int), or a type name: the type the
    // argument is read as (SlangPy's map by type).
    auto set_map = [&](size_t p, nb::handle h) {
        m.call.dim_maps[p].clear();
        m.call.type_maps[p].clear();
        if (nb::isinstance<nb::str>(h)) {
            m.call.type_maps[p] = nb::cast<std::string>(h);
            if (m.call.type_maps[p].empty() || m.call.type_maps[p].size() > 200)
                call::throw_value_error(core_->name + "(): map() needs a type name for '" + names[p] + "'");
            return;
        }
        if (PyType_Check(h.ptr()))
            call::throw_type_error(core_->name + "(): map() of '" + names[p] +
                                   "' takes dimension tuples or a type name (a str such as \"float3\"), not a Python class");
        if (PyLong_Check(h.ptr())) m.call.dim_maps[p].push_back(nb::cast<int>(h));
        else
            for (nb::handle d : h) m.call.dim_maps[p].push_back(nb::cast<int>(d));
    };
    if (args.size() > names.size())
        call::throw_type_error(core_->name + "(): map() got " + std::to_string(args.size()) + " mappings for " +
                               std::to_string(names.size()) + " parameters");
    for (size_t i = 0; i < args.size(); ++i) set_map(i, args[i]);
    for (auto [k, v] : kwargs) {
        std::string key = nb::cast<std::string>(k);
        auto it = std::find(names.begin(), names.end(), key);
        if (it == names.end()) call::throw_type_error(core_->name + "(): map() names no parameter '" + key + "'");
        set_map(size_t(it - names.begin()), v);
    }
    rebuild_key_bytes(m);
    return new Function(core_, std::move(m));
}

Function* Function::deterministic(bool enabled) const {
    Modifiers m = mods_;
    m.call.deterministic = enabled;
    rebuild_key_bytes(m);
    return new Function(core_, std::move(m));
}

Function* Function::fast_math(bool enabled) const {
    Modifiers m = mods_;
    m.call.fast_math = enabled;
    rebuild_key_bytes(m);
    return new Function(core_, std::move(m));
}

Function* Function::set(nb::object values) const {
    if (!nb::isinstance<nb::dict>(values) && !PyCallable_Check(values.ptr()))
        call::throw_type_error(core_->name + "(): set() needs a dict or a callback, got " +
                               std::string(Py_TYPE(values.ptr())->tp_name));
    Modifiers m = mods_;
    m.set_values = std::move(values);
    return new Function(core_, std::move(m));
}

Function* Function::bind(nb::object self) const {
    std::vector<std::string> names = parameter_names();
    if (names.empty() || names[0] != "this" || mods_.bound_this.is_valid())
        call::throw_type_error(core_->name + "(): bind() takes the `this` of an instance method" +
                               (mods_.bound_this.is_valid() ? " (it is bound already)" : ""));
    Modifiers m = mods_;
    m.bound_this = std::move(self);
    return new Function(core_, std::move(m));
}

Function* Function::return_type(nb::handle t) const {
    Modifiers m = mods_;
    m.return_mode = result_mode_of(t);
    return new Function(core_, std::move(m));
}

namespace {

/// A `.constants({...})` value: bool, int, float, or a (nested) list or tuple of them.
void constant_components(nb::handle v, const std::string& name, lang::ConstantValue& out, int depth) {
    using K = lang::ConstantScalar::Kind;
    if (PyBool_Check(v.ptr())) {
        out.push_back({K::Bool, v.ptr() == Py_True, 0});
    } else if (PyLong_Check(v.ptr())) {
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
        if (overflow) call::throw_value_error("constants: the value of '" + name + "' does not fit in 64 bits");
        out.push_back({K::Int, i, double(i)});
    } else if (PyFloat_Check(v.ptr())) {
        out.push_back({K::Float, 0, PyFloat_AS_DOUBLE(v.ptr())});
    } else if ((PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) && depth < 4) {
        for (nb::handle item : nb::borrow<nb::sequence>(v)) constant_components(item, name, out, depth + 1);
    } else {
        call::throw_type_error("constants: the value of '" + name + "' must be a bool, int, float or a list of them, not " +
                               Py_TYPE(v.ptr())->tp_name);
    }
}

}  // namespace

Function* Function::constants(nb::dict values) const {
    lang::LinkConstants overrides;
    for (auto [k, v] : values) {
        if (!PyUnicode_Check(k.ptr())) call::throw_type_error("constants: names must be strings");
        std::string name = nb::cast<std::string>(k);
        lang::ConstantValue value;
        constant_components(v, name, value, 0);
        if (value.empty()) call::throw_value_error("constants: the value of '" + name + "' is empty");
        overrides[name] = std::move(value);
    }
    // Another module (the same files, other values): a core, and so a plan cache, of its own.
    auto core = std::make_shared<FunctionCore>();
    core->module = core_->module->with_constants(overrides);
    core->name = core_->name;
    core->callee = core_->callee;
    core->device = core_->device;
    core->options = core_->options;
    core->id = g_next_function_id++;
    core->link_key = core->module->link_key();
    return new Function(core, mods_);
}

// ---------------------------------------------------------------- Module

namespace {

call::ModuleSetup module_setup(const Device& device, std::string path, std::vector<lang::LinkConstants> linked) {
    call::ModuleSetup setup;
    setup.path = std::move(path);
    setup.include_paths = device.include_paths;
    setup.linked = std::move(linked);
    return setup;
}

}  // namespace

Module::Module(Device device, std::string name, std::string source, ModuleOptions options, std::string path,
               std::vector<lang::LinkConstants> linked)
    : device_(device), options_(options),
      module_(std::make_shared<call::UserModule>(std::move(name), std::move(source),
                                                 module_setup(device, std::move(path), std::move(linked)))) {}

nb::object Module::find_function(const std::string& name) {
    auto it = functions_.find(name);
    if (it != functions_.end()) return it->second;
    call::Callee callee;
    if (!call::parse_callee(*module_, name, callee)) return nb::none();
    // "wsq<3>" and "wsq< 3 >" are one function object.
    if (callee.text() != name) {
        nb::object fn = find_function(callee.text());
        functions_.emplace(name, fn);
        return fn;
    }
    auto core = std::make_shared<FunctionCore>();
    core->module = module_;
    core->name = callee.text();
    core->callee = std::move(callee);
    core->device = device_;
    core->options = options_;
    core->id = g_next_function_id++;
    core->link_key = module_->link_key();
    nb::object fn = nb::cast(new Function(core, Modifiers{}), nb::rv_policy::take_ownership);
    functions_.emplace(name, fn);
    return fn;
}

nb::object Module::find_function_in_struct(const std::string& struct_name, const std::string& name) {
    std::string s = struct_name;
    for (size_t at; (at = s.find("::")) != std::string::npos;) s.replace(at, 2, ".");
    if (!module_->find_struct(s)) return nb::none();
    return find_function(s + "." + name);
}

nb::object Module::function(const std::string& name) {
    nb::object fn = find_function(name);
    if (fn.is_none()) {
        std::string known;
        for (const std::string& n : module_->function_names()) known += (known.empty() ? "" : ", ") + n;
        throw nb::attribute_error(("module '" + module_->name() + "' has no function '" + name + "' (it has: " + known + ")").c_str());
    }
    return fn;
}

std::shared_ptr<StructInfo> Module::find_struct(const std::string& name) const {
    const lang::StructDecl* decl = module_->find_struct(name);
    if (!decl || !decl->type) return nullptr;
    auto info = std::make_shared<StructInfo>();
    info->name = decl->name;
    for (const lang::FieldInfo& f : module_->types().fields(decl->type)) info->fields.emplace_back(f.name, lang::type_name(f.type));
    return info;
}

}  // namespace sg::py
