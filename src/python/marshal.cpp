// src/python/marshal.cpp — recognising Python values, write-back and results (see marshal.h).
#include "python/marshal.h"

#include <cstring>
#include <initializer_list>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include <structmember.h>  // PyMemberDef: sg.Tensor's slot offsets

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "call/errors.h"
#include "lang/types.h"

namespace sg::py {

using call::ArgInfo;
using call::ArgKind;
using call::ArgOrigin;

namespace {

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

// ---------------------------------------------------------------- the rows of Python kinds

/// The Python helpers (functions of shadegrad._values) a kind may need, each registered by its
/// name in kHelperNames.
enum class Helper : uint8_t {
    ToTensor,   ///< (object, device type, device index) → a tensor holding the value (numpy: (tensor, copied))
    Store,      ///< (object, tensor): writes what the kernel wrote back into the object
    LeafValue,  ///< (tensor, leaf kind): one result leaf as a Python value
    Assemble,   ///< ([(keys, value)]): the result from its leaves (dicts for structs)
    Wrap,       ///< (call rank, [(keys, tensor, type name)], target or None): the result as an sg.Tensor
};
constexpr const char* kHelperNames[] = {"to_tensor", "store", "leaf_value", "assemble", "wrap"};
constexpr size_t kHelperCount = std::size(kHelperNames);
constexpr unsigned helper_bits(std::initializer_list<Helper> hs) {
    unsigned bits = 0;
    for (Helper h : hs) bits |= 1u << unsigned(h);
    return bits;
}

/// What Python registered for a row (owned references, kept for the life of the process).
struct KindRegistration {
    PyObject* classes = nullptr;  ///< a type or a tuple of types; nullptr until registered (or resolved)
    std::string lazy_class;       ///< "numpy.ndarray": imported when an object of that type name is first seen
    PyObject* helpers[kHelperCount] = {};
    bool registered = false;

    PyObject* helper(Helper h) const { return helpers[size_t(h)]; }

