// src/lang/overloads.h — overload resolution: which of a call's candidate functions its checked
// arguments mean, by the cost of the conversions each candidate needs.
//
// Sema finds the candidates (the overloads of a name, the instances of its generics, a struct's
// methods) and checks the arguments; this file ranks them and reports nothing. Sema reports what
// the choice means (no overload, ambiguity, the argument that does not fit).
#pragma once

#include <vector>

#include "lang/types.h"
#include "syntax/ast.h"

namespace sg::lang {

/// The cost of passing a `from` value where `to` is declared: 0 exact, 1 a numeric conversion,
/// 2 a scalar splat into a vector or matrix; -1 when it does not convert implicitly.
int conversion_cost(const Type* from, const Type* to);

/// Whether a tensor of type `arg` may be passed where tensor type `param` is declared (interfaces
/// accept every concrete kind of their family with at least their access). In call glue
/// (`glue`), a concrete differentiable kind also takes its primal-only twin: a DiffTensor argument
/// whose tensor needs no gradient is bound without one (docs/language.md, "Tensor built-ins").
bool tensor_accepts(const Type* param, const Type* arg, bool glue);

struct OverloadChoice {
    FunctionDecl* best = nullptr;  ///< nullptr: no candidate accepts the arguments
    bool ambiguous = false;        ///< another candidate fits as well as `best`
};

/// The candidate a call with checked arguments `args` means: each accepts the argument count
/// (defaults fill the rest), every argument converts (out/inout ones exactly), and the total
/// conversion cost is least; at equal cost a concrete function goes before a generic's instance.
/// An initializer-list argument fits any parameter (its check follows the choice).
OverloadChoice choose_overload(const std::vector<FunctionDecl*>& candidates, const std::vector<Expr*>& args, bool glue);

}  // namespace sg::lang
