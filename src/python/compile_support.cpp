// src/python/compile_support.cpp — Function.__call__ as a type slot (and, for tracers, a Python
// stand-in in the class dict), the live-Function lookup by id(), and bindings from argument
// descriptions (see compile_support.h and docs/torch_compile.md).
#include "python/compile_support.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <iterator>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "call/resolve.h"
#include "call/value_kind.h"
#include "call/errors.h"
#include "python/function.h"

namespace sg::py {

namespace nb = nanobind;
using call::ArgInfo;
using call::ArgKind;

namespace {

PyObject* g_call_method = nullptr;     // the unbound nanobind method Function._call (kept for the process)
PyObject* g_rethrow_pending = nullptr;  // _core._rethrow_pending (kept for the process)
PyObject* g_empty_kwargs = nullptr;     // the kwargs of calls without keywords (never written)

/// The exception a direct call caught, until _rethrow_pending rethrows it inside nanobind.
thread_local std::exception_ptr t_pending;

/// A C++ exception of a direct call as a Python error, translated exactly as nanobind translates
/// an exception of any bound function (module.cpp's translator, then nanobind's own): rethrown by
/// `_rethrow_pending`, called through nanobind's dispatch. Returns nullptr (the error is set).
[[gnu::noinline, gnu::cold]] PyObject* raise_pending(std::exception_ptr e) noexcept {
    t_pending = std::move(e);
    PyObject* r = PyObject_Vectorcall(g_rethrow_pending, nullptr, 0, nullptr);
    t_pending = nullptr;
    Py_XDECREF(r);  // never a value: the function only throws
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "shadegrad: a call failed without an error");
    return nullptr;
}

void rethrow_pending() {
    if (t_pending) std::rethrow_exception(t_pending);
}

/// The forwarding route: Function._call(self, *args, **kwargs) through nanobind's dispatch (an
/// object that is not a ready Function instance gets nanobind's own error from it).
PyObject* call_through_method(PyObject* self, PyObject* args, PyObject* kwargs) {
    const Py_ssize_t n = PyTuple_GET_SIZE(args);
    const Py_ssize_t nk = kwargs ? PyDict_GET_SIZE(kwargs) : 0;
    PyObject* small[16];
    std::vector<PyObject*> large;
    PyObject** stack = small;
    if (n + nk + 1 > Py_ssize_t(std::size(small))) {
        large.resize(size_t(n + nk + 1));
        stack = large.data();
    }
    stack[0] = self;
    for (Py_ssize_t i = 0; i < n; ++i) stack[i + 1] = PyTuple_GET_ITEM(args, i);
    if (nk == 0) return PyObject_Vectorcall(g_call_method, stack, size_t(n + 1), nullptr);
    PyObject* names = PyTuple_New(nk);
    if (!names) return nullptr;
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *value;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
        Py_INCREF(key);
        PyTuple_SET_ITEM(names, k, key);
        stack[n + 1 + k++] = value;
    }
    PyObject* result = PyObject_Vectorcall(g_call_method, stack, size_t(n + 1), names);
    Py_DECREF(names);
    return result;
}

/// tp_call: Function(*args, **kwargs) calls Function::call directly with the argument tuple
/// CPython made and the keyword dict (a shared empty one when there are none), without a
/// second trip through nanobind's argument dispatch (which would copy both again: about a
/// tenth of a cached call's host instructions). Errors take nanobind's translation.
PyObject* function_tp_call(PyObject* self, PyObject* args, PyObject* kwargs) {
    if (!g_empty_kwargs || !nb::inst_ready(self) || !PyTuple_CheckExact(args) || (kwargs && !PyDict_CheckExact(kwargs)))
        [[unlikely]]
        return call_through_method(self, args, kwargs);
    try {
        Function* f = nb::inst_ptr<Function>(self);
        return f->call(nb::borrow<nb::args>(args), nb::borrow<nb::kwargs>(kwargs ? kwargs : g_empty_kwargs))
            .release()
            .ptr();
    } catch (...) {
        return raise_pending(std::current_exception());
    }
}

