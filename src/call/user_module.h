// src/call/user_module.h — a loaded kernel module: its source, the modules it imports and the
// values of its link-time constants, checked once at load time (so errors surface at load), and
// the reflection the binder reads (functions and their types).
#pragma once

#include <map>

#include <memory>
#include <string>
#include <vector>

#include "lang/analysis.h"
#include "lang/tier3_functions.h"
#include "syntax/ast.h"
#include "lang/link_constants.h"
#include "lang/sema.h"
#include "syntax/source_loader.h"
#include "lang/types.h"

namespace sg::call {

/// Where a module's files come from and what its `extern static const`s are bound to.
struct ModuleSetup {
    std::string path;                           ///< the root file's path ("": a source string)
    std::vector<std::string> include_paths;     ///< searched after the importing file's folder
    /// `export static const` values of the modules given with link=[...], in order (a later
    /// module's value wins).
    std::vector<lang::LinkConstants> linked;
    lang::LinkConstants overrides;              ///< `fn.constants({...})`: win over everything
    /// Macros defined before the source is read (slangtorch's `defines={...}`): NAME, VALUE.
    std::vector<std::pair<std::string, std::string>> defines;
    /// The loader (and its file cache) to share; nullptr makes one from include_paths.
    std::shared_ptr<lang::SourceLoader> loader;
};

class UserModule {
public:
    /// Loads (preprocesses, resolves imports), parses and checks `source`; throws
    /// lang::CompileError with every diagnostic on failure.
    UserModule(std::string name, std::string source, ModuleSetup setup = {});

    const std::string& name() const { return name_; }
    const std::string& source() const { return source_; }
    const ModuleSetup& setup() const { return setup_; }
    /// Overloads named `fn` (empty when none).
    std::vector<lang::FunctionDecl*> functions(const std::string& fn) const;
    /// Generic declarations named `fn` (instantiate them before binding; empty when none).
    std::vector<lang::FunctionDecl*> generic_functions(const std::string& fn) const;
    /// The names of the functions callable from Python: free functions and generics.
    std::vector<std::string> function_names() const;
    /// The struct named `name` (nullptr when none).
    const lang::StructDecl* find_struct(const std::string& name) const;
    std::vector<std::string> struct_names() const;
    /// Its global buffers and uniform globals (what fn.set(name=...) binds), in source order.
    std::vector<const lang::VarDecl*> module_parameters() const;
    /// Why function `name` was set aside at load (textures, samplers), or nullptr.
    const lang::SetAsideFunction* set_aside(const std::string& name) const {
        auto it = set_aside_.find(name);
        return it == set_aside_.end() ? nullptr : &it->second;
    }


    /// Every declared function: free functions, methods ("Spring.energy", `this` first) and
    /// generic declarations with their generic parameters (lang/analysis.h).
    std::vector<lang::FunctionInfo> catalog() const { return analysis_->functions(); }
    /// The instantiation of generic function `fn` with `args` (a type, or an integer for a
    /// value parameter, per generic parameter): a concrete, checked FunctionDecl, cached.
    /// Throws lang::CompileError naming the function and the arguments when they do not fit.
    /// The glue calls it by its name with explicit arguments (FunctionDecl::name, "wsq<3>").
    /// Instantiations only add to the module (cached), so a const module can make them.
    lang::FunctionDecl* instantiate(const std::string& fn, const std::vector<lang::GenericArg>& args) const;
    /// The same for one generic declaration of generic_functions().
    lang::FunctionDecl* instantiate(lang::FunctionDecl* generic, const std::vector<lang::GenericArg>& args) const;
    /// A type of the module by name ("float3", "Spring"); nullptr when unknown.
    const lang::Type* named_type(const std::string& name) const { return analysis_->named_type(name); }
    lang::TypeContext& types() { return types_; }
    const lang::TypeContext& types() const { return types_; }
    /// Warnings of the load (rendered), for users who ask.
    std::string warnings() const { return diags_.render(); }

    /// The module's `export static const` values (what link=[this] gives another module).
    const lang::LinkConstants& exports() const { return exports_; }
    /// The values its externs are bound to (linked exports, then overrides), in a fixed order.
    const lang::LinkConstants& constants() const { return constants_; }
    /// The same module with `overrides` added to its constants; a name that is not one of its
    /// externs is a ValueError (CallError).
    std::shared_ptr<UserModule> with_constants(const lang::LinkConstants& overrides) const;
    /// What every kernel of this module depends on besides the call and the module object: the
    /// values its externs are bound to ("N=4, GAIN=0.5"; "" without externs). Part of each call
    /// key (two `.constants()` functions never share a plan, even through a shared cache).
    const std::string& link_key() const { return link_key_; }
    /// A content hash of everything this module's generated code depends on besides the call:
    /// its name, every file the load read (the root, imports and includes, the defines) and the
    /// values its externs are bound to. The kernel index keys on it (kernel_index.h).
    const std::string& content_key() const { return content_key_; }

    /// Loads the module's files into a fresh compilation (kernel compiles re-check the module
    /// beside their glue). The files are the ones the load read, never read again. With
    /// `require_values`, an extern without a value is an error.
    std::vector<lang::ModuleAst*> parse_into(lang::SourceManager& sources, lang::AstContext& ast,
                                             lang::Diagnostics& diags, bool require_values,
                                             std::map<std::string, lang::SetAsideFunction>* set_aside = nullptr) const;

private:
    std::string name_;
    std::string source_;
    ModuleSetup setup_;
    std::shared_ptr<lang::SourceLoader> loader_;
    lang::SourceManager sources_;
    lang::AstContext ast_;
    lang::TypeContext types_;
    lang::Diagnostics diags_;
    std::vector<lang::ModuleAst*> modules_;
    std::vector<std::string> extern_names_;
    lang::LinkConstants exports_;
    lang::LinkConstants constants_;
    std::string link_key_;
    std::string content_key_;
    std::unique_ptr<lang::Analysis> analysis_;  ///< declared after what it refers to: destroyed first
    /// Functions with texture or sampler types, set aside at load (lang/tier3_functions.h).
    std::map<std::string, lang::SetAsideFunction> set_aside_;
};

}  // namespace sg::call
