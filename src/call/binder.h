// src/call/binder.h — the vectorization rules (docs/calling.md): matches call arguments to a
// function's parameters, decides how each argument is read per thread, the call rank, which
// inputs take part in autograd, and where gradients need atomics.
//
// In: a module, a function name, the described arguments (positional, then keywords by name;
// composite values' children after them, see arg_info.h), the grad mode and the call's
// modifiers. Out: a Binding — everything about the call that the key determines; it is computed
// once per call plan. Per-call extents are checked by compute_call_shape.
//
// A parameter's value may be assembled from several arguments (a dict for a struct, a list for
// an array or vector, a value type for a vector or matrix): each leaf (tensor, scalar, generator)
// becomes one ParamBinding, and the parameter's ParamSlot says how the glue builds the value
// from its leaves. How each kind of value binds to a type is the marshalling table's business
// (value_kind.h); this file matches, recurses and checks shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "call/arg_info.h"
#include "call/call_key.h"
#include "call/user_module.h"

namespace sg::call {

enum class BindingKind : uint8_t {
    Uniform,      ///< a Python scalar passed as a kernel uniform
    Grid,         ///< sg.grid(shape): the thread's call index (times stride, plus offset)
    Generator,    ///< call_id / thread_id / wang_hash / rand_float: computed from the call index
    Elementwise,  ///< a tensor whose leading dims are call dims and trailing dims the element
    WholeTensor,  ///< a tensor passed whole to a tensor parameter
};

/// How a backward kernel writes the gradient of one input (docs/design.md, "Atomics only where writes can collide"),
/// decided from the call's layout when the backward glue is generated; the layout facts it
/// rests on (which extents are 1, the grad mask) are in the call key.
enum class GradStrategy : uint8_t {
    None,     ///< no gradient buffer (not differentiable, or not in the grad mask)
    Store,    ///< one thread per element: a plain store, and no zero fill of the buffer
    Reduce,   ///< broadcast along every call dim (a scalar, (1,), an expanded tensor, a 0-d
              ///< tensor): each thread's share summed in registers, then across the warp and the
              ///< block, the block sums in double by the last block (CPU: a double sum per chunk
              ///< of threads, the chunks summed pairwise): a tree, one rounding to the element type
    Atomic,   ///< broadcast along some call dims ((1, W), (H, 1)), or an array element: atomics
              ///< that lanes with the same address combine first (warp-aggregated on CUDA)
    Collide,  ///< colliding by data (the gradient of a whole tensor read at computed indices):
              ///< warp-aggregated atomics
};

/// The name `debug_code` shows for a strategy ("store", "reduce", ...).
const char* grad_strategy_name(GradStrategy s);

/// One leaf of a parameter's value: a tensor, a scalar or a generator.
struct ParamBinding {
    int param = -1;                 ///< parameter index in the function
    int arg = -1;                   ///< index into the argument array (the leaf's ArgInfo)
    std::string name;               ///< parameter name, with the access path ("p.pos", "a[1]")
    std::string ident;              ///< identifier-safe name for the glue ("p", "p_0")
    BindingKind kind = BindingKind::Uniform;
    ArgKind arg_kind = ArgKind::None;
    const lang::Type* type = nullptr;  ///< the leaf's type (the parameter's type for a plain argument)
    lang::ParamDir dir = lang::ParamDir::In;
    std::string diff_path;          ///< access path from the parameter's value to this leaf
    int call_dims = 0;              ///< call dimensions this argument spans (right-aligned)
    int elem_dims = 0;              ///< trailing tensor dims that form one element
    int array_dims = 0;             ///< ...of which the leading ones index arrays (float3[2]: 1)
    bool differentiable = false;    ///< the leaf takes part in differentiation
    bool requires_grad = false;     ///< ...and its tensor requires grad (autograd input in the mask)
    bool is_output = false;         ///< a tensor the function writes (write-access tensor parameter)
    bool grad_atomic = false;       ///< gradient writes can collide (broadcast): atomics
    /// How the backward writes this leaf's gradient when it requires grad (Store, Reduce or
    /// Atomic for elementwise tensors; Collide for whole tensors); see grad_strategy().
    GradStrategy grad_strategy = GradStrategy::None;
    std::vector<bool> broadcast;    ///< per call dim of this argument (first call's shapes)
    std::vector<int> dim_map;       ///< fn.map(): call dim of each argument dim (empty: right-aligned)
    bool grid_strided = false;      ///< a grid with a stride or offset (uniforms beside the call index)
};

/// How the glue assembles a parameter's value: a leaf, or a composite of child nodes.
struct ValueNode {
    const lang::Type* type = nullptr;
    int leaf = -1;                  ///< index into Binding::params, or -1 for a composite
    std::string access;             ///< this node's access from its parent (".pos", "[2]", ".x")
    std::vector<ValueNode> children;
};

/// One function parameter.
struct ParamSlot {
    std::string name;
    const lang::Type* type = nullptr;
    const lang::Type* read_type = nullptr;  ///< fn.map() by type: what the argument is read as (else `type`)
    lang::ParamDir dir = lang::ParamDir::In;
    bool differentiable = false;
    bool defaulted = false;  ///< the call left it out: the kernel passes its default value (no leaves)
    /// A module parameter the function uses (global_bindings.h): the global's name, which the
    /// glue assigns from this slot's value before the call; "" for the function's parameters.
    std::string global;
    ValueNode value;
};

/// One piece of the result: the whole result, or one numeric field of a struct result.
struct ResultLeaf {
    std::string path;                     ///< access from the result value (".pos"; "" for all of it)
    std::string diff_path;                ///< the same in the result's Differential ([DerivativeMember] names)
    std::vector<std::string> keys;        ///< dict keys down to the field (empty for all of it)
    const lang::Type* type = nullptr;
    std::vector<int64_t> elem_shape;      ///< trailing dims of its tensor
    int array_dims = 0;                   ///< leading element dims that index arrays
    lang::ScalarKind scalar = lang::ScalarKind::Float;
    bool differentiable = false;          ///< floating point, and no no_diff field on the way
};

/// The element type under a type's array dimensions (float3[2][4] → float3, counts {2, 4}).
const lang::Type* array_inner(const lang::Type* t, std::vector<int64_t>* counts = nullptr);

struct Binding {
    std::string function;
    lang::FunctionDecl* decl = nullptr;
    std::vector<ParamBinding> params;   ///< the leaves of every parameter, in parameter order
    std::vector<ParamSlot> slots;       ///< one per function parameter, in order
    int call_rank = 0;
    const lang::Type* result_type = nullptr;  ///< return type (void: no result tensor)
    int result_elem_dims = 0;           ///< of result_leaves[0] when the result is one leaf
    std::vector<ResultLeaf> result_leaves;
    int result_arg = -1;                ///< the `_result=` tensor's node in the argument array, or -1
    int result_call_dims = 0;           ///< ...and the call dims it spans (it shapes the call too)
    bool autograd = false;              ///< grad mode on and some differentiable input requires grad
    bool writes_tensors = false;        ///< `_result=` or a written tensor argument (written_checks.h)
    /// Grad mode on, the function is not [Differentiable], and this parameter, which it would
    /// differentiate if it were, got a tensor that requires grad (empty otherwise): the call warns
    /// once per function (Host::warn_not_differentiable).
    std::string undifferentiated_param;
    bool uses_call_extents = false;     ///< the glue reads the call shape (thread_id and hashes)
    /// Deterministic mode (module option or fn.deterministic()): gradients are bitwise the same
    /// on every run: fixed-order reductions and no float atomics whose order can vary.
    bool deterministic = false;
    /// Fast math (module option or fn.fast_math()): approximate float intrinsics on CUDA.
    bool fast_math = false;
    DeviceType device = DeviceType::CPU;
    int device_index = -1;
    /// Element extents the key does not carry that this binding read (call/resolve.cpp): a call
    /// with other extents there needs a plan of its own.
    std::vector<ExtentCheck> extent_checks;
};

/// What fn.map(...) asks: per parameter, its argument dims' call dims (empty: right-aligned).
struct CallModifiers {
    std::vector<std::vector<int>> dim_maps;  ///< indexed by parameter
    /// fn.map(a="float3"): per parameter, the type its argument is read as (empty: the
    /// parameter's), converted to the parameter's type when they differ.
    std::vector<std::string> type_maps;
    bool strict_broadcasting = false;        ///< module option: no implicit rank padding
    bool deterministic = false;              ///< module option or fn.deterministic(): in the key
    bool fast_math = false;                  ///< module option or fn.fast_math(): in the key
    /// fn.call_group_shape(shape) (SlangPy's call groups): the group's extents as given (at most
    /// the call's rank of them, each in [1, 1024], at most 1024 elements a group; padded with
    /// leading 1s to the call's rank when a plan is made); in the key.
    bool has_call_group = false;
    std::vector<int> call_group;
};

/// The type fn.map(a="...") names: what the module calls that name (scalars, vectors, matrices,
/// structs, aliases), with array suffixes ("float[3]", "float3[2][4]"); nullptr when it names
/// nothing.
const lang::Type* mapped_type(UserModule& module, const std::string& name);

/// Element shape of a value type as tensor trailing dims (float: {}, float3: {3},
/// float2x3: {2, 3}, float[5]: {5}); false when the type cannot be read from a tensor.
bool element_shape(const lang::Type* t, std::vector<int64_t>& shape, lang::ScalarKind& scalar);

/// The argument of each of `fn`'s parameters: positional ones first, then keywords by name
/// (indices into the call's arguments). Throws a TypeError for a missing, unknown or doubled one.
/// Whether `param` takes part in differentiation when its function is [Differentiable]: not
/// no_diff, and of a differentiable type (float, a vector, an IDifferentiable struct, a
/// differentiable tensor type, ...).
bool param_would_differentiate(const UserModule& module, const lang::VarDecl& param);

std::vector<int> match_arguments(const lang::FunctionDecl* fn, const std::string& function, size_t positional,
                                 const std::vector<std::string>& keyword_names);

/// Binds a call to one concrete declaration (an overload or an instantiation, as chosen by
/// call/resolve.h, which is where calls by name go). Throws CallError naming the function and
/// parameter on any mismatch. `device` is the module's device: every tensor must live there.
Binding bind_declaration(const UserModule& module, lang::FunctionDecl* fn, const ArgInfo* args, size_t positional,
                         const std::vector<std::string>& keyword_names, bool grad_mode, DeviceType device,
                         const CallModifiers& modifiers = {}, int result_arg = -1);

/// The strategy of the gradient of leaf `p` (GradStrategy::None when it has none): from its
/// kind, broadcast flags and element type.
GradStrategy grad_strategy(const ParamBinding& p);

/// Binds a call of the function named `function` (no explicit generic arguments): resolves its
/// overloads and generics (call/resolve.h, where it is defined) and binds the chosen one.
/// `count` is the number of top-level arguments (positional, then keywords).
Binding bind_call(const UserModule& module, const std::string& function, const ArgInfo* args, size_t positional,
                  size_t count, const std::vector<std::string>& keyword_names, bool grad_mode, DeviceType device,
                  const CallModifiers& modifiers = {}, int result_arg = -1);

/// Computes this call's shape (right-aligned broadcast of the arguments' call dims) into
/// `shape`; throws CallError when extents neither match nor broadcast.
void compute_call_shape(const Binding& binding, const ArgInfo* args, int64_t* shape);

}  // namespace sg::call
