// src/lang/sema_generic_checks.cpp — a generic checked as declared, against its constraints.
//
// Generics are monomorphized: each instantiation is checked with its arguments. slangc also
// checks a generic's body once as written, where a type parameter offers only what its
// constraint provides: with `T twice<T>(T x) { return x + x; }` it reports that no '+' applies
// to (T, T) (39999) even when every use is a float. For a type parameter without a constraint
// this check is made here: the generic is instantiated once more with an opaque stand-in for
// it, a struct named after the parameter with no fields and no operations, and that body is
// checked; the instances made for the check are dropped afterwards (they are never lowered).
// Constrained parameters keep the representative check of check_uninstantiated_generics (their
// constraint's simplest type), which does not see an operation their constraint lacks.
#include "lang/sema_internal.h"

namespace sg::lang {

const Type* Sema::opaque_type(const std::string& name) {
    const Type*& slot = opaque_types_[name];
    if (!slot) {
        auto* s = ast_.make<StructDecl>();
        s->name = name;
        s->type = types_.structure(s);
        declare_struct(s);
        slot = s->type;
    }
    return slot;
}

void Sema::check_generics_against_constraints() {
    const size_t functions = result_.functions.size(), structs = result_.structs.size();
    const size_t derivative_calls = derivative_calls_.size();
    std::set<const Type*> opaque;
    making_representative_ = true;
    for (FunctionDecl* g : result_.generic_functions) {
        std::vector<GenericArg> args;
        if (!representative_args(g->generic_params, args)) continue;
        bool any = false;
        for (size_t k = 0; k < args.size(); ++k) {
            const GenericParam& p = g->generic_params[k];
            if (p.is_value || !p.constraint.empty()) continue;
            args[k].type = opaque_type(p.name);
            opaque.insert(args[k].type);
            any = true;
        }
        if (any) instantiate_function(g, args, g->loc);
    }
    making_representative_ = false;
    check_bodies(functions);
    // Drop what the check made: its instances (and any instance that names a stand-in).
    result_.functions.resize(functions);
    result_.structs.resize(structs);
    derivative_calls_.resize(derivative_calls);
    for (auto it = instances_.begin(); it != instances_.end();) {
        bool named = false;
        for (const GenericArg& a : it->first.second) named |= opaque.count(a.type) != 0;
        it = named ? instances_.erase(it) : std::next(it);
    }
}

}  // namespace sg::lang
