// src/lang/sema.cpp — semantic analysis driver: declarations, function bodies, statements.
#include <algorithm>
#include <functional>
#include <set>

#include "base/on_exit.h"
#include "lang/sema_internal.h"

namespace sg::lang {

SemaResult analyze(const std::vector<ModuleAst*>& modules, AstContext& ast, TypeContext& types, Diagnostics& diags,
                   bool allow_internal) {
    Sema sema(ast, types, diags, allow_internal);
    return sema.run(modules);
}

void Sema::declare_local(VarDecl* v) {
    if (v->name.empty()) return;  // an unnamed parameter: nothing can name it
    if (!scopes_.declare(v))
        diags_.error(v->loc, "redefinition of '" + v->name + "'", 30200);  // Slang: conflicting declaration
}

SemaResult Sema::run(const std::vector<ModuleAst*>& modules) {
    make_interface_parameters_generic(modules);  // `float f(IShape s)` (sema_interface_parameters.cpp)
    // Pass 1: names of structs, interfaces and generics (so that fields and signatures may refer
    // to any of them).
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls) {
            // Imports were resolved by load_modules: their modules are among `modules`.
            if (d->kind == DeclKind::Struct || d->kind == DeclKind::Interface) {
                StructDecl* s = d->structure;
                if (module_.structs.count(s->name) || module_.generic_structs.count(s->name) ||
                    module_.interfaces.count(s->name) || module_.generic_interfaces.count(s->name) ||
                    is_builtin_interface(s->name) ||
                    resolve_named_type(s->name, s->loc, false))
                    diags_.error(s->loc, "redefinition of type '" + s->name + "'");
                if (s->is_interface && !s->generic_params.empty()) {
                    module_.generic_interfaces[s->name] = s;  // instantiated where named (sema_generic_interfaces.cpp)
                } else if (s->is_interface) {
                    module_.interfaces[s->name] = s;
                    result_.interfaces.push_back(s);
                } else if (!s->generic_params.empty()) {
                    module_.generic_structs[s->name] = s;
                    result_.generic_structs.push_back(s);
                } else {
                    s->type = types_.structure(s);
                    module_.structs[s->name] = s;
                    result_.structs.push_back(s);
                }
            } else if (d->kind == DeclKind::Function && !d->function->generic_params.empty()) {
                module_.generic_functions[d->function->name].push_back(d->function);
                result_.generic_functions.push_back(d->function);
            } else if (d->kind == DeclKind::TypeAlias || d->kind == DeclKind::Enum) {
                declare_type_name(d);
            }
        }
    merge_extensions(modules);  // before any struct's members are declared
    share_outer_member_types();  // `struct Box<T> { struct Item { ... }; }` (sema_nested_generic.cpp)
    auto check_generic_params = [&](const std::vector<GenericParam>& params) {
        for (size_t i = 0; i < params.size(); ++i)
            for (size_t j = 0; j < i; ++j)
                if (params[i].name == params[j].name)
                    diags_.error(params[i].loc, "generic parameter '" + params[i].name + "' is declared twice");
    };
    for (FunctionDecl* g : result_.generic_functions) check_generic_params(g->generic_params);
    for (StructDecl* g : result_.generic_structs) check_generic_params(g->generic_params);
    check_generic_interface_names(modules);
    // Pass 2: globals (constants may size arrays used in struct fields), then struct fields.
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls) {
            if (d->kind != DeclKind::GlobalVar) continue;
            for (VarDecl* g : d->globals) {
                if (g->is_groupshared) {
                    check_groupshared(g);  // sema_coop.cpp
                    if (module_.globals.count(g->name)) diags_.error(g->loc, "redefinition of '" + g->name + "'");
                    module_.globals[g->name] = g;
                    result_.globals.push_back(g);
                    continue;
                }
                // Static variables and global buffers: sema_globals.cpp.
                bool checked = g->is_static && !g->is_const && !g->is_extern;
                if (checked) check_static_variable(g);
                else if (!g->is_static && !g->is_const && !g->is_extern) checked = check_global_resource(g);
                if (!checked && (!g->is_static || !g->is_const))
                    diags_.unsupported(g->loc, "a global variable that is not 'static const'");
                if (!checked) check_global(g);
                if (module_.globals.count(g->name)) diags_.error(g->loc, "redefinition of '" + g->name + "'");
                module_.globals[g->name] = g;
                result_.globals.push_back(g);
            }
        }
    for (StructDecl* s : result_.interfaces) declare_interface(s);
    std::vector<StructDecl*> plain_structs = result_.structs;  // instances declare their own members
    for (StructDecl* s : plain_structs) declare_struct(s);
    for (StructDecl* s : plain_structs) declare_members(s);
    declare_builtin_extensions();  // `extension float { ... }` (sema_extensions_builtin.cpp)
    // Every alias and enum is checked, used or not (uses resolve them earlier, on demand).
    for (auto& [name, alias] : module_.aliases) resolve_alias(alias);
    for (auto& [name, e] : module_.enums) declare_enum(e);
    // Pass 3: function signatures.
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls) {
            if (d->kind != DeclKind::Function || !d->function->generic_params.empty()) continue;
            FunctionDecl* f = d->function;
            declare_signature(f);
            auto& overloads = module_.functions[f->name];
            bool merged = false;
            for (FunctionDecl*& other : overloads) {
                if (other->params.size() != f->params.size()) continue;
                bool same = true;
                for (size_t k = 0; k < f->params.size(); ++k) same &= other->params[k]->type == f->params[k]->type;
                if (!same) continue;
                if (other->body && f->body) {
                    diags_.error(f->loc, "redefinition of function '" + f->name + "' with the same parameter types");
                } else {
                    // A declaration and its definition, in either order: one function.
                    other = merge_declaration(other, f);
                    merged = true;
                    break;
                }
            }
            if (!merged) overloads.push_back(f);
        }
    // Default parameter values (they may call any function), then attributes that name other
    // functions. Instantiations made by a default join the list and are checked in turn.
    for (size_t i = 0; i < result_.functions.size(); ++i) defaults_.check_declaration(result_.functions[i]);
    for (size_t i = 0; i < result_.structs.size(); ++i) check_field_defaults(result_.structs[i]);
    for (FunctionDecl* f : result_.functions) check_function_attributes(f);
    attributes_checked_ = true;
    check_static_initializers();  // sema_globals.cpp
    // Pass 4: bodies.
    check_bodies(0);
    // Generics that no body instantiated are checked once as declared, through one
    // representative instantiation each (their constraints' simplest type, N = 4).
    size_t first_representative = result_.functions.size();
    check_uninstantiated_generics();
    check_bodies(first_representative);
    if (!diags_.has_errors()) check_generics_against_constraints();
    check_recursion_and_derivatives(0);
    collect_static_globals(0);  // sema_globals.cpp
    return result_;
}

