// src/ir/lower.h — lowering of the checked AST to IR, with monomorphization.
//
// In: declarations checked by sema. Out: IR functions in a Program. A function is instantiated
// per concrete parameter types: an interface tensor parameter (`IDiffTensor<float,2>`) takes the
// concrete type of the argument (with or without a gradient buffer), so every call's grad mask
// yields its own code. `bwd_diff(f)` / `fwd_diff(f)` calls become calls of derivative stubs
// whose bodies autodiff fills in (see DerivativeRequest).
//
// Control flow is made structured and single-exit here: early `return`, `break` and `continue`
// become flags carried like variables; variables become SSA values merged by If results and
// carried by Loops.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "syntax/ast.h"

namespace sg::ir {

enum class DerivativeKind : uint8_t { Forward, Backward };

/// A derivative function to be generated: `stub` has the derived signature (docs/language.md,
/// "Autodiff") and an empty body until autodiff fills it from `primal`.
struct DerivativeRequest {
    Function* stub;
    Function* primal;
    DerivativeKind kind;
};

class Lowering {
public:
    Lowering(Program& program, lang::Diagnostics& diags);
    ~Lowering();

    /// Lowers `decl` with parameter types `param_types` (one per parameter: the declared type,
    /// or for a tensor parameter a concrete tensor type accepted by the declared one).
    Function* instantiate(lang::FunctionDecl* decl, const std::vector<const Type*>& param_types);
    /// Lowers `decl` with its declared parameter types.
    Function* instantiate(lang::FunctionDecl* decl);

    /// The derivative stub of `primal` (created once per primal and kind).
    Function* derivative(Function* primal, DerivativeKind kind);
    const std::vector<DerivativeRequest>& derivative_requests() const { return requests_; }
    /// The index in Program::shared of groupshared variable `g` (registered on first use).
    int shared_index(const lang::VarDecl* g);
    /// The type of the SharedView of Program::shared[k].
    const Type* program_types_shared(int k) const { return program_.shared.at(size_t(k)).view_type; }

    class FunctionLowering;  ///< per-function state (lower_internal.h)

private:
    Program& program_;
    lang::Diagnostics& diags_;
    std::map<std::pair<lang::FunctionDecl*, std::vector<const Type*>>, Function*> instances_;
    std::map<std::pair<Function*, DerivativeKind>, Function*> derivatives_;
    std::vector<DerivativeRequest> requests_;
    std::map<const lang::VarDecl*, int> shared_;
};

}  // namespace sg::ir
