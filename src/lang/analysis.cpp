// src/lang/analysis.cpp — the call layer's questions to a checked module (see analysis.h).
#include "lang/analysis.h"

#include <functional>
#include <set>

#include "lang/sema_internal.h"

namespace sg::lang {

Analysis::Analysis(AstContext& ast, TypeContext& types, Diagnostics& diags, bool allow_internal)
    : sema_(std::make_unique<Sema>(ast, types, diags, allow_internal)), diags_(diags) {}

Analysis::~Analysis() = default;

const SemaResult& Analysis::run(const std::vector<ModuleAst*>& modules) {
    sema_->run(modules);
    return sema_->result();
}

const SemaResult& Analysis::result() const { return sema_->result(); }

std::vector<FunctionInfo> Analysis::functions() const { return sema_->function_infos(); }

const Type* Analysis::named_type(const std::string& name) { return sema_->named_type(name); }

FunctionDecl* Analysis::instantiate(const std::string& name, const std::vector<GenericArg>& args,
                                    std::vector<Diagnostic>& why) {
    return instantiate_with([&] { return sema_->instantiate_by_name(name, args); }, why);
}

FunctionDecl* Analysis::instantiate(FunctionDecl* generic, const std::vector<GenericArg>& args,
                                    std::vector<Diagnostic>& why) {
    return instantiate_with([&] { return sema_->instantiate_generic(generic, args); }, why);
}

FunctionDecl* Analysis::instantiate_with(const std::function<FunctionDecl*()>& make, std::vector<Diagnostic>& why) {
    size_t mark = diags_.all().size();
    size_t functions_before = sema_->result().functions.size();
    FunctionDecl* f = nullptr;
    try {
        f = make();
    } catch (const CompileError&) {
        f = nullptr;  // too many errors: they are all in the list
    }
    why = diags_.take_from(mark);
    bool failed = false;
    for (const Diagnostic& d : why) failed |= d.severity == Severity::Error;
    if (failed) {
        sema_->forget_functions_from(functions_before);  // a failed instantiation is not kept
        return nullptr;
    }
    // Warnings of a good instantiation stay with the module.
    for (Diagnostic& d : why) diags_.restore(std::move(d));
    why.clear();
    return f;
}

// ---------------------------------------------------------------- Sema's side

namespace {

std::vector<GenericParamInfo> describe(const std::vector<GenericParam>& params) {
    std::vector<GenericParamInfo> out;
    for (const GenericParam& p : params) out.push_back({p.name, p.is_value, p.constraint});
    return out;
}

}  // namespace

std::vector<FunctionInfo> Sema::function_infos() const {
    std::vector<FunctionInfo> out;
    for (FunctionDecl* f : result_.functions) {
        if (f->generic_origin || (f->owner && f->owner->generic_origin)) continue;
        out.push_back({f->name, f, f->owner, false, {}});
    }
    for (FunctionDecl* g : result_.generic_functions) out.push_back({g->name, g, nullptr, true, describe(g->generic_params)});
    return out;
}

void Sema::forget_functions_from(size_t first) {
    if (first >= result_.functions.size()) return;
    std::set<const void*> gone(result_.functions.begin() + long(first), result_.functions.end());
    instances_.forget_if([&](const void* instance, const std::vector<GenericArg>&) {
        return instance == nullptr || gone.count(instance) != 0;
    });
    result_.functions.resize(first);
}

FunctionDecl* Sema::instantiate_by_name(const std::string& name, const std::vector<GenericArg>& args) {
    auto it = module_.generic_functions.find(name);
    if (it == module_.generic_functions.end()) {
        diags_.error({}, module_.functions.count(name) ? "'" + name + "' is not generic"
                                                : "the module has no generic function '" + name + "'");
        return nullptr;
    }
    // The overload whose generic parameters take these arguments (count and kinds).
    std::vector<FunctionDecl*> fits;
    for (FunctionDecl* g : it->second) {
        if (g->generic_params.size() != args.size()) continue;
        bool ok = true;
        for (size_t k = 0; k < args.size(); ++k) ok &= g->generic_params[k].is_value == args[k].is_value;
        if (ok) fits.push_back(g);
    }
    if (fits.size() != 1) {
        diags_.error(it->second.front()->loc, fits.empty() ? "no generic '" + name + "' takes the arguments " +
                                                                 instance_name(name, args)
                                                           : "the arguments " + instance_name(name, args) +
                                                                 " fit several generic '" + name + "'");
        return nullptr;
    }
    return instantiate_generic(fits.front(), args);
}

FunctionDecl* Sema::instantiate_generic(FunctionDecl* g, const std::vector<GenericArg>& args) {
    const std::string& name = g->name;
    if (g->generic_params.size() != args.size()) {
        diags_.error(g->loc, "'" + name + "' takes " + std::to_string(g->generic_params.size()) + " generic argument" +
                                 (g->generic_params.size() == 1 ? "" : "s") + ", " + std::to_string(args.size()) +
                                 " given");
        return nullptr;
    }
    for (size_t k = 0; k < args.size(); ++k) {
        if (g->generic_params[k].is_value != args[k].is_value) {
            diags_.error(g->loc, describe_constraint_failure(g->generic_params[k], args[k]) + " in '" +
                                     instance_name(name, args) + "'");
            return nullptr;
        }
        if (!args[k].is_value && !args[k].type) {
            diags_.error(g->loc, "generic argument '" + g->generic_params[k].name + "' of '" + name + "' has no type");
            return nullptr;
        }
        if (!satisfies(g->generic_params[k], args[k])) {
            diags_.error(g->loc, describe_constraint_failure(g->generic_params[k], args[k]) + " in '" +
                                     instance_name(name, args) + "'",
                         38029);
            return nullptr;
        }
    }
    size_t first = result_.functions.size();
    size_t first_call = derivative_calls_.size();
    FunctionDecl* f = instantiate_function(g, args, g->loc);
    if (!f) return nullptr;
    check_bodies(first);
    check_recursion_and_derivatives(first_call);
    collect_static_globals(first);
    return f;
}

}  // namespace sg::lang