    /// Whether `o` is an instance of the row's classes. A lazily named class is imported only
    /// once an object whose type has that exact name turns up (numpy is imported only when
    /// someone passes an array).
    bool matches(PyObject* o) {
        if (!classes) {
            if (lazy_class.empty() || std::strcmp(Py_TYPE(o)->tp_name, lazy_class.c_str()) != 0) return false;
            size_t dot = lazy_class.rfind('.');
            nb::module_ module = nb::module_::import_(lazy_class.substr(0, dot).c_str());
            classes = nb::object(module.attr(lazy_class.substr(dot + 1).c_str())).release().ptr();
        }
        return instance_of(o, classes);
    }
};

class Describer;

/// sg.Tensor's class (set when its row is registered): objects of exactly this type are told
/// apart by one compare before torch is asked whether an object is a tensor.
PyTypeObject* g_sg_tensor_type = nullptr;

/// sg.Tensor's slots (its class declares them in __slots__), read and written by offset on the
/// call's hot path: the offsets come from the class's member descriptors when it is registered.
struct SgTensorSlots {
    Py_ssize_t arg = -1, storage = -1, dtype = -1, device = -1, grad_in = -1, grad_out = -1;
};
SgTensorSlots g_sg_slots;

PyObject*& slot_at(PyObject* o, Py_ssize_t offset) {
    return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + offset);
}

Py_ssize_t slot_offset(PyObject* cls, const char* name) {
    PyObject* d = PyObject_GetAttrString(cls, name);
    if (!d) throw nb::python_error();
    nb::object held = nb::steal(d);
    if (Py_TYPE(d) != &PyMemberDescr_Type)
        throw nb::type_error(("shadegrad: value kind 'tensor': the class must declare '" + std::string(name) +
                              "' in __slots__")
                                 .c_str());
    return reinterpret_cast<PyMemberDescrObject*>(d)->d_member->offset;
}

/// An sg.Tensor's DType (its `_dtype` slot); a new reference.
nb::object sg_tensor_dtype(PyObject* o) {
    static PyObject* const name = PyUnicode_InternFromString("_dtype");
    PyObject* d = PyObject_GetAttr(o, name);
    if (!d) throw nb::python_error();
    return nb::steal(d);
}

uint8_t sg_element_dims_of(PyObject* dtype, PyObject* shape_name, PyObject* fields_name);

/// The element dims of an sg.Tensor's dtype (a DType's `shape`: 1 for float3, 2 for float3x3),
/// 0 for scalars and structs (a struct Tensor binds as its fields' components).
uint8_t sg_element_dims(PyObject* o) {
    static PyObject* const shape_name = PyUnicode_InternFromString("shape");
    static PyObject* const fields_name = PyUnicode_InternFromString("fields");
    // The last few dtypes asked about (held, so that an address is never another object's).
    static PyObject* seen[4] = {};
    static uint8_t seen_dims[4] = {};
    static unsigned next = 0;
    nb::object dtype = Py_TYPE(o) == g_sg_tensor_type ? nb::borrow(slot_at(o, g_sg_slots.dtype)) : sg_tensor_dtype(o);
    for (int k = 0; k < 4; ++k)
        if (seen[k] == dtype.ptr()) [[likely]]
            return seen_dims[k];
    const uint8_t dims = sg_element_dims_of(dtype.ptr(), shape_name, fields_name);
    const unsigned at = next++ % 4;
    Py_XDECREF(seen[at]);
    seen[at] = dtype.inc_ref().ptr();
    seen_dims[at] = dims;
    return dims;
}

uint8_t sg_element_dims_of(PyObject* dtype, PyObject* shape_name, PyObject* fields_name) {
    PyObject* fields = PyObject_GetAttr(dtype, fields_name);
    if (!fields) throw nb::python_error();
    const bool structure = fields != Py_None;
    Py_DECREF(fields);
    if (structure) return 0;
    PyObject* shape = PyObject_GetAttr(dtype, shape_name);
    if (!shape) throw nb::python_error();
    const Py_ssize_t n = PyObject_Length(shape);
    Py_DECREF(shape);
    if (n < 0) throw nb::python_error();
    return uint8_t(n);
}

/// What an sg.Tensor binds as: its `_sg_arg` (the storage tensor); a new reference.
nb::object sg_tensor_arg(PyObject* o) {
    static PyObject* const name = PyUnicode_InternFromString("_sg_arg");
    PyObject* inner = PyObject_GetAttr(o, name);
    if (!inner) throw nb::python_error();
    return nb::steal(inner);
}

/// The device type of a tensor on neither the CPU nor CUDA ("meta", "mps"), for the binder's
/// message (ArgInfo::type_name); interned for the process, so the pointer stays valid.
NB_NOINLINE const char* other_device_type(PyObject* tensor) {
    static auto* names = new std::set<std::string>();  // never destroyed: borrowed by messages
    try {
        std::string type = nb::cast<std::string>(nb::str(nb::handle(tensor).attr("device").attr("type")));
        return names->insert(type).first->c_str();
    } catch (const nb::python_error&) {
        return nullptr;  // the message then says "a device"
    }
}

/// One row of the Python side of the marshalling table: a kind of Python object the core knows
/// by the classes shadegrad._values registers under `name`, and how to describe one.
struct KindRow {
    const char* name;
    call::ArgKind kind;  ///< what its objects are described as (their row in call/value_kind.cpp)
    unsigned helpers;    ///< the Helpers it needs (helper_bits)
    /// Describes `o` (an instance of the row's classes) into node `i`.
    void (*recognise)(Describer& d, PyObject* o, size_t i, call::ArgKind kind, const KindRegistration& r);
};

/// The kinds Describer recognises itself, without a row: those of the hot path (torch tensors,
/// Python floats, ints and bools, tried first and inline) and Python's containers and sg.grid.
constexpr ArgKind kInlineKinds[] = {ArgKind::Tensor, ArgKind::Float, ArgKind::Int, ArgKind::Bool,
                                    ArgKind::Grid,   ArgKind::List,  ArgKind::Dict};

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
        a.rows = 0;  // a tensor's element dims are a shadegrad Tensor's only (describe_sg_tensor)
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
        if (Py_TYPE(o) == g_sg_tensor_type) [[unlikely]]
            return describe_sg_tensor(o, i, depth);
        if (ops_.is_tensor(o)) [[likely]] {
            a.kind = ArgKind::Tensor;
            ops_.describe(o, a.tensor);
            if (a.tensor.device_type == DeviceType::Other) [[unlikely]]
                a.type_name = other_device_type(o);
            s_.any_torch = true;
            return;
        }
        describe_other(o, i, depth);
    }

    /// An sg.Tensor: described as what it binds as (its storage, or its fields' views), which
    /// the call keeps alive; the result is then an sg.Tensor, not a torch tensor.
    void describe_sg_tensor(PyObject* o, size_t i, int depth) {
        if (depth > kMaxDepth) call::throw_value_error("an argument is nested more than 16 levels deep");
        // sg.Tensor itself: the slot, borrowed (the Tensor holds it; only its __init__ sets
        // it). A subclass may define `_sg_arg` otherwise: asked for by name and kept.
        PyObject* p = Py_TYPE(o) == g_sg_tensor_type ? slot_at(o, g_sg_slots.arg) : nullptr;
        if (!p) {
            nb::object inner = sg_tensor_arg(o);
            p = inner.ptr();
            s_.keep.push_back(std::move(inner));
        }
        const bool torch_before = s_.any_torch;
        describe(p, i, depth + 1);
        s_.any_torch = torch_before;
        s_.any_sg_tensor = true;
        if (s_.args[i].kind == ArgKind::Tensor) s_.args[i].rows = sg_element_dims(o);
    }

    /// The node `i` being described.
    ArgInfo& arg(size_t i) { return s_.args[i]; }
    CallScratch& scratch() { return s_; }
    DeviceType device() const { return device_; }
    int device_index() const { return device_index_; }

    /// Node `i` becomes `tensor`, made from the Python object it described (a numpy array, a
    /// ValueRef's value); the call keeps the tensor alive.
    void describe_tensor_made(size_t i, nb::object tensor, ArgOrigin origin) {
        ArgInfo& a = s_.args[i];
        a.kind = ArgKind::Tensor;
        a.origin = origin;
        a.object = tensor.ptr();
        ops_.describe(tensor.ptr(), a.tensor);
        if (a.tensor.device_type == DeviceType::Other) [[unlikely]]
            a.type_name = other_device_type(tensor.ptr());
        s_.keep.push_back(std::move(tensor));
    }

