// src/call/value_kind.h — the marshalling table: one row per kind of Python value (tensor,
// scalar, grid, generator, list, dict, value type). A row knows how to put the value's
// kernel-relevant facts into the call key and render them, how to describe the value in an
// error message, and how the value binds to a parameter type (its dimensionality, its binding
// kind, and for composites the children it binds to fields, elements or components).
//
// The Python side of each kind (recognising the object, writing back, returning a result of
// that kind) lives in src/python/marshal.cpp, which follows the same rows; the binder and the
// key read rows, not kinds. A new kind of Python value needs exactly:
//   1. its ArgKind enumerator (and kArgKindCount) in call/arg_info.h, with the ArgInfo fields
//      that carry its facts;
//   2. its ValueKind row here, in call/value_kind.cpp's kRows at the enumerator's position
//      (key bytes, rendering, description, binding; the file checks the order at compile time);
//   3. when Python objects of a class are of the kind: its recogniser and KindRow in
//      src/python/marshal.cpp (kKindRows: name, ArgKind, the helpers it needs);
//   4. its class and its registration row in python/shadegrad/_values.py (VALUE_KINDS: name,
//      class, helpers), and a public constructor in python/shadegrad/__init__.py when users
//      make it through a function (sg.wang_hash(...)).
// A new origin of an existing kind (numpy arrays and ValueRefs are tensors) is steps 3 and 4
// only. A generator's row also names its Generator (call/generators.h: the types it binds to,
// whether it reads the call's extents, the code of its value).
#pragma once

#include <string>

#include "call/arg_info.h"
#include "call/binder.h"
#include "call/generators.h"

namespace sg::call {

/// The binder's side of a bind: what a row asks of the binder while binding one value.
class BindContext {
public:
    virtual ~BindContext() = default;
    const UserModule* module = nullptr;
    const std::string* function = nullptr;
    const ArgInfo* args = nullptr;
    bool grad_mode = false;
    DeviceType device = DeviceType::CPU;
    int device_index = -2;  ///< of the first tensor seen (-2: none yet)
    /// Binds child `arg` (of a composite) to `type`; `access` is its access from the parent.
    virtual ValueNode bind_child(int arg, const lang::Type* type, const std::string& access,
                                 const std::string& name, bool differentiable) = 0;
    /// Adds a leaf and returns its node.
    virtual ValueNode add_leaf(ParamBinding leaf) = 0;
};

/// One value to bind: argument `arg` must produce a value of `type`.
struct BindRequest {
    int arg = -1;
    const lang::Type* type = nullptr;
    lang::ParamDir dir = lang::ParamDir::In;
    bool differentiable = false;  ///< the parameter and every field on the way are differentiable
    std::string name;             ///< for messages: "p.pos"
    std::string diff_path;        ///< access path from the parameter's value
    int param = -1;
    bool global = false;  ///< a global's value (fn.set): messages say "global 'g'"
    /// "f(): parameter 'p.pos' of type float3" — the start of every message about this value.
    std::string where(const BindContext& c) const;
};

struct ValueKind {
    ArgKind kind;
    const char* name;
    /// Appends the kernel-relevant facts of `a` beyond its kind byte to the key.
    void (*key)(const ArgInfo& a, std::string& bytes);
    /// Renders what `key` wrote (starting at `pos`, advancing it).
    void (*render)(const std::string& bytes, size_t& pos, std::string& out);
    /// "a float32 tensor of shape (3,) on cpu", "a Python list of 3 items", ...
    std::string (*describe)(const ArgInfo& a);
    /// Binds the value; throws CallError naming the function and parameter when it does not fit.
    ValueNode (*bind)(BindContext& c, const BindRequest& r);
    /// A generator's binding and code; nullptr for every other kind.
    const Generator* generator = nullptr;
};

/// The row of kind `k` (every ArgKind has one).
const ValueKind& value_kind(ArgKind k);

/// "(2, 3)", "(4,)".
std::string shape_text(const int64_t* shape, int ndim);
/// The tensor dtype of a scalar kind.
DType dtype_of(lang::ScalarKind k);

}  // namespace sg::call
