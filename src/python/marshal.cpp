// src/python/marshal.cpp — recognising Python values, write-back and results (see marshal.h).
#include "python/marshal.h"

#include <cstring>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "call/errors.h"

namespace sg::py {

using call::ArgInfo;
using call::ArgKind;
using call::ArgOrigin;

namespace {

/// The registered classes and helpers of shadegrad._values (owned references, kept for the
/// life of the process).
struct Kinds {
    PyObject* value_type = nullptr;
    PyObject* call_id = nullptr;
    PyObject* thread_id = nullptr;
    PyObject* wang_hash = nullptr;
    PyObject* rand_float = nullptr;
    PyObject* value_ref = nullptr;
    PyObject* diff_pair = nullptr;
    PyObject* ref_to_tensor = nullptr;
    PyObject* ref_store = nullptr;
    PyObject* numpy_to_tensor = nullptr;
    PyObject* numpy_store = nullptr;
    PyObject* leaf_value = nullptr;
    PyObject* assemble = nullptr;
    PyObject* ndarray = nullptr;    ///< numpy.ndarray once numpy is imported
    PyObject* torch_tensor = nullptr;
};
Kinds g_kinds;

/// Composite nesting limit (a list holding itself stops here with an error).
constexpr int kMaxDepth = 16;

bool instance_of(PyObject* o, PyObject* type) { return type && PyObject_IsInstance(o, type) == 1; }

nb::object call_helper(PyObject* fn, nb::handle a, nb::handle b = nb::handle(), nb::handle c = nb::handle()) {
    if (!fn) throw std::runtime_error("shadegrad: value kinds were not registered (import shadegrad first)");
    PyObject* r = c.ptr()   ? PyObject_CallFunctionObjArgs(fn, a.ptr(), b.ptr(), c.ptr(), nullptr)
                  : b.ptr() ? PyObject_CallFunctionObjArgs(fn, a.ptr(), b.ptr(), nullptr)
                            : PyObject_CallFunctionObjArgs(fn, a.ptr(), nullptr);
    if (!r) throw nb::python_error();
    return nb::steal(r);
}

class Describer {
public:
    Describer(TorchOps& ops, CallScratch& s, DeviceType device, int device_index)
        : ops_(ops), s_(s), device_(device), device_index_(device_index) {}

    /// Reserves `n` consecutive nodes at the end; returns the first's index.
    int reserve(int n) {
        int first = int(s_.total);
        s_.total += size_t(n);
        if (s_.args.size() < s_.total) s_.args.resize(s_.total);
        return first;
    }

    void describe(PyObject* o, size_t i, int depth) {
        ArgInfo& a = s_.args[i];
        a.kind = ArgKind::None;
        a.origin = ArgOrigin::Torch;
        a.object = o;
        a.type_name = nullptr;
        a.child_count = 0;
        a.first_child = -1;
        a.name = nullptr;
        a.name_size = 0;
        a.struct_name = nullptr;
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
        // Grids, lists, tuples and dicts are told apart before tensors: asking torch whether an
        // object that is not a tensor is one runs isinstance() through its metaclass (some 800
        // instructions, as much as the rest of describing a grid), these checks a few each.
        if (Py_TYPE(o) == grid_type() && nb::inst_ready(o)) return describe_grid(o, i);
        if (PyList_Check(o) || PyTuple_Check(o) || PyDict_Check(o)) [[unlikely]]
            return describe_other(o, i, depth);
        if (ops_.is_tensor(o)) [[likely]] {
            a.kind = ArgKind::Tensor;
            ops_.describe(o, a.tensor);
            s_.any_torch = true;
            return;
        }
        describe_other(o, i, depth);
    }

private:
    NB_NOINLINE void describe_other(PyObject* o, size_t i, int depth) {
        if (depth > kMaxDepth) call::throw_value_error("an argument is nested more than 16 levels deep");
        if (nb::isinstance<GridArg>(o)) return describe_grid(o, i);
        if (PyList_Check(o) || PyTuple_Check(o)) return describe_list(o, i, depth);
        if (PyDict_Check(o)) return describe_dict(o, i, depth);
        if (instance_of(o, g_kinds.value_type)) return describe_value(o, i);
        if (is_ndarray(o)) return describe_ndarray(o, i);
        if (instance_of(o, g_kinds.value_ref)) return describe_ref(o, i);
        ArgInfo& a = s_.args[i];
        if (instance_of(o, g_kinds.call_id)) a.kind = ArgKind::CallId;
        else if (instance_of(o, g_kinds.thread_id)) a.kind = ArgKind::ThreadId;
        else if (instance_of(o, g_kinds.wang_hash)) {
            a.kind = ArgKind::WangHash;
            a.integer = nb::cast<int64_t>(nb::handle(o).attr("seed"));
        } else if (instance_of(o, g_kinds.rand_float)) {
            a.kind = ArgKind::RandFloat;
            nb::handle h(o);
            a.number = nb::cast<double>(h.attr("min"));
            a.number2 = nb::cast<double>(h.attr("max"));
            a.integer = nb::cast<int64_t>(h.attr("seed"));
        } else if (instance_of(o, g_kinds.diff_pair)) {
            call::throw_type_error("a diffPair argument is for backward calls: call fn.bwds(...) with it");
        } else {
            a.type_name = Py_TYPE(o)->tp_name;
        }
    }

