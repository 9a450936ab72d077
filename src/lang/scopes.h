// src/lang/scopes.h — where Sema finds names: the module scope and the local scopes of a body.
//
// ModuleScope holds every module-level declaration of the modules being checked (later modules
// see earlier ones'), and the instances of generic structs as they are made. Scopes holds the
// body being checked: Sema pushes a scope per block and declares each local as its statement is
// checked; lookups walk from the innermost scope out, and a name found in none of them is looked
// up in the module scope.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "syntax/ast.h"

namespace sg::lang {

struct ModuleScope {
    std::map<std::string, StructDecl*> structs;  ///< concrete structs, instances of generic ones included
    std::map<std::string, StructDecl*> generic_structs;
    std::map<std::string, StructDecl*> interfaces;  ///< instances of generic ones included ("IGet<float>")
    std::map<std::string, StructDecl*> generic_interfaces;  ///< `interface IGet<T>`
    std::map<std::string, std::vector<FunctionDecl*>> functions;  ///< concrete overloads by name
    std::map<std::string, std::vector<FunctionDecl*>> generic_functions;
    std::map<std::string, VarDecl*> globals;
    std::map<std::string, TypeAliasDecl*> aliases;  ///< top-level typealias/typedef
    std::map<std::string, EnumDecl*> enums;
};

class Scopes {
public:
    void push();
    void pop();
    /// Leaves no scope open (the start of a function body).
    void clear();

    /// Declares `v` in the innermost scope; false (and nothing declared) when that scope already
    /// has a variable of its name.
    bool declare(VarDecl* v);
    /// The innermost variable named `name`, or nullptr.
    VarDecl* lookup(const std::string& name) const;

    /// Declares a local `typealias`/`typedef` in the innermost scope; false when that scope
    /// already has an alias of its name.
    bool declare_alias(TypeAliasDecl* a);
    bool innermost_has_alias(const std::string& name) const;
    /// The innermost local alias named `name`, or nullptr.
    TypeAliasDecl* lookup_alias(const std::string& name) const;

private:
    struct Scope {
        std::map<std::string, VarDecl*> vars;
        std::map<std::string, TypeAliasDecl*> aliases;
    };
    std::vector<Scope> scopes_;
};

}  // namespace sg::lang
