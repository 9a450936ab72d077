// src/lang/sema_call.cpp — calls: overload resolution, constructors, intrinsics, tensor methods
// and the autodiff built-ins (bwd_diff, fwd_diff, diffPair, detach).
#include "lang/overloads.h"
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

const Builtin kGetPrimal{BuiltinKind::PairGetPrimal, IntrinsicId::Count, "getPrimal"};
const Builtin kGetDiff{BuiltinKind::PairGetDiff, IntrinsicId::Count, "getDifferential"};
const Builtin kTensorLoad{BuiltinKind::TensorLoad, IntrinsicId::Count, "load"};
const Builtin kTensorStore{BuiltinKind::TensorStore, IntrinsicId::Count, "store"};
const Builtin kTensorAdd{BuiltinKind::TensorAdd, IntrinsicId::Count, "add"};
const Builtin kTensorSample{BuiltinKind::TensorSample, IntrinsicId::Count, "sample"};

/// "1 argument", "2 arguments".
std::string arguments(size_t n) { return std::to_string(n) + (n == 1 ? " argument" : " arguments"); }

/// "parameter 'x'", or "parameter 2" for an unnamed one (`float f(float, float x)`).
std::string param_label(const VarDecl& p, size_t index) {
    return p.name.empty() ? "parameter " + std::to_string(index + 1) : "parameter '" + p.name + "'";
}

}  // namespace

std::string argument_count_text(const FunctionDecl& f, size_t self) {
    size_t most = f.params.size() - self, least = required_arguments(f) - self;
    return least == most ? arguments(most) : std::to_string(least) + " to " + arguments(most);
}

namespace {

std::string arg_types(const std::vector<Expr*>& ops, size_t first) {
    std::string s = "(";
    for (size_t k = first; k < ops.size(); ++k)
        s += (k > first ? ", " : "") + (ops[k]->type ? type_name(ops[k]->type) : std::string("{...}"));
    return s + ")";
}

/// Whether a parameter of `f` is a StructuredBuffer / RWStructuredBuffer.
bool has_buffer_param(const FunctionDecl& f) {
    for (const VarDecl* p : f.params)
        if (p->type && p->type->is_tensor() && p->type->tensor.buffer) return true;
    return false;
}

}  // namespace

