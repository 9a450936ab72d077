// src/lang/scopes.cpp — the local scopes of the body being checked (scopes.h).
#include "lang/scopes.h"

namespace sg::lang {

void Scopes::push() { scopes_.emplace_back(); }

void Scopes::pop() { scopes_.pop_back(); }

void Scopes::clear() { scopes_.clear(); }

bool Scopes::declare(VarDecl* v) { return scopes_.back().vars.emplace(v->name, v).second; }

VarDecl* Scopes::lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
        if (auto f = it->vars.find(name); f != it->vars.end()) return f->second;
    return nullptr;
}

bool Scopes::declare_alias(TypeAliasDecl* a) { return scopes_.back().aliases.emplace(a->name, a).second; }

bool Scopes::innermost_has_alias(const std::string& name) const {
    return !scopes_.empty() && scopes_.back().aliases.count(name) != 0;
}

TypeAliasDecl* Scopes::lookup_alias(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
        if (auto f = it->aliases.find(name); f != it->aliases.end()) return f->second;
    return nullptr;
}

}  // namespace sg::lang