private:
    /// Grids' subclasses, lists, tuples, dicts, then the registered rows in order, then objects
    /// with get_this(); anything else is a None-kind node naming its type, for the binder's message.
    NB_NOINLINE void describe_other(PyObject* o, size_t i, int depth);
    bool describe_this(PyObject* o, size_t i, int depth);

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
            // An extent of -1 is left to the other arguments: 1 here, which broadcasts.
            a.tensor.shape[d] = g.shape[d] < 0 ? 1 : g.shape[d];
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

    TorchOps& ops_;
    CallScratch& s_;
    DeviceType device_;
    int device_index_;
};

// ---------------------------------------------------------------- recognisers, one per row

/// sg.float3(...), sg.float2x2(...): the components (row-major) are the children.
void recognise_value(Describer& d, PyObject* o, size_t i, ArgKind, const KindRegistration&) {
    nb::handle h(o);
    nb::object data = h.attr("_data");
    int rows = nb::cast<int>(h.attr("_sg_rows"));
    int cols = nb::cast<int>(h.attr("_sg_cols"));
    int scalar = nb::cast<int>(h.attr("_sg_scalar"));
    Py_ssize_t n = PyList_Size(data.ptr());
    if (n != Py_ssize_t(rows) * (cols ? cols : 1))
        call::throw_value_error("a value type's component count is inconsistent");
    int first = d.reserve(int(n));
    {
        ArgInfo& a = d.arg(i);
        a.kind = ArgKind::Value;
        a.scalar = uint8_t(scalar);
        a.rows = uint8_t(rows);
        a.cols = uint8_t(cols);
        a.first_child = first;
        a.child_count = int(n);
    }
    d.scratch().keep.push_back(data);  // the components are borrowed from this list
    for (Py_ssize_t k = 0; k < n; ++k) d.describe(PyList_GET_ITEM(data.ptr(), k), size_t(first + k), kMaxDepth);
}