FunctionDecl* Sema::merge_declaration(FunctionDecl* a, FunctionDecl* b) {
    FunctionDecl* def = b->body ? b : a;
    FunctionDecl* decl = def == b ? a : b;
    if (decl->result_type != def->result_type && !decl->result_type->is_error() && !def->result_type->is_error())
        diags_.error(b->loc, "function '" + b->name + "' is declared with result type " +
                                 type_name(a->result_type) + " and again with " + type_name(b->result_type),
                     30202);  // Slang: function return type mismatch
    // Default values may be written on either: the definition takes the declaration's.
    for (size_t k = 0; k < def->params.size(); ++k)
        if (!def->params[k]->default_value && decl->params[k]->default_value) {
            def->params[k]->default_value = decl->params[k]->default_value;
            def->params[k]->default_text = decl->params[k]->default_text;
        }
    auto& fns = result_.functions;
    fns.erase(std::remove(fns.begin(), fns.end(), decl), fns.end());
    return def;
}

void Sema::check_bodies(size_t first) {
    // Instantiations made while checking a body join the list, and are checked in turn.
    for (size_t i = first; i < result_.functions.size(); ++i) {
        FunctionDecl* f = result_.functions[i];
        if (!f->body) {
            if (f->owner && standins_.constraint_of(f->owner->type)) continue;  // a stand-in's requirement
            diags_.error(f->loc, "function '" + f->name + "' is declared but has no body", 45001);  // Slang: unresolved external symbol
            continue;
        }
        size_t errors_before = diags_.error_count();
        std::string context = diags_.set_context(instance_context(f));
        const Substitution* saved = subst_;
        subst_ = substitution_of(f);
        check_function(f);
        // The flow analysis reads the annotations, so it runs only on a body that checked cleanly.
        if (body_is_differentiated(*f) && diags_.error_count() == errors_before) check_derivative_flow(f);
        subst_ = saved;
        diags_.set_context(context);
    }
}

