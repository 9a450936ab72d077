// src/ir/ir.h — the IR: SSA values in structured regions, one op list (ir_ops.def).
//
// A Function has a body Block whose params are the function parameters and which ends with a
// Return. Control flow is structured: If and Loop instructions own regions (Blocks) that end
// with a Yield. Every value is defined once (SSA); a value defined in a block is visible in that
// block after its definition and in every region nested there. Mutable state exists only in
// tensors and in LocalAlloc slots (autodiff tapes).
//
// Instructions are created only through the Builder (builder.h), whose factories check operand
// types. Passes are free functions, one per file (see passes.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "syntax/diagnostics.h"
#include "lang/intrinsics.h"
#include "lang/types.h"

namespace sg::ir {

using lang::SourceLoc;
using lang::Type;

enum class OpKind : uint16_t {
#define SG_IR_OP(Name, text, results, regions) Name,
#include "ir/ir_ops.def"
#undef SG_IR_OP
    Count
};

const char* op_name(OpKind op);
/// Whether the op writes memory or ends control flow (never removed, never reordered).
bool has_side_effects(OpKind op);

struct Inst;
/// Trap codes the compiler itself emits (Inst::imm_int of a Trap); the same numbers as
/// codegen::FaultKind, which static_asserts that they agree.
inline constexpr int64_t kTrapLoopPastMaxIters = 2;

struct Block;
struct Function;

/// An SSA value: an instruction result or a block parameter.
struct Value {
    const Type* type = nullptr;
    uint32_t id = 0;          ///< unique within the function (printer and codegen names)
    Inst* def = nullptr;      ///< defining instruction, or nullptr for a block parameter
    Block* block = nullptr;   ///< for block parameters: the block
    std::string hint;         ///< source name, for readable output
};

struct Inst {
    OpKind op;
    SourceLoc loc;
    std::vector<Value*> operands;
    std::vector<Value*> results;
    std::vector<std::unique_ptr<Block>> regions;
    int64_t imm_int = 0;
    double imm_float = 0;
    std::vector<int> imm_list;       ///< Swizzle component indices
    Function* callee = nullptr;      ///< Call
    Block* parent = nullptr;
    /// A call of a function that is not differentiable from one that is (lower_call.cpp), and what
    /// inlining it leaves (inline_calls.cpp): as in Slang no derivative flows through it, so
    /// reverse mode neither differentiates nor tapes it (its DiffTensorView reads add nothing to
    /// gradients; its loops need no MaxIters).
    bool primal_only = false;

    Value* result() const { return results.empty() ? nullptr : results[0]; }
    lang::IntrinsicId intrinsic() const { return lang::IntrinsicId(imm_int); }
};

struct Block {
    std::vector<Value*> params;
    std::vector<std::unique_ptr<Inst>> insts;
    Inst* parent = nullptr;  ///< owning If/Loop, or nullptr for a function body