/// A numpy array: a torch view of it (a copy where torch cannot view it, or for CUDA).
void recognise_ndarray(Describer& d, PyObject* o, size_t i, ArgKind, const KindRegistration& r) {
    nb::tuple made = nb::cast<nb::tuple>(
        call_helper(r.helper(Helper::ToTensor), nb::handle(o), nb::int_(int(d.device())), nb::int_(d.device_index())));
    bool copied = nb::cast<bool>(made[1]);
    nb::object t = made[0];
    PyObject* tp = t.ptr();
    d.describe_tensor_made(i, t, ArgOrigin::NumPy);
    d.scratch().any_numpy = true;
    // Copies are written back when the kernel writes them (decided after binding).
    if (copied) d.scratch().writebacks.push_back({int(i), o, tp, r.helper(Helper::Store)});
}

/// A ValueRef: a small tensor holding its value, stored back into `.value` when written.
void recognise_ref(Describer& d, PyObject* o, size_t i, ArgKind, const KindRegistration& r) {
    nb::object t =
        call_helper(r.helper(Helper::ToTensor), nb::handle(o), nb::int_(int(d.device())), nb::int_(d.device_index()));
    PyObject* tp = t.ptr();
    d.describe_tensor_made(i, t, ArgOrigin::Ref);
    d.scratch().writebacks.push_back({int(i), o, tp, r.helper(Helper::Store)});
}

/// `dims` / `dim` of a generator (SlangPy's -1: any) into `rows` (0: any).
uint8_t generator_dims(nb::handle h, const char* attr) {
    int64_t d = nb::cast<int64_t>(h.attr(attr));
    return d > 0 && d <= 255 ? uint8_t(d) : 0;
}

/// call_id(dims), thread_id(dims): the kind and the number of components asked for.
void recognise_generator(Describer& d, PyObject* o, size_t i, ArgKind kind, const KindRegistration&) {
    ArgInfo& a = d.arg(i);
    a.kind = kind;
    a.rows = generator_dims(nb::handle(o), "dims");
}

/// wang_hash / rand_float: the seed as the kernel gets it (hashed on the host when asked), the
/// warm-up rounds, the components asked for.
void recognise_hash(ArgInfo& a, nb::handle h, ArgKind kind) {
    a.kind = kind;
    a.integer = nb::cast<int64_t>(h.attr("kernel_seed"));
    a.offset[0] = nb::cast<int64_t>(h.attr("warmup"));
    a.rows = generator_dims(h, "dims");
}

void recognise_wang_hash(Describer& d, PyObject* o, size_t i, ArgKind kind, const KindRegistration&) {
    recognise_hash(d.arg(i), nb::handle(o), kind);
}

void recognise_rand_float(Describer& d, PyObject* o, size_t i, ArgKind kind, const KindRegistration&) {
    ArgInfo& a = d.arg(i);
    nb::handle h(o);
    recognise_hash(a, h, kind);
    a.number = nb::cast<double>(h.attr("min"));
    a.number2 = nb::cast<double>(h.attr("max"));
}

/// A subclass of sg.Tensor (the class itself is recognised inline).
void recognise_sg_tensor(Describer& d, PyObject* o, size_t i, ArgKind, const KindRegistration&) {
    d.describe_sg_tensor(o, i, 1);
}

/// diffPair: recognised only to say where it belongs.
[[noreturn]] void refuse_diff_pair(Describer&, PyObject*, size_t, ArgKind, const KindRegistration&) {
    call::throw_type_error("a diffPair argument is for backward calls: call fn.bwds(...) with it");
}

/// The rows, in the order objects are tried (their classes are disjoint). A new Python-class
/// kind adds its row here, its recogniser above, and its registration row in
/// shadegrad/_values.py (VALUE_KINDS).
constexpr KindRow kKindRows[] = {
    {"value", ArgKind::Value, helper_bits({Helper::LeafValue, Helper::Assemble}), recognise_value},
    {"numpy", ArgKind::Tensor, helper_bits({Helper::ToTensor, Helper::Store}), recognise_ndarray},
    {"value_ref", ArgKind::Tensor, helper_bits({Helper::ToTensor, Helper::Store}), recognise_ref},
    {"call_id", ArgKind::CallId, 0, recognise_generator},
    {"thread_id", ArgKind::ThreadId, 0, recognise_generator},
    {"wang_hash", ArgKind::WangHash, 0, recognise_wang_hash},
    {"rand_float", ArgKind::RandFloat, 0, recognise_rand_float},
    {"diff_pair", ArgKind::None, 0, refuse_diff_pair},
    {"tensor", ArgKind::Tensor, helper_bits({Helper::Wrap}), recognise_sg_tensor},
};
constexpr size_t kKindRowCount = std::size(kKindRows);
KindRegistration g_registered[kKindRowCount];

