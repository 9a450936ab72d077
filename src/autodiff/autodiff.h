// src/autodiff/autodiff.h — forward- and reverse-mode differentiation of IR functions.
//
// In: the derivative requests recorded by lowering (a stub with the derived signature and the
// primal it derives from). Out: the stubs' bodies. Reverse mode recomputes the primal of each
// region before reversing it ("recompute within region"), stores the carried state of every
// loop iteration in a tape bounded by the loop's MaxIters, and sends gradients of tensor loads to
// the tensors' gradient buffers. A tensor without a gradient buffer (not in the grad mask) gets
// no gradient code at all. Calls of a function with a user-supplied derivative
// ([BackwardDerivative] / [ForwardDerivative]) are not inlined: the derivative code calls the
// user's function instead. Derivatives of IDifferentiable structs whose Differential differs
// from the struct are converted at the boundaries (differentials.h).
#pragma once

#include <vector>

#include "ir/ir.h"
#include "ir/lower.h"

namespace sg::autodiff {

/// Fills every requested derivative stub, each after the stubs its primal (or a function the
/// primal calls) calls: a derivative of a function that uses fwd_diff / bwd_diff inlines those
/// stubs' bodies (a higher-order derivative).
void generate_derivatives(ir::Program& program, const std::vector<ir::DerivativeRequest>& requests);

/// Builds the body of a backward stub from its primal (bwd_diff semantics of docs/language.md).
void reverse_mode(ir::Program& program, ir::Function& stub, ir::Function& primal);
/// Builds the body of a forward stub from its primal (fwd_diff semantics of docs/language.md).
void forward_mode(ir::Program& program, ir::Function& stub, ir::Function& primal);

/// Replaces every Detach and KeepDerivative by its (first) operand (after differentiation the
/// markers have done their job).
void strip_detach(ir::Function& fn);

}  // namespace sg::autodiff
