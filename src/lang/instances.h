// src/lang/instances.h — the instances of generic declarations that Sema has made.
//
// One entry per (generic declaration, arguments): the instance (a FunctionDecl or StructDecl
// copy, or nullptr when that instantiation failed), what its generic parameters stand for, and
// how deeply it nests (an instance made while checking another is one deeper). Sema makes the
// instances; this table only remembers them, so that each is made once, its substitution can be
// found from any declaration inside it, and the ones made only to check a generic can be told
// apart and dropped.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "syntax/ast.h"

namespace sg::lang {

/// What the generic parameters of an instantiation stand for.
struct Substitution {
    std::map<std::string, const Type*> types;
    std::map<std::string, VarDecl*> values;  ///< a synthesized `static const` per value parameter
};

class Instances {
public:
    /// The instance of `generic` with `args` when one was made (nullptr inside: that failed),
    /// nullopt when none was tried.
    std::optional<void*> find(const void* generic, const std::vector<GenericArg>& args) const;
    /// Remembers that `generic` with `args` failed (it is not tried again).
    void record_failure(const void* generic, const std::vector<GenericArg>& args);
    /// Remembers `instance`, made from `generic` with `args`, `depth` instantiations deep.
    /// While making_representatives() it is marked as made only to check the generic.
    void record(const void* generic, const std::vector<GenericArg>& args, void* instance,
                std::unique_ptr<Substitution> subst, int depth);

    /// The substitution `instance` was made with, or nullptr.
    const Substitution* substitution(const void* instance) const;
    /// How deep `decl` was made (0: not made by instantiation).
    int depth(const void* decl) const;
    /// `to` nests as deep as `from` (a method of an instantiated struct, before its signature).
    void inherit_depth(const void* from, const void* to);

    /// The generic declarations that have an instance (made or failed).
    std::set<const void*> instantiated_generics() const;
    /// Whether `instance` was made only to check its generic once.
    bool is_representative(const void* instance) const { return representatives_.count(instance) != 0; }
    bool making_representatives() const { return making_representatives_; }
    void set_making_representatives(bool on) { making_representatives_ = on; }

    /// Forgets the entries for which `gone(instance, args)` holds (they may be made again).
    void forget_if(const std::function<bool(const void* instance, const std::vector<GenericArg>& args)>& gone);

private:
    std::map<std::pair<const void*, std::vector<GenericArg>>, void*> instances_;
    std::map<const void*, std::unique_ptr<Substitution>> substitutions_;
    std::map<const void*, int> depth_;
    std::set<const void*> representatives_;
    bool making_representatives_ = false;
};

}  // namespace sg::lang
