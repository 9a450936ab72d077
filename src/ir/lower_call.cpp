// src/ir/lower_call.cpp — lowering of calls: user functions (instantiated per concrete tensor
// types), derivative calls, constructors, intrinsics and the tensor / pair built-ins.
#include "ir/lower_internal.h"

namespace sg::ir {

using lang::BuiltinKind;
using lang::RefKind;
using Lower = Lowering::FunctionLowering;

Value* Lower::lower_call(Expr* e) {
    if (e->kind == ExprKind::TypeCtor) return lower_constructor(e, e->type_ref, 0);
    Expr* callee = e->operands[0];
    if (e->diff_target) {
        const std::string& n = callee->operands[0]->name;
        return lower_user_call(e, e->diff_target, true, n == "bwd_diff" || n == "__bwd_diff");
    }
    if (e->callee) return lower_user_call(e, e->callee, false, false);
    if ((callee->kind == ExprKind::Name || callee->kind == ExprKind::Member) && callee->ref == RefKind::Type)
        return lower_constructor(e, callee->type_ref, 1);  // `float3(x)`, `V.Differential(x, y)`
    SG_INTERNAL_ASSERT(e->builtin != nullptr, "call without a resolved target");
    auto arg = [&](size_t k) { return e->operands[k + 1]; };
    switch (e->builtin->kind) {
    case BuiltinKind::Intrinsic: return lower_intrinsic(e);
    case BuiltinKind::DiffPair: {
        const Type* pt = e->type;
        Value* p = lower_expr_as(arg(0), pt->element);
        const Type* dt = types_.differential(pt->element);
        Value* d = e->operands.size() > 2 ? lower_expr_as(arg(1), dt) : b_.zero(dt);
        return b_.construct(pt, {p, d});
    }
    case BuiltinKind::Detach: return b_.detach(lower_expr(arg(0)));
    case BuiltinKind::Unused: lower_expr(arg(0)); return nullptr;  // evaluated for its effects
    case BuiltinKind::DZero:
    case BuiltinKind::DAdd: return lower_differential_member(e);
    case BuiltinKind::PairGetPrimal: return b_.extract(lower_expr(callee->operands[0]), 0);
    case BuiltinKind::PairGetDiff: return b_.extract(lower_expr(callee->operands[0]), 1);
    case BuiltinKind::CallIndex: return b_.call_index(int(arg(0)->int_value), e->type);
    case BuiltinKind::TensorSlice: {
        Value* t = lower_expr(arg(0));
        std::vector<Value*> index;
        for (size_t k = 2; k < e->operands.size(); ++k) index.push_back(lower_expr(e->operands[k]));
        return b_.tensor_slice(t, index, e->type);
    }
    case BuiltinKind::TensorLoad:
    case BuiltinKind::TensorStore:
    case BuiltinKind::TensorAdd: {
        Value* t = lower_expr(callee->operands[0]);
        std::vector<Expr*> idx(e->operands.begin() + 1, e->operands.end());
        Expr* value_expr = nullptr;
        if (e->builtin->kind != BuiltinKind::TensorLoad) {
            value_expr = idx.back();
            idx.pop_back();
        }
        std::vector<Value*> index;
        lower_tensor_access(e, t, idx, &index);
        if (!value_expr) {
            Value* loaded = b_.tensor_load(t, index);
            // DiffTensorView.loadOnce: its backward stores the gradient without atomics.
            if (std::string_view(e->builtin->name) == "loadOnce") loaded->def->imm_int = 1;
            return loaded;
        }
        Value* v = lower_expr_as(value_expr, t->type->element);
        b_.set_loc(e->loc);
        if (e->builtin->kind == BuiltinKind::TensorStore) {
            b_.tensor_store(t, index, v);
            // DiffTensorView.storeOnce: its backward reads the output gradient without atomics.
            if (std::string_view(e->builtin->name) == "storeOnce") b_.insert_block()->insts.back()->imm_int = 1;
        }
        else b_.tensor_atomic_add(t, index, v);
        return nullptr;
    }
    case BuiltinKind::TensorSample: return lower_tensor_sample(e);
    case BuiltinKind::CoopId:
    case BuiltinKind::Barrier:
    case BuiltinKind::Interlocked:
    case BuiltinKind::ViewSize:
    case BuiltinKind::ViewStride:
    case BuiltinKind::ViewDims: return lower_coop_call(e);
    case BuiltinKind::Wave: return lower_wave_call(e);
    case BuiltinKind::BufferDimensions: {
        // count = the view's extent; stride = the element's size in bytes (its flattened
        // components, each of its scalar's size: the layout the buffer is bound with).
        Value* t = lower_expr(callee->operands[0]);
        b_.set_loc(e->loc);
        Value* count = b_.tensor_shape(t, 0);
        int64_t stride = 0;
        lang::ScalarKind k = lang::ScalarKind::Float;
        int64_t n = lang::flat_components(types_, t->type->element, &k);
        stride = n * (lang::scalar_bits(k) / 8);
        assign(arg(0), convert(count, arg(0)->type));
        assign(arg(1), b_.const_int(arg(1)->type, stride));
        return nullptr;
    }
    default: break;
    }
    SG_INTERNAL_ASSERT(false, std::string("builtin not handled by lowering: ") + e->builtin->name);
}

Value* Lower::lower_user_call(Expr* e, lang::FunctionDecl* callee, bool derivative, bool backward) {
    std::vector<Expr*> args(e->operands.begin() + 1, e->operands.end());
    // Instantiate the callee with the concrete tensor types of the arguments.
    std::vector<const Type*> param_types;
    for (VarDecl* p : callee->params) param_types.push_back(p->type);
    if (!derivative) {
        for (size_t k = 0; k < args.size(); ++k)
            if (param_types[k]->is_tensor()) param_types[k] = args[k]->type;
    } else {
        auto sig = backward ? lang::backward_signature(types_, *callee) : lang::forward_signature(types_, *callee);
        for (size_t k = 0; k < sig.size(); ++k)
            if (sig[k].source_param >= 0 && param_types[size_t(sig[k].source_param)]->is_tensor())
                param_types[size_t(sig[k].source_param)] = args[k]->type;
    }
    Function* primal = owner_.instantiate(callee, param_types);
    Function* target = primal;
    if (derivative) {
        // A user-supplied derivative has the derived signature (sema checked it): call it as is.
        Function* custom = backward ? primal->custom_backward : primal->custom_forward;
        target =
            custom ? custom : owner_.derivative(primal, backward ? DerivativeKind::Backward : DerivativeKind::Forward);
    }
    // The static globals the target uses follow its declared parameters (before a backward
    // derivative's dResult): hidden arguments, the globals' current values.
    const size_t hidden = target->hidden_globals.size();
    SG_INTERNAL_ASSERT(target->params.size() == args.size() + hidden, "call of " + target->name + ": argument count");
    auto param_of = [&](size_t k) { return hidden && k >= target->hidden_first ? k + hidden : k; };
    auto global_of = [&](size_t i) -> const VarDecl* {
        if (i < target->hidden_first || i >= target->hidden_first + hidden) return nullptr;
        return static_cast<const VarDecl*>(target->hidden_globals[i - target->hidden_first]);
    };
    std::vector<Value*> arg_values(args.size(), nullptr);
    std::vector<Value*> entry(args.size(), nullptr);  // the value an inout argument had before the call
    for (size_t k = 0; k < args.size(); ++k) {
        const Param& p = target->params[param_of(k)];
        if (p.dir == ParamDir::Out) continue;
        Value* v = p.dir == ParamDir::In ? lower_expr_as(args[k], p.type) : lower_expr(args[k]);
        entry[k] = v;
        // A no_diff parameter of a differentiable callee takes no derivative; the call may be
        // inlined before differentiation, so the argument is detached here, where it is known.
        if (!derivative && p.dir == ParamDir::In && p.no_diff && callee->is_differentiable &&
            types_.is_differentiable(v->type))
            v = b_.detach(v);
        arg_values[k] = v;
    }
    std::vector<Value*> values;
    for (size_t i = 0, k = 0; i < target->params.size(); ++i) {
        if (const VarDecl* g = global_of(i)) {
            values.push_back(static_value(g));
            continue;
        }
        if (target->params[i].dir != ParamDir::Out) values.push_back(arg_values[k]);
        ++k;
    }
    b_.set_loc(e->loc);
    std::vector<Value*> results = b_.call(target, values, !fn_.differentiable);
    // A non-differentiable callee contributes no derivative to a differentiable caller: its
    // result and out arguments have a zero derivative; as in Slang, an inout argument keeps the
    // derivative it had before the call (the callee is taken as the identity for derivatives).
    bool detach = !derivative && fn_.differentiable && !callee->is_differentiable;
    // Nor does anything inside it: once inlined, reverse mode leaves its body alone (Inst::primal_only).
    if (detach) b_.insert_block()->insts.back()->primal_only = true;
    size_t r = target->return_type && !target->return_type->is_void() ? 1 : 0;
    for (size_t i = 0, k = 0; i < target->params.size(); ++i) {
        const VarDecl* g = global_of(i);
        const ParamDir dir = target->params[i].dir;
        if (!g) ++k;
        if (dir == ParamDir::In) continue;
        Value* v = results[r++];
        if (g) {
            // A global holds no derivative.
            env_[g] = fn_.differentiable && types_.is_differentiable(v->type) ? b_.detach(v) : v;
            continue;
        }
        if (detach && types_.is_differentiable(v->type))
            v = dir == ParamDir::InOut ? b_.keep_derivative(v, entry[k - 1]) : b_.detach(v);
        assign(args[k - 1], v);
    }
    if (target->return_type && !target->return_type->is_void()) {
        Value* v = results[0];
        return detach && types_.is_differentiable(v->type) ? b_.detach(v) : v;
    }
    return nullptr;
}

Value* Lower::lower_constructor(Expr* e, const Type* t, size_t first) {
    std::vector<Value*> args;
    for (size_t k = first; k < e->operands.size(); ++k) args.push_back(lower_expr(e->operands[k]));
    b_.set_loc(e->loc);
    if (t->is_scalar()) return b_.convert(args[0], t);
    if (t->is_pair()) {
        Value* p = convert(args[0], t->element);
        const Type* dt = types_.differential(t->element);
        Value* d = args.size() > 1 ? convert(args[1], dt) : b_.zero(dt);
        return b_.construct(t, {p, d});
    }
    if (args.size() == 1 && args[0]->type->is_scalar()) return convert(args[0], t);  // splat
    if (args.size() == 1 && lang::matrix_resizes(args[0]->type, t)) return convert(args[0], t);
    if (args.size() == 1 && args[0]->type->kind == t->kind && args[0]->type->rows == t->rows &&
        args[0]->type->cols == t->cols)
        return b_.convert(args[0], t);
    // Concatenate the components of every argument.
    const Type* st = types_.scalar_of(t);
    std::vector<Value*> comps;
    for (Value* a : args) {
        if (a->type->is_scalar()) comps.push_back(b_.convert(a, st));
        else
            for (int c = 0; c < a->type->rows; ++c) comps.push_back(b_.convert(b_.extract(a, c), st));
    }
    if (t->is_vector()) return b_.construct(t, comps);
    std::vector<Value*> rows;
    const Type* row = types_.vector(t->scalar, t->cols);
    for (int r = 0; r < t->rows; ++r)
        rows.push_back(
            b_.construct(row, std::vector<Value*>(comps.begin() + r * t->cols, comps.begin() + (r + 1) * t->cols)));
    return b_.construct(t, rows);
}

Value* Lower::lower_intrinsic(Expr* e) {
    const lang::IntrinsicInfo& info = lang::intrinsic_info(e->builtin->intrinsic);
    std::vector<Value*> args;
    std::vector<const Type*> types;
    for (size_t k = 1; k < e->operands.size(); ++k) {
        args.push_back(lower_expr(e->operands[k]));
        types.push_back(args.back()->type);
    }
    b_.set_loc(e->loc);
    switch (info.rule) {
    case lang::IntrinsicRule::Select: {
        Value* c = convert(args[0], types_.with_scalar(args[0]->type, lang::ScalarKind::Bool));
        return b_.intrinsic(info.id, e->type, {c, convert(args[1], e->type), convert(args[2], e->type)});
    }
    case lang::IntrinsicRule::Mul: {
        if (args[0]->type->is_scalar() || args[1]->type->is_scalar())
            return b_.binary(OpKind::Mul, convert(args[0], e->type), convert(args[1], e->type));
        lang::ScalarKind k = e->type->scalar;
        return b_.intrinsic(info.id, e->type,
                            {b_.convert(args[0], types_.with_scalar(args[0]->type, k)),
                             b_.convert(args[1], types_.with_scalar(args[1]->type, k))});
    }
    case lang::IntrinsicRule::Pred:
    case lang::IntrinsicRule::AnyAll:
    case lang::IntrinsicRule::BitCast:
    case lang::IntrinsicRule::Transpose: return b_.intrinsic(info.id, e->type, args);
    case lang::IntrinsicRule::Sign: {
        // sign computes in its operand's type (as its derivative rules use it); the language's
        // result is int.
        const Type* ot = lang::intrinsic_operand_type(types_, info.id, types);
        return convert(b_.intrinsic(info.id, ot, {convert(args[0], ot)}), e->type);
    }
    default: {
        const Type* ot = lang::intrinsic_operand_type(types_, info.id, types);
        for (Value*& a : args) a = convert(a, ot);
        return b_.intrinsic(info.id, e->type, args);
    }
    }
}

}  // namespace sg::ir
