// src/python/function.cpp — Module and Function: loading, lookup, modifiers, and the Python
// ends of a call (arguments described in, results converted out; call::invoke between).
#include "python/function.h"

#include <atomic>
#include <cstring>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "call/call_group.h"
#include "call/call_options.h"
#include "call/errors.h"
#include "call/graph_capture.h"
#include "call/kernel_faults.h"
#include "call/value_kind.h"
#include "python/compile_support.h"
#include "python/set_values.h"
#include "python/torch_host.h"
#include "python/torch_ops.h"

namespace sg::py {

using call::ArgInfo;
using call::ArgKind;

namespace {

// Per-thread scratch space: a cached call allocates nothing here after warm-up.
thread_local CallScratch t_scratch;

}  // namespace

// ---------------------------------------------------------------- Function

Function::Function(std::shared_ptr<call::FunctionState> state, Device device, Modifiers modifiers)
    : state_(std::move(state)), device_(std::move(device)), mods_(std::move(modifiers)) {
    register_live_function(this);
}

Function::~Function() { unregister_live_function(this); }

const lang::FunctionDecl* Function::representative() const {
    std::vector<lang::FunctionDecl*> fns = call::candidate_declarations(*state_->module, state_->callee);
    return fns.empty() ? nullptr : fns[0];
}

std::string Function::repr() const {
    std::vector<lang::FunctionDecl*> fns = call::candidate_declarations(*state_->module, state_->callee);
    std::string s = "<shadegrad Function ";
    if (fns.empty()) {
        s += state_->name;
    } else {
        if (fns[0]->is_differentiable) s += "[Differentiable] ";
        s += call::signature_text(fns[0]);
        if (fns.size() > 1) s += ", " + std::to_string(fns.size()) + " overloads";
    }
    s += device_.type == DeviceType::CUDA ? " on cuda:" + std::to_string(device_.index) : std::string(" on cpu");
    return s + ">";
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

bool Function::describe(CallScratch& s, nb::args& args, nb::kwargs& kwargs) {
    TorchOps& ops = torch_ops();
    s.reset();
    if (mods_.bound_this.is_valid()) [[unlikely]] {
        // fn.bind(this): `this` is the first positional argument.
        nb::list all;
        all.append(mods_.bound_this);
        for (nb::handle a : args) all.append(a);
        nb::args with_this = nb::borrow<nb::args>(nb::tuple(all));
        Modifiers m = mods_;
        m.bound_this = nb::object();
        Function unbound(state_, device_, std::move(m));
        return unbound.describe(s, with_this, kwargs);
    }
    if (mods_.set_values.is_valid() && !mods_.set_values.is_none()) [[unlikely]] {
        // fn.set(): the module's globals, and values for parameters this call does not pass
        // (set_values.h).
        nb::dict merged = merge_set_values(*state_->module, state_->name, parameter_names(), mods_.set_values, args, kwargs);
        nb::kwargs kw = nb::borrow<nb::kwargs>(merged);
        describe_args(ops, args, kw, s, device_.type, device_.index);
        s.keep.push_back(std::move(merged));  // the children's key names point into it
    } else {
        describe_args(ops, args, kwargs, s, device_.type, device_.index);
    }
    return ops.grad_enabled();
}

call::CallArgs Function::described(const CallScratch& s) {
    call::CallArgs a;
    a.args = s.args.data();
    a.count = s.count;
    a.total = s.total;
    a.positional = s.positional;
    a.keywords = &s.keywords;
    a.result_index = s.result_index;
    return a;
}

namespace {
/// Drops the Python objects a call made (the scratch is thread-local and outlives the interpreter).
struct ScratchRelease {
    CallScratch& s;
    ~ScratchRelease() {
        if (!s.keep.empty()) s.keep.clear();
        s.writebacks.clear();
        s.outcome.clear();
    }
};
}  // namespace

nb::object Function::call(nb::args args, nb::kwargs kwargs) {
    if (kwargs.size() != 0 && kwargs.contains("_thread_count")) [[unlikely]] {
        // SlangPy's launch of a [CUDAKernel] function: module.kernel(args..., _thread_count=N)
        // (of any other function: the launch says that it is not one).
        nb::dict rest;
        for (auto [k, v] : kwargs)
            if (nb::cast<std::string>(k) != "_thread_count") rest[k] = v;
        return launch(nb::tuple(args), rest, nb::tuple(), nb::tuple(), kwargs["_thread_count"]);
    }
    if (state_->view_function) [[unlikely]] {  // takes views: one launch, as SlangPy calls it (view_call.cpp)
        // set() of parameter values and bind() of a method's `this` work as for calls per element
        // (describe() merges them); the modifiers that change the kernel of calls per element do
        // not apply yet.
        const call::CallModifiers& k = mods_.kernel.call();
        const char* which = k.deterministic ? "deterministic()" : nullptr;
        if (which)
            call::throw_type_error(state_->name + "() takes a TensorView: " + which +
                                   " is not supported for a function that takes views yet (it runs as one launch)");
        return launch(nb::tuple(args), nb::dict(kwargs), nb::tuple(), nb::tuple(), nb::none());
    }
    CallScratch& s = t_scratch;
    ScratchRelease release{s};
    const bool grad_mode = describe(s, args, kwargs);
    try {
        call::invoke(torch_host(), *state_, mods_.kernel, described(s), grad_mode, s.outcome);
    } catch (const call::ValueOverScalar& e) {
        nb::object out;
        if (by_components(s, args, kwargs, e.arg, out)) return out;
        throw;
    }
    return finish(s);
}

bool Function::by_components(const CallScratch& s, const nb::args& args, const nb::kwargs& kwargs, int arg,
                             nb::object& out) {
    const size_t i = size_t(arg);
    if (arg < 0 || i >= s.count || mods_.bound_this.is_valid() || (mods_.set_values.is_valid() && !mods_.set_values.is_none()))
        return false;
    nb::module_ values = nb::module_::import_("shadegrad._values");
    const bool positional = i < s.positional;
    if (!positional && i - s.positional >= s.keywords.size()) return false;
    const std::string keyword = positional ? std::string() : s.keywords[i - s.positional];
    nb::object value = positional ? nb::borrow(args[i]) : nb::borrow(kwargs[keyword.c_str()]);
    if (!nb::isinstance(value, values.attr("ValueType"))) return false;
    nb::object tensor = values.attr("components_tensor")(value, int(device_.type), device_.index);
    nb::list new_args;
    for (size_t k = 0; k < args.size(); ++k) new_args.append(positional && k == i ? tensor : nb::borrow(args[k]));
    nb::dict new_kwargs;
    for (auto [k, v] : kwargs) new_kwargs[k] = !positional && nb::cast<std::string>(k) == keyword ? tensor : nb::borrow(v);
    out = call(nb::borrow<nb::args>(nb::tuple(new_args)), nb::borrow<nb::kwargs>(new_kwargs));
    return true;
}

nb::list Function::coop_params() const {
    nb::list out;
    for (const call::CoopParam& p : call::coop_params(*state_)) out.append(nb::make_tuple(p.name, int(p.kind), p.dtype));
    return out;
}

nb::object Function::launch(nb::tuple args, nb::dict kwargs, nb::tuple block, nb::tuple grid, nb::object thread_count,
                            int pass) {
    if (pass < 0 || pass > 2) call::throw_value_error(state_->name + "(): unknown launch pass " + std::to_string(pass));
    CallScratch& s = t_scratch;
    ScratchRelease release{s};
    call::LaunchShape shape;
    if (thread_count.is_none() && state_->view_function) {
        shape = call::thread_count_shape(*state_, 1);  // once, or once per sg.grid element
        shape.implicit = true;
    } else if (!thread_count.is_none()) {
        if (!state_->cooperative && !state_->view_function)
            call::throw_type_error(state_->name + "() is not a [CUDAKernel] function: _thread_count= launches a "
                                   "[CUDAKernel] function over N threads, and " + state_->name +
                                   "() is called per element of its arguments, whose shapes give its thread count: "
                                   "call it without _thread_count");
        if (!PyLong_Check(thread_count.ptr()) || PyBool_Check(thread_count.ptr()))
            call::throw_type_error(state_->name + "(): _thread_count must be an int, got " +
                                   std::string(Py_TYPE(thread_count.ptr())->tp_name));
        shape = call::thread_count_shape(*state_, nb::cast<int64_t>(thread_count));
    } else {
        auto read = [&](nb::tuple t, int64_t* out, const char* what) {
            if (t.size() < 1 || t.size() > 3)
                call::throw_value_error(state_->name + "(): " + what + " takes 1 to 3 numbers (x, y, z), got " +
                                        std::to_string(t.size()));
            for (size_t d = 0; d < t.size(); ++d) {
                if (!PyLong_Check(t[d].ptr()))
                    call::throw_type_error(state_->name + "(): " + what + " takes ints, got " +
                                           std::string(Py_TYPE(t[d].ptr())->tp_name));
                out[d] = nb::cast<int64_t>(t[d]);
            }
        };
        read(block, shape.block, "blockSize");
        read(grid, shape.grid, "gridSize");
    }
    nb::args a = nb::borrow<nb::args>(args);
    nb::kwargs kw = nb::borrow<nb::kwargs>(kwargs);
    const bool grad_mode = describe(s, a, kw);
    if (pass == 0 && (!thread_count.is_none() || state_->view_function) && grad_mode &&
        call::coop_needs_autograd(*state_, described(s))) {
        // SlangPy's form with tensors that require grad: the launch joins torch autograd.
        nb::object self = nb::find(this);
        return nb::module_::import_("shadegrad._coop_autograd").attr("launch")(self, args, kwargs, thread_count);
    }
    bool single = false;
    std::vector<void*> more;
    void* result =
        call::launch_cooperative(torch_host(), *state_, described(s), shape, call::CoopPass(pass), &single, &more,
                                 state_->view_function ? &mods_.kernel.call() : nullptr);
    bool struct_result = false;
    if (state_->view_function)
        for (const call::CoopParam& p : call::coop_params(*state_))
            struct_result |= p.is_result_field();
    if (!struct_result) {
        if (!result) {
            // `_result=` of a function that takes views: the tensor it wrote.
            if (pass == 0 && state_->view_function && kwargs.contains("_result")) return kwargs["_result"];
            return nb::none();
        }
        // A function that takes views and returns a value: its results (one call: a 0-d tensor,
        // or the value's components).
        nb::object out = nb::steal(static_cast<PyObject*>(result));
        return single ? out.attr("squeeze")(0) : out;
    }
    // A struct result: a dict of its fields' tensors (nested structs nested), as for calls per
    // element; a field given as `_result:<field>=` is that tensor.
    std::vector<nb::object> leaves;
    leaves.push_back(result ? nb::steal(static_cast<PyObject*>(result)) : nb::object());
    for (void* o : more) leaves.push_back(o ? nb::steal(static_cast<PyObject*>(o)) : nb::object());
    nb::dict out;
    size_t j = 0;
    for (const call::CoopParam& p : call::coop_params(*state_)) {
        if (!p.is_result()) continue;
        const std::string field = p.name.substr(std::string_view("_result:").size());
        nb::object v = leaves.at(j++);
        if (!v.is_valid()) v = kwargs[p.name.c_str()];
        else if (single) v = v.attr("squeeze")(0);
        nb::dict at = out;
        size_t start = 0;
        for (size_t dot = field.find('.'); dot != std::string::npos; start = dot + 1, dot = field.find('.', start)) {
            nb::str key(field.substr(start, dot - start).c_str());
            if (!at.contains(key)) at[key] = nb::dict();
            at = nb::borrow<nb::dict>(at[key]);
        }
        at[nb::str(field.substr(start).c_str())] = v;
    }
    return out;
}

nb::object Function::finish(CallScratch& s) {
    call::CallOutcome& out = s.outcome;
    const call::Binding& b = out.plan->binding();
    const size_t n_results = b.result_leaves.size();
    ResultMode mode = mods_.return_mode;
    if (s.result_arg && s.result_index < 0) [[unlikely]]
        mode = result_mode_of(nb::handle(s.result_arg));
    if (s.result_target) [[unlikely]]
        mode = ResultMode::SgTensor;
    write_back(b, s);
    // `_result=` an sg.Tensor: its storage was written (a struct one is filled below).
    if (s.result_target && s.result_index >= 0) [[unlikely]]
        return nb::borrow(s.result_target);
    if (s.result_index >= 0 && s.args[size_t(s.result_index)].origin == call::ArgOrigin::NumPy) [[unlikely]] {
        // `_result=` an array: written through a torch view of it (copied for CUDA).
        nb::object array = nb::borrow(s.result_arg);
        for (const CallScratch::WriteBack& w : s.writebacks)
            if (w.arg == s.result_index)
                nb::module_::import_("shadegrad._values").attr("numpy_store")(array, nb::handle(w.tensor));
        return array;
    }
    if (n_results == 0) return nb::none();
    // The first result leaf's tensor: the call's own, or the `_result=` tensor.
    nb::object first = out.results.empty() ? nb::borrow(static_cast<PyObject*>(s.args[size_t(s.result_index)].object))
                                           : nb::steal(static_cast<PyObject*>(out.results[0].release()));
    if (mode == ResultMode::Torch || (mode == ResultMode::Auto && n_results == 1 && b.result_leaves[0].keys.empty() &&
                                      (b.call_rank > 0 || out.autograd || s.any_torch) && !(s.any_numpy && !s.any_torch) &&
                                      !(s.any_sg_tensor && !s.any_torch)))
        [[likely]]
        return first;
    std::vector<nb::object> results;
    results.push_back(std::move(first));
    for (size_t k = 1; k < out.results.size(); ++k) results.push_back(nb::steal(static_cast<PyObject*>(out.results[k].release())));
    return result_to_python(b, s, results, mode, out.autograd);
}

nb::object Function::backward(nb::tuple args, nb::dict kwargs, nb::list result_grads, nb::list written_grads) {
    CallScratch& s = t_scratch;
    ScratchRelease release{s};
    nb::args a = nb::borrow<nb::args>(args);
    nb::kwargs kw = nb::borrow<nb::kwargs>(kwargs);
    (void)describe(s, a, kw);
    TorchOps& ops = torch_ops();
    // The result gradients in the results' dtypes (the binding of this call says which).
    const call::Binding& b = call::plan_for(torch_host(), *state_, mods_.kernel, described(s), true)->binding();
    std::vector<nb::object> converted;
    std::vector<TensorInfo> results(result_grads.size());
    for (size_t k = 0; k < result_grads.size(); ++k) {
        nb::object g = nb::borrow(result_grads[k]);
        if (g.is_none()) {
            results[k] = TensorInfo{};
            continue;
        }
        if (!ops.is_tensor(g.ptr())) call::throw_type_error(state_->name + "(): a result gradient must be a tensor");
        if (k < b.result_leaves.size()) {
            const char* dtype = dtype_name(call::dtype_of(b.result_leaves[k].scalar));
            g = g.attr("to")(nb::module_::import_("torch").attr(dtype));
        }
        ops.describe(g.ptr(), results[k]);
        converted.push_back(std::move(g));
    }
    // The incoming gradient of each written tensor, by the argument node that holds it.
    std::vector<TensorInfo> written(written_grads.size());
    std::vector<const TensorInfo*> by_node(s.total, nullptr);
    for (size_t k = 0; k < written_grads.size(); ++k) {
        nb::tuple pair = nb::cast<nb::tuple>(written_grads[k]);
        if (pair.size() != 2 || !ops.is_tensor(pair[1].ptr()))
            call::throw_type_error(state_->name + "(): a written tensor's gradient must be a (tensor, gradient) pair");
        ops.describe(pair[1].ptr(), written[k]);
        for (size_t i = 0; i < s.total; ++i)
            if (s.args[i].kind == call::ArgKind::Tensor && s.args[i].object == pair[0].ptr()) by_node[i] = &written[k];
    }
    call::BackwardOutcome out;
    call::invoke_backward(torch_host(), *state_, mods_.kernel, described(s), results.data(), results.size(),
                          by_node.data(), out);
    if (!out.differentiated) return nb::none();
    nb::list grads;
    for (auto& [node, grad] : out.grads)
        grads.append(nb::make_tuple(nb::borrow(static_cast<PyObject*>(s.args[size_t(node)].object)),
                                    nb::steal(static_cast<PyObject*>(grad.release()))));
    return grads;
}

std::string Function::call_key(nb::args args, nb::kwargs kwargs) {
    CallScratch& s = t_scratch;
    ScratchRelease release{s};
    const bool grad_mode = describe(s, args, kwargs);
    return call::render_key(*state_, mods_.kernel, described(s), grad_mode);
}

std::string Function::debug_code(nb::args args, nb::kwargs kwargs) {
    CallScratch& s = t_scratch;
    ScratchRelease release{s};
    const bool grad_mode = describe(s, args, kwargs);
    return call::debug_code(torch_host(), *state_, mods_.kernel, described(s), grad_mode);
}

// ---------------------------------------------------------------- modifiers

Function* Function::map(nb::args args, nb::kwargs kwargs) const {
    Modifiers m = mods_;
    call::CallModifiers c = m.kernel.call();
    std::vector<std::string> names = parameter_names();
    c.dim_maps.resize(names.size());
    c.type_maps.resize(names.size());
    // A mapping is a tuple of call dimensions (or one int), or a type name: the type the
    // argument is read as (SlangPy's map by type).
    auto set_map = [&](size_t p, nb::handle h) {
        c.dim_maps[p].clear();
        c.type_maps[p].clear();
        if (nb::isinstance<nb::str>(h)) {
            c.type_maps[p] = nb::cast<std::string>(h);
            if (c.type_maps[p].empty() || c.type_maps[p].size() > 200)
                call::throw_value_error(state_->name + "(): map() needs a type name for '" + names[p] + "'");
            return;
        }
        if (PyType_Check(h.ptr()))
            call::throw_type_error(state_->name + "(): map() of '" + names[p] +
                                   "' takes dimension tuples or a type name (a str such as \"float3\"), not a Python class");
        if (PyLong_Check(h.ptr())) c.dim_maps[p].push_back(nb::cast<int>(h));
        else
            for (nb::handle d : h) c.dim_maps[p].push_back(nb::cast<int>(d));
    };
    if (args.size() > names.size())
        call::throw_type_error(state_->name + "(): map() got " + std::to_string(args.size()) + " mappings for " +
                               std::to_string(names.size()) + " parameters");
    for (size_t i = 0; i < args.size(); ++i) set_map(i, args[i]);
    for (auto [k, v] : kwargs) {
        std::string key = nb::cast<std::string>(k);
        auto it = std::find(names.begin(), names.end(), key);
        if (it == names.end()) call::throw_type_error(state_->name + "(): map() names no parameter '" + key + "'");
        set_map(size_t(it - names.begin()), v);
    }
    m.kernel.set(std::move(c));
    return with(std::move(m));
}

Function* Function::deterministic(bool enabled) const {
    Modifiers m = mods_;
    call::CallModifiers c = m.kernel.call();
    c.deterministic = enabled;
    m.kernel.set(std::move(c));
    return with(std::move(m));
}

Function* Function::fast_math(bool enabled) const {
    Modifiers m = mods_;
    call::CallModifiers c = m.kernel.call();
    c.fast_math = enabled;
    m.kernel.set(std::move(c));
    return with(std::move(m));
}

Function* Function::call_group_shape(nb::handle shape) const {
    Modifiers m = mods_;
    call::CallModifiers c = m.kernel.call();
    c.has_call_group = !shape.is_none();
    c.call_group.clear();
    auto extent = [&](nb::handle h) {
        if (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr()))
            call::throw_type_error(state_->name + "(): call_group_shape(): parameter 'shape' takes ints, got " +
                                   std::string(Py_TYPE(h.ptr())->tp_name));
        const long long v = PyLong_AsLongLong(h.ptr());
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            call::throw_value_error(state_->name + "(): call_group_shape(): parameter 'shape' has an extent too large");
        }
        c.call_group.push_back(int(v < -1000000 ? -1000000 : v > 1000000 ? 1000000 : v));
    };
    if (c.has_call_group) {
        if (PyLong_Check(shape.ptr())) extent(shape);
        else {
            nb::object items = nb::hasattr(shape, "as_tuple") ? shape.attr("as_tuple")() : nb::borrow(shape);
            if (!PySequence_Check(items.ptr()) || nb::isinstance<nb::str>(items))
                call::throw_type_error(state_->name + "(): call_group_shape(): parameter 'shape' takes a tuple of ints, "
                                                      "got " + std::string(Py_TYPE(shape.ptr())->tp_name));
            for (nb::handle h : items) extent(h);
        }
        call::check_call_group_shape(state_->name, c.call_group);
    }
    m.kernel.set(std::move(c));
    return with(std::move(m));
}