void Sema::check_recursion_and_derivatives(size_t first_derivative_call) {
    // Recursion cannot run on the GPU (no call stack to speak of) and would not inline.
    std::map<FunctionDecl*, int> state;
    std::function<void(FunctionDecl*)> visit;
    std::map<FunctionDecl*, std::set<FunctionDecl*>> callees;
    std::function<void(Stmt*, std::set<FunctionDecl*>&)> collect_stmt;
    std::function<void(Expr*, std::set<FunctionDecl*>&)> collect_expr = [&](Expr* e, std::set<FunctionDecl*>& out) {
        if (!e) return;
        if (e->callee) out.insert(e->callee);
        if (e->diff_target) out.insert(e->diff_target);
        for (Expr* o : e->operands) collect_expr(o, out);
    };
    collect_stmt = [&](Stmt* s, std::set<FunctionDecl*>& out) {
        if (!s) return;
        for_each_part(s, [&](Stmt* c) { collect_stmt(c, out); }, [&](Expr* e) { collect_expr(e, out); });
    };
    for (FunctionDecl* f : result_.functions) collect_stmt(f->body, callees[f]);
    visit = [&](FunctionDecl* f) {
        state[f] = 1;
        for (FunctionDecl* c : callees[f]) {
            if (state[c] == 1) {
                diags_.error(f->loc, "function '" + f->name + "' is recursive (calls '" + c->name +
                                         "'); recursion is not supported yet");
            } else if (state[c] == 0) {
                visit(c);
            }
        }
        state[f] = 2;
    };
    for (FunctionDecl* f : result_.functions)
        if (state[f] == 0) visit(f);
    if (!diags_.has_errors())
        for (size_t k = first_derivative_call; k < derivative_calls_.size(); ++k)
            check_derivative_availability(derivative_calls_[k].first, derivative_calls_[k].first->diff_target,
                                          derivative_calls_[k].second);
}

namespace {

/// Whether a break inside `s` leaves the loop `s` belongs to (not one nested in it).
bool breaks_out(const Stmt* s) {
    if (!s) return false;
    if (s->kind == StmtKind::Break) return true;
    if (s->kind == StmtKind::For || s->kind == StmtKind::While || s->kind == StmtKind::DoWhile ||
        s->kind == StmtKind::Switch)
        return false;
    for (const Stmt* b : s->body)
        if (breaks_out(b)) return true;
    return breaks_out(s->then_stmt) || breaks_out(s->else_stmt);
}

/// Whether control never reaches the end of `s`: it returns on every path (or loops forever).
bool always_returns(const Stmt* s) {
    if (!s) return false;
    switch (s->kind) {
    case StmtKind::Return: return true;
    case StmtKind::Block:
        for (const Stmt* b : s->body)
            if (always_returns(b)) return true;
        return false;
    case StmtKind::If: return always_returns(s->then_stmt) && always_returns(s->else_stmt);
    case StmtKind::Switch: {
        // Every entry falls through to the last section unless a break leaves the switch: it
        // returns on every path when it has a default and its last section always returns.
        bool has_default = false;
        size_t last = 0;
        for (size_t k = 0; k < s->body.size(); ++k) {
            if (s->body[k]->kind != StmtKind::Case) continue;
            has_default |= !s->body[k]->expr;
            last = k;
        }
        if (!has_default) return false;
        for (const Stmt* b : s->body)
            if (breaks_out(b)) return false;
        for (size_t k = last + 1; k < s->body.size(); ++k)
            if (always_returns(s->body[k])) return true;
        return false;
    }
    case StmtKind::DoWhile: return always_returns(s->then_stmt);
    case StmtKind::For:
    case StmtKind::While: {
        bool forever = !s->cond || (s->cond->kind == ExprKind::BoolLit && s->cond->int_value != 0);
        return forever && !breaks_out(s->then_stmt);
    }
    default: return false;
    }
}

}  // namespace