/// The row named `name` (a compile error when there is none).
consteval size_t kind_row(std::string_view name) {
    for (size_t r = 0; r < kKindRowCount; ++r)
        if (name == kKindRows[r].name) return r;
    throw "no value kind row of that name";
}
constexpr size_t kValueRow = kind_row("value");
constexpr size_t kNumPyRow = kind_row("numpy");
constexpr size_t kSgTensorRow = kind_row("tensor");

void Describer::describe_other(PyObject* o, size_t i, int depth) {
    if (depth > kMaxDepth) call::throw_value_error("an argument is nested more than 16 levels deep");
    if (nb::isinstance<GridArg>(o)) return describe_grid(o, i);
    if (PyList_Check(o) || PyTuple_Check(o)) return describe_list(o, i, depth);
    if (PyDict_Check(o)) return describe_dict(o, i, depth);
    for (size_t r = 0; r < kKindRowCount; ++r)
        if (g_registered[r].matches(o)) return kKindRows[r].recognise(*this, o, i, kKindRows[r].kind, g_registered[r]);
    if (describe_this(o, i, depth)) return;
    s_.args[i].type_name = Py_TYPE(o)->tp_name;
}

bool Describer::describe_this(PyObject* o, size_t i, int depth) {
    // SlangPy's protocol for Python objects that stand for a kernel value (instance lists, user
    // classes): `get_this()` gives the value; when the call writes it, `update_this(value)`.
    static PyObject* const get_name = PyUnicode_InternFromString("get_this");
    PyObject* get = PyObject_GetAttr(o, get_name);
    if (!get) {
        PyErr_Clear();
        return false;
    }
    nb::object getter = nb::steal(get);
    PyObject* value = PyObject_CallNoArgs(get);
    if (!value) throw nb::python_error();
    nb::object held = nb::steal(value);
    const int first = int(s_.total);
    describe(value, i, depth + 1);
    static PyObject* update = nullptr;
    if (!update)
        update = nb::object(nb::module_::import_("shadegrad._instances").attr("update_this")).release().ptr();
    s_.writebacks.push_back({int(i), o, value, update, first, int(s_.total)});
    s_.keep.push_back(std::move(held));
    return true;
}

/// The names of the Helpers in `bits`: "to_tensor, store", or "none".
std::string helper_list(unsigned bits) {
    std::string s;
    for (size_t h = 0; h < kHelperCount; ++h)
        if (bits & (1u << h)) s += (s.empty() ? "" : ", ") + std::string(kHelperNames[h]);
    return s.empty() ? "none" : s;
}

/// A registration's classes: a type, a tuple of types, or "module.Class" for a lazily imported one.
void check_classes(const std::string& name, nb::handle classes) {
    if (nb::isinstance<nb::str>(classes)) {
        std::string text = nb::cast<std::string>(classes);
        size_t dot = text.rfind('.');
        if (dot == std::string::npos || dot == 0 || dot + 1 == text.size())
            throw nb::value_error(("shadegrad: value kind '" + name +
                                   "': a class named by a string must be 'module.Class', got '" + text + "'")
                                      .c_str());
        return;
    }
    bool ok = PyType_Check(classes.ptr());
    if (PyTuple_Check(classes.ptr())) {
        ok = PyTuple_GET_SIZE(classes.ptr()) > 0;
        for (nb::handle c : nb::borrow<nb::tuple>(classes)) ok &= PyType_Check(c.ptr()) != 0;
    }
    if (!ok)
        throw nb::type_error(("shadegrad: value kind '" + name +
                              "' needs a class, a tuple of classes or 'module.Class', got " +
                              std::string(Py_TYPE(classes.ptr())->tp_name))
                                 .c_str());
}

}  // namespace

