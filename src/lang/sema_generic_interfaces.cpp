// src/lang/sema_generic_interfaces.cpp — generic interfaces: `interface IGet<T> { T get(); }`.
//
// A generic interface is instantiated where it is named with its arguments, like a generic
// struct: `struct S : IGet<float>` and `U : IGet<T>` name the instance "IGet<float>", a copy of
// the interface whose requirements are checked with T standing for float. An instance is an
// ordinary interface from then on (module_.interfaces), so conformance, `conforms_to` and
// interface inheritance work on its name unchanged.
//
// Struct bases are resolved when the struct is declared (an instance of a generic struct
// `Box<T> : IGet<T>` with its own arguments). A constraint that names a generic interface
// depends on the other arguments (`T use<T, U : IGet<T>>(U u)`), so `satisfies` leaves it to
// the instantiation, which checks it here with the substitution in hand (38029 as any unmet
// constraint). Its arguments may also be inferred through it: `use(s)` with S : IGet<float>
// gives T = float, as in Slang.
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// Whether a constraint string names a generic interface with its arguments ("IGet<T>").
bool names_generic_arguments(const std::string& c) { return c.find('<') != std::string::npos; }

}  // namespace

bool Sema::is_deferred_constraint(const std::string& c) { return names_generic_arguments(c); }

void Sema::check_generic_interface_names(const std::vector<ModuleAst*>& modules) {
    // `U : IGet` names a generic interface without its arguments: Slang's 30401.
    auto check_params = [&](const std::vector<GenericParam>& params) {
        for (const GenericParam& p : params)
            for (const TypeExpr* te : p.constraint_types)
                if (te->arg_is_value.empty() && module_.generic_interfaces.count(te->name))
                    diags_.error(te->loc,
                                 "generic interface '" + te->name + "' cannot be used as a constraint without its "
                                     "arguments (write " + te->name + "<...>)",
                                 30401);
    };
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls) {
            if (d->function) check_params(d->function->generic_params);
            if (!d->structure) continue;
            check_params(d->structure->generic_params);
            for (const FunctionDecl* f : d->structure->methods) check_params(f->generic_params);
        }
}

StructDecl* Sema::interface_instance(TypeExpr* te) {
    auto g = module_.generic_interfaces.find(te->name);
    if (g == module_.generic_interfaces.end()) {
        if (module_.interfaces.count(te->name) || is_builtin_interface(te->name))
            diags_.error(te->loc, "interface '" + te->name + "' is not generic");
        else diags_.error(te->loc, "unknown interface '" + te->name + "'", 30015);
        return nullptr;
    }
    std::vector<GenericArg> args;
    if (!explicit_generic_args(te, g->second->generic_params, te->name, args, false)) return nullptr;
    for (size_t k = 0; k < args.size(); ++k)
        if (!satisfies(g->second->generic_params[k], args[k])) {
            diags_.error(te->loc, describe_constraint_failure(g->second->generic_params[k], args[k]) + " in '" +
                                      instance_name(te->name, args) + "'",
                         38029);
            return nullptr;
        }
    return instantiate_interface(g->second, args, te->loc);
}

void Sema::finish_interface_instance(StructDecl* s) {
    module_.interfaces[s->name] = s;
    result_.interfaces.push_back(s);
    const Substitution* saved = subst_;
    subst_ = substitution_of_struct(s);
    std::string context = diags_.set_context("in instantiation " + s->name);
    resolve_generic_bases(s);
    declare_interface(s);
    diags_.set_context(context);
    subst_ = saved;
}

void Sema::resolve_generic_bases(StructDecl* s) {
    // Under the substitution of the struct being declared: `Box<T> : IGet<T>` in Box<float>.
    for (size_t k = 0; k < s->bases.size();) {
        TypeExpr* te = k < s->base_types.size() ? s->base_types[k] : nullptr;
        SourceLoc at = k < s->base_locs.size() ? s->base_locs[k] : s->loc;
        StructDecl* iface = nullptr;
        if (te) {
            iface = interface_instance(te);
        } else if (module_.generic_interfaces.count(s->bases[k])) {
            diags_.error(at,
                         "'" + s->name + "' cannot inherit from generic interface '" + s->bases[k] +
                             "' without its arguments (write " + s->bases[k] + "<...>)",
                         30811);  // Slang: cannot inherit from non-interface type
        } else {
            ++k;
            continue;
        }
        if (iface) {
            s->bases[k] = iface->name;
            if (k < s->base_types.size()) s->base_types[k] = nullptr;  // resolved once
            ++k;
            continue;
        }
        // Reported: the base is dropped, so that conformance does not report it again.
        s->bases.erase(s->bases.begin() + long(k));
        if (k < s->base_locs.size()) s->base_locs.erase(s->base_locs.begin() + long(k));
        if (k < s->base_types.size()) s->base_types.erase(s->base_types.begin() + long(k));
    }
}

