// src/lang/sema_flow.cpp — errors 41022 and 41031: the flow of derivatives through one
// differentiated body (a function with [Differentiable]).
//
// Two facts are tracked for every value, flow-sensitively over the structured statements
// (branches merge by union, loops iterate to a fixed point, variables hold the facts of what
// was last assigned to them):
//
//   * it CARRIES a derivative: it comes from a differentiable, non-no_diff in/inout parameter
//     or a load from a differentiable tensor, through differentiable operations (arithmetic,
//     constructors, member and element access, differentiable intrinsics and callees). Literals,
//     `no_diff e`, `detach(e)`, no_diff fields and values of non-differentiable types (int
//     conversions, comparisons) do not carry.
//   * it LOST a derivative: it is (or is computed from) the result of a call of a
//     non-differentiable function (user function or intrinsic) that received a carrying
//     argument, outside `no_diff` (detach's argument needs its derivative, as in Slang).
//
// 41022 is reported at such a call when a value that lost its derivative reaches a place that
// needs one: the function's differentiable return value, an argument of a differentiable
// function or intrinsic, a differentiable out/inout parameter or a differentiable tensor. A
// result that is never used that way (an index computed with floor, a branch condition) is fine.
// 41031 is reported where a carrying value of a differentiable type is stored into a location
// that cannot hold a derivative: a no_diff parameter, a no_diff field, or a field of a struct
// that is not IDifferentiable (assignment or out/inout argument). As in Slang, `no_diff` on a
// local changes nothing, and an initializer list silently drops what goes into such a field.
#include <map>
#include <set>
#include <tuple>

#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// A function that differentiates forward only ([ForwardDifferentiable], or a [ForwardDerivative]
/// alone): to a [Differentiable] body (which Slang differentiates both ways) it is a
/// non-differentiable callee (Slang's 41022); a forward-only body may call it.
bool forward_only(const FunctionDecl& f) { return differentiates_forward_only(f); }

/// Where an expression starts in the source (binary operators and member accesses carry the
/// location of their operator or member name): diagnostics point at the whole expression.
SourceLoc start_of(const Expr* e) {
    while (e->kind == ExprKind::Binary || e->kind == ExprKind::Assign || e->kind == ExprKind::Index ||
           e->kind == ExprKind::Member || e->kind == ExprKind::Postfix || e->kind == ExprKind::Conditional ||
           e->kind == ExprKind::Comma || e->kind == ExprKind::Call) {
        if (e->operands.empty() || !e->operands[0]->loc.valid()) break;
        e = e->operands[0];
    }
    return e->loc;
}

/// Source-like text of an lvalue for messages (`p.mass`, `a[...]`).
std::string lvalue_text(const Expr* e) {
    switch (e->kind) {
    case ExprKind::Name: return e->name;
    case ExprKind::Member: return lvalue_text(e->operands[0]) + "." + e->name;
    case ExprKind::Index: return lvalue_text(e->operands[0]) + "[...]";
    default: return "the location";
    }
}

/// What is known about one value.
struct Flow {
    bool carries = false;
    const Expr* lost = nullptr;  ///< the non-differentiable call whose result it depends on

    Flow& operator|=(const Flow& o) {
        carries |= o.carries;
        if (!lost) lost = o.lost;
        return *this;
    }
};

/// What is known about the variables at one point of the body.
struct State {
    std::set<const VarDecl*> carrying;
    std::map<const VarDecl*, const Expr*> lost;

    void merge(const State& o) {
        carrying.insert(o.carrying.begin(), o.carrying.end());
        lost.insert(o.lost.begin(), o.lost.end());
    }
    bool operator==(const State& o) const = default;
};

class DerivativeFlow {
public:
    DerivativeFlow(TypeContext& types, Diagnostics& diags, const FunctionDecl& fn)
        : types_(types), diags_(diags), fn_(fn) {}

