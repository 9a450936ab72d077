// src/lang/sema_generic_checks.cpp — a generic checked as declared, against its constraints.
//
// Generics are monomorphized: each instantiation is checked with its arguments. slangc also
// checks a generic's body once as written, where a type parameter offers only what its
// constraint provides: with `T twice<T>(T x) { return x + x; }` it reports that no '+' applies
// to (T, T) (39999) even when every use is a float, and `sin(x)` with `T : IArithmetic` is
// 39999 too. This check is made here: the generic is instantiated once more with an opaque
// stand-in for each type parameter, a struct named after the parameter with no fields; an
// unconstrained one supports no operation, one constrained by a built-in interface exactly
// those of its constraint (sema_standin_ops.cpp). The instances made for the check are dropped
// afterwards (they are never lowered). A user interface's stand-in has the interface's required
// methods (bodiless: never called). A parameter constrained by IDifferentiable or by a user
// interface with associated types keeps the representative check of
// check_uninstantiated_generics (the first conforming struct; float). Generic member functions
// are checked the same way (`T f<T>(T x)` in a struct, static or not), and so is a generic
// struct: it is instantiated with stand-ins for its type parameters (its methods are checked
// with them), and its generic methods with stand-ins for theirs too.
//
// Only what the stand-ins are for is kept from a constrained check: the errors that say an
// operation or conversion does not exist for T (39999, 30019, 30027), that T's constraint does not
// imply a callee's (38029), or that a stand-in's method takes another number of arguments
// (30438). A generic whose T is an element of a vector, matrix or tensor type (`vector<T, N>`,
// not modelled by the stand-in) keeps nothing from it.
#include "syntax/ast_clone.h"
#include "lang/sema_internal.h"

