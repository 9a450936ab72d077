// src/lang/sema_generic_methods.cpp — generic member functions: `T get<T : IFloat>(T x)` in a
// struct, called `s.get<float>(1.0)`, `s.get(1.0)` (inferred) or `S.make<float>()` (static).
//
// A generic method is not declared with its struct (its signature names its own parameters):
// each call instantiates it, as a generic function is (instantiate_function: cached by its
// arguments, checked once, then an ordinary method of the struct with `this` first). A generic
// method of a generic struct's instance sees the struct's arguments too.
#include "lang/sema_internal.h"

namespace sg::lang {

std::vector<FunctionDecl*> Sema::member_candidates(Expr* e, Expr* callee, const StructDecl* s, bool& reported) {
    std::vector<FunctionDecl*> out;
    std::vector<FunctionDecl*> generics;
    for (FunctionDecl* m : s->methods)
        if (m->member_name == callee->name && !m->generic_params.empty()) generics.push_back(m);
    if (!callee->type_expr) out = find_methods(s, callee->name);
    if (generics.empty()) {
        if (callee->type_expr) {
            diags_.error(callee->loc, "member function '" + callee->name + "' of struct " + s->name + " is not generic");
            reported = true;
            out.clear();
        }
        return out;
    }
    std::vector<Expr*> args(e->operands.begin() + 1, e->operands.end());
    for (Expr* a : args)
        if (a->type && a->type->is_error()) {
            reported = true;  // already reported
            return {};
        }
    size_t viable = 0;
    for (FunctionDecl* g : generics) viable += g->params.size() == args.size();
    bool report = out.empty() && viable == 1;
    for (FunctionDecl* g : generics) {
        if (g->params.size() != args.size()) continue;
        std::vector<GenericArg> gargs;
        if (callee->type_expr &&
            !explicit_generic_args(callee->type_expr, g->generic_params, g->member_name, gargs, true)) {
            reported = true;
            continue;
        }
        size_t explicit_count = gargs.size();
        if (!infer_generic_args(g, args, gargs, explicit_count, e->loc, report)) {
            reported |= report;
            continue;
        }
        bool ok = true;
        for (size_t k = 0; k < gargs.size() && ok; ++k) {
            if (satisfies(g->generic_params[k], gargs[k])) continue;
            ok = false;
            if (report) {
                diags_.error(e->loc, describe_constraint_failure(g->generic_params[k], gargs[k]) + " in call of '" +
                                         g->name + "'",
                             38029);
                reported = true;
            }
        }
        if (!ok) continue;
        if (FunctionDecl* inst = instantiate_function(g, gargs, e->loc)) out.push_back(inst);
        else reported = true;
    }
    if (out.empty() && !reported) {
        diags_.error(e->loc, "no overload of '" + generics.front()->name + "' accepts these arguments", 39999);
        reported = true;
    }
    return out;
}

}  // namespace sg::lang