    void run() {
        for (const VarDecl* p : fn_.params)
            if (param_is_differentiable(types_, *p) && p->dir != ParamDir::Out) state_.carrying.insert(p);
        stmt(fn_.body);
        // Emit what the analysis found, once per location and message.
        std::set<std::tuple<uint32_t, int, std::string>> seen;
        for (const Pending& d : pending_)
            if (seen.insert({d.loc.offset, d.code, d.message}).second) {
                if (d.warning) diags_.warning(d.loc, d.message, d.code);
                else diags_.error(d.loc, d.message, d.code);
            }
    }

private:
    bool diff(const Type* t) const { return t && !t->is_error() && types_.is_differentiable(t); }
    /// `f` for a value of type `t`: values of non-differentiable types carry nothing.
    Flow typed(Flow f, const Type* t) const { return diff(t) ? f : Flow{}; }

    void stmt(const Stmt* s);
    void loop(const Stmt* s);
    void loop_once(const Stmt* s);
    void switch_stmt(const Stmt* s);
    Flow expr(const Expr* e);
    Flow call(const Expr* e);
    Flow user_call(const Expr* e, const FunctionDecl& f, const std::vector<Flow>& args);
    Flow init_list(const Expr* e);
    /// `argument`: lhs is an out/inout argument of a differentiable callee.
    void store(const Expr* lhs, const Flow& value, bool whole_assignment, bool argument = false);
    /// `value` reaches a place that needs a derivative: a lost one is an error (41022).
    void needs_derivative(const Flow& value);
    void report(SourceLoc loc, std::string message, int code) { pending_.push_back({loc, std::move(message), code}); }
    void warn(SourceLoc loc, std::string message) { pending_.push_back({loc, std::move(message), 0, true}); }

    /// A diagnostic found by the current pass over the body; loops discard those of the passes
    /// before their fixed point.
    struct Pending {
        SourceLoc loc;
        std::string message;
        int code;
        bool warning = false;
    };

    TypeContext& types_;
    Diagnostics& diags_;
    const FunctionDecl& fn_;
    State state_;
    int detached_ = 0;  ///< inside `no_diff e` / `detach(e)`: losing a derivative is intended
    std::vector<bool> breakables_;            ///< enclosing loops (false) and switches (true), innermost last
    std::vector<std::vector<State>> switch_breaks_;  ///< per enclosing switch: the states at its breaks
    std::vector<Pending> pending_;
};

void DerivativeFlow::stmt(const Stmt* s) {
    if (!s) return;
    switch (s->kind) {
    case StmtKind::Block:
        for (const Stmt* b : s->body) stmt(b);
        break;
    case StmtKind::Expr: expr(s->expr); break;
    case StmtKind::Decl:
        for (const VarDecl* v : s->decls) {
            // `no_diff` on a local changes nothing in Slang: the derivative flows through it.
            Flow f = v->init ? typed(expr(v->init), v->type) : Flow{};
            // A declaration in a loop body starts afresh each iteration.
            if (f.carries) state_.carrying.insert(v);
            else state_.carrying.erase(v);
            if (f.lost) state_.lost[v] = f.lost;
            else state_.lost.erase(v);
        }
        break;
    case StmtKind::If: {
        expr(s->cond);
        State before = state_;
        stmt(s->then_stmt);
        State after_then = state_;
        state_ = before;
        stmt(s->else_stmt);
        state_.merge(after_then);
        break;
    }
    case StmtKind::For:
        stmt(s->init);
        loop(s);
        break;
    case StmtKind::While:
    case StmtKind::DoWhile: loop(s); break;
    case StmtKind::Switch: switch_stmt(s); break;
    case StmtKind::Break:
        if (!breakables_.empty() && breakables_.back()) switch_breaks_.back().push_back(state_);
        break;
    case StmtKind::Return:
        if (s->expr) {
            Flow f = expr(s->expr);
            if (!fn_.return_no_diff) needs_derivative(typed(f, fn_.result_type));
        }
        break;
    default: break;  // continue, empty, case labels, type aliases
    }
}

