// src/autodiff/differentials.h — conversions between a value's Differential type and the form
// autodiff computes derivatives in.
//
// Inside a derivative function, tangents and adjoints of a value of type T are carried in T
// itself (so that Extract/Insert/Construct on the primal have the same shape on the derivative;
// fields that take no derivative hold zeros). T.Differential differs from T only for an
// IDifferentiable struct with no_diff or non-differentiable fields: its Differential keeps just
// the differentiable fields. At the boundaries — the `.d` of a DifferentialPair parameter or
// result, a dResult, an out parameter's gradient, the arguments and results of a user-supplied
// derivative — values are converted with these two functions.
#pragma once

#include "ir/builder.h"

namespace sg::autodiff {

/// `derivative` (of type `primal`, the internal form) as a value of primal's Differential type.
ir::Value* to_differential(ir::Builder& b, ir::Value* derivative, const ir::Type* primal);
/// `d` (of primal's Differential type) in the internal form, of type `primal` (zeros in the
/// fields the Differential lacks).
ir::Value* from_differential(ir::Builder& b, ir::Value* d, const ir::Type* primal);

}  // namespace sg::autodiff