const Type* Sema::check_call(Expr* e) {
    if (e->kind == ExprKind::TypeCtor) {
        const Type* t = resolve_type(e->type_expr);
        for (Expr* o : e->operands) check_expr(o);
        if (t->is_error()) return t;
        e->builtin = nullptr;
        e->type_ref = t;
        TypeExpr* te = e->type_expr;
        if (te->type_args.empty() && te->array_dims.empty() && te->member.empty() && e->operands.size() == 1)
            construct_through_constraint(e, te->name, 0);
        return check_constructor(e, t, 0);
    }
    Expr* callee = e->operands[0];
    // A user call checked before, whose callee is resolved (a member call rewritten to its
    // function: `S::f()`, `s.f()`): an accessor's rewrite (`S::f().prop`, `s.f().field[i]`)
    // checks its base again, and the resolution stands.
    if (e->callee && e->type && !e->type->is_error() && callee->kind == ExprKind::Name &&
        callee->ref == RefKind::Function)
        return e->type;
    // bwd_diff(f)(args) / fwd_diff(f)(args)
    if (callee->kind == ExprKind::Call && callee->operands.size() == 2 && callee->operands[0]->kind == ExprKind::Name) {
        const std::string& n = callee->operands[0]->name;
        bool bwd = n == "bwd_diff" || n == "__bwd_diff";
        bool fwd = n == "fwd_diff" || n == "__fwd_diff";
        if ((bwd || fwd) && !lookup_local(n)) {
            Expr* target = callee->operands[1];
            callee->type = types_.void_type();
            for (size_t k = 1; k < e->operands.size(); ++k) check_expr(e->operands[k]);
            if (target->kind == ExprKind::Call) {  // fwd_diff(fwd_diff(f)): sema_higher_order.cpp
                FunctionDecl* d = derivative_function(callee, target);
                return d ? check_derivative_call(e, d, bwd) : types_.error_type();
            }
            if (target->kind == ExprKind::Name && module_.generic_functions.count(target->name) &&
                (target->type_expr || !module_.functions.count(target->name))) {
                // `bwd_diff(f<float>)` or `bwd_diff(f)` of a generic: its instantiation.
                FunctionDecl* inst = derivative_instance(e, target);
                return inst ? check_derivative_call(e, inst, bwd) : types_.error_type();
            }
            // `bwd_diff(S.f)`, `fwd_diff(S::f)`: a static method (sema_qualified_diff.cpp).
            if (target->kind == ExprKind::Member) return check_qualified_derivative(e, target, bwd, n);
            auto it = target->kind == ExprKind::Name ? module_.functions.find(target->name) : module_.functions.end();
            if (it == module_.functions.end()) {
                diags_.error(target->loc, n + " needs the name of a function");
                return types_.error_type();
            }
            if (it->second.size() != 1) {
                // An overloaded function: the overload whose derivative takes these arguments
                // (exact `in` types first), as for a call of the function itself.
                for (size_t k = 1; k < e->operands.size(); ++k)
                    if (e->operands[k]->type && e->operands[k]->type->is_error()) return types_.error_type();
                std::vector<FunctionDecl*> fits;
                for (bool exact : {true, false}) {
                    for (FunctionDecl* f : it->second)
                        if (derivative_call_fits(e, f, bwd, exact)) fits.push_back(f);
                    if (!fits.empty()) break;
                }
                if (fits.size() != 1) {
                    diags_.error(target->loc, fits.empty() ? "no overload of '" + target->name + "' has a " + n +
                                                                 " that takes these arguments"
                                                           : n + " of '" + target->name +
                                                                 "' is ambiguous: several overloads take these arguments");
                    return types_.error_type();
                }
                return check_derivative_call(e, fits.front(), bwd);
            }
            return check_derivative_call(e, it->second.front(), bwd);
        }
    }
    if (callee->kind == ExprKind::Member) {
        // `T.Param(x)`: a member type's constructor; `T.Param.dadd(a, b)`: a member type's
        // member (sema_assoc_types.cpp).
        if (fold_type_path(callee)) {
            e->kind = ExprKind::TypeCtor;
            e->type_expr = callee->type_expr;
            e->operands.erase(e->operands.begin());
            return check_call(e);
        }
        fold_type_path(callee->operands[0]);
        if (const Type* t = check_differential_member(e)) return t;        // `V.dzero()`
        if (const Type* t = check_scalar_type_member(e, true)) return t;  // `float.getPi()`
        if (const Type* t = check_member_call(e)) return t;
        // Not a struct: the base and the arguments other than initializer lists are checked.
        Expr* base = callee->operands[0];
        const Type* bt = base->type;
        for (size_t k = 1; k < e->operands.size(); ++k)
            if (e->operands[k]->kind == ExprKind::InitList) check_expr(e->operands[k]);
        if (bt->is_tensor() && bt->tensor.buffer) return check_buffer_method(e, bt, callee->name);
        if (bt->is_tensor() && bt->tensor.view) return check_view_method(e, bt, callee->name);
        if (bt->is_tensor()) return check_tensor_method(e, base, callee->name);
        if (bt->is_pair() && (callee->name == "getPrimal" || callee->name == "getDifferential")) {
            if (e->operands.size() != 1) diags_.error(e->loc, callee->name + " takes no arguments");
            bool primal = callee->name == "getPrimal";
            e->builtin = primal ? &kGetPrimal : &kGetDiff;
            return primal ? bt->element : types_.differential(bt->element);
        }
        if (bt->is_scalar() || bt->is_vector() || bt->is_matrix())  // Slang: 30027 (member not found)
            diags_.error(e->loc, type_name(bt) + " has no member function '" + callee->name + "'", 30027);
        else diags_.unsupported(e->loc, "calling a method on " + type_name(bt));
        return types_.error_type();
    }
    if (callee->kind != ExprKind::Name) {
        check_expr(callee);
        for (size_t k = 1; k < e->operands.size(); ++k) check_expr(e->operands[k]);
        diags_.error(callee->loc, "this expression cannot be called");
        return types_.error_type();
    }
    // `f(x)` inside a method may call a member function of its struct.
    if (rewrite_implicit_member_call(e)) return check_call(e);
    // A callee may name a function, builtin or type, which check_expr rejects as values.
    callee->type = check_name(callee);
    if ((callee->ref == RefKind::Local || callee->ref == RefKind::Global) && rewrite_call_operator(e))
        return check_call(e);  // `p(x)`: p.operator()(x)
    if (callee->ref == RefKind::Builtin &&
        (callee->builtin->kind == BuiltinKind::BwdDiff || callee->builtin->kind == BuiltinKind::FwdDiff)) {
        // `bwd_diff(f)` alone: its argument names a function, which is no value to check.
        const char* n = callee->builtin->name;
        diags_.error(e->loc, std::string(n) + "(f) must be called: " + n + "(f)(args...)");
        return types_.error_type();
    }
    // Initializer lists take their type from a user function's parameter; anything else
    // (a builtin, an intrinsic, a constructor) has none to give them.
    const bool user_call = callee->ref == RefKind::Function;
    for (size_t k = 1; k < e->operands.size(); ++k)
        if (e->operands[k]->kind != ExprKind::InitList || !user_call) check_expr(e->operands[k]);
    for (size_t k = 1; k < e->operands.size(); ++k)
        if (e->operands[k]->type && e->operands[k]->type->is_error()) return types_.error_type();
    switch (callee->ref) {
    case RefKind::Function: {
        bool reported = false;
        std::vector<FunctionDecl*> candidates = call_candidates(e, callee, reported);
        if (candidates.empty()) {
            if (!reported) diags_.error(e->loc, "no function '" + callee->name + "' accepts these arguments");
            return types_.error_type();
        }
        return check_user_call(e, candidates);
    }
    case RefKind::Type:
        if (!callee->type_expr && e->operands.size() == 2) construct_through_constraint(e, callee->name, 1);
        return check_constructor(e, callee->type_ref, 1);
    case RefKind::Builtin: {
        const Builtin* b = callee->builtin;
        e->builtin = b;
        size_t nargs = e->operands.size() - 1;
        switch (b->kind) {
        case BuiltinKind::Intrinsic:
            if (callee->type_expr) return check_explicit_intrinsic(e, intrinsic_info(b->intrinsic));
            return check_intrinsic(e, intrinsic_info(b->intrinsic));
        case BuiltinKind::CoopId:
        case BuiltinKind::Barrier:
        case BuiltinKind::Interlocked: return check_coop_call(e);
        case BuiltinKind::Wave: return check_wave_call(e);
        case BuiltinKind::DiffPair: {
            if (nargs < 1 || nargs > 2) {
                diags_.error(e->loc, "diffPair takes a primal value and optionally a derivative");
                return types_.error_type();
            }
            const Type* p = e->operands[1]->type;
            if (!types_.is_differentiable(p)) {
                diags_.error(e->operands[1]->loc, "diffPair of non-differentiable type " + type_name(p));
                return types_.error_type();
            }
            if (nargs == 2 && !implicitly_convertible(e->operands[2]->type, types_.differential(p)))
                diags_.error(e->operands[2]->loc, "derivative of type " + type_name(e->operands[2]->type) +
                                                      " does not match " + type_name(types_.differential(p)));
            return types_.pair(p);
        }
        case BuiltinKind::Detach:
            if (nargs != 1) {
                diags_.error(e->loc, "detach takes one argument");
                return types_.error_type();
            }
            return e->operands[1]->type;
        case BuiltinKind::Unused:
            if (nargs != 1) {  // Slang: 30439 (nothing to infer its type from) / 30438 (too many)
                diags_.error(e->loc, "unused takes one argument, " + std::to_string(nargs) + " given",
                             nargs == 0 ? 30439 : 30438);
                return types_.error_type();
            }
            return types_.void_type();
        case BuiltinKind::CallIndex:
            if (nargs != 1 || !eval_const_int(e->operands[1])) {
                diags_.error(e->loc, "__sg_call_index takes a constant dimension");
                return types_.error_type();
            }
            return std::string(b->name) == "__sg_call_index64" ? types_.scalar(ScalarKind::Int64) : types_.int32();
        case BuiltinKind::TensorSlice: {
            // __sg_slice(t, i0, ..., ik-1): the view of t at its first k indices, of rank R - k.
            const Type* t = nargs >= 2 ? e->operands[1]->type : nullptr;
            if (!t || !t->is_tensor() || t->tensor.interface || int(nargs) - 1 >= t->rank) {
                diags_.error(e->loc, "__sg_slice takes a concrete tensor and fewer indices than its rank");
                return types_.error_type();
            }
            for (size_t k = 2; k <= nargs; ++k)
                if (!e->operands[k]->type->is_scalar() || !is_integer(e->operands[k]->type->scalar)) {
                    diags_.error(e->operands[k]->loc, "__sg_slice indices are integers");
                    return types_.error_type();
                }
            return types_.tensor(t->element, t->rank - int(nargs - 1), t->tensor);
        }
        default: break;
        }
        break;
    }
    case RefKind::Local:
    case RefKind::Global:
        diags_.error(callee->loc, "'" + callee->name + "' is a variable, not a function"); break;
    default: break;
    }
    return types_.error_type();
}

