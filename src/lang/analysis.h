// src/lang/analysis.h — a checked module that can still be asked about its functions and can
// instantiate its generics: the lang service the call layer uses (docs/design.md). The call layer lists the candidate functions of a module with their
// generic parameters, infers arguments from the call's ArgInfo, and asks for the
// instantiation, which comes back as a concrete, checked FunctionDecl (or as diagnostics).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lang/sema.h"

namespace sg::lang {

class Sema;

/// One generic parameter as the call layer sees it.
struct GenericParamInfo {
    std::string name;
    bool is_value = false;   ///< `let N : int`: an integer argument; else a type
    std::string constraint;  ///< a type parameter's interface ("IFloat", "IActivation"); "" none
};

/// One function of a module: a free function, a method (`this` is params[0] unless static) or
/// a generic declaration (whose `decl` is never lowered: instantiate it first).
struct FunctionInfo {
    std::string name;                 ///< "wsq", "Spring.energy"
    FunctionDecl* decl = nullptr;
    const StructDecl* owner = nullptr;  ///< the struct of a method
    bool is_generic = false;
    std::vector<GenericParamInfo> generic_params;
};

class Analysis {
public:
    Analysis(AstContext& ast, TypeContext& types, Diagnostics& diags, bool allow_internal = false);
    ~Analysis();
    Analysis(const Analysis&) = delete;
    Analysis& operator=(const Analysis&) = delete;

    /// Checks `modules` (as analyze() does). Errors go to the Diagnostics given at construction.
    const SemaResult& run(const std::vector<ModuleAst*>& modules);
    const SemaResult& result() const;

    /// Every declared function in source order: free functions, methods and generic
    /// declarations (not the instantiations made while checking bodies).
    std::vector<FunctionInfo> functions() const;

    /// The instantiation of the generic function `name` with `args` (one per generic parameter:
    /// a type, or an integer for a value parameter), checked; the same declaration for the same
    /// arguments. On failure returns nullptr and moves the diagnostics that say why into `why`
    /// (the module's own diagnostics are left as they were).
    FunctionDecl* instantiate(const std::string& name, const std::vector<GenericArg>& args,
                              std::vector<Diagnostic>& why);

    /// The instantiation of the generic declaration `generic` (one of functions()' generic
    /// entries) with `args`, as above: for callers that chose among overloads themselves.
    FunctionDecl* instantiate(FunctionDecl* generic, const std::vector<GenericArg>& args,
                              std::vector<Diagnostic>& why);

    /// A type by name in the module's scope ("float3", "Spring", "Poly<3>" once instantiated);
    /// nullptr when unknown.
    const Type* named_type(const std::string& name);

private:
    FunctionDecl* instantiate_with(const std::function<FunctionDecl*()>& make, std::vector<Diagnostic>& why);

    std::unique_ptr<Sema> sema_;
    Diagnostics& diags_;
};

}  // namespace sg::lang
