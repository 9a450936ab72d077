// src/lang/sema_higher_order.cpp — derivative operators applied to a derivative:
// `fwd_diff(fwd_diff(f))` and `bwd_diff(fwd_diff(f))`. The inner `fwd_diff(f)` is a function of
// its own: a declaration without a body whose signature is the derived one (docs/language.md,
// "Autodiff") and which names what it derives (`derivative_of`); lowering turns it into f's
// derivative stub, and the outer operator differentiates that stub like any other function.
// (Functions that call fwd_diff / bwd_diff need nothing here: autodiff generates the stubs
// they call first and inlines them.)
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// `fwd_diff` / `bwd_diff` (or their `__` spellings) applied to one argument: 1 forward,
/// 2 backward, 0 anything else.
int derivative_operator(const Expr* e) {
    if (e->kind != ExprKind::Call || e->operands.size() != 2 || e->operands[0]->kind != ExprKind::Name) return 0;
    const std::string& n = e->operands[0]->name;
    if (n == "fwd_diff" || n == "__fwd_diff") return 1;
    if (n == "bwd_diff" || n == "__bwd_diff") return 2;
    return 0;
}

}  // namespace

FunctionDecl* Sema::derivative_function(Expr* outer, Expr* target) {
    const std::string& outer_name = outer->operands[0]->name;
    int op = derivative_operator(target);
    if (!op) {
        diags_.error(target->loc, outer_name + " needs the name of a function", 33070);  // Slang: expected a function
        return nullptr;
    }
    const std::string& n = target->operands[0]->name;
    Expr* inner = target->operands[1];
    // As in Slang, an operator applies to a function or to fwd_diff of one: what a backward
    // derivative would differentiate has no derivative (30027), and a third operator needs a
    // conformance of the nested pair that Slang leaves optional (30403). A function that calls
    // the derivative can be differentiated instead.
    if (op == 2) {
        diags_.error(outer->operands[0]->loc,
                     outer_name + " of " + n + "(...): a backward derivative has no derivative of its own; "
                                           "differentiate a function that calls " + n + " instead",
                     30027);
        return nullptr;
    }
    if (derivative_operator(inner)) {
        diags_.error(outer->operands[0]->loc,
                     "three derivative operators nested (" + outer_name + " of " + n + " of " +
                         inner->operands[0]->name + "); differentiate a function that calls the inner ones instead",
                     30403);
        return nullptr;
    }
    FunctionDecl* f = nullptr;
    if (inner->kind == ExprKind::Name && !lookup_local(inner->name) && !module_.generic_functions.count(inner->name)) {
        auto it = module_.functions.find(inner->name);
        if (it == module_.functions.end()) {
            diags_.error(inner->loc, n + " needs the name of a function", 33070);
            return nullptr;
        }
        if (it->second.size() != 1) {
            diags_.unsupported(inner->loc, "a derivative of a derivative of an overloaded function");
            return nullptr;
        }
        f = it->second.front();
    } else if (inner->kind == ExprKind::Name && module_.generic_functions.count(inner->name)) {
        diags_.unsupported(inner->loc, "a derivative of a derivative of a generic function");
        return nullptr;
    } else {
        diags_.error(inner->loc, n + " needs the name of a function", 33070);
        return nullptr;
    }
    if (!f->is_differentiable) {  // Slang: E30027 (the derivative member does not exist)
        diags_.error(target->operands[0]->loc, n + " of '" + f->name + "', which is not [Differentiable]", 30027);
        return nullptr;
    }
    for (const VarDecl* p : f->params)
        if (p->type && p->type->is_tensor()) {
            diags_.unsupported(target->loc, "a derivative of a derivative of a function with tensor parameters");
            return nullptr;
        }
    // Its availability (a custom derivative of the other kind only, ...) is checked with the
    // other derivative calls; the inner call names f for that and for the recursion check.
    target->diff_target = f;
    target->type = types_.void_type();
    derivative_calls_.push_back({target, false});
    // A user-supplied [ForwardDerivative] is the derivative function itself.
    if (f->custom_forward) return f->custom_forward;

    auto it = derivative_functions_.find(f);
    if (it != derivative_functions_.end()) return it->second;
    auto* d = ast_.make<FunctionDecl>();
    d->loc = f->loc;
    d->name = "fwd_diff(" + f->name + ")";
    d->is_differentiable = true;
    d->derivative_of = f;
    for (const DerivedParam& p : forward_signature(types_, *f)) {
        auto* v = ast_.make<VarDecl>();
        v->loc = f->loc;
        v->name = f->params[size_t(p.source_param)]->name;
        v->type = p.type;
        v->dir = p.dir;
        v->is_param = true;
        // What takes no derivative in the derivative: the primal's non-differentiable parameters.
        v->is_no_diff = !param_is_differentiable(types_, *f->params[size_t(p.source_param)]);
        d->params.push_back(v);
    }
    const Type* r = f->result_type;
    bool diff_result = !r->is_void() && !f->return_no_diff && types_.is_differentiable(r);
    d->result_type = diff_result ? types_.pair(r) : r;
    derivative_functions_[f] = d;
    return d;
}

}  // namespace sg::lang