const Type* Sema::check_user_call(Expr* e, const std::vector<FunctionDecl*>& candidates) {
    size_t nargs = e->operands.size() - 1;
    for (const FunctionDecl* f : candidates) {
        bool declared = f->result_type != nullptr;
        for (const VarDecl* p : f->params) declared &= p->type != nullptr;
        if (!declared) {
            // A struct's static constant calling one of its methods: the constants come first.
            diags_.unsupported(e->loc, "calling '" + f->name + "' before its signature is declared (from a static "
                                       "constant of its struct)");
            return types_.error_type();
        }
    }
    const OverloadChoice choice = choose_overload(
        candidates, std::vector<Expr*>(e->operands.begin() + 1, e->operands.end()), allow_internal_);
    FunctionDecl* best = choice.best;
    const bool ambiguous = choice.ambiguous;
    const std::string& name = candidates.front()->name;
    if (!best) {
        bool arity_match = false;
        for (FunctionDecl* f : candidates) arity_match |= accepts_argument_count(*f, nargs);
        const FunctionDecl* only = candidates.front();
        size_t self = only->this_param && !only->is_init ? 1 : 0;
        if (!arity_match && candidates.size() == 1) {
            diags_.error(e->loc, "function '" + name + "' takes " + argument_count_text(*only, self) + ", " +
                                     std::to_string(nargs - self) + " given");
        } else if (candidates.size() == 1 && (candidates.front()->generic_origin || has_buffer_param(*candidates.front()))) {
            // One instantiation (or one function taking a buffer): name the argument that does
            // not fit (Slang's 30019).
            const FunctionDecl* f = candidates.front();
            for (size_t k = 0; k < nargs; ++k) {
                Expr* a = e->operands[k + 1];
                const VarDecl* p = f->params[k];
                if (a->kind == ExprKind::InitList || a->type == p->type ||
                    (p->dir == ParamDir::In && !p->type->is_tensor() && implicitly_convertible(a->type, p->type)) ||
                    (p->type->is_tensor() && tensor_accepts(p->type, a->type, allow_internal_)))
                    continue;
                diags_.error(a->loc, "argument for " + param_label(*p, k) + " of '" + name + "' must be " +
                                         type_name(p->type) + ", got " + type_name(a->type),
                             30019);
                break;
            }
        } else diags_.error(e->loc, "no overload of '" + name + "' accepts arguments " + arg_types(e->operands, 1));
        return types_.error_type();
    }
    if (ambiguous) {
        diags_.error(e->loc, "call of '" + name + "' with arguments " + arg_types(e->operands, 1) + " is ambiguous");
        return types_.error_type();
    }
    e->callee = best;
    for (size_t k = 0; k < nargs; ++k) {
        Expr* a = e->operands[k + 1];
        if (a->kind == ExprKind::InitList) check_init_list(a, best->params[k]->type);
        if (best->params[k]->dir != ParamDir::In) require_lvalue(a, "pass to an out/inout parameter", 30047);
        else if (a->kind != ExprKind::InitList) warn_implicit_conversion(a, best->params[k]->type);
    }
    // Arguments left out take their parameters' defaults (defaults.cpp).
    for (size_t k = nargs; k < best->params.size(); ++k) e->operands.push_back(defaults_.argument(best, k, false));
    return best->result_type;
}

