// src/ir/lower_expr.cpp — lowering of expressions: operators with the conversions sema chose,
// lvalue assignment (functional updates of composites, tensor stores), calls, constructors,
// intrinsics and tensor access.
#include "ir/lower_internal.h"

namespace sg::ir {

namespace {

/// Whether index `i` is a constant that selects a member of `t` (a vector's component, a
/// matrix's row, an array's element), in `k`: only then is the access folded into a static
/// extract or insert. A constant out of range stays dynamic, so that the kernel's index check
/// reports it when the access runs, as it does for a computed index.
bool static_index(const Type* t, const Value* i, int& k) {
    if (!i->def || i->def->op != OpKind::ConstInt) return false;
    const int64_t n = t->is_vector() || t->is_matrix() ? t->rows : t->is_array() ? t->count : 0;
    const int64_t v = i->def->imm_int;
    if (v < 0 || v >= n) return false;
    k = int(v);
    return true;
}

}  // namespace

using lang::Op;
using lang::RefKind;
using lang::ScalarKind;
using Lower = Lowering::FunctionLowering;

Value* Lower::convert(Value* v, const Type* to) {
    if (v->type == to) return v;
    if (lang::matrix_resizes(v->type, to)) {
        // The top-left rows and columns, converted to the target's scalar kind.
        const Type* row = types_.vector(to->scalar, to->cols);
        std::vector<Value*> rows;
        for (int r = 0; r < to->rows; ++r) {
            Value* from_row = b_.extract(v, r);
            std::vector<Value*> comps;
            for (int c = 0; c < to->cols; ++c) comps.push_back(b_.convert(b_.extract(from_row, c), types_.scalar_of(to)));
            rows.push_back(b_.construct(row, comps));
        }
        return b_.construct(to, rows);
    }
    if (v->type->is_scalar() && (to->is_vector() || to->is_matrix()))
        return b_.splat(b_.convert(v, types_.scalar_of(to)), to);
    return b_.convert(v, to);
}

Value* Lower::lower_expr_as(Expr* e, const Type* to) {
    if (e->kind == ExprKind::InitList) return lower_init_list(e, to);
    return convert(lower_expr(e), to);
}

Value* Lower::lower_global(const VarDecl* g) {
    // An extern gets its value from bind_link_constants before sema; one without reaching here
    // is a compiler bug, not a user error.
    SG_INTERNAL_ASSERT(g->init != nullptr, "global '" + g->name + "' has no value at lowering");
    if (g->init->kind == ExprKind::InitList) return lower_init_list(g->init, g->type);
    return lower_expr_as(g->init, g->type);
}

Value* Lower::static_value(const VarDecl* g) {
    auto it = env_.find(g);
    if (it != env_.end()) return it->second;
    SG_INTERNAL_ASSERT(fn_.is_kernel, "static variable '" + g->name + "' is not a parameter of " + fn_.name);
    // The call layer binds every global buffer its entry's callee uses (sema rejects them in
    // [CUDAKernel] functions), before the call.
    SG_INTERNAL_ASSERT(lang::is_static_variable(g), "global buffer '" + g->name + "' is not bound in " + fn_.name);
    Value* v = g->init ? lower_global(g) : default_value(g->type);
    env_[g] = v;
    return v;
}

/// Whether a value of `t` has a field with a default value (`t` itself or within it).
static bool has_field_defaults(const Type* t, int depth = 0) {
    while (t->is_array()) t = t->element;
    if (!t->is_struct() || !t->decl || depth > 64) return false;
    for (const VarDecl* f : t->decl->fields)
        if (f->init || (f->type && has_field_defaults(f->type, depth + 1))) return true;
    return false;
}

Value* Lower::default_value(const Type* t) {
    if (!has_field_defaults(t)) return b_.zero(t);
    std::vector<Value*> members;
    if (t->is_array()) {
        for (int64_t k = 0; k < t->count; ++k) members.push_back(default_value(t->element));
        return b_.construct(t, members);
    }
    const auto& fields = types_.fields(t);
    for (size_t k = 0; k < fields.size(); ++k) {
        const VarDecl* f = k < t->decl->fields.size() ? t->decl->fields[k] : nullptr;
        members.push_back(f && f->init ? lower_init_list(f->init, fields[k].type) : default_value(fields[k].type));
    }
    return b_.construct(t, members);
}

Value* Lower::lower_init_list(Expr* e, const Type* t) {
    if (e->kind != ExprKind::InitList) return lower_expr_as(e, t);
    auto element = [&](size_t k, const Type* et) {
        return k < e->operands.size() ? lower_init_list(e->operands[k], et) : default_value(et);
    };
    std::vector<Value*> members;
    switch (t->kind) {
    case lang::TypeKind::Array:
        for (int64_t k = 0; k < t->count; ++k) members.push_back(element(size_t(k), t->element));
        return b_.construct(t, members);
    case lang::TypeKind::Vector:
        for (int k = 0; k < t->rows; ++k) members.push_back(element(size_t(k), types_.scalar_of(t)));
        return b_.construct(t, members);
    case lang::TypeKind::Matrix: {
        const Type* row = types_.vector(t->scalar, t->cols);
        if (!e->operands.empty() && e->operands[0]->kind == ExprKind::InitList) {
            for (int r = 0; r < t->rows; ++r) members.push_back(element(size_t(r), row));
        } else {
            for (int r = 0; r < t->rows; ++r) {
                std::vector<Value*> comps;
                for (int c = 0; c < t->cols; ++c)
                    comps.push_back(element(size_t(r * t->cols + c), types_.scalar_of(t)));
                members.push_back(b_.construct(row, comps));
            }
        }
        return b_.construct(t, members);
    }
    case lang::TypeKind::Struct: {
        const auto& fields = types_.fields(t);
        for (size_t k = 0; k < fields.size(); ++k) {
            // A field the list leaves out takes its default value.
            const VarDecl* f = t->decl && k < t->decl->fields.size() ? t->decl->fields[k] : nullptr;
            if (k >= e->operands.size() && f && f->init) {
                members.push_back(lower_init_list(f->init, fields[k].type));
                continue;
            }
            // As in Slang, what an initializer list puts into a no_diff field keeps no derivative.
            Value* v = element(k, fields[k].type);
            members.push_back(fields[k].no_diff && k < e->operands.size() && v ? b_.detach(v) : v);
        }
        return b_.construct(t, members);
    }
    default: return element(0, t);
    }
}

static OpKind binary_kind(Op op) {
    switch (op) {
    case Op::Add: return OpKind::Add;
    case Op::Sub: return OpKind::Sub;
    case Op::Mul: return OpKind::Mul;
    case Op::Div: return OpKind::Div;
    case Op::Rem: return OpKind::Rem;
    case Op::Shl: return OpKind::Shl;
    case Op::Shr: return OpKind::Shr;
    case Op::BitAnd: return OpKind::BitAnd;
    case Op::BitOr: return OpKind::BitOr;
    case Op::BitXor: return OpKind::BitXor;
    case Op::Lt: return OpKind::Lt;
    case Op::Le: return OpKind::Le;
    case Op::Gt: return OpKind::Gt;
    case Op::Ge: return OpKind::Ge;
    case Op::Eq: return OpKind::Eq;
    case Op::Ne: return OpKind::Ne;
    case Op::LogAnd: return OpKind::LogicAnd;
    case Op::LogOr: return OpKind::LogicOr;
    default: SG_INTERNAL_ASSERT(false, std::string("not a binary operator: ") + lang::op_spelling(op));
    }
}

Value* Lower::binary_op(Op op, Value* a, Value* b, const Type* operand_type, lang::SourceLoc loc) {
    b_.set_loc(loc);
    return b_.binary(binary_kind(op), convert(a, operand_type), convert(b, operand_type));
}

Value* Lower::lower_binary(Expr* e) {
    Expr* lhs = e->operands[0];
    Expr* rhs = e->operands[1];
    if ((e->op == Op::LogAnd || e->op == Op::LogOr) && e->type->is_scalar()) {
        // Scalars short-circuit: the right operand runs only when it decides the result.
        Value* a = lower_expr_as(lhs, types_.boolean());
        bool is_and = e->op == Op::LogAnd;
        auto rhs_fn = [&] { return std::vector<Value*>{lower_expr_as(rhs, types_.boolean())}; };
        auto const_fn = [&] { return std::vector<Value*>{b_.const_bool(!is_and)}; };
        return is_and ? lower_if(a, rhs_fn, const_fn, {types_.boolean()})[0]
                      : lower_if(a, const_fn, rhs_fn, {types_.boolean()})[0];
    }
    Value* a = lower_expr(lhs);
    Value* b = lower_expr(rhs);
    const Type* t = lang::binary_operand_type(types_, e->op, a->type, b->type);
    return binary_op(e->op, a, b, t, e->loc);
}

void Lower::assign(Expr* lhs, Value* v) {
    switch (lhs->kind) {
    case ExprKind::Name:
        if (Value* view; lhs->var_ref && lhs->var_ref->is_groupshared) {
            std::vector<Value*> index;
            shared_path(lhs, view, index);
            store_shared(view, index, lhs->type, convert(v, lhs->type));
            return;
        }
        if (lang::uses_global_storage(lhs->var_ref)) {
            // A kernel starts a static variable first (its initializer runs once); a global
            // buffer is bound here, by the generated entry.
            if (lang::is_static_variable(lhs->var_ref)) static_value(lhs->var_ref);
            env_[lhs->var_ref] = convert(v, lhs->var_ref->type);
            return;
        }
        SG_INTERNAL_ASSERT(lhs->var_ref && !lhs->var_ref->is_global, "assignment to a non-local");
        env_[lhs->var_ref] = convert(v, lhs->var_ref->type);
        return;
    case ExprKind::Member: {
        Expr* base = lhs->operands[0];
        if (lhs->ref == RefKind::Field) {
            Value* bv = lower_expr(base);
            assign(base, b_.insert(bv, lhs->field_index, convert(v, lhs->type)));
            return;
        }
        if (lhs->ref == RefKind::Swizzle) {
            Value* bv = lower_expr(base);
            if (bv->type->is_scalar()) {
                assign(base, convert(v, bv->type));
                return;
            }
            Value* nv = convert(v, lhs->type);
            if (lhs->swizzle.size() == 1) {
                assign(base, b_.insert(bv, lhs->swizzle[0], nv));
                return;
            }
            // `v.zx = w`: component k of w goes to v's component swizzle[k] (sema: all distinct).
            for (size_t k = 0; k < lhs->swizzle.size(); ++k)
                bv = b_.insert(bv, lhs->swizzle[k], b_.extract(nv, int(k)));
            assign(base, bv);
            return;
        }
        if (lhs->ref == RefKind::PairMember) {
            Value* bv = lower_expr(base);
            int index = (lhs->name == "p" || lhs->name == "primal") ? 0 : 1;
            assign(base, b_.insert(bv, index, convert(v, lhs->type)));
            return;
        }
        break;
    }
    case ExprKind::Index: {
        Expr* base = lhs->operands[0];
        std::vector<Value*> index_scratch;
        if (Value* view; lhs->type && shared_path(lhs, view, index_scratch)) {
            std::vector<Value*> index = std::move(index_scratch);
            b_.set_loc(lhs->loc);
            store_shared(view, index, lhs->type, convert(v, lhs->type));
            return;
        }
        if (base->type->is_tensor()) {
            Value* t = lower_expr(base);
            std::vector<Value*> index;
            std::vector<Expr*> idx(lhs->operands.begin() + 1, lhs->operands.end());
            lower_tensor_access(lhs, t, idx, &index);
            b_.set_loc(lhs->loc);
            b_.tensor_store(t, index, convert(v, base->type->element));
            return;
        }
        Value* bv = lower_expr(base);
        Value* i = lower_expr(lhs->operands[1]);
        Value* nv = convert(v, lhs->type);
        if (int k; static_index(bv->type, i, k)) assign(base, b_.insert(bv, k, nv));
        else assign(base, b_.insert_dyn(bv, i, nv));
        return;
    }
    default: break;
    }
    SG_INTERNAL_ASSERT(false, "assignment to an expression sema did not accept as an lvalue");
}

Value* Lower::lower_tensor_access(Expr* at, Value* tensor, const std::vector<Expr*>& index_exprs,
                                  std::vector<Value*>* out_index) {
    std::vector<const Type*> types;
    std::vector<Value*> values;
    for (Expr* i : index_exprs) {
        values.push_back(lower_expr(i));
        types.push_back(values.back()->type);
    }
    int rank = tensor->type->rank;
    std::vector<Value*>& index = *out_index;
    if (tensor->type->tensor.view) {
        // A TensorView's indices in order; a vector's components in order too (.x is dimension 0).
        for (Value* v : values) {
            if (!v->type->is_vector()) index.push_back(v);
            else
                for (int d = 0; d < v->type->rows; ++d) index.push_back(b_.extract(v, d));
        }
        b_.set_loc(at->loc);
        return nullptr;
    }
    switch (lang::tensor_index_form(types)) {
    case lang::TensorIndexForm::Scalars: index = values; break;
    case lang::TensorIndexForm::Array:
        for (int d = 0; d < rank; ++d) index.push_back(b_.extract(values[0], d));
        break;
    case lang::TensorIndexForm::Vector:
        // `t[int2(x, y)]` reads t[y][x]: .x indexes the last dimension.
        for (int d = 0; d < rank; ++d) index.push_back(b_.extract(values[0], rank - 1 - d));
        break;
    }
    b_.set_loc(at->loc);
    return nullptr;
}

Value* Lower::lower_expr(Expr* e) {
    b_.set_loc(e->loc);
    switch (e->kind) {
    case ExprKind::IntLit:
        if (lang::is_floating(e->type->scalar)) return b_.const_float(e->type, double(e->int_value));
        return b_.const_int(e->type, int64_t(e->int_value));
    case ExprKind::FloatLit: return b_.const_float(e->type, e->float_value);
    case ExprKind::BoolLit: return b_.const_bool(e->int_value != 0);
    case ExprKind::Name: {
        if (Value* view; e->var_ref && e->var_ref->is_groupshared) {
            std::vector<Value*> index;
            shared_path(e, view, index);
            return load_shared(view, index, e->type);
        }
        if (lang::uses_global_storage(e->var_ref)) return static_value(e->var_ref);
        if (e->ref == RefKind::Global) return lower_global(e->var_ref);
        auto it = env_.find(e->var_ref);
        SG_INTERNAL_ASSERT(it != env_.end(), "variable '" + e->name + "' has no value in lowering");
        return it->second;
    }
    case ExprKind::Unary:
    case ExprKind::Postfix: {
        Expr* operand = e->operands[0];
        Value* a = lower_expr(operand);
        switch (e->op) {
        case Op::Neg: return b_.unary(OpKind::Neg, a);
        case Op::Plus: return a;
        case Op::Not:
            return convert(b_.unary(OpKind::LogicNot, convert(a, types_.with_scalar(a->type, ScalarKind::Bool))),
                           e->type);
        case Op::BitNot: return b_.unary(OpKind::BitNot, a);
        case Op::PreInc:
        case Op::PreDec:
        case Op::Inc:
        case Op::Dec: {
            bool inc = e->op == Op::PreInc || e->op == Op::Inc;
            Value* next = b_.binary(inc ? OpKind::Add : OpKind::Sub, a, b_.const_splat(a->type, 1.0));
            assign(operand, next);
            return (e->op == Op::Inc || e->op == Op::Dec) ? a : next;
        }
        default: break;
        }
        break;
    }
    case ExprKind::Binary: return lower_binary(e);
    case ExprKind::Assign: {
        Expr* lhs = e->operands[0];
        Expr* rhs = e->operands[1];
        Value* v;
        if (e->op == Op::Assign) {
            v = lower_expr_as(rhs, lhs->type);
        } else {
            static const Op kCompound[] = {Op::Mul, Op::Div, Op::Rem,    Op::Add,    Op::Sub,
                                           Op::Shl, Op::Shr, Op::BitAnd, Op::BitXor, Op::BitOr};
            Op bin = kCompound[int(e->op) - int(Op::MulAssign)];
            Value* cur = lower_expr(lhs);
            Value* r = lower_expr(rhs);
            const Type* t = lang::binary_operand_type(types_, bin, cur->type, r->type);
            v = convert(binary_op(bin, cur, r, t, e->loc), lhs->type);
        }
        assign(lhs, v);
        return v;
    }
    case ExprKind::Conditional: {
        Value* c = lower_expr(e->operands[0]);
        if (c->type->is_vector()) {
            Value* a = lower_expr_as(e->operands[1], e->type);
            Value* b = lower_expr_as(e->operands[2], e->type);
            return b_.select(c, a, b);
        }
        c = convert(c, types_.boolean());
        return lower_if(
            c, [&] { return std::vector<Value*>{lower_expr_as(e->operands[1], e->type)}; },
            [&] { return std::vector<Value*>{lower_expr_as(e->operands[2], e->type)}; }, {e->type})[0];
    }
    case ExprKind::Call:
    case ExprKind::TypeCtor: return lower_call(e);
    case ExprKind::Index: {
        Expr* base = e->operands[0];
        std::vector<Value*> index_scratch;
        if (Value* view; shared_path(e, view, index_scratch)) {
            std::vector<Value*> index = std::move(index_scratch);
            b_.set_loc(e->loc);
            return load_shared(view, index, e->type);
        }
        Value* bv = lower_expr(base);
        if (bv->type->is_tensor()) {
            std::vector<Value*> index;
            std::vector<Expr*> idx(e->operands.begin() + 1, e->operands.end());
            lower_tensor_access(e, bv, idx, &index);
            return b_.tensor_load(bv, index);
        }
        Value* i = lower_expr(e->operands[1]);
        if (int k; static_index(bv->type, i, k)) return b_.extract(bv, k);
        return b_.extract_dyn(bv, i);
    }
    case ExprKind::Member: {
        if (e->ref == RefKind::EnumMember) return b_.const_int(e->type, e->enum_value);
        Value* bv = lower_expr(e->operands[0]);
        switch (e->ref) {
        case RefKind::Field: return b_.extract(bv, e->field_index);
        case RefKind::PairMember: return b_.extract(bv, (e->name == "p" || e->name == "primal") ? 0 : 1);
        case RefKind::Swizzle:
            if (bv->type->is_scalar()) return e->swizzle.size() == 1 ? bv : b_.splat(bv, e->type);
            if (e->swizzle.size() == 1) return b_.extract(bv, e->swizzle[0]);
            return b_.swizzle(bv, e->swizzle);
        case RefKind::TensorMember: {
            if (bv->type->tensor.view)  // `.diff.diff` (slangtorch's spelling): the gradient view again
                return bv->type->tensor.has_grad ? b_.view_part(bv, e->name == "diff" ? 1 : 0, e->type) : bv;
            std::vector<Value*> dims;
            for (int d = 0; d < bv->type->rank; ++d) dims.push_back(b_.tensor_shape(bv, d));
            return b_.construct(e->type, dims);
        }
        default: break;
        }
        break;
    }
    case ExprKind::InitList: return lower_init_list(e, e->type);
    case ExprKind::Comma: lower_expr(e->operands[0]); return lower_expr(e->operands[1]);
    case ExprKind::NoDiff: {
        Value* v = lower_expr(e->operands[0]);
        return v ? b_.detach(v) : v;
    }
    case ExprKind::Cast: return convert(lower_expr(e->operands[0]), e->type);
    }
    SG_INTERNAL_ASSERT(false, "expression kind not handled by lowering");
}

}  // namespace sg::ir
