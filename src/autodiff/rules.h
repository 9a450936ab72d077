// src/autodiff/rules.h — derivative rules of the math intrinsics (rules.cpp), with the exact
// conventions of docs/language.md (ties of min/max, clamp boundaries, sqrt/rcp guards, pow near 0).
#pragma once

#include <vector>

#include "ir/builder.h"

namespace sg::autodiff {

/// Small arithmetic helpers over the builder that splat scalars where the other side is a
/// vector and build constants of the right type.
class Arith {
public:
    explicit Arith(ir::Builder& b) : b_(b) {}
    ir::Builder& builder() { return b_; }
    ir::Value* cst(const ir::Type* t, double v) { return b_.const_splat(t, v); }
    ir::Value* add(ir::Value* a, ir::Value* b);
    ir::Value* sub(ir::Value* a, ir::Value* b);
    ir::Value* mul(ir::Value* a, ir::Value* b);
    ir::Value* div(ir::Value* a, ir::Value* b);
    ir::Value* neg(ir::Value* a) { return b_.unary(ir::OpKind::Neg, a); }
    ir::Value* cmp(ir::OpKind op, ir::Value* a, ir::Value* b);
    ir::Value* select(ir::Value* c, ir::Value* a, ir::Value* b) { return b_.select(c, a, b); }
    ir::Value* call(lang::IntrinsicId id, const std::vector<ir::Value*>& args);
    ir::Value* sum(ir::Value* v);  ///< sum of the components of a vector (identity on scalars)
    /// sqrt(max(x, eps)) of the derivative rules (eps > 0), bitwise the same, spelled
    /// x >= eps ? sqrt(x) : sqrt(eps) for float and double scalars and vectors: the sqrt(x) is
    /// then the primal's own (common-subexpression elimination merges them) and sqrt(eps) a
    /// constant. A NaN x takes sqrt(eps) either way (max ignores a NaN operand).
    ir::Value* clamped_sqrt(ir::Value* x, double eps);
    /// Accumulates two adjoints of any differentiable type (structs and arrays memberwise).
    ir::Value* accumulate(ir::Value* a, ir::Value* b);

private:
    std::pair<ir::Value*, ir::Value*> unify(ir::Value* a, ir::Value* b);
    ir::Builder& b_;
};

/// Reverse rule: given the primal arguments, the primal result and the result's adjoint,
/// returns one adjoint per argument (nullptr where the argument gets none).
std::vector<ir::Value*> intrinsic_adjoints(Arith& a, lang::IntrinsicId id, const std::vector<ir::Value*>& args,
                                           ir::Value* result, ir::Value* d_result);

/// Forward rule: given primal arguments, tangents (nullptr = zero) and the primal result,
/// returns the result's tangent.
ir::Value* intrinsic_tangent(Arith& a, lang::IntrinsicId id, const std::vector<ir::Value*>& args,
                             const std::vector<ir::Value*>& tangents, ir::Value* result);

}  // namespace sg::autodiff