const Type* Sema::check_derivative_call(Expr* e, FunctionDecl* f, bool backward) {
    e->diff_target = f;
    e->builtin = nullptr;
    derivative_calls_.push_back({e, backward});
    if (!f->is_differentiable) {
        diags_.error(
            e->operands[0]->loc,
            std::string(backward ? "bwd_diff" : "fwd_diff") + " of '" + f->name + "', which is not [Differentiable]",
            30027);  // Slang: E30027 (member not found: the derivative of f does not exist)
        return types_.error_type();
    }
    if (backward && f->custom_forward == nullptr && differentiates_forward_only(*f)) {
        // [ForwardDifferentiable]: Slang's 30027 (its backward derivative does not exist). A
        // [ForwardDerivative] alone is reported with the availability check (sema_diff.cpp).
        diags_.error(e->operands[0]->loc, "bwd_diff of '" + f->name +
                                              "', which is [ForwardDifferentiable] (forward only); make it "
                                              "[Differentiable] to differentiate it backward",
                     30027);
        return types_.error_type();
    }
    std::vector<DerivedParam> sig = backward ? backward_signature(types_, *f) : forward_signature(types_, *f);
    size_t nargs = e->operands.size() - 1;
    if (nargs != sig.size()) {
        diags_.error(e->loc, std::string(backward ? "bwd_diff(" : "fwd_diff(") + f->name + ") takes " +
                                 arguments(sig.size()) + ", " + std::to_string(nargs) + " given");
        return types_.error_type();
    }
    for (size_t k = 0; k < nargs; ++k) {
        Expr* a = e->operands[k + 1];
        const Type* want = sig[k].type;
        if (a->kind == ExprKind::InitList) {
            check_init_list(a, want);
            continue;
        }
        bool ok = want->is_tensor()            ? tensor_accepts(want, a->type, allow_internal_)
                  : sig[k].dir == ParamDir::In ? implicitly_convertible(a->type, want)
                                               : a->type == want;
        if (!ok) {
            std::string pname = "'dResult'";
            if (sig[k].source_param >= 0) {
                const VarDecl& p = *f->params[size_t(sig[k].source_param)];
                pname = p.name.empty() ? param_label(p, size_t(sig[k].source_param)) : "'" + p.name + "'";
            }
            diags_.error(a->loc, "argument for " + pname + " of " + (backward ? "bwd_diff(" : "fwd_diff(") + f->name +
                                     ") must be " + type_name(want) + ", got " + type_name(a->type),
                         30019);  // Slang: type mismatch
            continue;
        }
        if (sig[k].dir != ParamDir::In) require_lvalue(a, "pass to an inout parameter");
    }
    if (backward) return types_.void_type();
    const Type* r = f->result_type;
    if (!r->is_void() && !f->return_no_diff && types_.is_differentiable(r)) return types_.pair(r);
    return r;
}