/// Section k is entered from its labels (with the state before the switch) or by falling
/// through from section k-1; it ends at a `break` directly in the body or falls through. The
/// state after the switch merges the state before it (no label matched), the states at every
/// break that leaves the switch, and the end of the last section. States only grow under
/// merge, so one pass in order covers every path (linear, also for nested switches).
void DerivativeFlow::switch_stmt(const Stmt* s) {
    expr(s->cond);
    const State before = state_;
    State out = before;
    breakables_.push_back(true);
    switch_breaks_.emplace_back();
    bool reachable = false;  // the current statement runs on some path
    for (const Stmt* b : s->body) {
        if (b->kind == StmtKind::Case) {
            if (reachable) state_.merge(before);
            else state_ = before;
            reachable = true;
            continue;
        }
        if (!reachable) continue;  // before the first label, or after a break: never runs
        stmt(b);
        if (b->kind == StmtKind::Break) reachable = false;
    }
    if (reachable) out.merge(state_);
    for (const State& b : switch_breaks_.back()) out.merge(b);
    switch_breaks_.pop_back();
    breakables_.pop_back();
    state_ = out;
}

void DerivativeFlow::loop_once(const Stmt* s) {
    State before = state_;
    breakables_.push_back(false);  // a break in the body leaves the loop, not a switch around it
    if (s->cond) expr(s->cond);
    stmt(s->then_stmt);
    if (s->step) expr(s->step);
    breakables_.pop_back();
    state_.merge(before);  // the body may run zero times
}

/// Iterates the body until the state is stable (it only grows, so this ends). The pass that
/// finds it stable ran with the loop's final state: its diagnostics are kept, earlier passes'
/// are dropped. A loop already stable on entry takes one pass, so nested loops cost linear time
/// in their depth (re-running a reporting pass per level would double it per level).
void DerivativeFlow::loop(const Stmt* s) {
    const size_t mark = pending_.size();
    for (;;) {
        pending_.resize(mark);
        State before = state_;
        loop_once(s);
        if (state_ == before) break;
    }
}

void DerivativeFlow::needs_derivative(const Flow& value) {
    if (!value.lost) return;
    const Expr* call = value.lost;
    bool intrinsic = !call->callee;
    std::string name = !intrinsic ? call->callee->name
                       : call->builtin->kind == BuiltinKind::Intrinsic ? std::string(intrinsic_info(call->builtin->intrinsic).name)
                                                                        : std::string(call->builtin->name);
    std::string fix = "mark the call no_diff (no_diff " + name + "(...))";
    if (!intrinsic) fix += " or make '" + name + "' [Differentiable]";
    std::string what = intrinsic ? "non-differentiable intrinsic '" : "non-differentiable function '";
    if (!intrinsic && forward_only(*call->callee)) {
        what = "function '";
        fix = std::string(find_attribute(call->callee->attrs, "ForwardDifferentiable")
                              ? "it is [ForwardDifferentiable] (forward only); "
                              : "it has a [ForwardDerivative] but no backward derivative; ") +
              fix;
    }
    report(call->loc, "the derivative is lost in the call of " + what + name + "'; " + fix, 41022);
}

