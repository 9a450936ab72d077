// src/lang/instances.cpp — the instances of generic declarations that Sema has made (instances.h).
#include "lang/instances.h"

namespace sg::lang {

std::optional<void*> Instances::find(const void* generic, const std::vector<GenericArg>& args) const {
    auto it = instances_.find({generic, args});
    if (it == instances_.end()) return std::nullopt;
    return it->second;
}

void Instances::record_failure(const void* generic, const std::vector<GenericArg>& args) {
    instances_[{generic, args}] = nullptr;
}

void Instances::record(const void* generic, const std::vector<GenericArg>& args, void* instance,
                       std::unique_ptr<Substitution> subst, int depth) {
    instances_[{generic, args}] = instance;
    substitutions_[instance] = std::move(subst);
    depth_[instance] = depth;
    if (making_representatives_) representatives_.insert(instance);
}

const Substitution* Instances::substitution(const void* instance) const {
    auto it = substitutions_.find(instance);
    return it != substitutions_.end() ? it->second.get() : nullptr;
}

int Instances::depth(const void* decl) const {
    auto it = depth_.find(decl);
    return it != depth_.end() ? it->second : 0;
}

void Instances::inherit_depth(const void* from, const void* to) {
    if (auto it = depth_.find(from); it != depth_.end()) depth_[to] = it->second;
}

std::set<const void*> Instances::instantiated_generics() const {
    std::set<const void*> out;
    for (const auto& entry : instances_) out.insert(entry.first.first);
    return out;
}

void Instances::forget_if(const std::function<bool(const void*, const std::vector<GenericArg>&)>& gone) {
    for (auto it = instances_.begin(); it != instances_.end();)
        it = gone(it->second, it->first.second) ? instances_.erase(it) : std::next(it);
}

}  // namespace sg::lang