bool Sema::check_generic_interface_constraints(const std::vector<GenericParam>& params,
                                               const std::vector<GenericArg>& args, const void* instance,
                                               const std::string& what, SourceLoc at) {
    const Substitution* saved = subst_;
    subst_ = instances_.substitution(instance);
    bool ok = true;
    for (size_t k = 0; k < params.size() && k < args.size() && ok; ++k) {
        if (params[k].is_value || args[k].is_value || args[k].type->is_error()) continue;
        for (TypeExpr* te : params[k].constraint_types) {
            if (te->arg_is_value.empty()) continue;
            StructDecl* iface = interface_instance(te);
            if (!iface) {
                ok = false;
                break;
            }
            if (!conforms_to(args[k].type, iface->name)) {
                if (is_interface_parameter(params[k]))  // `float f(IGet<float> g)`: Slang's type mismatch
                    diags_.error(at, describe_interface_argument(params[k], args[k]), 30019);
                else
                    diags_.error(at,
                                 "type argument " + type_name(args[k].type) + " does not conform to '" + iface->name +
                                     "' (generic parameter '" + params[k].name + "') in '" + what + "'",
                                 38029);
                ok = false;
                break;
            }
        }
    }
    subst_ = saved;
    return ok;
}

void Sema::mark_generic_interface_parameters(const FunctionDecl* g, FunctionDecl* f) {
    // As for a plain user interface (instantiate_function): a parameter typed by a type
    // parameter whose constraints are user interfaces none of which extends IDifferentiable
    // carries no derivative inside the generic.
    const Substitution* saved = subst_;
    subst_ = instances_.substitution(f);
    for (const GenericParam& gp : g->generic_params) {
        bool generic_iface = false, differentiable = false;
        for (TypeExpr* te : gp.constraint_types) {
            if (te->arg_is_value.empty()) {
                const std::string& c = te->name;
                auto plain = module_.interfaces.find(c);
                differentiable |= plain == module_.interfaces.end()
                                      ? c == "IDifferentiable" || Standins::builtin_implies(c, "IDifferentiable")
                                      : interface_extends(plain->second, "IDifferentiable");
                continue;
            }
            generic_iface = true;
            if (StructDecl* iface = interface_instance(te))
                differentiable |= interface_extends(iface, "IDifferentiable");
        }
        if (!generic_iface || differentiable) continue;
        for (VarDecl* p : f->params) {
            const TypeExpr* te = p->type_expr;
            if (te && te->type_args.empty() && te->array_dims.empty() && te->member.empty() && te->name == gp.name)
                p->is_no_diff = true;
        }
    }
    subst_ = saved;
}

void Sema::bind_through_generic_interfaces(const FunctionDecl* g, std::vector<std::optional<GenericArg>>& bound) {
    // `T use<T, U : IGet<T>>(U u)` called with S : IGet<float>: T is float. Each pass may bind
    // a parameter another constraint needs.
    const auto& params = g->generic_params;
    auto index_of = [&](const std::string& name) -> int {
        for (size_t k = 0; k < params.size(); ++k)
            if (params[k].name == name && !params[k].is_value) return int(k);
        return -1;
    };
    for (int pass = 0; pass < 4; ++pass) {
        bool progress = false;
        for (size_t k = 0; k < params.size(); ++k) {
            if (!bound[k] || bound[k]->is_value || !bound[k]->type->is_struct()) continue;
            const StructDecl* s = bound[k]->type->decl;
            for (const TypeExpr* te : params[k].constraint_types) {
                if (te->arg_is_value.empty() || !te->value_args.empty()) continue;
                // The struct's base that is an instance of this generic interface (directly).
                const StructDecl* base = nullptr;
                for (const std::string& b : s->bases) {
                    auto it = module_.interfaces.find(b);
                    if (it != module_.interfaces.end() && it->second->generic_origin &&
                        it->second->generic_origin->name == te->name)
                        base = base ? nullptr : it->second;  // two instances: nothing to infer from
                }
                if (!base || base->generic_args.size() != te->type_args.size()) continue;
                for (size_t j = 0; j < te->type_args.size(); ++j) {
                    const TypeExpr* a = te->type_args[j];
                    int at = a->type_args.empty() && a->array_dims.empty() && a->member.empty() ? index_of(a->name) : -1;
                    if (at < 0 || bound[size_t(at)] || base->generic_args[j].is_value) continue;
                    bound[size_t(at)] = base->generic_args[j];
                    progress = true;
                }
            }
        }
        if (!progress) return;
    }
}

}  // namespace sg::lang
