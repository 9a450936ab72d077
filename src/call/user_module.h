// src/call/user_module.h — a loaded kernel module: its source, checked once at load time (so
// errors surface at load), and the reflection the binder reads (functions and their types).
#pragma once

#include <memory>
#include <string>
#include <vector>

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
    /// The struct named `name` (nullptr when none).
    const lang::StructDecl* find_struct(const std::string& name) const;
    std::vector<std::string> struct_names() const;
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
    lang::SemaResult sema_;
};

}  // namespace sg::call
