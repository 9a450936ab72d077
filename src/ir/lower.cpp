// src/ir/lower.cpp — lowering of functions and statements: SSA construction over structured
// control flow, early exits as carried flags, monomorphization and derivative stubs.
#include "ir/lower.h"

#include "ir/lower_internal.h"
#include "ir/passes.h"

namespace sg::ir {

// ---------------------------------------------------------------- syntactic scans

bool stmt_may_return(const Stmt* s) {
    if (!s) return false;
    if (s->kind == StmtKind::Return) return true;
    for (const Stmt* b : s->body)
        if (stmt_may_return(b)) return true;
    return stmt_may_return(s->then_stmt) || stmt_may_return(s->else_stmt) || stmt_may_return(s->init);
}

bool stmt_may_break(const Stmt* s) {
    if (!s) return false;
    if (s->kind == StmtKind::Break || s->kind == StmtKind::Continue) return true;
    if (s->kind == StmtKind::For || s->kind == StmtKind::While || s->kind == StmtKind::DoWhile) return false;
    for (const Stmt* b : s->body)
        if (stmt_may_break(b)) return true;
    return stmt_may_break(s->then_stmt) || stmt_may_break(s->else_stmt);
}

static const VarDecl* lvalue_root(const Expr* e) {
    while (e && (e->kind == ExprKind::Member || e->kind == ExprKind::Index)) e = e->operands[0];
    return (e && e->kind == ExprKind::Name && e->var_ref &&
            (!e->var_ref->is_global || lang::uses_global_storage(e->var_ref)))
               ? e->var_ref
               : nullptr;
}

void collect_assigned_expr(const Expr* e, std::set<const VarDecl*>& out) {
    if (!e) return;
    auto add = [&](const Expr* lhs) {
        if (const VarDecl* v = lvalue_root(lhs)) out.insert(v);
    };
    switch (e->kind) {
    case ExprKind::Assign: add(e->operands[0]); break;
    case ExprKind::Postfix: add(e->operands[0]); break;
    case ExprKind::Unary:
        if (e->op == lang::Op::PreInc || e->op == lang::Op::PreDec) add(e->operands[0]);
        break;
    case ExprKind::Call:
        // The static globals a callee uses may change (hidden inout parameters).
        for (const lang::FunctionDecl* f : {e->callee, e->diff_target})
            if (f) out.insert(f->static_globals.begin(), f->static_globals.end());
        if (e->callee) {
            for (size_t k = 0; k + 1 < e->operands.size() && k < e->callee->params.size(); ++k)
                if (e->callee->params[k]->dir != lang::ParamDir::In) add(e->operands[k + 1]);
        } else if (e->diff_target) {
            // Derivative calls: any lvalue argument may be an inout pair.
            for (size_t k = 1; k < e->operands.size(); ++k) add(e->operands[k]);
        }
        break;
    default: break;
    }
    for (const Expr* o : e->operands) collect_assigned_expr(o, out);
}

static void collect_body_decls(const Stmt* body, std::vector<VarDecl*>& out) {
    if (!body) return;
    if (body->kind == StmtKind::Decl) out.insert(out.end(), body->decls.begin(), body->decls.end());
    if (body->kind == StmtKind::If) {
        collect_body_decls(body->then_stmt, out);
        collect_body_decls(body->else_stmt, out);
    }
    if (body->kind == StmtKind::While || body->kind == StmtKind::DoWhile) collect_body_decls(body->then_stmt, out);
}

std::vector<VarDecl*> unscoped_decls(const Stmt* s) {
    std::vector<VarDecl*> out;
    if (!s) return out;
    if (s->kind == StmtKind::If) {
        collect_body_decls(s->then_stmt, out);
        collect_body_decls(s->else_stmt, out);
    } else if (s->kind == StmtKind::While || s->kind == StmtKind::DoWhile || s->kind == StmtKind::For) {
        collect_body_decls(s->then_stmt, out);
    }
    return out;
}

void collect_assigned(const Stmt* s, std::set<const VarDecl*>& out) {
    if (!s) return;
    for_each_part(s, [&](const Stmt* c) { collect_assigned(c, out); },
                  [&](const Expr* e) { collect_assigned_expr(e, out); });
}

// ---------------------------------------------------------------- Lowering

Lowering::Lowering(Program& program, lang::Diagnostics& diags) : program_(program), diags_(diags) {}
Lowering::~Lowering() = default;

static std::string unique_name(const Program& program, const std::string& base) {
    if (!program.find(base)) return base;
    for (int k = 1;; ++k) {
        std::string n = base + "_" + std::to_string(k);
        if (!program.find(n)) return n;
    }
}

Function* Lowering::instantiate(lang::FunctionDecl* decl) {
    std::vector<const Type*> types;
    for (VarDecl* p : decl->params) types.push_back(p->type);
    return instantiate(decl, types);
}

Function* Lowering::instantiate(lang::FunctionDecl* decl, const std::vector<const Type*>& param_types) {
    if (decl->derivative_of)  // `fwd_diff(f)` as a function (a higher-order derivative): f's stub
        return derivative(instantiate(decl->derivative_of), DerivativeKind::Forward);
    auto key = std::make_pair(decl, param_types);
    auto it = instances_.find(key);
    if (it != instances_.end()) return it->second;
    SG_INTERNAL_ASSERT(param_types.size() == decl->params.size(), "instantiate: parameter count");

    auto fn = std::make_unique<Function>();
    fn->name = unique_name(program_, decl->name);
    fn->loc = decl->loc;
    fn->return_type = decl->result_type;
    fn->differentiable = decl->is_differentiable;
    fn->forward_only = lang::differentiates_forward_only(*decl);
    fn->return_no_diff = decl->return_no_diff;
    fn->cooperative = lang::find_attribute(decl->attrs, "CUDAKernel") != nullptr;
    fn->is_kernel = decl->is_glue_entry || fn->cooperative;
    fn->body = std::make_unique<Block>();
    if (!decl->result_type->is_void()) fn->result_types.push_back(decl->result_type);
    for (size_t k = 0; k < decl->params.size(); ++k) {
        VarDecl* p = decl->params[k];
        fn->params.push_back({p->name, param_types[k], ParamDir(int(p->dir)), p->is_no_diff});
    }
    if (!fn->is_kernel) {
        // The static globals it uses: hidden no_diff inout parameters (sema_globals.cpp).
        fn->hidden_first = fn->params.size();
        for (const VarDecl* g : decl->static_globals) {
            // A static variable goes in and out; a global buffer only in (its handle).
            const bool writable = lang::is_static_variable(g);
            fn->params.push_back({"global_" + g->name, g->type, writable ? ParamDir::InOut : ParamDir::In, true});
            fn->hidden_globals.push_back(g);
        }
    }
    for (const Param& p : fn->params)
        if (p.dir != ParamDir::In) fn->result_types.push_back(p.type);
    for (const Param& p : fn->params) {
        if (p.dir == ParamDir::Out) continue;
        Value* v = fn->new_value(p.type, p.name);
        v->block = fn->body.get();
        fn->body->params.push_back(v);
    }
    Function* raw = program_.add(std::move(fn));
    instances_[key] = raw;
    if (decl->custom_backward) raw->custom_backward = instantiate(decl->custom_backward);
    if (decl->custom_forward) raw->custom_forward = instantiate(decl->custom_forward);
    if (decl->primal_substitute) {
        // [PrimalSubstitute(g)]: derivatives go through g in f's place (lang/sema_primal_substitute.cpp),
        // so g's derivatives are f's custom ones; plain calls of f run f.
        Function* g = instantiate(decl->primal_substitute);
        raw->custom_forward = derivative(g, DerivativeKind::Forward);
        if (!g->forward_only) raw->custom_backward = derivative(g, DerivativeKind::Backward);
    }
    FunctionLowering(*this, decl, *raw).run();
    after_pass(*raw, "lower");
    return raw;
}

Function* Lowering::derivative(Function* primal, DerivativeKind kind) {
    auto key = std::make_pair(primal, kind);
    auto it = derivatives_.find(key);
    if (it != derivatives_.end()) return it->second;
    lang::TypeContext& types = *program_.types;
    auto fn = std::make_unique<Function>();
    bool backward = kind == DerivativeKind::Backward;
    fn->name = unique_name(program_, (backward ? "bwd_" : "fwd_") + primal->name);
    fn->loc = primal->loc;
    fn->body = std::make_unique<Block>();
    auto diff = [&](const Param& p) { return !p.no_diff && types.is_differentiable(p.type); };
    fn->hidden_globals = primal->hidden_globals;
    for (size_t k = 0; k < primal->params.size(); ++k) {
        const Param& p = primal->params[k];
        if (k == primal->hidden_first) fn->hidden_first = fn->params.size();  // each is kept
        if (backward) {
            if (diff(p)) {
                if (p.dir == ParamDir::Out)
                    fn->params.push_back({p.name, types.differential(p.type), ParamDir::In, false});
                else fn->params.push_back({p.name, types.pair(p.type), ParamDir::InOut, false});
            } else if (p.dir != ParamDir::Out) {
                fn->params.push_back({p.name, p.type, ParamDir::In, true});
            }
        } else {
            fn->params.push_back({p.name, diff(p) ? types.pair(p.type) : p.type, p.dir, !diff(p)});
        }
    }
    const Type* r = primal->return_type;
    bool diff_result = r && !r->is_void() && !primal->return_no_diff && types.is_differentiable(r);
    if (backward) {
        if (diff_result) fn->params.push_back({"dResult", types.differential(r), ParamDir::In, false});
        fn->return_type = types.void_type();
    } else {
        fn->return_type = diff_result ? types.pair(r) : r;
        if (!r->is_void()) fn->result_types.push_back(fn->return_type);
    }
    for (const Param& p : fn->params)
        if (p.dir != ParamDir::In) fn->result_types.push_back(p.type);
    for (const Param& p : fn->params) {
        if (p.dir == ParamDir::Out) continue;
        Value* v = fn->new_value(p.type, p.name);
        v->block = fn->body.get();
        fn->body->params.push_back(v);
    }
    Function* raw = program_.add(std::move(fn));
    derivatives_[key] = raw;
    requests_.push_back({raw, primal, kind});
    return raw;
}

// ---------------------------------------------------------------- FunctionLowering

Lowering::FunctionLowering::FunctionLowering(Lowering& owner, lang::FunctionDecl* decl, Function& fn)
    : owner_(owner), decl_(decl), fn_(fn), types_(*owner.program_.types), b_(fn, *owner.program_.types) {
    ret_flag_.name = "__returned";
    ret_flag_.type = types_.boolean();
    ret_value_.name = "__result";
    ret_value_.type = decl->result_type;
}

void Lowering::FunctionLowering::run() {
    b_.set_insert(fn_.body.get());
    b_.set_loc(decl_->loc);
    size_t entry = 0;
    for (size_t k = 0; k < decl_->params.size(); ++k) {
        const Param& p = fn_.params[k];
        env_[decl_->params[k]] = p.dir == ParamDir::Out ? b_.zero(p.type) : fn_.body->params[entry++];
    }
    // Static globals: a kernel starts each from its initializer, any other function takes
    // their values as hidden parameters (which follow the declared ones).
    for (const VarDecl* g : decl_->static_globals)
        if (fn_.is_kernel && lang::is_static_variable(g)) static_value(g);
    for (const void* g : fn_.hidden_globals) env_[static_cast<const VarDecl*>(g)] = fn_.body->params[entry++];
    has_return_ = stmt_may_return(decl_->body);
    if (has_return_) {
        env_[&ret_flag_] = b_.const_bool(false);
        if (!decl_->result_type->is_void()) env_[&ret_value_] = b_.zero(decl_->result_type);
    }
    lower_stmt(decl_->body);
    std::vector<Value*> results;
    if (!decl_->result_type->is_void())
        results.push_back(has_return_ ? env_[&ret_value_] : b_.zero(decl_->result_type));
    for (size_t k = 0; k < decl_->params.size(); ++k)
        if (fn_.params[k].dir != ParamDir::In) results.push_back(env_[decl_->params[k]]);
    for (size_t k = 0; k < fn_.hidden_globals.size(); ++k)
        if (fn_.params[fn_.hidden_first + k].dir != ParamDir::In)
            results.push_back(env_[static_cast<const VarDecl*>(fn_.hidden_globals[k])]);
    // [TreatAsDifferentiable]: differentiable for its callers, with a zero derivative.
    if (lang::find_attribute(decl_->attrs, "TreatAsDifferentiable"))
        for (Value*& r : results)
            if (types_.is_differentiable(r->type)) r = b_.detach(r);
    b_.ret(results);
}

Value* Lowering::FunctionLowering::exited() {
    Value* flag = nullptr;
    auto add = [&](const VarDecl* v) {
        auto it = env_.find(v);
        if (it == env_.end()) return;
        flag = flag ? b_.binary(OpKind::LogicOr, flag, it->second) : it->second;
    };
    if (has_return_) add(&ret_flag_);
    if (!loop_flags_.empty()) {
        add(loop_flags_.back().first);
        add(loop_flags_.back().second);
    }
    return flag;
}

std::vector<Value*> Lowering::FunctionLowering::lower_if(Value* cond,
                                                         const std::function<std::vector<Value*>()>& then_fn,
                                                         const std::function<std::vector<Value*>()>& else_fn,
                                                         const std::vector<const Type*>& result_types) {
    Env before = env_;
    Inst* iff = b_.if_(cond, {});
    Block* outer = b_.insert_block();
    Block* then_block = iff->regions[0].get();
    Block* else_block = iff->regions[1].get();

    b_.set_insert(then_block);
    std::vector<Value*> then_values = then_fn();
    Env then_env = env_;
    env_ = before;
    b_.set_insert(else_block);
    std::vector<Value*> else_values = else_fn();
    Env else_env = env_;

    std::vector<const VarDecl*> changed;
    for (const auto& [var, value] : before)
        if (then_env[var] != value || else_env[var] != value) changed.push_back(var);

    auto add_result = [&](const Type* t) {
        Value* v = fn_.new_value(t);
        v->def = iff;
        iff->results.push_back(v);
    };
    for (const Type* t : result_types) add_result(t);
    for (const VarDecl* v : changed) {
        add_result(before[v]->type);
        iff->results.back()->hint = v->name;
    }
    for (const VarDecl* v : changed) {
        then_values.push_back(then_env[v]);
        else_values.push_back(else_env[v]);
    }
    b_.set_insert(then_block);
    b_.yield(then_values);
    b_.set_insert(else_block);
    b_.yield(else_values);
    b_.set_insert(outer);
    env_ = before;
    for (size_t k = 0; k < changed.size(); ++k) env_[changed[k]] = iff->results[result_types.size() + k];
    return std::vector<Value*>(iff->results.begin(), iff->results.begin() + long(result_types.size()));
}

void Lowering::FunctionLowering::lower_stmts(const std::vector<Stmt*>& stmts, size_t first) {
    for (size_t i = first; i < stmts.size(); ++i) {
        lower_stmt(stmts[i]);
        bool may_exit = stmt_may_return(stmts[i]) || (!loop_flags_.empty() && stmt_may_break(stmts[i]));
        if (may_exit && i + 1 < stmts.size()) {
            // The rest of the block runs only when no early exit happened.
            Value* ex = exited();
            if (!ex) continue;
            lower_if(
                b_.unary(OpKind::LogicNot, ex),
                [&] {
                    lower_stmts(stmts, i + 1);
                    return std::vector<Value*>{};
                },
                [] { return std::vector<Value*>{}; }, {});
            return;
        }
    }
}

void Lowering::FunctionLowering::lower_stmt(Stmt* s) {
    if (!s) return;
    b_.set_loc(s->loc);
    switch (s->kind) {
    case StmtKind::Block:
        lower_stmts(s->body, 0);
        // Variables of this block go out of scope (keeps If merges and loop carries small).
        for (Stmt* d : s->body) {
            if (d->kind == StmtKind::Decl)
                for (VarDecl* v : d->decls) env_.erase(v);
            if (d->kind != StmtKind::For)
                for (VarDecl* v : unscoped_decls(d)) env_.erase(v);
        }
        break;
    case StmtKind::Expr: lower_expr(s->expr); break;
    case StmtKind::Decl:
        for (VarDecl* v : s->decls) {
            Value* value;
            if (!v->init) value = v->type->is_tensor() ? b_.undef(v->type) : default_value(v->type);
            else if (v->init->kind == ExprKind::InitList) value = lower_init_list(v->init, v->type);
            else value = lower_expr_as(v->init, v->type);
            env_[v] = value;
        }
        break;
    case StmtKind::If: {
        Value* c = lower_expr_as(s->cond, types_.boolean());
        declare_unscoped(s);
        lower_if(
            c,
            [&] {
                lower_stmt(s->then_stmt);
                return std::vector<Value*>{};
            },
            [&] {
                lower_stmt(s->else_stmt);
                return std::vector<Value*>{};
            },
            {});
        break;
    }
    case StmtKind::For:
    case StmtKind::While:
    case StmtKind::DoWhile: lower_loop(s); break;
    case StmtKind::Switch: lower_switch(s); break;
    case StmtKind::TypeAlias: break;  // resolved by sema
    case StmtKind::Break: env_[loop_flags_.back().first] = b_.const_bool(true); break;
    case StmtKind::Continue: env_[loop_flags_.back().second] = b_.const_bool(true); break;
    case StmtKind::Return:
        if (s->expr) {
            env_[&ret_value_] = s->expr->kind == ExprKind::InitList ? lower_init_list(s->expr, decl_->result_type)
                                                                    : lower_expr_as(s->expr, decl_->result_type);
        }
        env_[&ret_flag_] = b_.const_bool(true);
        break;
    case StmtKind::Empty: break;
    case StmtKind::Case: SG_INTERNAL_ASSERT(false, "case label outside a switch body reached lowering");
    }
}

void Lowering::FunctionLowering::declare_unscoped(const Stmt* s) {
    // A declaration that is a whole branch or loop body is visible after the statement (as in
    // Slang): it is given a value (0, what Slang leaves uninitialized) before the statement, so
    // that If merges and loop carries take it along.
    for (VarDecl* v : unscoped_decls(s))
        if (!env_.count(v)) env_[v] = v->type->is_tensor() ? b_.undef(v->type) : b_.zero(v->type);
}

void Lowering::FunctionLowering::lower_loop(Stmt* s) {
    if (s->kind == StmtKind::For) lower_stmt(s->init);
    declare_unscoped(s);
    // Per-loop break/continue flags, owned here so that their addresses stay valid.
    owned_flags_.push_back(std::make_unique<VarDecl>());
    VarDecl* brk = owned_flags_.back().get();
    brk->name = "__break";
    brk->loc = s->loc;
    brk->type = types_.boolean();
    owned_flags_.push_back(std::make_unique<VarDecl>());
    VarDecl* cont = owned_flags_.back().get();
    cont->name = "__continue";
    cont->loc = s->loc;
    cont->type = types_.boolean();

    std::set<const VarDecl*> assigned;
    collect_assigned(s->then_stmt, assigned);
    for (VarDecl* v : unscoped_decls(s)) assigned.insert(v);  // declared by each iteration
    collect_assigned_expr(s->cond, assigned);
    collect_assigned_expr(s->step, assigned);
    bool body_returns = stmt_may_return(s->then_stmt);
    std::vector<const VarDecl*> carried;
    for (const auto& [var, value] : env_)
        if (assigned.count(var) || (body_returns && (var == &ret_flag_ || var == &ret_value_))) carried.push_back(var);

    int64_t max_iters = 0;
    if (const lang::Attribute* a = lang::find_attribute(s->attrs, "MaxIters"))
        if (!a->args.empty() && a->args[0]->kind == ExprKind::IntLit) max_iters = int64_t(a->args[0]->int_value);

    std::vector<Value*> init;
    for (const VarDecl* v : carried) init.push_back(env_[v]);
    Inst* loop = b_.loop(init, max_iters);
    loop->loc = s->loc;  // faults of the loop (a [MaxIters] bound exceeded) name the statement
    Block* outer = b_.insert_block();
    Block* body = loop->regions[0].get();
    b_.set_insert(body);
    for (size_t k = 0; k < carried.size(); ++k) {
        body->params[k]->hint = carried[k]->name;
        env_[carried[k]] = body->params[k];
    }
    std::vector<Value*> keep;
    if (s->kind == StmtKind::DoWhile) {
        // The body runs first; the condition is tested after it (after a `continue` too) and
        // not at all after a break or return.
        loop_flags_.push_back({brk, cont});
        env_[brk] = b_.const_bool(false);
        env_[cont] = b_.const_bool(false);
        lower_stmt(s->then_stmt);
        Value* stop = env_[brk];
        if (has_return_ && body_returns) stop = b_.binary(OpKind::LogicOr, stop, env_[&ret_flag_]);
        loop_flags_.pop_back();
        keep = lower_if(
            b_.unary(OpKind::LogicNot, stop),
            [&] { return std::vector<Value*>{lower_expr_as(s->cond, types_.boolean())}; },
            [&] { return std::vector<Value*>{b_.const_bool(false)}; }, {types_.boolean()});
    } else {
        keep = lower_loop_body(s, brk, cont, body_returns);
    }
    std::vector<Value*> yields{keep[0]};
    for (const VarDecl* v : carried) yields.push_back(env_[v]);
    b_.yield(yields);
    b_.set_insert(outer);
    env_.erase(brk);
    env_.erase(cont);
    for (size_t k = 0; k < carried.size(); ++k) env_[carried[k]] = loop->results[k];
    if (s->kind == StmtKind::For && s->init && s->init->kind == StmtKind::Decl)
        for (VarDecl* v : s->init->decls) env_.erase(v);
    if (s->kind == StmtKind::For)
        for (VarDecl* v : unscoped_decls(s)) env_.erase(v);  // the for statement's own scope
}

/// The body of a for/while loop: the test, then the body and the step when it holds. Returns
/// the "go on" flag the iteration yields.
std::vector<Value*> Lowering::FunctionLowering::lower_loop_body(Stmt* s, VarDecl* brk, VarDecl* cont,
                                                                bool body_returns) {
    Value* c = s->cond ? lower_expr_as(s->cond, types_.boolean()) : b_.const_bool(true);
    if (has_return_ && body_returns) c = b_.binary(OpKind::LogicAnd, c, b_.unary(OpKind::LogicNot, env_[&ret_flag_]));
    loop_flags_.push_back({brk, cont});
    env_[brk] = b_.const_bool(false);
    env_[cont] = b_.const_bool(false);
    std::vector<Value*> keep = lower_if(
        c,
        [&] {
            lower_stmt(s->then_stmt);
            Value* stop = env_[brk];
            if (has_return_ && body_returns) stop = b_.binary(OpKind::LogicOr, stop, env_[&ret_flag_]);
            Value* go_on = b_.unary(OpKind::LogicNot, stop);
            if (s->step)
                lower_if(
                    go_on,
                    [&] {
                        lower_expr(s->step);
                        return std::vector<Value*>{};
                    },
                    [] { return std::vector<Value*>{}; }, {});
            return std::vector<Value*>{go_on};
        },
        [&] { return std::vector<Value*>{b_.const_bool(false)}; }, {types_.boolean()});
    loop_flags_.pop_back();
    return keep;
}

}  // namespace sg::ir