void Sema::check_default_value(FunctionDecl* f, VarDecl* p, Expr* e) {
    OnExit restore{[this, saved_subst = subst_, saved_struct = resolving_struct_]() {
        subst_ = saved_subst;
        resolving_struct_ = saved_struct;
    }};
    AtModuleScope module_scope(*this);
    subst_ = substitution_of(f);
    resolving_struct_ = nullptr;
    if (e->kind == ExprKind::InitList) check_init_list(e, p->type);
    else check_convertible(e, p->type, "default value");
}

void Sema::check_global(VarDecl* g) {
    g->is_global = true;
    g->type = g->type_expr ? resolve_type(g->type_expr) : nullptr;
    if (g->init) {
        // A struct's constant may be checked while a body is (the struct instantiated there).
        AtModuleScope module_scope(*this);
        if (g->init->kind == ExprKind::InitList && g->type) check_init_list(g->init, g->type);
        else if (g->type) check_convertible(g->init, g->type, "global initializer");
        else g->type = check_expr(g->init);
    } else if (!g->is_extern) {
        // An extern's value comes at link time (bind_link_constants, before sema).
        diags_.error(g->loc, "'static const' '" + g->name + "' needs an initializer");
    }
    if (!g->type) g->type = types_.error_type();
}

void Sema::check_function_attributes(FunctionDecl* f) {
    for (const Attribute& a : f->attrs) {
        bool bwd = a.name == "BackwardDerivative", fwd = a.name == "ForwardDerivative";
        bool of = a.name == "BackwardDerivativeOf" || a.name == "ForwardDerivativeOf";
        if (a.name == "TreatAsDifferentiable") {
            // Differentiable for its callers, with a zero derivative: its body is not
            // differentiated (body_is_differentiated) and lowering detaches its results.
            f->is_differentiable = true;
            continue;
        }
        if (a.name == "PrimalSubstitute" || a.name == "PrimalSubstituteOf") {
            if (f->generic_origin || f->generic_params.empty())  // each instance resolves its own
                resolve_primal_substitute(f, a, a.name == "PrimalSubstituteOf");  // sema_primal_substitute.cpp
            continue;
        }
        if (!bwd && !fwd && !of) {
            // [PreferRecompute] / [PreferCheckpoint] are hints about what the reverse pass
            // stores; it recomputes or stores by its own rules.
            static const std::set<std::string> known = {
                "Differentiable", "BackwardDifferentiable", "ForwardDifferentiable", "__sg_kernel", "ForceInline", "noinline",
                "mutating",       "NoDiffThis",             "PreferRecompute", "PreferCheckpoint"};
            if (a.name == "CUDAKernel") check_kernel_signature(f);  // sema_coop.cpp
            if (a.name == "CUDAKernel" || a.name == "AutoPyBindCUDA") continue;
            if (!known.count(a.name)) diags_.warning(a.loc, "unknown attribute [" + a.name + "] ignored");
            continue;
        }
        if (!f->generic_origin && !f->generic_params.empty()) continue;  // each instance resolves its own
        if (of) resolve_derivative_of(f, a, a.name == "BackwardDerivativeOf");
        else resolve_custom_derivative(f, a, bwd);
    }
}