bool Sema::derivative_call_fits(Expr* e, FunctionDecl* f, bool backward, bool exact) {
    if (!f->is_differentiable) return false;
    std::vector<DerivedParam> sig = backward ? backward_signature(types_, *f) : forward_signature(types_, *f);
    if (e->operands.size() - 1 != sig.size()) return false;
    for (size_t k = 0; k < sig.size(); ++k) {
        const Expr* a = e->operands[k + 1];
        const Type* want = sig[k].type;
        if (a->kind == ExprKind::InitList) continue;
        if (!a->type) return false;
        bool ok = want->is_tensor()                 ? tensor_accepts(want, a->type, allow_internal_)
                  : sig[k].dir == ParamDir::In && !exact ? implicitly_convertible(a->type, want)
                                                         : a->type == want;
        if (!ok) return false;
    }
    return true;
}

const Type* Sema::check_constructor(Expr* e, const Type* t, size_t first) {
    e->builtin = nullptr;
    e->type_ref = t;
    e->ref = RefKind::Type;
    std::vector<Expr*> args(e->operands.begin() + long(first), e->operands.end());
    if (t->is_error()) return t;  // already reported
    for (Expr* a : args)
        if (a->type->is_error()) return types_.error_type();
    if (const Type* r = check_standin_construct(e, t, args)) return r;
    auto fail = [&]() {
        diags_.error(e->loc, "cannot construct " + type_name(t) + " from " + arg_types(e->operands, first));
        return types_.error_type();
    };
    if (t->is_scalar()) {
        if (args.size() != 1 || !args[0]->type->is_scalar()) return fail();
        return t;
    }
    if (t->is_vector() || t->is_matrix()) {
        if (args.size() == 1 && args[0]->type->is_scalar()) return t;  // splat
        if (args.size() == 1 && args[0]->type->kind == t->kind && args[0]->type->rows == t->rows &&
            args[0]->type->cols == t->cols)
            return t;  // conversion
        if (args.size() == 1 && matrix_resizes(args[0]->type, t)) return t;  // `float2x2(m3)`: the top-left part
        int count = 0;
        for (Expr* a : args) {
            if (!a->type->is_scalar() && !a->type->is_vector()) return fail();
            count += a->type->components();
        }
        if (count != t->components()) return fail();
        // The components convert implicitly (a one-argument constructor is an explicit cast).
        for (Expr* a : args) warn_implicit_conversion(a, types_.with_scalar(a->type, t->scalar));
        return t;
    }
    if (t->is_pair()) {
        if (args.size() < 1 || args.size() > 2 || !implicitly_convertible(args[0]->type, t->element)) return fail();
        if (args.size() == 2 && !implicitly_convertible(args[1]->type, types_.differential(t->element))) return fail();
        return t;
    }
    if (t->is_array()) {
        diags_.unsupported(e->loc, "array constructor " + type_name(t) + "(...)");
        return types_.error_type();
    }
    if (t->is_struct()) return check_struct_constructor(e, t);
    return fail();
}

