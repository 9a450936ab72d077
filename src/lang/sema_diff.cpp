// src/lang/sema_diff.cpp — differentiability rules about functions as a whole: custom derivative
// attributes (their signature is the derived one) and the availability of a derivative for
// everything a bwd_diff/fwd_diff call goes through. Errors 41022 and 41031, which follow the
// flow of derivatives inside one body, are in sema_flow.cpp.
#include <functional>
#include <set>

#include "lang/sema_internal.h"

namespace sg::lang {

bool body_is_differentiated(const FunctionDecl& f) {
    return find_attribute(f.attrs, "Differentiable") || find_attribute(f.attrs, "BackwardDifferentiable") ||
           find_attribute(f.attrs, "ForwardDifferentiable");
}

bool differentiates_forward_only(const FunctionDecl& f) {
    if (f.primal_substitute) return differentiates_forward_only(*f.primal_substitute);  // its derivatives are g's
    if (find_attribute(f.attrs, "Differentiable") || find_attribute(f.attrs, "BackwardDifferentiable") ||
        f.custom_backward)
        return false;
    return find_attribute(f.attrs, "ForwardDifferentiable") || f.custom_forward;
}

namespace {

/// The expected signature of a custom derivative, for messages: `void f_bwd(inout DifferentialPair<float>, float)`.
std::string signature_text(const std::string& name, const Type* ret, const std::vector<DerivedParam>& sig) {
    std::string s = type_name(ret) + " " + name + "(";
    for (size_t k = 0; k < sig.size(); ++k) {
        s += k ? ", " : "";
        if (sig[k].dir == ParamDir::InOut) s += "inout ";
        if (sig[k].dir == ParamDir::Out) s += "out ";
        s += type_name(sig[k].type);
    }
    return s + ")";
}

bool signature_matches(const FunctionDecl& g, const Type* ret, const std::vector<DerivedParam>& sig) {
    if (g.result_type != ret || g.params.size() != sig.size()) return false;
    for (size_t k = 0; k < sig.size(); ++k)
        if (g.params[k]->type != sig[k].type || g.params[k]->dir != sig[k].dir) return false;
    return true;
}

/// The differentiable callees a derivative of `body` goes through: calls of differentiable
/// functions outside no_diff and detach (their results are detached, so no derivative passes),
/// and with `detached` also those inside (forward mode still calls their derivatives there, as
/// Slang does: a function with only a [BackwardDerivative] gives 0 under no_diff too).
void collect_differentiated_callees(const Expr* e, std::vector<FunctionDecl*>& out, bool detached) {
    if (!e) return;
    if (e->kind == ExprKind::NoDiff && !detached) return;
    if (e->kind == ExprKind::Call && e->builtin && e->builtin->kind == BuiltinKind::Detach && !detached) return;
    if (e->kind == ExprKind::Call && e->callee && e->callee->is_differentiable) out.push_back(e->callee);
    for (const Expr* o : e->operands) collect_differentiated_callees(o, out, detached);
}

void collect_differentiated_callees(const Stmt* s, std::vector<FunctionDecl*>& out, bool detached) {
    if (!s) return;
    for (const Stmt* b : s->body) collect_differentiated_callees(b, out, detached);
    for (const VarDecl* v : s->decls) collect_differentiated_callees(v->init, out, detached);
    for (const Expr* e : {s->expr, s->cond, s->step}) collect_differentiated_callees(e, out, detached);
    for (const Stmt* c : {s->init, s->then_stmt, s->else_stmt}) collect_differentiated_callees(c, out, detached);
}

/// The result type of f's derivative: void for bwd_diff; for fwd_diff a pair of a differentiable
/// result, else the result itself.
const Type* derived_result_type(TypeContext& types, const FunctionDecl& f, bool backward) {
    if (backward) return types.void_type();
    const Type* r = f.result_type;
    return (!r->is_void() && !f.return_no_diff && types.is_differentiable(r)) ? types.pair(r) : r;
}

}  // namespace

const std::vector<FunctionDecl*>* Sema::attribute_functions(const Attribute& a) {
    if (a.args.size() != 1 || a.args[0]->kind != ExprKind::Name) {
        diags_.error(a.loc, "[" + a.name + "] takes the name of a function");
        return nullptr;
    }
    auto it = module_.functions.find(a.args[0]->name);
    if (it == module_.functions.end()) {
        diags_.error(a.args[0]->loc, "unknown function '" + a.args[0]->name + "' in [" + a.name + "]",
                     30015);  // Slang: undefined identifier
        return nullptr;
    }
    return &it->second;
}

void Sema::resolve_custom_derivative(FunctionDecl* f, const Attribute& a, bool backward) {
    std::optional<std::vector<FunctionDecl*>> overloads = derivative_attribute_candidates(f, a);
    if (!overloads) return;
    const std::string name = attribute_target_text(a);  // `g`, `S.g`
    // The derivative has exactly the derived signature (docs/language.md, "Autodiff").
    std::vector<DerivedParam> sig = backward ? backward_signature(types_, *f) : forward_signature(types_, *f);
    const Type* ret = derived_result_type(types_, *f, backward);
    bool same_count = false;
    // As in slangc, a method whose `this` is passed as is (its struct is not differentiable)
    // takes its derivative from a method with `this` too: a static method or free function
    // taking the struct first does not count (31150; a differentiable struct's is static: 31156).
    const bool needs_this = f->this_param && !sig.empty() && !sig[0].type->is_pair();
    for (FunctionDecl* g : *overloads) {
        if (needs_this && !g->this_param) continue;
        if (signature_matches(*g, ret, sig)) {
            if (!check_static_derivative(f, g, a)) return;  // 31156 (sema_qualified_attributes.cpp)
            (backward ? f->custom_backward : f->custom_forward) = g;
            f->is_differentiable = true;
            return;
        }
        same_count |= g->params.size() - (g->this_param ? 1 : 0) == sig.size();  // written parameters, as Slang counts
    }
    // Slang: 31150 (signature mismatch) for another number of parameters, else 31149 (a
    // parameter's type).
    if (needs_this) {  // `this` implicit: the signature without it
        const std::vector<DerivedParam> rest(sig.begin() + 1, sig.end());
        diags_.error(a.args[0]->loc,
                     "[" + a.name + "(" + name + ")] on '" + f->name + "': '" + name + "' must be a method of struct " +
                         f->owner->name + " (not static) with the signature " + signature_text(name, ret, rest),
                     same_count ? 31149 : 31150);
        return;
    }
    diags_.error(a.args[0]->loc,
                 "[" + a.name + "(" + name + ")] on '" + f->name + "': '" + name + "' must have the signature " +
                     signature_text(name, ret, sig),
                 same_count ? 31149 : 31150);
}

void Sema::resolve_derivative_of(FunctionDecl* g, const Attribute& a, bool backward) {
    std::optional<std::vector<FunctionDecl*>> overloads = derivative_attribute_candidates(g, a);
    if (!overloads) return;
    const std::string name = attribute_target_text(a);  // `g`, `S.g`
    // The overload of `name` whose derived signature is g's own.
    FunctionDecl* primal = nullptr;
    std::string expected;
    for (FunctionDecl* f : *overloads) {
        if (f == g) continue;
        std::vector<DerivedParam> sig = backward ? backward_signature(types_, *f) : forward_signature(types_, *f);
        const Type* ret = derived_result_type(types_, *f, backward);
        if (signature_matches(*g, ret, sig)) {
            primal = f;
            break;
        }
        if (expected.empty()) expected = signature_text(g->name, ret, sig);
    }
    if (!primal) {
        // Slang's 31149 ("custom derivative parameter type mismatch"), at the attribute.
        diags_.error(a.loc, "[" + a.name + "(" + name + ")] on '" + g->name + "': '" + g->name +
                                "' must have the signature " + expected,
                     31149);
        return;
    }
    if (!check_static_derivative(primal, g, a)) return;  // 31156
    FunctionDecl*& slot = backward ? primal->custom_backward : primal->custom_forward;
    if (slot && slot != g) {
        diags_.error(a.loc, "'" + name + "' already has a " + std::string(backward ? "backward" : "forward") +
                                " derivative ('" + slot->name + "')");
        return;
    }
    slot = g;
    primal->is_differentiable = true;
}

void Sema::check_derivative_availability(Expr* call, FunctionDecl* f, bool backward) {
    // Bodies without the needed custom derivative are differentiated (they are inlined first);
    // a function that names only the other kind of custom derivative cannot be: we would have
    // to transpose (or invert) the user's derivative, which is not supported. Except, as in
    // Slang, forward mode through a function with only a [BackwardDerivative] (and no
    // [Differentiable] body): each of its calls gives 0 (result, out and inout arguments) with
    // a zero derivative, under no_diff too (autodiff/forward.cpp); a warning names it.
    std::set<FunctionDecl*> seen;
    std::function<bool(FunctionDecl*)> visit = [&](FunctionDecl* g) {
        if (!seen.insert(g).second) return true;
        if (g->primal_substitute) return visit(g->primal_substitute);  // differentiated in g's place
        if (backward ? g->custom_backward : g->custom_forward) return true;
        if (backward ? g->custom_forward : g->custom_backward) {
            const char* have = backward ? "[ForwardDerivative]" : "[BackwardDerivative]";
            const char* need = backward ? "[BackwardDerivative]" : "[ForwardDerivative]";
            if (g == f) {  // the derivative asked for does not exist: Slang's 30027 (member not found)
                diags_.error(call->loc,
                             std::string(backward ? "bwd_diff" : "fwd_diff") + " of '" + g->name + "', which has a " +
                                 have + " but no " + need + " and is not [Differentiable]",
                             30027);
                return false;
            }
            if (!backward && !body_is_differentiated(*g)) {
                diags_.warning(call->loc, "fwd_diff through '" + g->name +
                                              "', which has a [BackwardDerivative] but no [ForwardDerivative]: "
                                              "each call of '" + g->name +
                                              "' there gives 0 (its result, out and inout arguments) with a zero "
                                              "derivative, as in Slang; give '" + g->name + "' a [ForwardDerivative]");
                return true;
            }
            diags_.unsupported(call->loc, std::string(backward ? "bwd_diff" : "fwd_diff") + " through '" + g->name +
                                              "' (it has a " + have + " but no " + need + ")");
            return false;
        }
        std::vector<FunctionDecl*> callees;
        collect_differentiated_callees(g->body, callees, !backward);
        for (FunctionDecl* c : callees)
            if (!visit(c)) return false;
        return true;
    };
    visit(f);
}

}  // namespace sg::lang