bool is_ndarray(PyObject* o) { return g_registered[kNumPyRow].matches(o); }

bool is_sg_tensor(PyObject* o) { return g_registered[kSgTensorRow].classes && g_registered[kSgTensorRow].matches(o); }

void register_value_kind(const std::string& name, nb::handle classes, nb::kwargs helpers) {
    size_t row = 0;
    while (row < kKindRowCount && name != kKindRows[row].name) ++row;
    if (row == kKindRowCount) {
        std::string known;
        for (const KindRow& k : kKindRows) known += (known.empty() ? "" : ", ") + std::string(k.name);
        throw nb::value_error(("shadegrad: no value kind '" + name + "' (the kinds: " + known + ")").c_str());
    }
    const KindRow& spec = kKindRows[row];
    check_classes(name, classes);
    PyObject* given[kHelperCount] = {};
    for (auto [key, fn] : helpers) {
        std::string helper = nb::cast<std::string>(key);
        size_t h = 0;
        while (h < kHelperCount && helper != kHelperNames[h]) ++h;
        if (h == kHelperCount || !(spec.helpers & (1u << h)))
            throw nb::value_error(("shadegrad: value kind '" + name + "' takes no helper '" + helper +
                                   "' (its helpers: " + helper_list(spec.helpers) + ")")
                                      .c_str());
        if (!PyCallable_Check(fn.ptr()))
            throw nb::type_error(
                ("shadegrad: value kind '" + name + "': helper '" + helper + "' is not callable").c_str());
        given[h] = fn.ptr();
    }
    for (size_t h = 0; h < kHelperCount; ++h)
        if ((spec.helpers & (1u << h)) && !given[h])
            throw nb::value_error(("shadegrad: value kind '" + name + "' needs the helper '" + kHelperNames[h] +
                                   "' (its helpers: " + helper_list(spec.helpers) + ")")
                                      .c_str());
    // A replaced registration is not released: a call in flight may still hold its helpers.
    KindRegistration& r = g_registered[row];
    if (nb::isinstance<nb::str>(classes)) {
        r.classes = nullptr;
        r.lazy_class = nb::cast<std::string>(classes);
    } else {
        r.classes = nb::borrow(classes).release().ptr();
        r.lazy_class.clear();
    }
    for (size_t h = 0; h < kHelperCount; ++h) r.helpers[h] = given[h] ? nb::borrow(given[h]).release().ptr() : nullptr;
    r.registered = true;
    if (row == kSgTensorRow) {
        g_sg_tensor_type = nullptr;
        if (!r.classes || !PyType_Check(r.classes))
            throw nb::type_error("shadegrad: value kind 'tensor' takes one class (sg.Tensor)");
        SgTensorSlots slots;
        slots.arg = slot_offset(r.classes, "_sg_arg");
        slots.storage = slot_offset(r.classes, "_storage");
        slots.dtype = slot_offset(r.classes, "_dtype");
        slots.device = slot_offset(r.classes, "_device");
        slots.grad_in = slot_offset(r.classes, "grad_in");
        slots.grad_out = slot_offset(r.classes, "grad_out");
        g_sg_slots = slots;
        g_sg_tensor_type = reinterpret_cast<PyTypeObject*>(r.classes);
    }
}

nb::dict value_kinds() {
    nb::list rows;
    for (size_t row = 0; row < kKindRowCount; ++row) {
        const KindRow& spec = kKindRows[row];
        const KindRegistration& r = g_registered[row];
        nb::dict d;
        d["name"] = spec.name;
        d["arg_kind"] = call::arg_kind_name(spec.kind);
        d["recogniser"] = spec.recognise != nullptr;
        d["registered"] = r.registered;
        d["classes"] = r.classes              ? nb::borrow(r.classes)
                       : r.lazy_class.empty() ? nb::none()
                                              : nb::object(nb::str(r.lazy_class.c_str()));
        nb::dict helpers;
        for (size_t h = 0; h < kHelperCount; ++h)
            if (spec.helpers & (1u << h))
                helpers[kHelperNames[h]] = r.helpers[h] ? nb::borrow(r.helpers[h]) : nb::none();
        d["helpers"] = helpers;
        rows.append(d);
    }
    nb::list inline_kinds, arg_kinds;
    for (ArgKind k : kInlineKinds) inline_kinds.append(call::arg_kind_name(k));
    for (int k = 0; k < call::kArgKindCount; ++k) arg_kinds.append(call::arg_kind_name(ArgKind(k)));
    nb::dict table;
    table["rows"] = rows;
    table["inline"] = inline_kinds;
    table["arg_kinds"] = arg_kinds;
    return table;
}

