// src/lang/sema_interface_inits.cpp — `__init` requirements of interfaces:
// `interface IMake { __init(float x); }`, and `T(x)` on a type parameter `T : IMake`.
//
// A conforming struct must declare an `__init` the requirement's arguments can call: as in
// slangc 0.43.1, each of the requirement's parameter types converts implicitly to the
// `__init`'s (an `__init(int)` meets `__init(float)`), and the member-wise constructor Slang
// synthesizes for a struct without `__init` meets none (38100). Generics are monomorphized, so
// `T(x)` in an instance is the struct's own constructor call. In the check of a generic as
// declared, `T(x)` on T's stand-in must match one of the requirements: another number or type
// of arguments is 39999 (Slang: too many / not enough arguments to call).
#include "lang/overloads.h"
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

std::string init_signature(const std::vector<const Type*>& params) {
    std::string s = "__init(";
    for (size_t k = 0; k < params.size(); ++k) s += (k ? ", " : "") + type_name(params[k]);
    return s + ")";
}

}  // namespace

bool Sema::init_requirement_params(const StructDecl* iface, const FunctionDecl* r, std::vector<const Type*>& out) {
    const Substitution* saved = subst_;
    Substitution args;  // an instance of a generic interface: its arguments
    if (const Substitution* s = substitution_of_struct(iface)) args = *s;
    subst_ = &args;
    size_t errors = diags_.error_count();
    for (const VarDecl* p : r->params) out.push_back(resolve_type(p->type_expr));
    subst_ = saved;
    return diags_.error_count() == errors;
}

void Sema::check_init_requirement(StructDecl* s, const StructDecl* iface, const FunctionDecl* r) {
    if (s->type && standins_.is_standin(s->type)) return;  // a stand-in constructs through check_standin_init
    std::vector<const Type*> params;
    if (!init_requirement_params(iface, r, params)) return;
    const FunctionDecl* near = nullptr;
    for (const FunctionDecl* m : s->methods) {
        if (!m->is_init) continue;
        near = near ? near : m;
        if (m->params.size() != params.size()) continue;
        bool fits = true;
        for (size_t k = 0; k < params.size() && fits; ++k) fits = conversion_cost(params[k], m->params[k]->type) >= 0;
        if (fits) return;
    }
    // Slang: 38100 without any __init, 38105 (requirement mismatch) at the one that differs.
    diags_.error(near ? near->loc : s->loc,
                 "struct " + s->name + " does not implement '" + init_signature(params) + "' required by interface '" +
                     iface->name + "'" + (near ? " (its __init takes other parameters)" : ""),
                 near ? 38105 : 38100);
}

const Type* Sema::check_standin_init(Expr* e, const Type* to, const std::vector<Expr*>& args) {
    const std::string* c = standins_.constraint_of(to);
    if (!c) return nullptr;
    // The __init requirements of the constraint and of the interfaces it extends.
    std::vector<std::pair<const StructDecl*, const FunctionDecl*>> inits;
    std::vector<const StructDecl*> ifaces;
    if (auto it = module_.interfaces.find(*c); it != module_.interfaces.end()) ifaces.push_back(it->second);
    for (size_t k = 0; k < ifaces.size() && k < 64; ++k) {
        for (const FunctionDecl* r : ifaces[k]->methods)
            if (r->is_init) inits.push_back({ifaces[k], r});
        for (const std::string& b : ifaces[k]->bases)
            if (auto it = module_.interfaces.find(b); it != module_.interfaces.end()) ifaces.push_back(it->second);
    }
    if (inits.empty()) return nullptr;  // what the constraint's operations give (check_standin_construct)
    size_t fewest = SIZE_MAX, most = 0;
    for (auto [iface, r] : inits) {
        std::vector<const Type*> params;
        if (!init_requirement_params(iface, r, params)) return types_.error_type();
        fewest = std::min(fewest, params.size());
        most = std::max(most, params.size());
        if (params.size() != args.size()) continue;
        bool fits = true;
        for (size_t k = 0; k < args.size() && fits; ++k)
            fits = args[k]->kind == ExprKind::InitList || conversion_cost(args[k]->type, params[k]) >= 0;
        if (fits) return to;
    }
    std::string why = args.size() > most    ? "too many arguments"
                      : args.size() < fewest ? "not enough arguments"
                                             : "no requirement takes these arguments";
    std::string given = "(";
    for (size_t k = 0; k < args.size(); ++k) given += (k ? ", " : "") + type_name(args[k]->type);
    diags_.error(e->loc, "no __init of " + type_name(to) + " (constraint '" + *c + "') takes " + given + "): " + why,
                 39999);
    return types_.error_type();
}

}  // namespace sg::lang
