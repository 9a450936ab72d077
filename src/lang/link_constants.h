// src/lang/link_constants.h — values of link-time constants (`extern static const`).
//
// A module may declare `extern static const T NAME;` (optionally `= default`). Its value comes,
// in this order, from the call's overrides (`fn.constants({...})`), from a linked module's
// `export static const T NAME = v;`, or from the default. bind_link_constants writes the value
// into the declaration before sema, as the initializer `T(v...)`, so that sema, lowering and
// codegen see an ordinary `static const`; the values are part of the kernel's key because they
// are part of its source.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "syntax/ast.h"

namespace sg::lang {

/// One scalar of a constant's value.
struct ConstantScalar {
    enum class Kind : uint8_t { Int, Float, Bool } kind = Kind::Int;
    int64_t i = 0;
    double f = 0;
};
/// A constant's value: one scalar, or the components of a vector / elements of an array.
using ConstantValue = std::vector<ConstantScalar>;
using LinkConstants = std::map<std::string, ConstantValue>;

/// Gives every `extern static const` of `modules` its value from `values` (or keeps its
/// default). When `require_values`, an extern left without a value is an error naming it (a
/// kernel cannot be compiled without it); when loading a module it may wait for `.constants`.
void bind_link_constants(const std::vector<ModuleAst*>& modules, const LinkConstants& values, bool require_values,
                         AstContext& ast, Diagnostics& diags);

/// The names of the `extern static const` declarations of `modules`.
std::vector<std::string> extern_constant_names(const std::vector<ModuleAst*>& modules);

/// The `export static const` values of checked `modules`, folded from their initializers
/// (literals and arithmetic on them). An initializer that does not fold is an error at it.
LinkConstants exported_constants(const std::vector<ModuleAst*>& modules, Diagnostics& diags);

/// `N=4`, `V=(1, 2.5)`: for cache keys and messages; the same values give the same text.
std::string render_constants(const LinkConstants& values);

}  // namespace sg::lang