const PyType_Slot kFunctionSlots[] = {{Py_tp_call, reinterpret_cast<void*>(&function_tp_call)}, {0, nullptr}};

std::mutex g_live_mutex;
std::unordered_set<Function*>& live_functions() {
    static auto* set = new std::unordered_set<Function*>();  // never destroyed: used at exit
    return *set;
}

/// The live Function whose Python object has this id(), or None (the object is gone).
nb::object function_by_id(uintptr_t id) {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    for (Function* f : live_functions()) {
        nb::handle h = nb::find(f);
        if (h.is_valid() && reinterpret_cast<uintptr_t>(h.ptr()) == id) return nb::borrow(h);
    }
    return nb::none();
}

/// One argument from its description: ("tensor", dtype code, shape, requires_grad, device type,
/// device index), ("grid", shape), ("int", v), ("float", v) or ("bool", v).
void describe_from(const nb::tuple& d, ArgInfo& a) {
    a = ArgInfo{};
    const std::string kind = nb::cast<std::string>(d[0]);
    auto shape_into = [&](nb::handle seq) {
        std::vector<int64_t> shape = nb::cast<std::vector<int64_t>>(seq);
        if (shape.size() > size_t(kMaxTensorRank))
            call::throw_value_error("a described argument has more than 8 dimensions");
        a.tensor.ndim = int32_t(shape.size());
        int64_t numel = 1, stride = 1;
        for (size_t k = shape.size(); k-- > 0;) {
            a.tensor.shape[k] = shape[k];
            a.tensor.strides[k] = stride;
            stride *= shape[k] > 0 ? shape[k] : 1;
            numel *= shape[k];
        }
        a.tensor.numel = numel;
    };
    if (kind == "tensor") {
        a.kind = ArgKind::Tensor;
        a.tensor.dtype = DType(nb::cast<int>(d[1]));
        shape_into(d[2]);
        a.tensor.requires_grad = nb::cast<bool>(d[3]);
        a.tensor.is_leaf = 1;
        a.tensor.device_type = DeviceType(nb::cast<int>(d[4]));
        a.tensor.device_index = nb::cast<int>(d[5]);
    } else if (kind == "grid") {
        a.kind = ArgKind::Grid;
        shape_into(d[1]);
    } else if (kind == "int") {
        a.kind = ArgKind::Int;
        a.integer = nb::cast<int64_t>(d[1]);
        a.number = double(a.integer);
    } else if (kind == "float") {
        a.kind = ArgKind::Float;
        a.number = nb::cast<double>(d[1]);
    } else if (kind == "bool") {
        a.kind = ArgKind::Bool;
        a.integer = nb::cast<bool>(d[1]);
        a.number = double(a.integer);
    } else {
        call::throw_type_error("shadegrad: cannot describe an argument of kind '" + kind + "'");
    }
}

/// The dtype code of a result scalar (as the call layer allocates it).
int result_dtype(lang::ScalarKind s) { return int(call::dtype_of(s)); }

