// src/call/user_module.h — a loaded kernel module: its source, checked once at load time (so
// errors surface at load), and the reflection the binder reads (functions and their types).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lang/analysis.h"
#include "lang/ast.h"
#include "lang/sema.h"
#include "lang/types.h"

namespace sg::call {

class UserModule {
public:
    /// Parses and checks `source`; throws lang::CompileError with every diagnostic on failure.
    UserModule(std::string name, std::string source);

    const std::string& name() const { return name_; }
    const std::string& source() const { return source_; }
    /// Overloads named `fn` (empty when none).
    std::vector<lang::FunctionDecl*> functions(const std::string& fn) const;
    std::vector<std::string> function_names() const;

    /// Every declared function: free functions, methods ("Spring.energy", `this` first) and
    /// generic declarations with their generic parameters (lang/analysis.h).
    std::vector<lang::FunctionInfo> catalog() const { return analysis_->functions(); }
    /// The instantiation of generic function `fn` with `args` (a type, or an integer for a
    /// value parameter, per generic parameter): a concrete, checked FunctionDecl, cached.
    /// Throws lang::CompileError naming the function and the arguments when they do not fit.
    /// The glue calls it by its name with explicit arguments (FunctionDecl::name, "wsq<3>").
    lang::FunctionDecl* instantiate(const std::string& fn, const std::vector<lang::GenericArg>& args);
    /// A type of the module by name ("float3", "Spring"); nullptr when unknown.
    const lang::Type* named_type(const std::string& name) { return analysis_->named_type(name); }
    lang::TypeContext& types() { return types_; }
    const lang::TypeContext& types() const { return types_; }
    /// Warnings of the load (rendered), for users who ask.
    std::string warnings() const { return diags_.render(); }

private:
    std::string name_;
    std::string source_;
    lang::SourceManager sources_;
    lang::AstContext ast_;
    lang::TypeContext types_;
    lang::Diagnostics diags_;
    lang::ModuleAst* module_ = nullptr;
    std::unique_ptr<lang::Analysis> analysis_;  ///< declared after what it refers to: destroyed first
};

}  // namespace sg::call
