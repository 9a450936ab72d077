// src/lang/sema_generic_requirements.cpp — generic method requirements of user interfaces:
// `interface IScale { T scale<T : IFloat>(T x); }`, met by a struct's generic method.
//
// As in slangc, a struct's generic method meets a generic requirement when it has as many
// generic parameters, of the same kinds, each of its constraints is implied by the
// requirement's (a weaker one, or none, is fine: `T scale<T : IArithmetic>` meets
// `T scale<T : IFloat>`, `T scale<T : __BuiltinFloatingPointType>` does not), and the same
// signature once its parameters are renamed to the requirement's (38105 otherwise, also for
// another return type); as for other requirements, a static method meets a non-static one, a
// non-mutating one a [mutating] one, and any parameter direction an `inout` one. A non-generic
// requirement (`float scale(float x)`) is also met by a generic method that specializes to it.
// Calls through a parameter constrained by the interface (`u.scale<float>(x)`, `u.scale(x)`)
// need nothing here: in each instantiation the parameter is the conforming struct, whose generic
// method is instantiated for the call (sema_generic_methods.cpp); as declared, the interface's
// stand-in has the requirement itself.
#include "lang/sema_internal.h"

namespace sg::lang {

bool Sema::generic_signature(const FunctionDecl* f, const Substitution* outer, const std::vector<GenericArg>& args,
                             GenericSignature& out) {
    Substitution sub;
    if (outer) sub = *outer;
    for (size_t k = 0; k < f->generic_params.size() && k < args.size(); ++k) {
        const GenericParam& p = f->generic_params[k];
        if (p.is_value) sub.values[p.name] = generic_value_constant(ast_, types_, p, args[k].value);
        else sub.types[p.name] = args[k].type;
    }
    const Substitution* saved = subst_;
    subst_ = &sub;
    size_t mark = diags_.all().size();
    out.result = resolve_type(f->return_type);
    out.params.clear();
    for (const VarDecl* p : f->params)
        if (p != f->this_param) out.params.push_back({resolve_type(p->type_expr), p->dir});
    subst_ = saved;
    bool ok = diags_.all().size() == mark;
    diags_.take_from(mark);  // a signature that does not resolve is reported where it is declared
    return ok;
}

int Sema::compare_generic_signatures(const FunctionDecl* r, const Substitution& assoc, const FunctionDecl* m,
                                     const StructDecl* s) {
    // The k-th generic parameter of both is the stand-in of r's (or its representative where no
    // stand-in models it); what the comparison instantiates (Box<T>) is dropped afterwards.
    const size_t functions = result_.functions.size(), structs = result_.structs.size();
    const bool unmodelled = standins_.unmodelled();  // a stand-in check may be in progress
    std::vector<GenericArg> types;
    bool comparable = true;
    for (const GenericParam& p : r->generic_params) {
        if (p.is_value) types.push_back({nullptr, 0, true});
        else if (p.constraint.empty() || standin_models(p.constraint))
            types.push_back({opaque_type(p.name, p.constraint), 0, false});
        else if (!representative_args({p}, types)) {
            comparable = false;  // no type to compare with
            break;
        }
    }
    int differs = 0;
    // Twice, with other values for the value parameters (a vector<float, N> is no float4).
    for (int pass = 0; pass < 2 && !differs && comparable; ++pass) {
        std::vector<GenericArg> args = types;
        for (size_t k = 0; k < args.size(); ++k)
            if (args[k].is_value) args[k].value = pass == 0 ? 2 + int64_t(k % 3) : 4 - int64_t(k % 3);
        GenericSignature want, have;
        const Substitution* outer = substitution_of_struct(s);
        bool ok = generic_signature(r, &assoc, args, want) && generic_signature(m, outer, args, have);
        if (!ok) {
            // A stand-in is no vector element: the constraints' representative types instead.
            std::vector<GenericArg> rep;
            if (!representative_args(r->generic_params, rep)) break;
            for (size_t k = 0; k < rep.size(); ++k)
                if (!rep[k].is_value) args[k] = rep[k];
            if (!generic_signature(r, &assoc, args, want) || !generic_signature(m, outer, args, have))
                break;  // cannot tell: the declarations' own errors are reported
        }
        if (want.params.size() != have.params.size()) differs = 1;
        for (size_t k = 0; !differs && k < want.params.size(); ++k)
            if (want.params[k].first != have.params[k].first ||
                !direction_meets(want.params[k].second, have.params[k].second))
                differs = 1;
        if (!differs && want.result != have.result) differs = 2;
    }
    // Only what the comparison made: a stand-in check in progress may hold instances of the same
    // stand-ins.
    drop_made_since(functions, structs, {});
    standins_.set_unmodelled(unmodelled);
    return differs;
}

void Sema::check_generic_requirement(StructDecl* s, const StructDecl* iface, const FunctionDecl* r,
                                     const Substitution& assoc) {
    const FunctionDecl* found = nullptr;
    const FunctionDecl* near = nullptr;
    std::string mismatch;
    int code = 38100;
    const std::string& name = r->member_name;
    for (const FunctionDecl* m : s->methods) {
        if (m->member_name != name || m->is_init) continue;
        near = m;
        code = 38105;
        if (m->generic_params.empty()) {
            mismatch = " (its '" + name + "' is not generic)";
            continue;
        }
        if (r->is_static && !m->is_static) {  // a static method meets a non-static requirement
            mismatch = " (its '" + name + "' is not static)";
            continue;
        }
        bool same_params = m->generic_params.size() == r->generic_params.size();
        for (size_t k = 0; same_params && k < r->generic_params.size(); ++k)
            same_params = m->generic_params[k].is_value == r->generic_params[k].is_value;
        if (!same_params) {
            mismatch = " (its '" + name + "' has other generic parameters)";
            continue;
        }
        std::string weaker;
        for (size_t k = 0; k < r->generic_params.size() && weaker.empty(); ++k) {
            const GenericParam &want = r->generic_params[k], &have = m->generic_params[k];
            if (have.is_value || have.constraint.empty()) continue;
            if (want.constraint.empty() || !standin_implies(want.constraint, have.constraint))
                weaker = " (its generic parameter '" + have.name + "' requires '" + have.constraint +
                         "', which the requirement's '" + want.name + "'" +
                         (want.constraint.empty() ? "" : " : '" + want.constraint + "'") + " does not imply)";
        }
        if (!weaker.empty()) {
            mismatch = weaker;
            continue;
        }
        int differs = compare_generic_signatures(r, assoc, m, s);
        if (differs) {
            mismatch = differs == 1 ? " (its '" + name + "' has another signature)"
                                    : " (its '" + name + "' has another signature: another return type)";
            continue;
        }
        if (find_attribute(m->attrs, "mutating") && !find_attribute(r->attrs, "mutating")) {
            mismatch = " (its '" + name + "' is [mutating], the requirement is not)";
            continue;
        }
        found = m;
        break;
    }
    if (!found) {
        diags_.error(near ? near->loc : s->loc,
                     "struct " + s->name + " does not implement generic method '" + name + "' required by interface '" +
                         iface->name + "'" + mismatch,
                     code);
        return;
    }
    auto differentiable = [](const FunctionDecl* f) {
        return find_attribute(f->attrs, "Differentiable") || find_attribute(f->attrs, "BackwardDifferentiable");
    };
    if (differentiable(r) && !differentiable(found))
        diags_.error(found->loc,
                     "method '" + found->name + "' must be [Differentiable]: interface '" + iface->name +
                         "' requires it",
                     38105);
}

FunctionDecl* Sema::generic_method_meeting(StructDecl* s, const FunctionDecl* r, const Type* ret,
                                           const std::vector<const Type*>& params) {
    for (FunctionDecl* m : s->methods) {
        if (m->member_name != r->member_name || m->generic_params.empty() || (r->is_static && !m->is_static) ||
            m->params.size() != params.size())
            continue;
        // Its generic arguments inferred from the requirement's parameter types, as for a call.
        std::vector<Expr*> args;
        for (const Type* t : params) {
            auto* a = ast_.make<Expr>();
            a->kind = ExprKind::Name;
            a->loc = s->loc;
            a->type = t;
            args.push_back(a);
        }
        std::vector<GenericArg> gargs;
        if (!infer_generic_args(m, args, gargs, 0, s->loc, false)) continue;
        bool ok = true;
        for (size_t k = 0; k < gargs.size() && ok; ++k) ok = satisfies(m->generic_params[k], gargs[k]);
        if (!ok) continue;
        FunctionDecl* inst = instantiate_function(m, gargs, s->loc);
        if (!inst || inst->result_type != ret) continue;
        size_t first = inst->this_param ? 1 : 0;
        bool same = inst->params.size() - first == params.size();
        for (size_t k = 0; same && k < params.size(); ++k)
            same = inst->params[k + first]->type == params[k] &&
                   direction_meets(r->params[k]->dir, inst->params[k + first]->dir);
        if (same) return inst;
    }
    return nullptr;
}

}  // namespace sg::lang