const Type* Sema::check_intrinsic(Expr* e, const IntrinsicInfo& info) {
    size_t nargs = e->operands.size() - 1;
    if (int(nargs) != info.arity) {
        diags_.error(e->loc, std::string(info.name) + " takes " + arguments(size_t(info.arity)) + ", " +
                                 std::to_string(nargs) + " given");
        return types_.error_type();
    }
    if (const Type* r = check_standin_intrinsic(e, info)) return r;
    std::vector<const Type*> types;
    for (size_t k = 1; k < e->operands.size(); ++k) types.push_back(e->operands[k]->type);
    auto fail = [&]() {
        bool opaque = false;  // Slang: 39999 when no overload applies to a struct (a generic's T)
        for (const Type* t : types) opaque |= t->is_struct();
        diags_.error(e->loc, std::string("no overload of ") + info.name + " accepts " + arg_types(e->operands, 1),
                     opaque ? 39999 : 0);
        return types_.error_type();
    };
    for (const Type* t : types)
        if (!t->is_numeric()) return fail();
    switch (info.rule) {
    case IntrinsicRule::Same:
    case IntrinsicRule::SameAny: {
        const Type* t = intrinsic_operand_type(types_, info.id, types);
        if (!t) return fail();
        for (size_t k = 1; k < e->operands.size(); ++k)
            warn_implicit_conversion(e->operands[k], types_.with_scalar(e->operands[k]->type, t->scalar));
        if (info.id == IntrinsicId::Normalize && !t->is_vector()) return fail();
        if (info.id == IntrinsicId::Reflect && !t->is_vector()) return fail();
        return t;
    }
    case IntrinsicRule::Reduce: {
        const Type* t = intrinsic_operand_type(types_, info.id, types);
        if (t && info.id == IntrinsicId::Dot && t->is_scalar()) {
            diags_.unsupported(e->loc, "dot of two scalars (Slang's dot(x, y) = x * y)");
            return types_.error_type();
        }
        if (!t || (info.id == IntrinsicId::Dot && !t->is_vector()) || t->is_matrix()) return fail();
        return types_.scalar_of(t);
    }
    case IntrinsicRule::Cross: {
        const Type* t = intrinsic_operand_type(types_, info.id, types);
        if (!t || !t->is_vector() || t->rows != 3) return fail();
        return t;
    }
    case IntrinsicRule::Select: {
        if (types[0]->scalar != ScalarKind::Bool && !types[0]->is_scalar()) return fail();
        const Type* t = intrinsic_operand_type(types_, info.id, types);
        if (!t) return fail();
        if (types[0]->is_vector() && types[0]->rows != t->rows) return fail();
        return t;
    }
    case IntrinsicRule::Pred: return types_.with_scalar(types[0], ScalarKind::Bool);
    case IntrinsicRule::AnyAll: return types_.boolean();
    case IntrinsicRule::BitCast: {
        if (scalar_bits(types[0]->scalar) != 32) return fail();
        ScalarKind k = info.id == IntrinsicId::AsFloat ? ScalarKind::Float
                       : info.id == IntrinsicId::AsInt ? ScalarKind::Int32
                                                       : ScalarKind::UInt32;
        return types_.with_scalar(types[0], k);
    }
    case IntrinsicRule::Mul: {
        const Type *a = types[0], *b = types[1];
        ScalarKind k = a->scalar == b->scalar ? a->scalar : ScalarKind::Float;
        if (!is_floating(k)) k = ScalarKind::Float;
        if (a->is_matrix() && b->is_vector() && a->cols == b->rows) return types_.vector(k, a->rows);
        if (a->is_vector() && b->is_matrix() && a->rows == b->rows) return types_.vector(k, b->cols);
        if (a->is_matrix() && b->is_matrix() && a->cols == b->rows) return types_.matrix(k, a->rows, b->cols);
        if (a->is_scalar() || b->is_scalar()) {
            const Type* t = binary_operand_type(types_, Op::Mul, a, b);
            return t ? t : fail();
        }
        return fail();
    }
    case IntrinsicRule::Transpose:
        if (!types[0]->is_matrix()) return fail();
        return types_.matrix(types[0]->scalar, types[0]->cols, types[0]->rows);
    case IntrinsicRule::Sign:
    case IntrinsicRule::BitCount:
    case IntrinsicRule::BitSame:
    case IntrinsicRule::F16ToF32:
    case IntrinsicRule::F32ToF16: {
        const Type* t = intrinsic_operand_type(types_, info.id, types);
        if (!t) return fail();
        if (info.rule == IntrinsicRule::BitSame) return t;
        ScalarKind k = info.rule == IntrinsicRule::Sign       ? ScalarKind::Int32
                       : info.rule == IntrinsicRule::F16ToF32 ? ScalarKind::Float
                                                              : ScalarKind::UInt32;
        return types_.with_scalar(t, k);
    }
    }
    return fail();
}