    /// sg.grid's class (a Python subclass of it is found by describe_other's isinstance).
    static PyTypeObject* grid_type() {
        static PyTypeObject* const type = reinterpret_cast<PyTypeObject*>(nb::type<GridArg>().ptr());
        return type;
    }

    void describe_grid(PyObject* o, size_t i) {
        const GridArg& g = Py_TYPE(o) == grid_type() && nb::inst_ready(o) ? *nb::inst_ptr<GridArg>(o)
                                                                      : nb::cast<const GridArg&>(nb::handle(o));
        ArgInfo& a = s_.args[i];
        a.kind = ArgKind::Grid;
        std::memset(&a.tensor, 0, sizeof(a.tensor));
        a.tensor.ndim = int32_t(g.shape.size());
        a.number = (g.stride.empty() && g.offset.empty()) ? 0 : 1;
        for (size_t d = 0; d < g.shape.size() && d < size_t(kMaxTensorRank); ++d) {
            a.tensor.shape[d] = g.shape[d];
            a.tensor.strides[d] = g.stride.empty() ? 1 : g.stride[d];
            a.offset[d] = g.offset.empty() ? 0 : g.offset[d];
        }
    }

    void describe_list(PyObject* o, size_t i, int depth) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        if (n > 4096) call::throw_value_error("a list argument has more than 4096 items (pass a tensor)");
        int first = reserve(int(n));
        {
            ArgInfo& a = s_.args[i];
            a.kind = ArgKind::List;
            a.first_child = first;
            a.child_count = int(n);
        }
        PyObject** items = PySequence_Fast_ITEMS(o);
        for (Py_ssize_t k = 0; k < n; ++k) describe(items[k], size_t(first + k), depth + 1);
    }

    void describe_dict(PyObject* o, size_t i, int depth) {
        Py_ssize_t n = PyDict_Size(o);
        PyObject* type = PyDict_GetItemString(o, "_type");
        int children = int(n) - (type ? 1 : 0);
        int first = reserve(children);
        {
            ArgInfo& a = s_.args[i];
            a.kind = ArgKind::Dict;
            a.first_child = first;
            a.child_count = children;
            if (type) {
                Py_ssize_t size = 0;
                const char* text = PyUnicode_Check(type) ? PyUnicode_AsUTF8AndSize(type, &size) : nullptr;
                if (!text) call::throw_type_error("a dict's _type must be a struct name (a str)");
                a.struct_name = text;
                a.struct_name_size = uint32_t(size);
            }
        }
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        int k = 0;
        while (PyDict_Next(o, &pos, &key, &value)) {
            Py_ssize_t size = 0;
            const char* text = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &size) : nullptr;
            if (!text) call::throw_type_error("a dict argument's keys must be field names (str)");
            if (size == 5 && std::memcmp(text, "_type", 5) == 0) continue;
            size_t child = size_t(first + k++);
            describe(value, child, depth + 1);
            s_.args[child].name = text;
            s_.args[child].name_size = uint32_t(size);
        }
    }

