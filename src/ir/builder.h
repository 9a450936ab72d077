// src/ir/builder.h — the only way to create IR instructions: factories that check invariants.
//
// A Builder appends instructions at the end of its insertion block. Each factory asserts its
// operand types (a violation is an internal compiler error, never a user error: sema has already
// rejected ill-typed programs) and computes the result type.
#pragma once

#include <vector>

#include "ir/ir.h"
#include "lang/coop.h"
#include "lang/wave.h"

namespace sg::ir {

class Builder {
public:
    Builder(Function& fn, lang::TypeContext& types) : fn_(fn), types_(types) {}

    Function& function() { return fn_; }
    lang::TypeContext& types() { return types_; }
    void set_insert(Block* block) { block_ = block; }
    Block* insert_block() const { return block_; }
    /// Location given to the instructions created from now on.
    void set_loc(SourceLoc loc) { loc_ = loc; }
    SourceLoc loc() const { return loc_; }

    // ---- constants
    Value* const_int(const Type* type, int64_t value);
    Value* const_float(const Type* type, double value);
    Value* const_bool(bool value);
    /// A constant of any scalar/vector/matrix type with every component `value`.
    Value* const_splat(const Type* type, double value);
    Value* zero(const Type* type);  ///< zero of any differentiable/numeric type (structs, arrays too)
    Value* undef(const Type* type);

    // ---- arithmetic
    /// Add..Shr, comparisons, LogicAnd/Or: operands must have equal types.
    Value* binary(OpKind op, Value* a, Value* b);
    /// Neg, BitNot, LogicNot.
    Value* unary(OpKind op, Value* a);
    Value* select(Value* cond, Value* a, Value* b);
    /// x with a zero derivative (`detach(x)`, `no_diff` expressions and calls).
    Value* detach(Value* x);
    /// x with the derivative of `from` (same type): an inout argument after a non-differentiable call.
    Value* keep_derivative(Value* x, Value* from);
    Value* convert(Value* x, const Type* to);  ///< no-op when already of type `to`
    Value* splat(Value* scalar, const Type* to);

    // ---- composites
    Value* construct(const Type* type, const std::vector<Value*>& members);
    Value* extract(Value* composite, int index);
    Value* insert(Value* composite, int index, Value* value);
    Value* extract_dyn(Value* composite, Value* index);
    Value* insert_dyn(Value* composite, Value* index, Value* value);
    Value* swizzle(Value* vec, const std::vector<int>& components);

    // ---- intrinsics and calls
    Value* intrinsic(lang::IntrinsicId id, const Type* result, const std::vector<Value*>& args);
    /// `in_primal_body`: the call is written in a function that is not differentiable (Call's imm_int).
    std::vector<Value*> call(Function* callee, const std::vector<Value*>& args, bool in_primal_body = false);

    // ---- tensors
    Value* tensor_load(Value* t, const std::vector<Value*>& index);
    void tensor_store(Value* t, const std::vector<Value*>& index, Value* value);
    void tensor_atomic_add(Value* t, const std::vector<Value*>& index, Value* value);
    void tensor_grad_add(Value* t, const std::vector<Value*>& index, Value* value);
    Value* tensor_grad_load(Value* t, const std::vector<Value*>& index);
    void tensor_grad_store(Value* t, const std::vector<Value*>& index, Value* value);
    Value* tensor_shape(Value* t, int dim);
    /// The view of `t` at its leading indices `index` (fewer than its rank): same kind, rank
    /// reduced, gradient view sliced alike. `type` is that tensor type.
    Value* tensor_slice(Value* t, const std::vector<Value*>& index, const Type* type);
    /// This thread's call index in dimension `dim`, as int (or int64_t for 64-bit calls).
    Value* call_index(int dim, const Type* type = nullptr);
    // ---- cooperative kernels
    Value* coop_id(lang::CoopId id);
    /// A call element's call-group id in dimension `dim` (null for CoopId::CallRank): an int.
    Value* call_shape_id(lang::CoopId id, Value* dim);
    void barrier(bool sync, bool device);
    Value* shared_view(int index, const Type* view_type);
    /// (t, index..., [compare,] value): the element's previous value.
    /// `path`: a field or component of the element, then of that, ... (imm_list): the scalar
    /// the atomic works on (a groupshared struct's field, a vector's component).
    Value* tensor_atomic(lang::AtomicOp op, Value* t, const std::vector<Value*>& index, Value* compare, Value* value,
                         const std::vector<int>& path = {});
    /// op 0: size(dim), 1: stride(dim), 2: dims() (dim nullptr).
    Value* view_query(int op, Value* view, Value* dim);
    /// `.primal` (0) or `.diff` (1) of a DiffTensorView: a TensorView of `type`.
    Value* view_part(Value* view, int which, const Type* type);
    /// A wave intrinsic over `operands` (lang/wave.h) with result type `result`.
    Value* wave(lang::WaveOp op, const std::vector<Value*>& operands, const Type* result);

    // ---- local storage (tapes)
    Value* local_alloc(const Type* element, int64_t count);
    Value* local_load(Value* handle, Value* index);
    void local_store(Value* handle, Value* index, Value* value);

    // ---- control flow
    /// Creates an If with empty then/else regions; fill them with set_insert + yield.
    Inst* if_(Value* cond, const std::vector<const Type*>& result_types);
    /// Creates a Loop carrying `init`; the body's params are the carried values. The body must
    /// end with yield({continue_flag, next...}).
    Inst* loop(const std::vector<Value*>& init, int64_t max_iters);
    void yield(const std::vector<Value*>& values);
    void ret(const std::vector<Value*>& values);
    void trap(int64_t code);
    /// A trap that reports (index, extent) with its code (integer scalars): a loop past its
    /// [MaxIters] bound reports its iteration count and the bound.
    void trap(int64_t code, Value* index, Value* extent);

private:
    /// Appends a made instruction; checks nothing beyond structure.
    Inst* append(std::unique_ptr<Inst> inst);
    Inst* make(OpKind op, std::vector<Value*> operands, std::vector<const Type*> result_types);
    void check_tensor_index(Value* t, const std::vector<Value*>& index, const char* what);

    Function& fn_;
    lang::TypeContext& types_;
    Block* block_ = nullptr;
    SourceLoc loc_;
};

}  // namespace sg::ir