Flow DerivativeFlow::expr(const Expr* e) {
    if (!e) return {};
    switch (e->kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: return {};
    case ExprKind::Name: {
        if (e->ref != RefKind::Local) return {};
        Flow f;
        f.carries = state_.carrying.count(e->var_ref) != 0;
        auto it = state_.lost.find(e->var_ref);
        if (it != state_.lost.end()) f.lost = it->second;
        return typed(f, e->type);
    }
    case ExprKind::Unary:
    case ExprKind::Postfix: return typed(expr(e->operands[0]), e->type);
    case ExprKind::Binary: {
        Flow f = expr(e->operands[0]);
        f |= expr(e->operands[1]);
        return typed(f, e->type);
    }
    case ExprKind::Assign: {
        const Expr* lhs = e->operands[0];
        Flow f = expr(e->operands[1]);
        if (e->op != Op::Assign) f |= expr(lhs);
        f = typed(f, lhs->type);
        store(lhs, f, e->op == Op::Assign);
        return f;
    }
    case ExprKind::Conditional: {
        expr(e->operands[0]);
        Flow f = expr(e->operands[1]);
        f |= expr(e->operands[2]);
        return typed(f, e->type);
    }
    case ExprKind::Call:
    case ExprKind::TypeCtor: return call(e);
    case ExprKind::Index: {
        const Expr* base = e->operands[0];
        Flow f = expr(base);
        for (size_t k = 1; k < e->operands.size(); ++k) expr(e->operands[k]);
        if (base->type->is_tensor()) return typed(Flow{base->type->tensor.differentiable, nullptr}, e->type);
        return typed(f, e->type);
    }
    case ExprKind::Member: {
        const Expr* base = e->operands[0];
        Flow f = expr(base);
        if (e->ref == RefKind::Field && types_.fields(base->type)[size_t(e->field_index)].no_diff) f.carries = false;
        if (e->ref != RefKind::Field && e->ref != RefKind::Swizzle) return {};  // pair members, tensor shapes
        return typed(f, e->type);
    }
    case ExprKind::InitList: return init_list(e);
    case ExprKind::Comma: expr(e->operands[0]); return expr(e->operands[1]);
    case ExprKind::NoDiff:
        ++detached_;
        expr(e->operands[0]);
        --detached_;
        return {};
    case ExprKind::Cast: return typed(expr(e->operands[0]), e->type);  // `(float)x` keeps x's derivative
    }
    return {};
}

/// An initializer list stores each element into a field or element of its target; a struct
/// that is not IDifferentiable and no_diff fields are non-differentiable locations.
Flow DerivativeFlow::init_list(const Expr* e) {
    const Type* t = e->type;
    Flow all;
    for (size_t k = 0; k < e->operands.size(); ++k) {
        const Expr* op = e->operands[k];
        Flow f = expr(op);
        if (f.carries && t && t->is_struct()) {
            // As in Slang, an initializer list drops the derivative of an element that goes into
            // a no_diff field or a field of a non-differentiable struct (an assignment is 41031).
            const auto& fields = types_.fields(t);
            if (k < fields.size() && diff(fields[k].type) && (fields[k].no_diff || !diff(t))) continue;
        }
        all |= f;
    }
    return typed(all, t);
}

Flow DerivativeFlow::user_call(const Expr* e, const FunctionDecl& f, const std::vector<Flow>& args) {
    bool in_carries = false, writes_differentiable = false;
    for (size_t k = 0; k < f.params.size() && k < args.size(); ++k) {
        const VarDecl* p = f.params[k];
        if (p->dir != ParamDir::Out && args[k].carries && (!f.is_differentiable || !p->is_no_diff)) in_carries = true;
        if (p->dir != ParamDir::In && diff(p->type)) writes_differentiable = true;
    }
    // In a forward-only body a forward-only callee is differentiable.
    const bool callee_lost = !f.is_differentiable || (forward_only(f) && !forward_only(fn_));
    if (callee_lost) {
        // The result (and what the callee writes) lost the derivative of the arguments; a
        // derivative lost earlier passes through.
        const Expr* lost = (in_carries && !detached_ && (diff(e->type) || writes_differentiable)) ? e : nullptr;
        const Expr* lost_before = nullptr;
        for (size_t k = 0; k < args.size() && !lost_before; ++k) lost_before = args[k].lost;
        if (!lost) lost = lost_before;
        for (size_t k = 0; k < f.params.size(); ++k) {
            const VarDecl* p = f.params[k];
            if (p->dir == ParamDir::In) continue;
            if (p->dir == ParamDir::InOut && !f.is_differentiable && diff(p->type)) {
                // As in Slang, an inout argument of a non-differentiable function keeps the
                // derivative it had before the call (lowering: KeepDerivative), even under no_diff.
                if (k < args.size() && args[k].carries)
                    warn(e->loc, "the derivative of inout argument '" + p->name + "' of non-differentiable function '" +
                                     f.name + "' is kept from before the call, as if '" + f.name +
                                     "' left it unchanged (as Slang does); make '" + f.name + "' [Differentiable]");
                continue;
            }
            if (p->dir == ParamDir::Out && !f.is_differentiable && lost == e && diff(p->type)) {
                // As in Slang, what a non-differentiable function writes to an out argument
                // has a zero derivative (its result is 41022).
                warn(e->loc, "the derivative of out argument '" + p->name + "' of non-differentiable function '" +
                                 f.name + "' is taken as zero (as Slang does); mark the call no_diff or make '" +
                                 f.name + "' [Differentiable]");
                store(e->operands[k + 1], typed(Flow{false, lost_before}, p->type), true);
                continue;
            }
            store(e->operands[k + 1], typed(Flow{false, lost}, p->type), p->dir == ParamDir::Out);
        }
        return typed(Flow{false, (in_carries && !detached_ && diff(e->type)) ? e : lost_before}, e->type);
    }
    for (size_t k = 0; k < f.params.size() && k < args.size(); ++k) {
        const VarDecl* p = f.params[k];
        if (p->dir != ParamDir::Out && !p->is_no_diff && diff(p->type)) needs_derivative(args[k]);
    }
    for (size_t k = 0; k < f.params.size(); ++k) {
        const VarDecl* p = f.params[k];
        if (p->dir == ParamDir::In) continue;
        store(e->operands[k + 1], Flow{in_carries && !p->is_no_diff && diff(p->type), nullptr},
              p->dir == ParamDir::Out, /*argument=*/true);
    }
    return typed(Flow{in_carries && !f.return_no_diff, nullptr}, e->type);
}