    Inst* terminator() const { return insts.empty() ? nullptr : insts.back().get(); }
};

/// How a function parameter is passed.
enum class ParamDir : uint8_t { In, Out, InOut };

struct Param {
    std::string name;
    const Type* type;
    ParamDir dir = ParamDir::In;
    bool no_diff = false;
};

/// A function. Results are, in order: the return value (unless void), then the final value of
/// every `out`/`inout` parameter in parameter order. Its body's params are the values of the
/// `in`/`inout` parameters on entry (an `out` parameter has no entry value).
struct Function {
    std::string name;
    SourceLoc loc;
    std::vector<Param> params;
    const Type* return_type = nullptr;   ///< the source-level return type (void allowed)
    std::vector<const Type*> result_types;
    bool differentiable = false;
    bool forward_only = false;           ///< [ForwardDifferentiable]: no backward derivative
    bool return_no_diff = false;
    bool is_kernel = false;              ///< a kernel entry (glue): params form the parameter block
    /// A [CUDAKernel] function lowered as a kernel: it runs once per thread of an explicit
    /// launch (CallHeader: block and grid shape), its threads share groupshared memory and meet
    /// at barriers. is_kernel is set too.
    bool cooperative = false;
    Function* custom_backward = nullptr; ///< [BackwardDerivative]: reverse mode calls it
    Function* custom_forward = nullptr;  ///< [ForwardDerivative]: forward mode calls it
    /// The `static` globals the function uses (its callees' included), passed as hidden no_diff
    /// inout parameters params[hidden_first ...] (lowering; a derivative keeps its primal's, as
    /// in parameters in a backward one). A kernel has none: it starts them from their
    /// initializers.
    std::vector<const void*> hidden_globals;  ///< the lang::VarDecl of each, in order
    size_t hidden_first = 0;
    /// Calls of a function with a custom derivative stay calls (never inlined): autodiff replaces
    /// them by calls of the user's derivative, and the kernel calls the primal as a function.
    bool has_custom_derivative() const { return custom_backward || custom_forward; }
    std::unique_ptr<Block> body;
    uint32_t next_value_id = 0;
    std::vector<std::unique_ptr<Value>> values;  ///< owns every value of the function

    Value* new_value(const Type* type, std::string hint = {});
    /// Index into body->params for a parameter that has an entry value; -1 for `out`.
    int entry_param_index(size_t param) const;
};

/// A `groupshared` variable: one copy per block of a cooperative kernel. Its storage is a shared
/// tensor (SharedView) with one index per array dimension of the declared type.
struct SharedVar {
    std::string name;
    const Type* element = nullptr;    ///< the declared type without its array dimensions
    std::vector<int64_t> dims;        ///< the array dimensions, outermost first (empty: a scalar)
    const Type* view_type = nullptr;  ///< the shared tensor type of its SharedView
};

/// A compiled program: functions plus the type context they use.
struct Program {
    lang::TypeContext* types = nullptr;
    std::vector<SharedVar> shared;  ///< groupshared variables the functions use (SharedView imm_int)
    std::vector<std::unique_ptr<Function>> functions;

    /// The first function named `name`, or nullptr. Constant time: lowering asks once per
    /// instance for a fresh name, so a linear scan made large modules quadratic. Functions are
    /// only appended (add), and a function's name does not change once it is in `functions`.
    Function* find(const std::string& name) const;
    Function* add(std::unique_ptr<Function> fn);

private:
    /// Name index over functions[0, indexed_); find() indexes functions appended since.
    mutable std::unordered_map<std::string, Function*> by_name_;
    mutable size_t indexed_ = 0;
};

/// How clone_inst maps values. `operand` gives the value that stands, where the copy goes, for
/// an operand of the source (whether an unmapped value is an error or stays as it is, because it
/// is visible there too, is the caller's choice); `define` is told each value the copy defines (a
/// result, a parameter of a copied region) together with the source value it copies.
struct CloneMap {
    std::function<Value*(Value* src)> operand;
    std::function<void(const Value* src, Value* copy)> define;
};

/// Appends to `dst` (which must not end with a terminator) a copy of `src`: its op, location,
/// immediates and callee, its operands mapped through `map`, fresh results and, recursively, its
/// regions, all new values created in `dst_fn`; returns the copy. The one instruction cloner:
/// inlining uses it through clone_block_into, autodiff to recompute primal instructions.
Inst* clone_inst(Function& dst_fn, Block& dst, const Inst& src, const CloneMap& map);

/// Deep-copies `src` into `dst` at its end, mapping src's params to `args` (values defined
/// outside `src` stay as they are); returns the values `src`'s terminator (Return or Yield)
/// produced, mapped. Used by inlining.
std::vector<Value*> clone_block_into(Function& dst_fn, Block& dst, const Block& src,
                                     const std::vector<Value*>& args);

}  // namespace sg::ir
