// src/lang/sema_primal_substitute.cpp — `[PrimalSubstitute(g)]` on f, `[PrimalSubstituteOf(f)]`
// on g: g stands in for f wherever a derivative is computed.
//
//   [PrimalSubstitute(sample_ref)] float sample(float x) { ... }        // fast, no derivative
//   [Differentiable] float sample_ref(float x) { ... }                   // its reference version
//
// A plain call of f runs f. A derivative that goes through f (fwd_diff / bwd_diff of a caller,
// or of f itself) differentiates g in its place, primal included: fwd_diff(h)(...).p computes
// g's value where h calls f (slangc 0.43.1 does the same). g must have f's signature (Slang:
// 31150); f gets its derivatives only from g, so f is not [Differentiable] itself (Slang then
// reports 41022 at f's differentiated calls; here it is reported at the attribute), and a g that
// is not differentiable leaves f without one (41022 at such a call, as in Slang). Lowering gives
// f g's forward and backward derivatives as its custom ones (ir/lower.cpp). g may be a struct's
// static method (`[PrimalSubstitute(S.g)]`). Not supported yet: on generic functions and
// methods, and where f or g uses a static global.
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

bool same_signature(const FunctionDecl& a, const FunctionDecl& b) {
    if (a.result_type != b.result_type || a.params.size() != b.params.size()) return false;
    for (size_t k = 0; k < a.params.size(); ++k)
        if (a.params[k]->type != b.params[k]->type || a.params[k]->dir != b.params[k]->dir) return false;
    return true;
}

bool declared_differentiable(const FunctionDecl& f) {
    return body_is_differentiated(f) || f.custom_backward || f.custom_forward;
}

}  // namespace

void Sema::resolve_primal_substitute(FunctionDecl* f, const Attribute& a, bool of) {
    if (f->owner || !f->generic_params.empty()) {
        diags_.unsupported(a.loc, "[" + a.name + "] on a method or a generic function");
        return;
    }
    std::optional<std::vector<FunctionDecl*>> candidates = derivative_attribute_candidates(f, a);
    if (!candidates) return;
    FunctionDecl* other = nullptr;
    for (FunctionDecl* c : *candidates)
        if (c != f && (!c->owner || c->is_static) && c->generic_params.empty() && same_signature(*f, *c)) other = c;
    const std::string name = attribute_target_text(a);
    if (!other) {  // Slang: 31150 custom derivative signature mismatch
        diags_.error(a.loc, "[" + a.name + "(" + name + ")] on '" + f->name + "': '" + name +
                                "' must be a function with the same parameters and result as '" + f->name + "'",
                     31150);
        return;
    }
    FunctionDecl* original = of ? other : f;
    FunctionDecl* substitute = of ? f : other;
    if (declared_differentiable(*original)) {  // Slang: 41022 at its differentiated calls
        diags_.error(a.loc, "'" + original->name + "' has a primal substitute ('" + substitute->name +
                                "'), so its derivatives come from it: '" + original->name +
                                "' cannot be differentiable itself (remove its [Differentiable] or custom derivative)",
                     41022);
        return;
    }
    if (original->primal_substitute && original->primal_substitute != substitute) {
        diags_.error(a.loc, "'" + original->name + "' already has a primal substitute ('" +
                                original->primal_substitute->name + "')");
        return;
    }
    original->primal_substitute = substitute;
    // Calls of the original in differentiated code are differentiable when the substitute is.
    if (declared_differentiable(*substitute)) original->is_differentiable = true;
}

void Sema::check_primal_substitute_globals() {
    for (FunctionDecl* f : result_.functions) {
        FunctionDecl* s = f->primal_substitute;
        if (!s) continue;
        FunctionDecl* user = !f->static_globals.empty() ? f : !s->static_globals.empty() ? s : nullptr;
        if (user)
            diags_.unsupported(user->loc, "static variable '" + user->static_globals.front()->name + "' used by '" +
                                              user->name + "', a function with a primal substitute or one");
    }
}

}  // namespace sg::lang