Flow DerivativeFlow::call(const Expr* e) {
    if (e->kind == ExprKind::TypeCtor) {
        Flow f;
        for (const Expr* o : e->operands) f |= expr(o);
        return e->type->is_pair() ? Flow{} : typed(f, e->type);
    }
    const Expr* callee = e->operands[0];
    std::vector<Flow> args;
    auto eval_args = [&](bool detached) {
        detached_ += detached;
        for (size_t k = 1; k < e->operands.size(); ++k) args.push_back(expr(e->operands[k]));
        detached_ -= detached;
    };
    auto joined = [&] {
        Flow f;
        for (const Flow& a : args) f |= a;
        return f;
    };
    if (e->diff_target) {  // bwd_diff(f)(...) / fwd_diff(f)(...): its result is a new value (pairs carry no flow)
        eval_args(false);
        return {};
    }
    if (e->builtin && e->builtin->kind == BuiltinKind::DAdd) {  // `X.dadd(a, b)`: a sum, differentiable in both
        eval_args(false);
        for (const Flow& a : args) needs_derivative(a);
        return typed(Flow{joined().carries, nullptr}, e->type);
    }
    if (callee->kind == ExprKind::Member) {  // tensor methods and pair accessors
        const Expr* base = callee->operands[0];
        expr(base);
        eval_args(false);
        if (!e->builtin || !base->type->is_tensor()) return {};
        bool diff_tensor = base->type->tensor.differentiable;
        if (e->builtin->kind == BuiltinKind::TensorLoad) return typed(Flow{diff_tensor, nullptr}, e->type);
        if (diff_tensor && !args.empty()) needs_derivative(args.back());  // store/add of a value
        return {};
    }
    if (e->callee) {
        eval_args(false);
        return user_call(e, *e->callee, args);
    }
    if (callee->ref == RefKind::Type) {  // constructor call `float3(x)`
        eval_args(false);
        return e->type->is_pair() ? Flow{} : typed(joined(), e->type);
    }
    if (!e->builtin) {
        eval_args(false);
        return {};
    }
    switch (e->builtin->kind) {
    case BuiltinKind::Intrinsic: {
        eval_args(false);
        Flow f = joined();
        if (intrinsic_info(e->builtin->intrinsic).differentiable) {
            for (const Flow& a : args) needs_derivative(a);
            return typed(Flow{f.carries, nullptr}, e->type);
        }
        const Expr* lost = (f.carries && !detached_ && diff(e->type)) ? e : f.lost;
        return typed(Flow{false, lost}, e->type);
    }
    case BuiltinKind::Wave: {  // not differentiable, as in Slang: a derivative through one is lost
        eval_args(false);
        const Flow f = joined();
        return typed(Flow{false, (f.carries && !detached_ && diff(e->type)) ? e : f.lost}, e->type);
    }
    case BuiltinKind::Detach:
        // detach takes a derivative in (and drops it): a derivative lost inside it is an error,
        // as in Slang (`detach(floor(x))` is 41022; `no_diff floor(x)` is the way to drop it).
        eval_args(false);
        for (const Flow& a : args) needs_derivative(a);
        return {};
    default: eval_args(false); return {};  // diffPair, call index: no derivative flows out
    }
}

