// src/lang/sema_member_derivatives.cpp — the functions a derivative attribute may name from a
// member function or an instance of a generic: `[BackwardDerivative(sq_bwd)]` on a struct's
// method names a method of the same struct, and `[ForwardDerivative(sq_fwd)]` on `T sq<T>(T x)`
// a generic function instantiated with the same arguments (sq<float> is differentiated by
// sq_fwd<float>). The signature rules are the free functions' (sema_diff.cpp): a method's
// derived signature starts with its `this` (a DifferentialPair of a differentiable struct, so
// that derivative is a static method taking it first; the struct itself otherwise, so the
// derivative may be a method of its own), and an instance's is that of its arguments.
#include "lang/sema_internal.h"

namespace sg::lang {

std::optional<std::vector<FunctionDecl*>> Sema::derivative_attribute_candidates(FunctionDecl* f, const Attribute& a) {
    if (a.args.size() == 1 && a.args[0]->kind == ExprKind::Member)  // `S.g`, `S::g`
        return qualified_attribute_candidates(f, a);
    if (!f->owner && !f->generic_origin) {
        const std::vector<FunctionDecl*>* overloads = attribute_functions(a);
        if (!overloads) return std::nullopt;
        return *overloads;
    }
    if (a.args.size() != 1 || a.args[0]->kind != ExprKind::Name) {
        diags_.error(a.loc, "[" + a.name + "] takes the name of a function");
        return std::nullopt;
    }
    const std::string& name = a.args[0]->name;
    std::vector<FunctionDecl*> out;
    // The generic declarations that an instance's arguments instantiate the same way.
    std::vector<FunctionDecl*> generics;
    if (f->owner) {
        for (FunctionDecl* m : f->owner->methods) {
            if (m->member_name != name || m == f) continue;
            if (m->generic_params.empty()) out.push_back(m);
            else generics.push_back(m);
        }
    }
    if (!f->owner || (out.empty() && generics.empty())) {  // a method may name a free function too
        if (auto it = module_.functions.find(name); it != module_.functions.end()) out = it->second;
        if (auto it = module_.generic_functions.find(name); it != module_.generic_functions.end()) generics = it->second;
    }
    if (f->generic_origin) {
        const std::vector<GenericArg>& args = f->generic_args;
        for (FunctionDecl* g : generics) {
            if (g->generic_params.size() != args.size()) continue;
            bool fits = true;
            for (size_t k = 0; k < args.size() && fits; ++k) fits = satisfies(g->generic_params[k], args[k]);
            if (!fits) continue;
            if (FunctionDecl* inst = instantiate_function(g, args, a.args[0]->loc)) out.push_back(inst);
        }
    }
    if (out.empty()) {
        diags_.error(a.args[0]->loc,
                     "unknown function '" + name + "' in [" + a.name + "]" +
                         (f->owner ? " (a member function's derivative is a method of struct " + f->owner->name + ")"
                                   : ""),
                     30015);  // Slang: undefined identifier
        return std::nullopt;
    }
    return out;
}

}  // namespace sg::lang
