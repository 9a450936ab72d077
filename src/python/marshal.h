// src/python/marshal.h — the Python side of the marshalling table (src/call/value_kind.h):
// recognising each kind of Python value and describing it into ArgInfo (composites into their
// children), what a call writes back into Python objects (ValueRef.value, numpy arrays copied to
// CUDA), and how results return to Python (values for call dimensionality 0, torch tensors or
// numpy arrays otherwise, dicts for structs).
//
// Torch tensors, Python scalars, grids, lists, tuples and dicts are recognised inline (the
// first four on every call's hot path, allocating nothing). Every other kind is a row of
// kKindRows in marshal.cpp, indexed like the registrations Python makes for it: a name, the
// ArgKind its objects become, the Python helpers it needs (to_tensor, store, leaf_value,
// assemble) and its recogniser; python/shadegrad/_values.py registers one row per kind
// (VALUE_KINDS: the row's name, its class or classes, its helpers) through
// `_core._register_value_kind`, which refuses an unknown name and a missing or unexpected
// helper. A new Python-class kind is its ArgKind (call/arg_info.h) and ValueKind row
// (call/value_kind.cpp), its recogniser and KindRow in marshal.cpp, and its class and
// VALUE_KINDS row in _values.py — see the list in call/value_kind.h.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "call/arg_info.h"
#include "call/binder.h"
#include "call/invoke.h"
#include "python/torch_ops.h"

namespace sg::py {

namespace nb = nanobind;

/// `sg.grid(shape, stride=None, offset=None)`: the call index as an argument.
struct GridArg {
    std::vector<int64_t> shape;
    std::vector<int64_t> stride;  ///< empty: 1 per dimension
    std::vector<int64_t> offset;  ///< empty: 0 per dimension
};

/// How a call's result returns (fn.return_type / `_result=`).
enum class ResultMode : uint8_t { Auto, Torch, NumPy, SgTensor };

/// One call's described arguments and what the call must do with Python objects afterwards.
/// Kept per thread and reused: a call of tensors and scalars allocates nothing here.
struct CallScratch {
    std::vector<call::ArgInfo> args;    ///< top-level arguments first, then composites' children
    std::vector<std::string> keywords;
    size_t count = 0;                   ///< top-level arguments
    size_t total = 0;                   ///< every node
    size_t positional = 0;
    bool any_torch = false;             ///< some argument is a torch tensor
    bool any_numpy = false;             ///< some argument is a numpy array
    bool any_sg_tensor = false;         ///< some argument is a shadegrad Tensor (sg.Tensor)
    PyObject* result_target = nullptr;  ///< `_result=` an sg.Tensor (borrowed): returned after the call
    PyObject* result_arg = nullptr;     ///< `_result=` (borrowed), nullptr when not given
    int result_index = -1;              ///< a `_result=` tensor or array: its node (after the others)
    /// Objects made for this call: tensors viewing numpy arrays, holding refs' values.
    std::vector<nb::object> keep;
    struct WriteBack {
        int arg;            ///< the argument node
        PyObject* target;   ///< the ValueRef or numpy array (borrowed: the caller holds it)
        PyObject* tensor;   ///< the tensor the kernel wrote (kept alive in `keep`)
        PyObject* store;    ///< its kind's `store` helper (registrations live for the process)
        int first = -1, end = -1;  ///< get_this(): the nodes of the value, written when any of them is
    };
    std::vector<WriteBack> writebacks;
    call::CallOutcome outcome;          ///< what call::invoke produced
    void reset() {
        count = total = positional = 0;
        any_torch = any_numpy = any_sg_tensor = false;
        result_arg = result_target = nullptr;
        result_index = -1;
        keywords.clear();
        if (!keep.empty()) keep.clear();
        writebacks.clear();
    }
};

/// `_core._register_value_kind(name, classes, **helpers)`: registers the row `name` of the Python
/// kinds (shadegrad._values.VALUE_KINDS). `classes` is a class, a tuple of classes, or
/// "module.Class" for a class imported when an object of that type name is first seen; `helpers`
/// are exactly the Python functions the row needs (to_tensor, store, leaf_value, assemble).
/// Raises ValueError for an unknown kind, a missing or an unexpected helper, TypeError for
/// classes or helpers of the wrong type. Registering a row again replaces it.
void register_value_kind(const std::string& name, nb::handle classes, nb::kwargs helpers);

/// `_core._value_kinds()`: {"rows": one dict per row (name, arg_kind, recogniser, registered,
/// classes, helpers), "inline": the kinds recognised without a row, "arg_kinds": every ArgKind}.
nb::dict value_kinds();

/// Describes a call's arguments into `s` (after s.reset()). `device` is the module's.
void describe_args(TorchOps& ops, nb::args& args, nb::kwargs& kwargs, CallScratch& s, DeviceType device, int device_index);

/// After a launch: stores what the kernel wrote into ValueRefs and copied numpy arrays.
void write_back(const call::Binding& b, CallScratch& s);

/// The Python result of a call from its result tensors (one per result leaf).
nb::object result_to_python(const call::Binding& b, const CallScratch& s, std::vector<nb::object>& results,
                            ResultMode mode, bool autograd);

/// `_result=` / fn.return_type(): the mode a Python object names (a string, torch.Tensor,
/// numpy.ndarray); throws TypeError for anything else.
ResultMode result_mode_of(nb::handle h);

/// Whether `o` is a numpy array.
bool is_ndarray(PyObject* o);

/// Whether `o` is a shadegrad Tensor (sg.Tensor or a subclass).
bool is_sg_tensor(PyObject* o);

}  // namespace sg::py