    void describe_value(PyObject* o, size_t i) {
        nb::handle h(o);
        nb::object data = h.attr("_data");
        int rows = nb::cast<int>(h.attr("_sg_rows"));
        int cols = nb::cast<int>(h.attr("_sg_cols"));
        int scalar = nb::cast<int>(h.attr("_sg_scalar"));
        Py_ssize_t n = PyList_Size(data.ptr());
        if (n != Py_ssize_t(rows) * (cols ? cols : 1)) call::throw_value_error("a value type's component count is inconsistent");
        int first = reserve(int(n));
        {
            ArgInfo& a = s_.args[i];
            a.kind = ArgKind::Value;
            a.scalar = uint8_t(scalar);
            a.rows = uint8_t(rows);
            a.cols = uint8_t(cols);
            a.first_child = first;
            a.child_count = int(n);
        }
        s_.keep.push_back(data);  // the components are borrowed from this list
        for (Py_ssize_t k = 0; k < n; ++k) describe(PyList_GET_ITEM(data.ptr(), k), size_t(first + k), kMaxDepth);
    }

    void describe_tensor_made(size_t i, nb::object tensor, ArgOrigin origin) {
        ArgInfo& a = s_.args[i];
        PyObject* source = static_cast<PyObject*>(a.object);
        a.kind = ArgKind::Tensor;
        a.origin = origin;
        a.object = tensor.ptr();
        ops_.describe(tensor.ptr(), a.tensor);
        (void)source;
        s_.keep.push_back(std::move(tensor));
    }

    void describe_ndarray(PyObject* o, size_t i) {
        nb::tuple made = nb::cast<nb::tuple>(
            call_helper(g_kinds.numpy_to_tensor, nb::handle(o), nb::int_(int(device_)), nb::int_(device_index_)));
        bool copied = nb::cast<bool>(made[1]);
        nb::object t = made[0];
        PyObject* tp = t.ptr();
        describe_tensor_made(i, t, ArgOrigin::NumPy);
        s_.any_numpy = true;
        // Copies are written back when the kernel writes them (decided after binding).
        if (copied) s_.writebacks.push_back({int(i), o, tp, true});
    }

    void describe_ref(PyObject* o, size_t i) {
        nb::object t = call_helper(g_kinds.ref_to_tensor, nb::handle(o), nb::int_(int(device_)), nb::int_(device_index_));
        PyObject* tp = t.ptr();
        describe_tensor_made(i, t, ArgOrigin::Ref);
        s_.writebacks.push_back({int(i), o, tp, false});
    }

    TorchOps& ops_;
    CallScratch& s_;
    DeviceType device_;
    int device_index_;
};

PyObject* own(nb::dict& d, const char* name) {
    if (!d.contains(name)) throw std::runtime_error(std::string("shadegrad: value kind '") + name + "' missing");
    return nb::object(d[name]).release().ptr();
}

}  // namespace

