// src/lang/defaults.h — default parameter values: the rules at a declaration and the argument a
// call that leaves a parameter out receives (defaults.cpp says how).
#pragma once

#include <cstddef>
#include <functional>
#include <set>

#include "lang/types.h"
#include "syntax/ast.h"
#include "syntax/diagnostics.h"

namespace sg::lang {

class DefaultArguments {
public:
    /// What the checker provides: checks `e`, a copy of parameter `p`'s default, as a global
    /// constant's initializer of p's type, with `f`'s generic arguments (Sema::check_default_value).
    using CheckValue = std::function<void(FunctionDecl* f, VarDecl* p, Expr* e)>;

    DefaultArguments(AstContext& ast, TypeContext& types, Diagnostics& diags, CheckValue check);

    /// At a signature: defaults trail, belong to `in` parameters, name no parameter or
    /// unqualified member, and check in module scope (reported once, here).
    void check_declaration(FunctionDecl* f);
    /// A checked copy of parameter k's default, the argument of a call that leaves it out
    /// (`report`: keep its diagnostics; the declaration's check reports them once).
    Expr* argument(FunctionDecl* f, size_t k, bool report);
    /// The function whose default is being checked, or nullptr (its instantiations nest in it).
    const FunctionDecl* expanding_for() const { return defaults_of_; }

private:
    static constexpr size_t kMaxDefaultExpansions = 100000;

    AstContext& ast_;
    TypeContext& types_;
    Diagnostics& diags_;
    CheckValue check_;
    std::set<const VarDecl*> expanding_defaults_;  ///< parameters whose default is being checked
    std::set<const VarDecl*> rejected_defaults_;   ///< defaults their declaration's check rejected
    const FunctionDecl* defaults_of_ = nullptr;    ///< whose default is being checked (instance depth)
    size_t default_expansions_ = 0;                ///< copies of defaults made, against the bound
};

}  // namespace sg::lang
