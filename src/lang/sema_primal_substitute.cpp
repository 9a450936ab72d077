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
// static method (`[PrimalSubstitute(S.g)]`). On a method, g is a method of the same struct with
// the same parameters (`this` included: both [mutating] or neither; as in slangc, not a static
// method or free function taking the struct first); on a generic function (or a method of a generic struct), g is
// the same generic's instance for the same arguments (`sq<float>` by `sq_ref<float>`). f and g
// may use globals: f's callers pass it g's too (sema_globals.cpp).
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
    // The functions it may name: as for a custom derivative, a method's struct's methods too and,
    // for an instance of a generic, the same generic's instance for the same arguments.
    std::optional<std::vector<FunctionDecl*>> candidates = derivative_attribute_candidates(f, a);
    if (!candidates) return;
    FunctionDecl* other = nullptr;
    bool not_generic = false;  // a generic's instance names a function that is not one
    for (FunctionDecl* c : *candidates) {  // `this` is a parameter like any: a method of the same struct
        if (c == f || !c->generic_params.empty() || !same_signature(*f, *c)) continue;
        if (f->this_param && !c->this_param) continue;  // slangc: 31150 for one taking the struct first
        if (f->generic_origin && !c->generic_origin) not_generic = true;
        else other = c;
    }
    const std::string name = attribute_target_text(a);
    if (!other && not_generic) {  // Slang: 31148 cannot resolve derivative function
        diags_.error(a.loc, "[" + a.name + "(" + name + ")] on generic '" + f->generic_origin->name + "': '" + name +
                                "' must be a generic function taking the same generic arguments",
                     31148);
        return;
    }
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

}  // namespace sg::lang