void DerivativeFlow::store(const Expr* lhs, const Flow& value, bool whole_assignment, bool argument) {
    // Walk down to the root variable, noting non-differentiable locations on the way.
    bool non_diff = false;
    std::string why;
    const Expr* e = lhs;
    while (e->kind == ExprKind::Member || e->kind == ExprKind::Index) {
        const Expr* base = e->operands[0];
        if (base->type->is_tensor()) {  // a tensor store: a differentiable tensor needs the derivative
            if (base->type->tensor.differentiable) needs_derivative(value);
            return;
        }
        if (!non_diff && e->kind == ExprKind::Member && e->ref == RefKind::Field &&
            types_.fields(base->type)[size_t(e->field_index)].no_diff) {
            non_diff = true;
            why = "no_diff field '" + lvalue_text(e) + "'";
        }
        if (!non_diff && base->type->is_struct() && !diff(base->type)) {
            non_diff = true;
            why = "'" + lvalue_text(e) + "', a field of non-differentiable struct " + type_name(base->type);
        }
        e = base;
    }
    const VarDecl* root = (e->kind == ExprKind::Name && e->ref == RefKind::Local) ? e->var_ref : nullptr;
    if (root && !non_diff && root->is_no_diff && root->is_param) {
        non_diff = true;
        why = std::string("no_diff ") + (root->is_param ? "parameter '" : "variable '") + root->name + "'";
    }
    if (!non_diff && e->kind == ExprKind::Name && e->var_ref && e->var_ref->is_groupshared) {
        // As in Slang: groupshared memory holds no derivatives (a cooperative kernel's backward
        // rebuilds it from primal values).
        non_diff = true;
        why = "groupshared variable '" + e->var_ref->name + "'";
    }
    if (!non_diff && e->kind == ExprKind::Name && is_static_variable(e->var_ref)) {
        // As in Slang: a global holds no derivative (sema_globals.cpp); passed as an out/inout
        // argument it is Slang's 41025.
        if (value.carries && diff(lhs->type) && argument) {
            report(start_of(lhs),
                   "a derivative is lost passing static variable '" + e->var_ref->name +
                       "' (which holds no derivative) as an out/inout argument of a differentiable function; "
                       "pass a local variable and store detach() of it",
                   41025);
            return;
        }
        non_diff = true;
        why = "static variable '" + e->var_ref->name + "'";
    }
    if (value.carries && diff(lhs->type) && non_diff) {
        report(start_of(lhs),
               "a value that carries a derivative is stored into " + why +
                   "; wrap it in detach() to drop the derivative explicitly",
               41031);
        return;
    }
    if (!root) return;
    // What an out/inout parameter holds at the end is an output of the function.
    if (root->is_param && root->dir != ParamDir::In && param_is_differentiable(types_, *root)) needs_derivative(value);
    const bool whole = whole_assignment && lhs == e;
    if (value.carries && diff(lhs->type)) state_.carrying.insert(root);
    else if (whole) state_.carrying.erase(root);
    if (value.lost && diff(lhs->type)) {
        if (whole) state_.lost[root] = value.lost;
        else state_.lost.emplace(root, value.lost);
    } else if (whole) {
        state_.lost.erase(root);
    }
}

}  // namespace

void Sema::check_derivative_flow(FunctionDecl* f) { DerivativeFlow(types_, diags_, *f).run(); }

}  // namespace sg::lang