Function* Function::set(nb::args args, nb::kwargs kwargs) const {
    Modifiers m = mods_;
    m.set_values = add_set_values(state_->name, mods_.set_values, args, kwargs, nb::find(this));
    return with(std::move(m));
}

Function* Function::bind(nb::object self) const {
    std::vector<std::string> names = parameter_names();
    if (names.empty() || names[0] != "this" || mods_.bound_this.is_valid())
        call::throw_type_error(state_->name + "(): bind() takes the `this` of an instance method" +
                               (mods_.bound_this.is_valid() ? " (it is bound already)" : ""));
    Modifiers m = mods_;
    m.bound_this = std::move(self);
    return with(std::move(m));
}

Function* Function::return_type(nb::handle t) const {
    Modifiers m = mods_;
    m.return_mode = result_mode_of(t);
    return with(std::move(m));
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
    // Another module (the same files, other values): a state, and so a plan cache, of its own.
    return new Function(call::FunctionState::make(state_->module->with_constants(overrides), state_->callee,
                                                  state_->device, state_->device_index, state_->module_options),
                        device_, mods_);
}

// ---------------------------------------------------------------- Module

namespace {

call::ModuleSetup module_setup(const Device& device, std::string path, std::vector<lang::LinkConstants> linked,
                               const ModuleOptions& options) {
    call::ModuleSetup setup;
    setup.defines = options.defines;
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
                                                 module_setup(device, std::move(path), std::move(linked), options))) {}

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
    call::CallModifiers options;
    options.strict_broadcasting = options_.strict_broadcasting;
    options.deterministic = options_.deterministic;
    options.fast_math = options_.fast_math;
    nb::object fn = nb::cast(new Function(call::FunctionState::make(module_, std::move(callee), device_.type,
                                                                    device_.index, options),
                                          device_, Modifiers{}),
                             nb::rv_policy::take_ownership);
    functions_.emplace(name, fn);
    return fn;
}

nb::object Module::find_function_in_struct(const std::string& struct_name, const std::string& name) {
    std::string s = struct_name;
    for (size_t at; (at = s.find("::")) != std::string::npos;) s.replace(at, 2, ".");
    if (!module_->find_struct(s)) return nb::none();
    nb::object fn = find_function(s + "." + name);
    if (fn.is_none()) throw_if_set_aside(s + "." + name);
    return fn;
}

void Module::throw_if_set_aside(const std::string& name) const {
    if (const lang::SetAsideFunction* f = module_->set_aside(name))  // textures, samplers
        throw nb::type_error(("module '" + module_->name() + "': " + lang::set_aside_message(name, *f)).c_str());
}

nb::object Module::function(const std::string& name) {
    nb::object fn = find_function(name);
    if (fn.is_none()) {
        throw_if_set_aside(name);
        std::string known;
        for (const std::string& n : module_->function_names()) known += (known.empty() ? "" : ", ") + n;
        throw nb::attribute_error(("module '" + module_->name() + "' has no function or type named '" + name + "' (it has: " + known + ")").c_str());
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
