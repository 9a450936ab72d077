// src/call/coop_launch.h — launching a cooperative kernel: a [CUDAKernel] function run once per
// thread of an explicit launch (block and grid shape, up to 3-D), with TensorView parameters
// bound to whole tensors and scalar parameters to numbers.
//
// In: the function's state (its module and name), the described arguments (a tensor per
// TensorView parameter, a number, bool or sg value per scalar or vector parameter, by position
// or by name) and the launch shape. Out: the kernel enqueued on the host's current stream (CUDA)
// or run on the thread pool (CPU), a block per work item; a fault it records is raised as for
// other calls (kernel_faults.h). Every argument error names the function and the parameter.
// The kernel does not depend on the arguments (a TensorView's rank and strides are read at run
// time), so each function compiles it once per device (FunctionState::coop_kernels).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "call/glue.h"
#include "call/host.h"
#include "call/invoke.h"

namespace sg::call {

struct LaunchShape {
    int64_t block[3] = {1, 1, 1};
    int64_t grid[3] = {1, 1, 1};
    /// SlangPy's `_thread_count=N` (1-D): threads whose global x index is N or more do not run
    /// (0: every thread of the grid runs).
    int64_t thread_count = 0;
    /// No `_thread_count` was given (a function that takes views, called as SlangPy calls it:
    /// one thread, or one per element of its sg.grid arguments; view_call.cpp).
    bool implicit = false;
};

/// Which kernel of a [CUDAKernel] function a launch runs: the function itself, the backward of a
/// [Differentiable] one (slangtorch's `.bwd`: bwd_diff of it) or its forward derivative
/// (`.fwd`: fwd_diff). A derivative launch binds a DiffTensorView to a (values, gradient) pair.
enum class CoopPass : uint8_t { Primal = 0, Backward = 1, Forward = 2 };

/// What a CoopParam is to the Python side's autograd wiring (python/shadegrad/_coop_autograd.py
/// reads the names through `_core._coop_param_kinds()`).
enum class CoopParamKind : int {
    Value = 0,           ///< a value (no gradient)
    TensorView = 1,      ///< a TensorView
    DiffTensorView = 2,  ///< a DiffTensorView
    /// a value of a function that takes views whose per-element tensor carries a gradient (a
    /// differentiable scalar or vector)
    DiffElement = 3,
    DiffResult = 4,      ///< the result (or a field of it) of such a function: carries a gradient
    Result = 5,          ///< the same without a gradient
    DiffElementOut = 6,  ///< a DiffElement that is out or inout (its tensor is written per element)
    Struct = 7,          ///< a struct of such a function (a dict of its fields)
    StructField = 8,     ///< a field of a Struct that carries a gradient, named "param.field"
    StructOut = 9,       ///< an out or inout Struct: its fields' tensors are written
};

/// A parameter of a [CUDAKernel] function as the Python side needs it (autograd wiring). The
/// parameters come first, then the StructField entries, then the result's leaves of a function
/// that takes views and returns a value: "_result", or "_result:<field>" per field of a struct.
struct CoopParam {
    std::string name;
    CoopParamKind kind = CoopParamKind::Value;
    std::string dtype;  ///< the result's: its torch dtype name ("float32")