namespace sg::lang {

const Type* Sema::opaque_type(const std::string& name, const std::string& constraint) {
    if (const Type* made = standins_.find(name, constraint)) return made;
    {
        auto* s = ast_.make<StructDecl>();
        s->name = name;
        if (constraint.empty()) {
            s->type = types_.structure(s);
            standins_.add_unconstrained(name, s->type);
            declare_struct(s);
        } else if (module_.interfaces.count(constraint)) {
            // A user interface's stand-in conforms to it and has its required methods.
            s->bases.push_back(constraint);
            std::vector<const StructDecl*> ifaces{module_.interfaces.at(constraint)};
            for (size_t k = 0; k < ifaces.size() && k < 64; ++k)
                for (const std::string& b : ifaces[k]->bases)
                    if (auto it = module_.interfaces.find(b); it != module_.interfaces.end())
                        ifaces.push_back(it->second);
            for (const StructDecl* iface : ifaces)
                for (const FunctionDecl* r : iface->methods) {
                    if (r->is_init) continue;
                    FunctionDecl* m = clone_function(ast_, r);
                    m->owner = s;
                    m->name = name + "." + m->member_name;
                    s->methods.push_back(m);
                }
            s->type = types_.structure(s);
            // Before its members: a requirement may name the stand-in again.
            standins_.add_constrained(name, constraint, s->type);
            declare_struct(s);
            declare_members(s);
        } else {
            // IFloat's stand-in is differentiable, as every type it admits.
            if (standin_implies(constraint, "IDifferentiable")) s->bases.push_back("IDifferentiable");
            s->type = types_.structure(s);
            declare_struct(s);
            standins_.add_constrained(name, constraint, s->type);
        }
        return s->type;
    }
}

bool Sema::standin_args(const std::vector<GenericParam>& params, std::vector<GenericArg>& args,
                         std::set<const Type*>& opaque, bool& constrained) {
    bool any = false;
    for (const GenericParam& p : params) {
        if (p.is_value || !p.more_constraints.empty() || !(p.constraint.empty() || standin_models(p.constraint))) {
            // No stand-in: the representative (a user interface's needs a conforming struct).
            if (!representative_args({p}, args)) return false;
            continue;
        }
        args.push_back({opaque_type(p.name, p.constraint), 0, false});
        opaque.insert(args.back().type);
        any = true;
        constrained |= !p.constraint.empty();
    }
    return any;
}

void Sema::check_with_standins(const std::function<void()>& instantiate, bool constrained) {
    size_t mark = diags_.all().size(), first = result_.functions.size();
    standins_.set_unmodelled(false);
    instantiate();
    check_bodies(first);
    std::vector<Diagnostic> found = diags_.take_from(mark);
    if (standins_.unmodelled()) return;  // the representative check stands
    for (Diagnostic& d : found)
        if (!constrained || (d.severity == Severity::Error && (d.code == 39999 || d.code == 30019 || d.code == 30027 ||
                                                               d.code == 30438 || d.code == 38029)))
            diags_.restore(std::move(d));
}

void Sema::check_generic_methods_against_constraints(StructDecl* s, bool struct_constrained, bool struct_standins,
                                                     std::set<const Type*>& opaque) {
    for (FunctionDecl* m : s->methods) {
        if (m->generic_params.empty()) continue;
        std::vector<GenericArg> args;
        bool constrained = struct_constrained;
        bool any = standin_args(m->generic_params, args, opaque, constrained);
        if (args.size() != m->generic_params.size() || !(any || struct_standins)) continue;
        check_with_standins([&] { instantiate_function(m, args, m->loc); }, constrained);
    }
}

void Sema::check_generics_against_constraints() {
    const size_t functions = result_.functions.size(), structs = result_.structs.size();
    const size_t derivative_calls = derivative_calls_.size();
    std::set<const Type*> opaque;
    instances_.set_making_representatives(true);
    for (FunctionDecl* g : result_.generic_functions) {
        std::vector<GenericArg> args;
        bool constrained = false;
        if (!standin_args(g->generic_params, args, opaque, constrained)) continue;
        check_with_standins([&] { instantiate_function(g, args, g->loc); }, constrained);
    }
    // Generic member functions, of plain structs and of generic structs (whose own parameters
    // get stand-ins too: the struct's methods are checked with them as well).
    for (size_t k = 0; k < structs; ++k)
        if (!result_.structs[k]->generic_origin)
            check_generic_methods_against_constraints(result_.structs[k], false, false, opaque);
    for (StructDecl* g : result_.generic_structs) {
        std::vector<GenericArg> args;
        bool constrained = false;
        StructDecl* inst = nullptr;
        bool any = standin_args(g->generic_params, args, opaque, constrained);
        if (any) {
            check_with_standins([&] { inst = instantiate_struct(g, args, g->loc); }, constrained);
        } else {
            // Nothing to stand in for (value parameters only): its generic methods are checked
            // in one of its instances (check_uninstantiated_generics made one if none was).
            for (size_t k = 0; k < structs && !inst; ++k)
                if (result_.structs[k]->generic_origin == g) inst = result_.structs[k];
        }
        if (inst) check_generic_methods_against_constraints(inst, constrained, any, opaque);
    }
    instances_.set_making_representatives(false);
    // Drop what the check made: its instances (and any instance that names a stand-in).
    drop_made_since(functions, structs, opaque);
    derivative_calls_.resize(derivative_calls);
}

void Sema::drop_made_since(size_t functions, size_t structs, const std::set<const Type*>& opaque) {
    std::set<const void*> dropped;
    for (size_t k = functions; k < result_.functions.size(); ++k) dropped.insert(result_.functions[k]);
    for (size_t k = structs; k < result_.structs.size(); ++k) {
        dropped.insert(result_.structs[k]);
        module_.structs.erase(result_.structs[k]->name);
    }
    result_.functions.resize(functions);
    result_.structs.resize(structs);
    instances_.forget_if([&](const void* instance, const std::vector<GenericArg>& args) {
        bool named = dropped.count(instance) != 0;
        for (const GenericArg& a : args) named |= opaque.count(a.type) != 0;
        return named;
    });
}

}  // namespace sg::lang
