// src/ir/lower_coop.cpp — lowering of cooperative-kernel constructs: groupshared variables (a
// shared view per variable, read and written element by element), thread and block ids,
// barriers, Interlocked atomics and the TensorView queries.
//
// A groupshared variable `T g[A][B]` is storage of A x B elements of T, one copy per block
// (Program::shared). Reading `g[i][j]` loads the element, `g[i][j].x = v` loads it, inserts and
// stores it back (the functional update every other lvalue gets); reading or writing a whole
// sub-array (`g[i]`, `g`) moves each of its elements.
#include "ir/lower_internal.h"
#include "lang/coop.h"

namespace sg::ir {

using lang::BuiltinKind;
using Lower = Lowering::FunctionLowering;

int Lowering::shared_index(const lang::VarDecl* g) {
    auto it = shared_.find(g);
    if (it != shared_.end()) return it->second;
    SharedVar v;
    v.name = g->name;
    const Type* t = g->type;
    while (t->is_array()) {
        v.dims.push_back(t->count);
        t = t->element;
    }
    v.element = t;
    lang::TensorKind kind;
    kind.access = lang::TensorAccess::ReadWrite;
    kind.shared = true;
    v.view_type = program_.types->tensor(t, int(v.dims.size()), kind);
    program_.shared.push_back(v);
    const int index = int(program_.shared.size()) - 1;
    shared_[g] = index;
    return index;
}

bool Lower::shared_path(Expr* e, Value*& view, std::vector<Value*>& index) {
    // The chain of subscripts down to the variable, outermost last.
    std::vector<Expr*> subscripts;
    Expr* root = e;
    while (root->kind == ExprKind::Index && root->operands.size() == 2 && root->operands[0]->type &&
           root->operands[0]->type->is_array()) {
        subscripts.push_back(root->operands[1]);
        root = root->operands[0];
    }
    if (root->kind != ExprKind::Name || !root->var_ref || !root->var_ref->is_groupshared) return false;
    const int k = owner_.shared_index(root->var_ref);
    index.clear();
    for (auto it = subscripts.rbegin(); it != subscripts.rend(); ++it) index.push_back(lower_expr(*it));
    b_.set_loc(root->loc);  // the variable's name: where a misuse is reported
    view = b_.shared_view(k, owner_.program_types_shared(k));
    b_.set_loc(e->loc);
    return true;
}

Value* Lower::load_shared(Value* view, std::vector<Value*> index, const Type* t) {
    if (int(index.size()) == view->type->rank) return b_.tensor_load(view, index);
    // A sub-array: each of its elements.
    std::vector<Value*> members;
    for (int64_t k = 0; k < t->count; ++k) {
        std::vector<Value*> at = index;
        at.push_back(b_.const_int(types_.int32(), k));
        members.push_back(load_shared(view, at, t->element));
    }
    return b_.construct(t, members);
}

void Lower::store_shared(Value* view, std::vector<Value*> index, const Type* t, Value* v) {
    if (int(index.size()) == view->type->rank) {
        b_.tensor_store(view, index, v);
        return;
    }
    for (int64_t k = 0; k < t->count; ++k) {
        std::vector<Value*> at = index;
        at.push_back(b_.const_int(types_.int32(), k));
        store_shared(view, at, t->element, b_.extract(v, int(k)));
    }
}

Value* Lower::lower_coop_call(Expr* e) {
    const lang::Builtin* builtin = e->builtin;
    auto arg = [&](size_t k) { return e->operands[k + 1]; };
    switch (builtin->kind) {
    case BuiltinKind::CoopId: {
        lang::CoopId id;
        lang::find_coop_id(builtin->name, id);
        if (lang::is_call_shape_id(id)) {
            Value* dim = id == lang::CoopId::CallRank ? nullptr : lower_expr_as(arg(0), types_.int32());
            b_.set_loc(e->loc);
            return b_.call_shape_id(id, dim);
        }
        return b_.coop_id(id);
    }
    case BuiltinKind::Barrier: {
        const lang::BarrierInfo* info = lang::find_barrier(builtin->name);
        b_.barrier(info->sync, info->device);
        return nullptr;
    }
    case BuiltinKind::ViewSize:
    case BuiltinKind::ViewStride:
    case BuiltinKind::ViewDims: {
        Value* view = lower_expr(e->operands[0]->operands[0]);
        const int op = builtin->kind == BuiltinKind::ViewSize ? 0 : builtin->kind == BuiltinKind::ViewStride ? 1 : 2;
        Value* dim = op == 2 ? nullptr : lower_expr(arg(0));
        b_.set_loc(e->loc);
        return b_.view_query(op, view, dim);
    }
    case BuiltinKind::Interlocked: {
        lang::AtomicOp op;
        lang::find_atomic(builtin->name, op);
        Expr* dest = arg(0);
        // A field or vector component of a groupshared element: the path to it (sema allowed it
        // there only), outermost first.
        std::vector<int> path;
        while (dest->kind == ExprKind::Member && (dest->ref == lang::RefKind::Field || dest->ref == lang::RefKind::Swizzle)) {
            path.insert(path.begin(), dest->ref == lang::RefKind::Field ? dest->field_index : dest->swizzle[0]);
            dest = dest->operands[0];
        }
        Value* target = nullptr;
        std::vector<Value*> index;
        if (!shared_path(dest, target, index) && !(dest->kind == ExprKind::Index && dest->operands[0]->type->is_tensor()))
            return lower_local_interlocked(e, op);
        if (!target) {
            // An element of a TensorView or RWStructuredBuffer (sema allowed nothing else).
            SG_INTERNAL_ASSERT(dest->kind == ExprKind::Index && dest->operands[0]->type->is_tensor(),
                               "Interlocked destination is not an element");
            target = lower_expr(dest->operands[0]);
            std::vector<Expr*> idx(dest->operands.begin() + 1, dest->operands.end());
            lower_tensor_access(dest, target, idx, &index);
        }
        const Type* t = arg(0)->type;
        const bool cas = op == lang::AtomicOp::CompareExchange;
        Value* compare = cas ? lower_expr_as(arg(1), t) : nullptr;
        Value* value = lower_expr_as(arg(cas ? 2 : 1), t);
        b_.set_loc(e->loc);
        Value* original = nullptr;
        if (t->is_vector()) {
            // A TensorView's InterlockedAdd on a vector element (sema allowed only that): one
            // atomic per component; the original is the vector of their originals.
            std::vector<Value*> parts;
            for (int c = 0; c < t->rows; ++c) {
                std::vector<int> at = path;
                at.push_back(c);
                parts.push_back(b_.tensor_atomic(op, target, index, nullptr, b_.extract(value, c), at));
            }
            original = b_.construct(t, parts);
        } else {
            original = b_.tensor_atomic(op, target, index, compare, value, path);
        }
        const size_t out = cas ? 3 : 2;
        if (e->operands.size() > out + 1) assign(arg(out), convert(original, arg(out)->type));
        return nullptr;
    }
    default: break;
    }
    SG_INTERNAL_ASSERT(false, std::string("cooperative built-in not handled by lowering: ") + builtin->name);
}

Value* Lower::lower_local_interlocked(Expr* e, lang::AtomicOp op) {
    // A local variable (or a part of one): no other thread sees it, so a read, the update and a
    // write; `original` gets the value read.
    auto arg = [&](size_t k) { return e->operands[k + 1]; };
    Expr* dest = arg(0);
    const Type* t = dest->type;
    const bool cas = op == lang::AtomicOp::CompareExchange;
    Value* old = lower_expr(dest);
    Value* compare = cas ? lower_expr_as(arg(1), t) : nullptr;
    Value* value = lower_expr_as(arg(cas ? 2 : 1), t);
    b_.set_loc(e->loc);
    Value* next = value;
    switch (op) {
    case lang::AtomicOp::Add: next = b_.binary(OpKind::Add, old, value); break;
    case lang::AtomicOp::Min: next = b_.intrinsic(lang::IntrinsicId::Min, t, {old, value}); break;
    case lang::AtomicOp::Max: next = b_.intrinsic(lang::IntrinsicId::Max, t, {old, value}); break;
    case lang::AtomicOp::And: next = b_.binary(OpKind::BitAnd, old, value); break;
    case lang::AtomicOp::Or: next = b_.binary(OpKind::BitOr, old, value); break;
    case lang::AtomicOp::Xor: next = b_.binary(OpKind::BitXor, old, value); break;
    case lang::AtomicOp::Exchange: break;
    case lang::AtomicOp::CompareExchange: next = b_.select(b_.binary(OpKind::Eq, old, compare), value, old); break;
    }
    // As the atomics on memory, it carries no derivative.
    assign(dest, b_.detach(next));
    const size_t out = cas ? 3 : 2;
    if (e->operands.size() > out + 1) assign(arg(out), convert(b_.detach(old), arg(out)->type));
    return nullptr;
}

}  // namespace sg::ir
