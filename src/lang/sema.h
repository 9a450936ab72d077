// src/lang/sema.h — semantic analysis: name resolution, types, overloads, language rules.
//
// In: one or more parsed modules (the user module, and for a call the generated glue module,
// which sees the user module's declarations). Out: the same ASTs with every annotation field
// filled (types, resolved declarations and builtins), or diagnostics. Implicit conversions are
// not materialized in the tree: lowering converts each operand to the type the checked rule
// chose, using the helpers below so that both agree.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "syntax/ast.h"
#include "lang/intrinsics.h"
#include "lang/types.h"

namespace sg::lang {

/// Loops may nest this deep in a function that is differentiated (deeper: an error, since the
/// reverse-mode derivative grows with the cube of the depth).
inline constexpr int kMaxDifferentiatedLoopDepth = 16;

/// Built-in functions that are not math intrinsics.
enum class BuiltinKind : uint8_t {
    Intrinsic,      ///< intrinsic: see IntrinsicId
    BwdDiff,        ///< `bwd_diff(f)(...)`
    FwdDiff,        ///< `fwd_diff(f)(...)`
    DiffPair,       ///< `diffPair(p)` / `diffPair(p, d)`
    Detach,         ///< `detach(x)`
    PairGetPrimal,  ///< `.getPrimal()`
    PairGetDiff,    ///< `.getDifferential()`
    TensorLoad,     ///< `t.load(...)`, `t.load_once(...)`, `t.load_uniform(...)`
    TensorStore,    ///< `t.store(..., v)`
    TensorAdd,      ///< `t.add(..., v)` on AtomicTensor
    TensorSample,   ///< `t.sample(float2 uv)` on a 2-D tensor of floats: SlangPy's bilinear read
    CallIndex,      ///< `__sg_call_index(d)` (glue only)
    TensorSlice,    ///< `__sg_slice(t, i0, ...)`: t's view at leading indices (glue only)
    BufferDimensions,  ///< `buf.GetDimensions(out count, out stride)`
    // cooperative kernels (lang/coop.h names them; `name` says which)
    CoopId,         ///< `cudaThreadIdx()` ...: a uint3
    Barrier,        ///< `GroupMemoryBarrierWithGroupSync()` ...
    Interlocked,    ///< `InterlockedAdd(dest, value[, out original])` ...
    ViewSize,       ///< `view.size(d)`
    ViewStride,     ///< `view.stride(d)`
    ViewDims,       ///< `view.dims()`
    Wave,           ///< `WaveActiveSum(x)` ... (lang/wave.h)
    Unused,         ///< `unused(x)`: says x is deliberately unused; evaluates x, returns nothing
    DZero,          ///< `X.dzero()`: the zero of X.Differential (the call's type)
    DAdd,           ///< `X.dadd(a, b)`: a + b in X.Differential (the call's type)
};

struct Builtin {
    BuiltinKind kind;
    IntrinsicId intrinsic = IntrinsicId::Count;
    const char* name;
};

/// How a tensor subscript's index operands are interpreted.
enum class TensorIndexForm : uint8_t {
    Scalars,  ///< t[i, j]: one integer per dimension
    Array,    ///< t[idx] with idx an integer array: dimension order
    Vector,   ///< t[int2(x, y)]: reversed, .x indexes the last dimension
};

struct SemaResult {
    /// Every concrete function in source order (free functions and methods, whose `this` is
    /// params[0]), then the instantiations of generics in the order they were made.
    std::vector<FunctionDecl*> functions;
    std::vector<StructDecl*> structs;            ///< concrete structs, instantiations included
    std::vector<VarDecl*> globals;
    std::vector<FunctionDecl*> generic_functions;  ///< generic declarations (never checked as such)
    std::vector<StructDecl*> generic_structs;
    std::vector<StructDecl*> interfaces;
};

/// Checks `modules` (later modules see earlier ones' declarations). Errors go to `diags`.
/// `allow_internal` enables glue-only names (`__sg_call_index`).
SemaResult analyze(const std::vector<ModuleAst*>& modules, AstContext& ast, TypeContext& types, Diagnostics& diags,
                   bool allow_internal = false);

// ---- shared rules (used by lowering to apply the conversions sema checked)

/// The type both operands of a binary arithmetic/comparison operator are converted to.
const Type* binary_operand_type(TypeContext& types, Op op, const Type* a, const Type* b);
/// Whether `from` converts implicitly to `to` (exact, numeric conversion, scalar splat).
bool implicitly_convertible(const Type* from, const Type* to);
/// Whether slangc warns (30081) about an implicit conversion between these scalar kinds.
bool conversion_not_recommended(ScalarKind from, ScalarKind to);
/// The operand type an intrinsic call computes in, given the checked argument types.
const Type* intrinsic_operand_type(TypeContext& types, IntrinsicId id, const std::vector<const Type*>& args);
/// Index form of a tensor subscript / load / store.
TensorIndexForm tensor_index_form(const std::vector<const Type*>& index_types);

/// Resolves the type of `bwd_diff(f)` / `fwd_diff(f)` parameters: the derived signature as
/// (type, direction) per parameter of the derived function (docs/language.md, "Autodiff").
struct DerivedParam {
    const Type* type;
    ParamDir dir;
    int source_param;  ///< index of the parameter of f it comes from, or -1 for dResult
};
std::vector<DerivedParam> backward_signature(TypeContext& types, const FunctionDecl& f);
std::vector<DerivedParam> forward_signature(TypeContext& types, const FunctionDecl& f);
/// Whether parameter `p` of `f` takes part in differentiation.
bool param_is_differentiable(const TypeContext& types, const VarDecl& p);
/// Whether checked `f` has a forward derivative and no backward one: [ForwardDifferentiable]
/// (Slang's forward-only differentiable function) or only a [ForwardDerivative]. bwd_diff of it
/// is Slang's 30027; to a body differentiated both ways it is non-differentiable (41022).
bool differentiates_forward_only(const FunctionDecl& f);
/// A matrix resizing conversion (`float2x2(m3)`, `(float2x3)m4`): `to` keeps the top-left
/// rows and columns of `from`, which has at least as many of each (sema_matrix_resize.cpp).
bool matrix_resizes(const Type* from, const Type* to);
/// A `static` global that is not const: thread-private state (sema_globals.cpp).
bool is_static_variable(const VarDecl* v);
/// A global buffer or tensor (`RWStructuredBuffer<float> g_buf;`): a parameter of the module
/// that the caller binds (sema_globals.cpp).
bool is_global_resource(const VarDecl* v);
/// A uniform global (`float g_scale;`, `uniform float3 g_color;`): a parameter of the module
/// of a value type, one value per call, read-only (sema_uniform_globals.cpp).
bool is_uniform_global(const VarDecl* v);
/// A global buffer or a uniform global: what the caller binds (from Python: fn.set(...)).
bool is_module_parameter(const VarDecl* v);
/// Any of these: functions that use it take it as a hidden parameter (FunctionDecl::static_globals).
bool uses_global_storage(const VarDecl* v);

/// A call with `nargs` arguments fits `f`: at most one per parameter, and every parameter left
/// out has a default value.
bool accepts_argument_count(const FunctionDecl& f, size_t nargs);
/// How many leading parameters have no default value.
size_t required_arguments(const FunctionDecl& f);
/// "2 arguments", "1 to 3 arguments": what a call of f takes (`self`: 1 to leave `this` out).
std::string argument_count_text(const FunctionDecl& f, size_t self = 0);

}  // namespace sg::lang
