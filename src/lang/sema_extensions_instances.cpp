// src/lang/sema_extensions_instances.cpp — extensions of some instances of a generic struct:
//
//   struct Box<T> { T a; T b; };
//   extension Box<float> { float sum() { return a + b; } }              // Box<float> only
//   extension<T : IFloat> Box<T> { T mean() { return (a + b) / 2; } }   // Box<float>, Box<half>, ...
//   extension<T> Pair<T, T> : IGet { ... }                               // Pair<int, int>, not Pair<int, float>
//
// As in Slang, such an extension adds its members and interfaces to the instances whose arguments
// match its pattern (each argument a type or value written out, or a parameter of the extension,
// a parameter named twice meaning the same argument twice) and meet its parameters' constraints;
// other instances do not have them (`Box<int>.sum()` is 30027). Each matching instance gets a
// copy of the members when it is made, before its members are declared, so conformance, calls
// and derivatives see them as its own. An extension that no instance matches is checked once
// through a representative instance, as an uninstantiated generic is.
#include "lang/sema_internal.h"
#include "syntax/ast_clone.h"

namespace sg::lang {

namespace {

/// Whether type expression `t` names one of `params` anywhere inside it.
bool names_param(const TypeExpr* t, const std::vector<GenericParam>& params) {
    for (const GenericParam& p : params)
        if (t->name == p.name) return true;
    for (const TypeExpr* a : t->type_args)
        if (names_param(a, params)) return true;
    return false;
}

}  // namespace

void Sema::register_instance_extension(StructDecl* ext, StructDecl* g, const TypeExpr* target) {
    const std::vector<GenericParam>& own = g->generic_params;
    const std::vector<GenericParam>& params = ext->generic_params;
    const size_t n = target->arg_is_value.size();
    if (n != own.size()) {  // slangc 0.43.1 reports only the members it then cannot find (30015)
        diags_.error(target->loc, "'" + g->name + "' takes " + std::to_string(own.size()) + " generic argument" +
                                      (own.size() == 1 ? "" : "s") + ", " + std::to_string(n) + " given");
        return;
    }
    InstanceExtension x;
    x.ext = ext;
    x.generic = g;
    std::vector<bool> named(params.size(), false);
    size_t type_k = 0, value_k = 0;
    for (size_t k = 0; k < n; ++k) {
        int found = -1;
        GenericArg fixed;
        const TypeExpr* written = nullptr;
        if (target->arg_is_value[k]) {
            Expr* v = target->value_args[value_k++];
            if (v->kind == ExprKind::Name)
                for (size_t j = 0; j < params.size(); ++j)
                    if (params[j].name == v->name) found = int(j);
            if (found < 0) {
                std::optional<int64_t> c = eval_const_int(v);
                if (!c) {  // Slang: expression does not evaluate to a compile-time constant
                    diags_.error(v->loc, "generic argument of '" + g->name + "' is not a compile-time constant", 39999);
                    return;
                }
                fixed = {nullptr, *c, true};
            }
        } else {
            const TypeExpr* t = target->type_args[type_k++];
            const bool bare = t->type_args.empty() && t->member.empty() && t->array_dims.empty();
            if (bare)
                for (size_t j = 0; j < params.size(); ++j)
                    if (params[j].name == t->name && !params[j].is_value) found = int(j);
            if (found < 0 && names_param(t, params)) {
                diags_.unsupported(t->loc, "an extension whose argument of '" + g->name +
                                               "' names its parameter inside another type");
                return;
            }
            if (found < 0) {
                written = t;
                fixed.is_value = false;
            }
        }
        if (found >= 0) {
            if (params[size_t(found)].is_value != own[k].is_value) {
                diags_.error(target->loc, "generic parameter '" + own[k].name + "' of '" + g->name + "' takes " +
                                              (own[k].is_value ? "a value" : "a type"));
                return;
            }
            // Under its own name, Box's parameter at another position would shadow it.
            for (size_t j = 0; j < own.size(); ++j)
                if (j != k && own[j].name == params[size_t(found)].name && !named[size_t(found)]) {
                    diags_.unsupported(params[size_t(found)].loc, "an extension parameter named '" + own[j].name +
                                                                      "' that stands for another parameter of '" +
                                                                      g->name + "'");
                    return;
                }
            named[size_t(found)] = true;
        } else if (fixed.is_value != own[k].is_value) {
            diags_.error(target->loc, "generic parameter '" + own[k].name + "' of '" + g->name + "' takes " +
                                          (own[k].is_value ? "a value" : "a type"));
            return;
        }
        x.param_at.push_back(found);
        x.fixed.push_back(fixed);
        x.written.push_back(written);
    }
    for (size_t j = 0; j < params.size(); ++j) {
        if (!named[j]) {  // Slang: the extension's generic parameter cannot be inferred
            diags_.error(params[j].loc, "generic parameter '" + params[j].name + "' of the extension is not one of " +
                                            g->name + "'s arguments",
                         30855);
            return;
        }
        for (const std::string& c : params[j].more_constraints)
            if (is_deferred_constraint(c)) {
                diags_.unsupported(params[j].loc, "a generic interface constraint on an extension of some instances");
                return;
            }
        if (is_deferred_constraint(params[j].constraint)) {
            diags_.unsupported(params[j].loc, "a generic interface constraint on an extension of some instances");
            return;
        }
    }
    for (const VarDecl* f : ext->fields)  // Slang: declaration not allowed in this context
        diags_.error(f->loc, "an extension cannot add a field ('" + f->name + "') to struct " + ext->name, 31400);
    instance_extensions_.push_back(std::move(x));
}

bool Sema::resolve_instance_pattern(InstanceExtension& x) {
    if (x.resolved) return x.ok;
    x.resolved = true;
    const Substitution* saved = subst_;
    subst_ = nullptr;  // the pattern is written at module scope
    for (size_t k = 0; k < x.written.size(); ++k) {
        if (!x.written[k]) continue;
        TypeExpr copy = *x.written[k];
        const Type* t = resolve_type(&copy);
        if (t->is_error()) x.ok = false;
        x.fixed[k].type = t;
    }
    subst_ = saved;
    return x.ok;
}

void Sema::apply_instance_extensions(const StructDecl* g, StructDecl* s, const std::vector<GenericArg>& args) {
    for (size_t i = 0; i < instance_extensions_.size(); ++i) {
        if (instance_extensions_[i].generic != g || !resolve_instance_pattern(instance_extensions_[i])) continue;
        InstanceExtension& x = instance_extensions_[i];
        const std::vector<GenericParam>& params = x.ext->generic_params;
        std::vector<std::optional<GenericArg>> bound(params.size());
        bool match = args.size() == x.param_at.size();
        for (size_t k = 0; match && k < args.size(); ++k) {
            if (x.param_at[k] < 0) {
                match = args[k] == x.fixed[k];
                continue;
            }
            std::optional<GenericArg>& b = bound[size_t(x.param_at[k])];
            if (b && !(*b == args[k])) match = false;
            b = args[k];
        }
        for (size_t j = 0; match && j < params.size(); ++j) match = bound[j] && satisfies(params[j], *bound[j]);
        if (!match) continue;
        x.used = true;
        StructDecl* copy = clone_struct(ast_, x.ext);
        copy->fields.clear();  // reported once, when the extension was registered (31400)
        // The extension's parameters by its own names: a member alias of the instance for the
        // struct's parameter at their first position (a type), or a constant (a value).
        for (size_t j = 0; j < params.size(); ++j) {
            size_t k = 0;
            while (x.param_at[k] != int(j)) ++k;
            const GenericParam& own = g->generic_params[k];
            if (params[j].name == own.name) continue;
            if (params[j].is_value) {
                copy->static_consts.push_back(generic_value_constant(ast_, types_, params[j], args[k].value));
                continue;
            }
            auto* te = ast_.make<TypeExpr>();
            te->loc = params[j].loc;
            te->name = own.name;
            auto* alias = ast_.make<VarDecl>();
            alias->loc = params[j].loc;
            alias->name = params[j].name;
            alias->type_expr = te;
            alias->is_static = true;
            copy->type_aliases.push_back(alias);
        }
        for (FunctionDecl* m : copy->methods) m->name = s->name + "." + m->member_name;
        move_extension_members(copy, s);
    }
}

void Sema::check_unused_instance_extensions() {
    for (size_t i = 0; i < instance_extensions_.size(); ++i) {
        if (instance_extensions_[i].used || !resolve_instance_pattern(instance_extensions_[i])) continue;
        const InstanceExtension x = instance_extensions_[i];
        std::vector<GenericArg> reps;
        if (!representative_args(x.ext->generic_params, reps)) continue;
        std::vector<GenericArg> args;
        for (size_t k = 0; k < x.param_at.size(); ++k)
            args.push_back(x.param_at[k] < 0 ? x.fixed[k] : reps[size_t(x.param_at[k])]);
        instantiate_struct(x.generic, args, x.ext->loc);
    }
}

}  // namespace sg::lang