const Type* Sema::check_tensor_method(Expr* e, Expr* tensor, const std::string& method) {
    const Type* t = tensor->type;
    std::vector<Expr*> args(e->operands.begin() + 1, e->operands.end());
    const TensorKind& k = t->tensor;
    if (method == "load" || method == "load_once" || method == "load_uniform") {
        if (k.access == TensorAccess::Write) {
            diags_.error(e->loc, "cannot load from write-only " + type_name(t));
            return types_.error_type();
        }
        e->builtin = &kTensorLoad;
        return check_tensor_index(e, t, args);
    }
    if (method == "store" || method == "add") {
        if (args.empty()) {
            diags_.error(e->loc, method + " takes indices and a value");
            return types_.error_type();
        }
        if (k.access == TensorAccess::Read) {
            diags_.error(e->loc, "cannot " + method + " into read-only " + type_name(t));
            return types_.error_type();
        }
        if (method == "add" && !k.atomic) {
            diags_.error(e->loc, "add is only available on AtomicTensor, not " + type_name(t));
            return types_.error_type();
        }
        Expr* value = args.back();
        args.pop_back();
        const Type* elem = check_tensor_index(e, t, args);
        if (elem->is_error()) return elem;
        if (!implicitly_convertible(value->type, elem))
            diags_.error(value->loc,
                         "cannot convert " + type_name(value->type) + " to " + type_name(elem) + " in " + method);
        else warn_implicit_conversion(value, elem);
        e->builtin = method == "store" ? &kTensorStore : &kTensorAdd;
        e->is_lvalue = false;
        return types_.void_type();
    }
    if (method == "sample") {
        // SlangPy's bilinear read of a 2-D tensor of floating-point scalars or vectors at uv in
        // [0, 1]^2 (lowered by ir/lower_sample.cpp).
        const Type* elem = t->element;
        const bool floating = (elem->is_scalar() || elem->is_vector()) && is_floating(elem->scalar);
        if (t->rank != 2 || !floating || k.view || k.buffer) {
            diags_.error(e->loc, "sample(float2 uv) needs a 2-D tensor of float, half or double scalars or vectors, not " +
                                     type_name(t));
            return types_.error_type();
        }
        if (k.access == TensorAccess::Write) {
            diags_.error(e->loc, "cannot sample write-only " + type_name(t));
            return types_.error_type();
        }
        const Type* uv = types_.vector(ScalarKind::Float, 2);
        if (args.size() != 1) {
            diags_.error(e->loc, "sample takes one argument (float2 uv), got " + std::to_string(args.size()));
            return types_.error_type();
        }
        if (!implicitly_convertible(args[0]->type, uv)) {
            diags_.error(args[0]->loc, "cannot convert " + type_name(args[0]->type) + " to float2 in sample");
            return types_.error_type();
        }
        warn_implicit_conversion(args[0], uv);
        e->builtin = &kTensorSample;
        return elem;
    }
    diags_.error(e->loc, type_name(t) + " has no method '" + method + "'");
    return types_.error_type();
}

}  // namespace sg::lang