void describe_args(TorchOps& ops, nb::args& args, nb::kwargs& kwargs, CallScratch& s, DeviceType device, int device_index) {
    size_t n = args.size() + kwargs.size();
    PyObject* given_result = nullptr;
    if (n != args.size()) [[unlikely]] {
        s.result_arg = given_result = PyDict_GetItemString(kwargs.ptr(), "_result");
        if (s.result_arg) --n;
        PyObject* r = s.result_arg;
        if (r && (Py_TYPE(r) == g_sg_tensor_type ||
                  (!PyUnicode_Check(r) && !ops.is_tensor(r) && !PyType_Check(r) && is_sg_tensor(r)))) {
            // `_result=` an sg.Tensor: its storage is written (a struct one is filled from the
            // result's fields afterwards), and the Tensor is returned.
            s.result_target = r;
            const bool exact = Py_TYPE(r) == g_sg_tensor_type;  // its slots, borrowed, as for arguments
            nb::object inner = exact ? nb::borrow(slot_at(r, g_sg_slots.arg)) : sg_tensor_arg(r);
            nb::object dtype = exact ? nb::borrow(slot_at(r, g_sg_slots.dtype)) : sg_tensor_dtype(r);
            static PyObject* const fields = PyUnicode_InternFromString("fields");
            PyObject* f = PyObject_GetAttr(dtype.ptr(), fields);
            if (!f) throw nb::python_error();
            const bool is_struct = f != Py_None;
            Py_DECREF(f);
            s.result_arg = is_struct ? nullptr : inner.ptr();
            if (!exact) s.keep.push_back(std::move(inner));
        }
    }
    s.total = n;
    if (s.args.size() < n) s.args.resize(n);
    Describer d(ops, s, device, device_index);
    size_t i = 0;
    for (nb::handle h : args) d.describe(h.ptr(), i++, 0);
    if (n != args.size() || s.result_arg) [[unlikely]] {
        for (auto [k, v] : kwargs) {
            if (v.ptr() == given_result && nb::cast<std::string>(k) == "_result") continue;
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
        for (const call::ParamBinding& p : b.params)
            written |= (p.arg == w.arg || (p.arg >= w.first && p.arg < w.end)) && p.is_output;
        if (!written) continue;
        call_helper(w.store, nb::handle(w.target), nb::handle(w.tensor));
    }
}

ResultMode result_mode_of(nb::handle h) {
    if (nb::isinstance<nb::str>(h)) {
        std::string m = nb::cast<std::string>(h);
        if (m == "torch") return ResultMode::Torch;
        if (m == "tensor") return ResultMode::SgTensor;
        if (m == "numpy") return ResultMode::NumPy;
        call::throw_type_error("_result= / return_type(): '" + m + "' is not \"torch\", \"tensor\" or \"numpy\" (or a "
                               "tensor, an array, torch.Tensor, sg.Tensor or numpy.ndarray)");
    }
    static PyObject* torch_tensor = nullptr;  // set under the GIL
    if (!torch_tensor) torch_tensor = nb::object(nb::module_::import_("torch").attr("Tensor")).release().ptr();
    if (h.ptr() == torch_tensor) return ResultMode::Torch;
    if (g_sg_tensor_type && PyType_Check(h.ptr()) &&
        PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(h.ptr()), g_sg_tensor_type))
        return ResultMode::SgTensor;
    if (PyType_Check(h.ptr()) && std::strcmp(reinterpret_cast<PyTypeObject*>(h.ptr())->tp_name, "numpy.ndarray") == 0)
        return ResultMode::NumPy;
    call::throw_type_error("_result= / return_type() cannot take " + call::with_article(Py_TYPE(h.ptr())->tp_name));
}