/// `_bind_signature(fn, positional, keywords, grad_mode)`: binds a call of `fn` from descriptions
/// (positional descriptions, then (name, description) pairs) and returns what shapes its
/// outputs and which arguments take gradients: {"call_rank", "args": [(call_dims, elem_dims, writes,
/// differentiated) per argument, in call order], "result": None or (dtype code, element shape)}.
/// `differentiated` is the binding's own answer (the overload or instance the call resolves to):
/// false for a no_diff or read-only tensor parameter, whose tensor gets no gradient.
nb::dict bind_signature(Function& fn, nb::list positional, nb::list keywords, bool grad_mode) {
    std::vector<ArgInfo> args(positional.size() + keywords.size());
    std::vector<std::string> names;
    size_t i = 0;
    for (nb::handle d : positional) describe_from(nb::cast<nb::tuple>(d), args[i++]);
    for (nb::handle kv : keywords) {
        nb::tuple pair = nb::cast<nb::tuple>(kv);
        names.push_back(nb::cast<std::string>(pair[0]));
        describe_from(nb::cast<nb::tuple>(pair[1]), args[i++]);
    }
    if (fn.has_modifiers())
        call::throw_type_error("shadegrad under torch.compile: " + fn.name() +
                               " has modifiers (map, set, return_type), which are not supported yet under "
                               "torch.compile; call the plain function");
    call::CallModifiers modifiers;
    modifiers.strict_broadcasting = fn.strict_broadcasting();
    call::Binding b = call::resolve_call(*fn.user_module(), fn.callee(), args.data(), positional.size(), names, grad_mode,
                                         fn.device().type, modifiers);
    nb::list per_arg;
    std::vector<bool> differentiated(args.size(), false);
    for (const call::ParamBinding& p : b.params)
        if (p.arg >= 0 && size_t(p.arg) < args.size() && p.differentiable) differentiated[size_t(p.arg)] = true;
    for (size_t k = 0; k < args.size(); ++k) per_arg.append(nb::make_tuple(0, 0, false, false));
    for (const call::ParamBinding& p : b.params) {
        if (p.arg < 0 || size_t(p.arg) >= args.size()) continue;
        per_arg[size_t(p.arg)] = nb::make_tuple(p.call_dims, p.elem_dims, p.is_output, bool(differentiated[size_t(p.arg)]));
    }
    nb::dict out;
    out["call_rank"] = b.call_rank;
    out["args"] = per_arg;
    out["result"] = nb::none();
    if (!b.result_type->is_void()) {
        std::vector<int64_t> elem;
        lang::ScalarKind scalar = lang::ScalarKind::Float;
        call::element_shape(b.result_type, elem, scalar);
        out["result"] = nb::make_tuple(result_dtype(scalar), elem);
    }
    return out;
}

}  // namespace

const PyType_Slot* function_type_slots() { return kFunctionSlots; }

void set_function_call_method(nb::handle call_method) { g_call_method = call_method.inc_ref().ptr(); }

void register_live_function(Function* f) {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    live_functions().insert(f);
}

void unregister_live_function(Function* f) {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    live_functions().erase(f);
}

/// Makes `Function.__call__`, as attribute lookup on the class sees it, the Python function
/// `stand_in`, while calls keep going through the C tp_call slot. CPython updates a type's slots
/// only when an attribute is set through type.__setattr__; writing the class's dict directly (and
/// invalidating the attribute cache with PyType_Modified) changes what `Function.__call__` and
/// inspect.getattr_static(Function, "__call__") return, and nothing else. Dynamo, tracing a call
/// of a Function object, looks `__call__` up statically on the class and inlines it when it is a
/// Python function (on every torch release since 2.4): the stand-in records the custom operator
/// (docs/torch_compile.md). Eager calls never see it.
void set_call_attribute(nb::handle stand_in) {
    if (!PyCallable_Check(stand_in.ptr())) throw nb::type_error("_set_call_attribute needs a callable");
    auto* type = reinterpret_cast<PyTypeObject*>(nb::type<Function>().ptr());
    if (!type || !type->tp_dict) throw std::runtime_error("internal error: shadegrad Function type has no dict");
    if (PyDict_SetItemString(type->tp_dict, "__call__", stand_in.ptr()) != 0) throw nb::python_error();
    PyType_Modified(type);
}

void bind_compile_support(nb::module_& m) {
    m.def("_set_call_attribute", &set_call_attribute, nb::arg("stand_in"));
    // Rethrows the exception a direct call caught, for nanobind to translate (function_tp_call).
    m.def("_rethrow_pending", &rethrow_pending);
    g_rethrow_pending = nb::object(m.attr("_rethrow_pending")).release().ptr();
    g_empty_kwargs = PyDict_New();
    m.def("_function_by_id", &function_by_id, nb::arg("id"));
    m.def("_bind_signature", &bind_signature, nb::arg("function"), nb::arg("positional"), nb::arg("keywords"),
          nb::arg("grad_mode") = false);
}

}  // namespace sg::py
