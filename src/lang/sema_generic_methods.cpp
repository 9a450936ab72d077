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
            diags_.error(callee->loc,
                         "member function '" + callee->name + "' of struct " + s->name + " is not generic", 39999);
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
    instantiate_candidates(generics, e, callee, args, true, out, reported);
    if (out.empty() && !reported) {
        const FunctionDecl* g = generics.front();
        if (generics.size() == 1 && !accepts_argument_count(*g, args.size()))  // Slang: 30438, as for generic functions
            diags_.error(e->loc,
                         "member function '" + g->member_name + "' takes " + argument_count_text(*g) + ", " +
                             std::to_string(args.size()) + " given",
                         30438);
        else diags_.error(e->loc, "no overload of '" + g->name + "' accepts these arguments", 39999);
        reported = true;
    }
    return out;
}

}  // namespace sg::lang