namespace {

/// The DType (shadegrad._tensor) of a result leaf's type, made once per type: scalars, vectors
/// and matrices by their shape (no name is built on a hit), others by name.
PyObject* sg_dtype_of(const lang::Type* t) {
    static PyObject* numeric[12][5][5] = {};  // [scalar][rows][cols]: strong references, for the process
    const bool simple = (t->is_scalar() || t->is_vector() || t->is_matrix()) && !t->enumeration &&
                        size_t(t->scalar) < 12 && t->rows <= 4 && t->cols <= 4;
    PyObject** slot = simple ? &numeric[size_t(t->scalar)][t->is_scalar() ? 0 : t->rows][t->cols] : nullptr;
    if (slot && *slot) [[likely]]
        return *slot;
    static auto* cache = new std::unordered_map<std::string, PyObject*>();  // strong references, for the process
    std::string name = lang::type_name(t);
    auto it = cache->find(name);
    if (it != cache->end()) return it->second;
    nb::object dtype = nb::module_::import_("shadegrad._tensor").attr("dtype_of")(name.c_str(), "_result='tensor'");
    PyObject* made = cache->emplace(name, dtype.release().ptr()).first->second;
    if (slot) *slot = made;
    return made;
}

/// A new sg.Tensor over a call's result tensor (no __init__: its slots are set here).
nb::object new_sg_tensor(const nb::object& storage, const lang::Type* t) {
    PyObject* dtype = sg_dtype_of(t);
    PyObject* o = g_sg_tensor_type->tp_alloc(g_sg_tensor_type, 0);
    if (!o) throw nb::python_error();
    auto set = [o](Py_ssize_t offset, PyObject* v) {
        Py_INCREF(v);
        slot_at(o, offset) = v;
    };
    set(g_sg_slots.arg, storage.ptr());
    set(g_sg_slots.storage, storage.ptr());
    set(g_sg_slots.dtype, dtype);
    set(g_sg_slots.device, Py_None);
    set(g_sg_slots.grad_in, Py_None);
    set(g_sg_slots.grad_out, Py_None);
    return nb::steal(o);
}

}  // namespace

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
                nb::object value =
                    call_helper(g_registered[kValueRow].helper(Helper::LeafValue), results[k], nb::int_(kind));
                nb::list keys;
                for (const std::string& key : leaf.keys) keys.append(nb::str(key.c_str()));
                leaves.append(nb::make_tuple(keys, value));
            }
            return call_helper(g_registered[kValueRow].helper(Helper::Assemble), leaves);
        }
        mode = s.any_sg_tensor && !s.any_torch ? ResultMode::SgTensor
               : s.any_numpy && !s.any_torch   ? ResultMode::NumPy
                                               : ResultMode::Torch;
    }
    if (mode == ResultMode::SgTensor) {
        if (results.size() == 1 && b.result_leaves[0].keys.empty() && !s.result_target && g_sg_tensor_type) [[likely]]
            return new_sg_tensor(results[0], b.result_leaves[0].type);
        nb::list leaves;
        for (size_t k = 0; k < results.size(); ++k) {
            nb::list keys;
            for (const std::string& key : b.result_leaves[k].keys) keys.append(nb::str(key.c_str()));
            leaves.append(nb::make_tuple(keys, results[k], nb::str(lang::type_name(b.result_leaves[k].type).c_str())));
        }
        nb::object type_name = b.result_type ? nb::object(nb::str(lang::type_name(b.result_type).c_str())) : nb::none();
        nb::object target = s.result_target ? nb::borrow(s.result_target) : nb::none();
        PyObject* wrap = g_registered[kSgTensorRow].helper(Helper::Wrap);
        if (!wrap) throw std::runtime_error("shadegrad: value kinds were not registered (import shadegrad first)");
        PyObject* r = PyObject_CallFunctionObjArgs(wrap, type_name.ptr(), nb::int_(b.call_rank).ptr(), leaves.ptr(),
                                                   target.ptr(), nullptr);
        if (!r) throw nb::python_error();
        return nb::steal(r);
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
    return call_helper(g_registered[kValueRow].helper(Helper::Assemble), leaves);
}

}  // namespace sg::py