std::string Sema::instance_context(const FunctionDecl* f) const {
    const void* instance = f->generic_origin ? static_cast<const void*>(f)
                           : f->owner && f->owner->generic_origin ? static_cast<const void*>(f->owner)
                                                                  : nullptr;
    if (!instance) return "";
    const std::string& name = f->generic_origin ? f->name : f->owner->name;
    if (instances_.is_representative(instance)) {
        std::string origin = f->generic_origin ? f->generic_origin->name : f->owner->generic_origin->name;
        return "in generic " + origin + ", checked as " + name;
    }
    return "in instantiation " + name;
}

void Sema::check_function(FunctionDecl* f) {
    if (f->is_init) prepare_init_body(f);
    current_fn_ = f;
    scopes_.clear();
    scopes_.push();
    for (VarDecl* p : f->params) declare_local(p);
    loop_depth_ = 0;
    check_stmt(f->body);
    scopes_.pop();
    if (find_attribute(f->attrs, "CUDAKernel")) check_barrier_divergence(f);  // sema_divergence.cpp
    // Falling off the end of a non-void function returns zero here; it is almost always a
    // mistake, so say so (a warning: the function stays usable).
    if (f->result_type && !f->result_type->is_void() && !f->result_type->is_error() && !always_returns(f->body))
        diags_.warning(f->loc, "control can reach the end of non-void function '" + f->name +
                                   "' without a return; the result is 0 there");
    current_fn_ = nullptr;
}

void Sema::check_unscoped_body(Stmt* s, const char* whose, const char* after) {
    // As in Slang, a declaration that is the whole body of an if/else branch or of a while or
    // do loop (no braces) is declared in the enclosing scope: the other branch and the code
    // after the statement see it (where the branch did not run, lowering gives it 0; Slang
    // leaves it uninitialized). A for loop's body stays in the for statement's scope.
    if (s && s->kind == StmtKind::Decl)
        diags_.warning(s->loc, std::string("a declaration as ") + whose + " whole body is visible after " + after +
                                   ", as in Slang (where it did not run, its value is 0 here and undefined in "
                                   "Slang); put it in braces to scope it");
    check_stmt(s);
}

