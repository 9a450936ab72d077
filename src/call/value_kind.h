// src/call/value_kind.h — the marshalling table: one row per kind of Python value (tensor,
// scalar, grid, generator, list, dict, value type). A row knows how to put the value's
// kernel-relevant facts into the call key and render them, how to describe the value in an
// error message, and how the value binds to a parameter type (its dimensionality, its binding
// kind, and for composites the children it binds to fields, elements or components).
//
// The Python side of each kind (recognising the object, writing back, returning a result of
// that kind) lives in src/python/marshal.cpp, which follows the same rows. Adding a kind adds a
// row here and a recogniser there; the binder and the glue read rows, not kinds.
#pragma once

#include <string>

#include "call/arg_info.h"
#include "call/binder.h"

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
};

/// The row of kind `k` (every ArgKind has one).
const ValueKind& value_kind(ArgKind k);

/// "(2, 3)", "(4,)".
std::string shape_text(const int64_t* shape, int ndim);
/// The tensor dtype of a scalar kind.
DType dtype_of(lang::ScalarKind k);

}  // namespace sg::call