    bool is_result() const { return kind == CoopParamKind::DiffResult || kind == CoopParamKind::Result; }
    /// A field of a struct result ("_result:<field>").
    bool is_result_field() const { return is_result() && name.rfind("_result:", 0) == 0; }
};

/// Whether the function a state names is a [CUDAKernel] function (of its first declaration).
bool is_cooperative(const UserModule& module, const Callee& callee);

/// Launches `fn` (a [CUDAKernel] function) over `a` with `shape`. Throws CallError (TypeError /
/// ValueError naming the function and parameter) for a wrong argument or shape, and the
/// RuntimeError of a fault the launch recorded.
/// Returns the results of a function that takes views and returns a value (a new tensor of the
/// call's shape, an owned reference; of shape (1,) for a single call, which sets `*single`),
/// else nullptr. A struct result has a tensor per leaf (view_result_leaves): the first is
/// returned, the others appended to `*more` (owned references).
/// `mods`: a function that takes views, its function object's modifiers (fn.map's dimension
/// maps, fn.call_group_shape).
void* launch_cooperative(Host& host, FunctionState& fn, const CallArgs& a, const LaunchShape& shape,
                         CoopPass pass = CoopPass::Primal, bool* single = nullptr, std::vector<void*>* more = nullptr,
                         const CallModifiers* mods = nullptr);

/// The parameters of the [CUDAKernel] function `fn` names (TypeError when it is not one).
std::vector<CoopParam> coop_params(const FunctionState& fn);
/// Whether a primal launch of `fn` over `a` takes part in torch autograd: a DiffTensorView
/// parameter is bound to a tensor that requires grad (the caller checks grad mode).
bool coop_needs_autograd(const FunctionState& fn, const CallArgs& a);

/// The glue of a derivative kernel of `decl` (coop_derivative.cpp); TypeError when `decl` is
/// not [Differentiable].
Glue coop_derivative_glue(const FunctionState& fn, const lang::FunctionDecl& decl, CoopPass pass);

/// Whether a derivative kernel passes parameter `p` as a pair (a differentiable scalar, vector
/// or matrix that is not no_diff; its derivative starts at zero and is dropped).
bool is_differentiable_value(const lang::VarDecl& p);

/// SlangPy's 1-D form: `shape` for `threads` threads (blocks of up to 256 threads in x).
LaunchShape thread_count_shape(const FunctionState& fn, int64_t threads);

// ---- functions that take views without being [CUDAKernel] functions (view_call.cpp)

/// The declaration of a function that is no [CUDAKernel] function but takes a TensorView or
/// DiffTensorView parameter (SlangPy binds such a view whole), or nullptr.
const lang::FunctionDecl* view_function_decl(const UserModule& module, const Callee& callee);
bool is_view_function(const UserModule& module, const Callee& callee);
/// Whether a parameter of type `t` of such a function may take an sg.grid(shape) argument (an
/// int or uint, or a vector of 2 or 3 of them: the thread's coordinate in the grid).
bool is_grid_parameter(const lang::Type* t);
/// How a call of such a function binds its value parameters: bit k of `grids`, parameter k
/// holds a grid's extents and gets the thread's coordinate in that grid; bit k of `tensors`, it
/// is a view of a tensor and gets the element at the thread's coordinate in the call shape, of
/// `rank` dimensions (SlangPy's vectorization of the other arguments; views stay whole).
struct ViewCallForm {
    uint32_t grids = 0;
    uint32_t tensors = 0;
    int rank = 0;
    std::vector<int64_t> call_shape;  ///< its extents (not part of the kernel)
    /// The struct parameters given dicts: (parameter, bit j set where leaf j of its
    /// view_struct_leaves is a tensor read per element; the others are numbers).
    std::vector<std::pair<uint32_t, uint64_t>> structs;
    /// fn.map(): per parameter, the call dim of each of its tensor's dims (empty: right-aligned);
    /// applied to the tensor's view, not part of the kernel.
    std::vector<std::vector<int>> dim_maps;
    /// fn.call_group_shape(): the group's extents padded with leading 1s to the call's rank
    /// (empty: no call groups). The glue then reads its coordinate from SlangPy's call ids and
    /// runs as the blocks of the groups (codegen: emit_call_group.cpp).
    std::vector<int> call_group;
    /// fn.fast_math() or the module option: approximate float intrinsics on CUDA (in the key).
    bool fast_math = false;
    /// fn.map(x="half3"): per parameter, the type its per-element tensor is read as (converted to
    /// the parameter's; null: the parameter's own), in the key.
    std::vector<const lang::Type*> read_types;
    const lang::Type* read_type(size_t k) const { return k < read_types.size() ? read_types[k] : nullptr; }
    const uint64_t* struct_tensors(size_t k) const {
        for (const auto& [p, mask] : structs)
            if (p == k) return &mask;
        return nullptr;
    }
};
/// The [CUDAKernel] glue that calls such a function (pass: or bwd_diff / fwd_diff of it) once
/// per thread (view_call_glue.cpp). TypeError for a result other than a scalar or vector, an out
/// parameter, or (a derivative pass) a function that is not differentiable.
Glue view_call_glue(const FunctionState& fn, const lang::FunctionDecl& decl, CoopPass pass, const ViewCallForm& form);
/// Checks the arguments of such a call that are not views (numbers; sg.grid, every grid's rank
/// its parameter's component count; tensors for scalar and vector parameters, one element per
/// call; dicts for struct parameters, their fields numbers or such tensors) and returns the
/// call's form; `out` is `shape`, or with grids or tensors one thread per
/// element of their call shape, the right-aligned broadcast of theirs (grid[0] = 0 when it is
/// empty; extents that are neither equal nor 1 are a ValueError naming both parameters). Errors name `name` and
/// the parameter; `_thread_count` beside a grid or tensor is a ValueError (SlangPy's).
/// Whether the glue reads a per-element tensor of parameter k of `decl` through a DiffTensorView
/// of its scalar (a vector's components in a last dimension), whose gradient view receives the
/// argument's gradient.
bool view_element_is_differentiable(const lang::FunctionDecl& decl, size_t k);
/// Whether the glue stores `decl`'s result through a DiffTensorView (its gradient view holds the
/// result's gradient in a derivative pass).
bool view_result_is_differentiable(const lang::FunctionDecl& decl);
/// A part of a value of such a function with a kernel parameter of its own: the whole value, or a
/// field of a struct (nested fields depth first) — of its result, or of a struct parameter.
struct ViewResultLeaf {
    std::string access;  ///< ".a.b" after the value ("" for the whole value)
    std::string name;    ///< "a.b" ("" for the whole value)
    const lang::Type* type = nullptr;
    bool diff = false;   ///< stored through a DiffTensorView (it carries a gradient)
};
/// The leaves of `decl`'s result (none for void), in the order of the glue's result views.
std::vector<ViewResultLeaf> view_result_leaves(const UserModule& module, const lang::FunctionDecl& decl);
/// The leaves of struct parameter k of `decl` given a dict (its fields, nested ones depth first),
/// in the order of the glue's parameters for it; `diff`: a floating scalar or vector field that
/// carries a gradient (read per element through a DiffTensorView).
std::vector<ViewResultLeaf> view_struct_leaves(const UserModule& module, const lang::FunctionDecl& decl, size_t k);
ViewCallForm view_call_form(UserModule& module, const std::string& name, const lang::FunctionDecl& decl,
                            const std::vector<const ArgInfo*>& bound, const ArgInfo* all, const LaunchShape& shape,
                            LaunchShape& out, const CallModifiers* mods = nullptr);
/// The components of struct parameter k of `decl` read from a tensor's last dimension (its
/// fields' scalars in declaration order, nested ones depth first), their one scalar type in
/// `*scalar`; 0 (and why in `*why`) for a struct of other fields or of several scalar types.
int struct_tensor_components(const UserModule& module, const lang::FunctionDecl& decl, size_t k,
                             lang::ScalarKind* scalar, std::string* why = nullptr);
/// A tensor argument, or a (values, gradient) pair of tensors' values (a List of two); else nullptr.
const ArgInfo* tensor_or_pair(const ArgInfo* all, const ArgInfo& arg);
/// The argument of each leaf (view_struct_leaves) of struct parameter k from `dict` (its nodes
/// in `all`); TypeError naming the parameter and field for a missing field or a key that is no
/// field.
std::vector<const ArgInfo*> struct_leaf_args(const UserModule& module, const std::string& name,
                                             const lang::FunctionDecl& decl, size_t k, const ArgInfo* all,
                                             const ArgInfo& dict);

}  // namespace sg::call