void Sema::check_stmt(Stmt* s) {
    if (!s) return;
    switch (s->kind) {
    case StmtKind::Block:
        scopes_.push();
        for (Stmt* b : s->body) check_stmt(b);
        scopes_.pop();
        break;
    case StmtKind::Expr:
        if (hoist_index_operands(s)) check_stmt(s);  // `s[i++] *= 4;` (sema_accessors.cpp)
        else check_expr(s->expr);
        break;
    case StmtKind::Decl:
        for (VarDecl* v : s->decls) {
            if (v->type_expr) {
                allow_empty_array_ = true;  // Slang accepts `float a[0];` as a local
                v->type = resolve_type(v->type_expr);
                allow_empty_array_ = false;
                if (v->type->is_void()) diags_.error(v->loc, "variable '" + v->name + "' cannot have type void");
                if (v->init) {
                    if (v->init->kind == ExprKind::InitList) check_init_list(v->init, v->type);
                    else check_convertible(v->init, v->type, "initializer");
                }
            } else {
                if (!v->init) {
                    diags_.error(v->loc, "'" + v->name + "' declared with var/let needs an initializer");
                    v->type = types_.error_type();
                } else if (v->init->kind == ExprKind::InitList) {
                    diags_.error(v->init->loc, "an initializer list needs a declared type");
                    v->type = types_.error_type();
                } else {
                    v->type = check_expr(v->init);
                    if (v->type->is_void()) {
                        diags_.error(v->init->loc, "cannot initialize '" + v->name + "' with a void expression");
                        v->type = types_.error_type();
                    }
                }
            }
            if (v->is_const && !v->init) diags_.error(v->loc, "constant '" + v->name + "' needs an initializer");
            if (!v->init && v->type && v->type->is_tensor())  // a view of no memory
                diags_.unsupported(v->loc, "a " + type_name(v->type) + " local without an initializer");
            declare_local(v);
        }
        break;
    case StmtKind::If:
        check_convertible(s->cond, types_.boolean(), "if condition");
        if (s->cond->type && s->cond->type->is_vector())
            diags_.error(s->cond->loc, "if condition must be a scalar, got " + type_name(s->cond->type));
        check_unscoped_body(s->then_stmt, "a branch's", "the branch");
        check_unscoped_body(s->else_stmt, "a branch's", "the branch");
        break;
    case StmtKind::For:
        scopes_.push();
        check_stmt(s->init);
        if (s->cond) check_convertible(s->cond, types_.boolean(), "loop condition");
        if (s->step) check_expr(s->step);
        ++loop_depth_;
        check_stmt(s->then_stmt);
        --loop_depth_;
        check_loop_bound(s);
        scopes_.pop();
        break;
    case StmtKind::While:
        check_convertible(s->cond, types_.boolean(), "loop condition");
        ++loop_depth_;
        check_unscoped_body(s->then_stmt, "a loop's", "the loop");
        --loop_depth_;
        check_loop_bound(s);
        break;
    case StmtKind::DoWhile: check_do_while(s); break;
    case StmtKind::Switch: check_switch(s); break;
    case StmtKind::Case:
        diags_.error(s->loc, std::string(s->expr ? "'case'" : "'default'") +
                                 " is not allowed outside of a 'switch' statement");
        if (s->expr) check_expr(s->expr);
        break;
    case StmtKind::TypeAlias: declare_local_alias(s->alias); break;
    case StmtKind::Break:
        if (loop_depth_ == 0 && switch_depth_ == 0) diags_.error(s->loc, "break outside a loop or switch");
        break;
    case StmtKind::Continue:
        if (loop_depth_ == 0) diags_.error(s->loc, "continue outside a loop", 30004);
        break;
    case StmtKind::Return: {
        const Type* want = current_fn_->result_type;
        if (!s->expr) {
            if (!want->is_void() && !want->is_error())
                diags_.error(s->loc,
                             "function '" + current_fn_->name + "' must return a value of type " + type_name(want));
        } else if (want->is_void()) {
            check_expr(s->expr);
            diags_.error(s->expr->loc, "void function '" + current_fn_->name + "' cannot return a value");
        } else if (s->expr->kind == ExprKind::InitList) {
            check_init_list(s->expr, want);
        } else {
            check_convertible(s->expr, want, "return value");
            // Slang types a [Differentiable] function's `no_diff T` result apart from T: a value of
            // a differentiable type does not convert to it (30019; an integer value does).
            const Type* got = s->expr->type;
            if (current_fn_->is_differentiable && current_fn_->return_no_diff && got && !got->is_error() &&
                types_.is_differentiable(want) && types_.is_differentiable(got))
                diags_.error(s->expr->loc,
                             "a value of type " + type_name(got) + " does not convert to the no_diff " +
                                 type_name(want) + " result of differentiable function '" + current_fn_->name +
                                 "' (as in Slang; return an integer value or drop no_diff)",
                             30019);
        }
        break;
    }
    case StmtKind::Empty: break;
    }
}

/// The bound of a loop as lowering reads it: an int literal.
Expr* Sema::int_literal(SourceLoc loc, int64_t value) {
    auto* lit = ast_.make<Expr>();
    lit->kind = ExprKind::IntLit;
    lit->loc = loc;
    lit->int_value = uint64_t(value);
    lit->type = types_.int32();
    return lit;
}