bool is_ndarray(PyObject* o) {
    if (!g_kinds.ndarray) {
        // numpy is imported only when someone passes an array: match by name first.
        if (std::strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") != 0) return false;
        g_kinds.ndarray = nb::object(nb::module_::import_("numpy").attr("ndarray")).release().ptr();
    }
    return instance_of(o, g_kinds.ndarray);
}

void register_value_kinds(nb::dict kinds) {
    g_kinds.value_type = own(kinds, "value_type");
    g_kinds.call_id = own(kinds, "call_id");
    g_kinds.thread_id = own(kinds, "thread_id");
    g_kinds.wang_hash = own(kinds, "wang_hash");
    g_kinds.rand_float = own(kinds, "rand_float");
    g_kinds.value_ref = own(kinds, "value_ref");
    g_kinds.diff_pair = own(kinds, "diff_pair");
    g_kinds.ref_to_tensor = own(kinds, "ref_to_tensor");
    g_kinds.ref_store = own(kinds, "ref_store");
    g_kinds.numpy_to_tensor = own(kinds, "numpy_to_tensor");
    g_kinds.numpy_store = own(kinds, "numpy_store");
    g_kinds.leaf_value = own(kinds, "leaf_value");
    g_kinds.assemble = own(kinds, "assemble");
    g_kinds.torch_tensor = nb::object(nb::module_::import_("torch").attr("Tensor")).release().ptr();
}

void describe_args(TorchOps& ops, nb::args& args, nb::kwargs& kwargs, CallScratch& s, DeviceType device, int device_index) {
    size_t n = args.size() + kwargs.size();
    if (n != args.size()) [[unlikely]] {
        s.result_arg = PyDict_GetItemString(kwargs.ptr(), "_result");
        if (s.result_arg) --n;
    }
    s.total = n;
    if (s.args.size() < n) s.args.resize(n);
    Describer d(ops, s, device, device_index);
    size_t i = 0;
    for (nb::handle h : args) d.describe(h.ptr(), i++, 0);
    if (n != args.size() || s.result_arg) [[unlikely]] {
        for (auto [k, v] : kwargs) {
            if (v.ptr() == s.result_arg && nb::cast<std::string>(k) == "_result") continue;
            s.keywords.push_back(nb::cast<std::string>(k));
            d.describe(v.ptr(), i++, 0);
        }
    }
    s.count = i;
    s.positional = args.size();
    if (s.result_arg && (ops.is_tensor(s.result_arg) || is_ndarray(s.result_arg))) [[unlikely]] {
        // A `_result=` tensor shapes the call like an argument: a node after the others.
        s.result_index = d.reserve(1);
        d.describe(s.result_arg, size_t(s.result_index), 0);
    }
}

void write_back(const call::Binding& b, CallScratch& s) {
    for (const CallScratch::WriteBack& w : s.writebacks) {
        bool written = false;
        for (const call::ParamBinding& p : b.params) written |= p.arg == w.arg && p.is_output;
        if (!written) continue;
        call_helper(w.numpy ? g_kinds.numpy_store : g_kinds.ref_store, nb::handle(w.target), nb::handle(w.tensor));
    }
}

ResultMode result_mode_of(nb::handle h) {
    if (nb::isinstance<nb::str>(h)) {
        std::string m = nb::cast<std::string>(h);
        if (m == "torch" || m == "tensor") return ResultMode::Torch;
        if (m == "numpy") return ResultMode::NumPy;
        call::throw_type_error("_result= / return_type(): '" + m + "' is not \"torch\" or \"numpy\" (or a tensor, an array, "
                               "torch.Tensor or numpy.ndarray)");
    }
    if (h.ptr() == g_kinds.torch_tensor) return ResultMode::Torch;
    if (PyType_Check(h.ptr()) && std::strcmp(reinterpret_cast<PyTypeObject*>(h.ptr())->tp_name, "numpy.ndarray") == 0)
        return ResultMode::NumPy;
    call::throw_type_error(std::string("_result= / return_type() cannot take a ") + Py_TYPE(h.ptr())->tp_name);
}

nb::object result_to_python(const call::Binding& b, const CallScratch& s, std::vector<nb::object>& results,
                            ResultMode mode, bool autograd) {
    if (results.empty()) return nb::none();
    if (mode == ResultMode::Auto) {
        if (b.call_rank == 0 && !autograd && !s.any_torch) {
            // Call dimensionality 0 without torch tensors: Python values. A torch tensor
            // argument makes every result a torch tensor, in grad mode or not (0-d ones too).
            nb::list leaves;
            for (size_t k = 0; k < results.size(); ++k) {
                const call::ResultLeaf& leaf = b.result_leaves[k];
                const lang::Type* t = leaf.type;
                int kind = t->is_vector() ? 1 : t->is_matrix() ? 2 : t->is_array() ? 3 : 0;
                nb::object value = call_helper(g_kinds.leaf_value, results[k], nb::int_(kind));
                nb::list keys;
                for (const std::string& key : leaf.keys) keys.append(nb::str(key.c_str()));
                leaves.append(nb::make_tuple(keys, value));
            }
            return call_helper(g_kinds.assemble, leaves);
        }
        mode = s.any_numpy && !s.any_torch ? ResultMode::NumPy : ResultMode::Torch;
    }
    nb::list leaves;
    for (size_t k = 0; k < results.size(); ++k) {
        nb::object value = results[k];
        if (mode == ResultMode::NumPy) value = value.attr("detach")().attr("cpu")().attr("numpy")();
        nb::list keys;
        for (const std::string& key : b.result_leaves[k].keys) keys.append(nb::str(key.c_str()));
        leaves.append(nb::make_tuple(keys, value));
    }
    if (results.size() == 1 && b.result_leaves[0].keys.empty()) return nb::borrow(nb::tuple(leaves[0])[1]);
    return call_helper(g_kinds.assemble, leaves);
}

}  // namespace sg::py