/// Differentiable loops need a bound for the reverse pass's per-iteration storage: an explicit
/// [MaxIters(n)] / [ForceUnroll] or a trip count inferred from constant bounds (error 30510).
void Sema::check_loop_bound(Stmt* s) {
    // The reverse pass re-runs and tapes every enclosing loop level for each inner one, so its
    // size grows with the cube of the nesting depth (32 levels: 8 MB of generated C++). Real
    // kernels nest a few loops; refuse depths that would only exhaust the compilers.
    if (current_fn_ && body_is_differentiated(*current_fn_) && loop_depth_ == kMaxDifferentiatedLoopDepth)
        diags_.error(s->loc, "loops nest more than " + std::to_string(kMaxDifferentiatedLoopDepth) +
                                 " deep in differentiable function '" + current_fn_->name +
                                 "'; its derivative grows with every level, so at most " +
                                 std::to_string(kMaxDifferentiatedLoopDepth) + " are supported");
    auto max_iters = std::find_if(s->attrs.begin(), s->attrs.end(), [](const Attribute& a) { return a.name == "MaxIters"; });
    if (max_iters != s->attrs.end()) {
        Attribute* a = &*max_iters;
        auto n = a->args.size() == 1 ? eval_const_int(a->args[0]) : std::nullopt;
        if (a->args.size() == 1 && !n)  // Slang: 39999, the expression is not a compile-time constant
            diags_.error(a->args[0]->loc, "[MaxIters] needs a compile-time constant integer", 39999);
        else if (!n || *n <= 0 || *n > (1 << 20)) diags_.error(a->loc, "[MaxIters] takes a positive constant integer");
        else if (a->args[0]->kind != ExprKind::IntLit)
            a->args[0] = int_literal(a->args[0]->loc, *n);  // a named constant: lowering reads the value
        return;
    }
    if (find_attribute(s->attrs, "ForceUnroll")) {
        const Attribute* a = find_attribute(s->attrs, "ForceUnroll");
        if (!a->args.empty()) return;  // [ForceUnroll(n)] bounds it too
    }
    // Constant trip count: for (int i = A; i < B; i++ / i += C)
    std::optional<int64_t> trip;
    if (s->kind == StmtKind::For && s->init && s->init->kind == StmtKind::Decl && s->init->decls.size() == 1 &&
        s->cond && s->cond->kind == ExprKind::Binary && s->step) {
        VarDecl* v = s->init->decls[0];
        Expr* c = s->cond;
        auto start = eval_const_int(v->init);
        auto end = eval_const_int(c->operands[1]);
        bool var_on_left = c->operands[0]->kind == ExprKind::Name && c->operands[0]->var_ref == v;
        std::optional<int64_t> step;
        Expr* st = s->step;
        if ((st->kind == ExprKind::Postfix || st->kind == ExprKind::Unary) && st->operands[0]->var_ref == v) {
            if (st->op == Op::Inc || st->op == Op::PreInc) step = 1;
            if (st->op == Op::Dec || st->op == Op::PreDec) step = -1;
        } else if (st->kind == ExprKind::Assign && st->operands[0]->var_ref == v &&
                   (st->op == Op::AddAssign || st->op == Op::SubAssign)) {
            auto k = eval_const_int(st->operands[1]);
            if (k) step = st->op == Op::AddAssign ? *k : -*k;
        }
        if (start && end && var_on_left && step && *step != 0) {
            int64_t a = *start, b = *end, d = *step;
            if (c->op == Op::Le) b += 1;
            if (c->op == Op::Ge) b -= 1;
            // Slang infers no trip count from `i != B` (30510 in a differentiable function); an
            // unrolled loop still stops there.
            bool up = c->op == Op::Lt || c->op == Op::Le || (c->op == Op::Ne && find_attribute(s->attrs, "ForceUnroll"));
            bool down = c->op == Op::Gt || c->op == Op::Ge;
            if (up && d > 0) trip = b > a ? (b - a + d - 1) / d : 0;
            if (down && d < 0) trip = a > b ? (a - b + (-d) - 1) / (-d) : 0;
        }
    }
    if (trip) {
        // Record the inferred bound where lowering and autodiff look for it.
        Attribute a;
        a.loc = s->loc;
        a.name = "MaxIters";
        a.args.push_back(int_literal(s->loc, std::max<int64_t>(*trip, 1)));
        s->attrs.push_back(a);
        return;
    }
    if (find_attribute(s->attrs, "ForceUnroll")) {
        diags_.error(s->loc, "[ForceUnroll] needs a loop with a constant trip count or [ForceUnroll(n)]",
                     40020);  // Slang: loop unrolling failed
        return;
    }
    if (current_fn_ && body_is_differentiated(*current_fn_))
        diags_.error(s->loc,
                     "loop in differentiable function '" + current_fn_->name +
                         "' has no constant trip count; add [MaxIters(n)] to bound the storage of its reverse pass",
                     30510);
}

}  // namespace sg::lang
