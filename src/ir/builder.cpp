// src/ir/builder.cpp — instruction factories with type checks.
#include "ir/builder.h"

#include <string>

namespace sg::ir {

using lang::ScalarKind;
using lang::TypeKind;
using lang::type_name;

#define IR_ASSERT(cond, msg) SG_INTERNAL_ASSERT(cond, std::string("IR builder: ") + (msg))

Inst* Builder::append(std::unique_ptr<Inst> inst) {
    IR_ASSERT(block_ != nullptr, "no insertion block");
    if (!block_->insts.empty()) {
        OpKind last = block_->insts.back()->op;
        IR_ASSERT(last != OpKind::Yield && last != OpKind::Return, "instruction after a terminator");
    }
    inst->parent = block_;
    block_->insts.push_back(std::move(inst));
    return block_->insts.back().get();
}

Inst* Builder::make(OpKind op, std::vector<Value*> operands, std::vector<const Type*> result_types) {
    auto inst = std::make_unique<Inst>();
    inst->op = op;
    inst->loc = loc_;
    for (Value* v : operands) IR_ASSERT(v != nullptr, std::string("null operand of ") + op_name(op));
    inst->operands = std::move(operands);
    Inst* raw = append(std::move(inst));
    for (const Type* t : result_types) {
        Value* v = fn_.new_value(t);
        v->def = raw;
        raw->results.push_back(v);
    }
    return raw;
}

Value* Builder::const_int(const Type* type, int64_t value) {
    IR_ASSERT(type->is_scalar() && !lang::is_floating(type->scalar), "const_int of " + type_name(type));
    Inst* i = make(OpKind::ConstInt, {}, {type});
    i->imm_int = value;
    return i->result();
}

Value* Builder::const_float(const Type* type, double value) {
    IR_ASSERT(type->is_scalar() && lang::is_floating(type->scalar), "const_float of " + type_name(type));
    Inst* i = make(OpKind::ConstFloat, {}, {type});
    i->imm_float = value;
    return i->result();
}

Value* Builder::const_bool(bool value) { return const_int(types_.boolean(), value ? 1 : 0); }

Value* Builder::const_splat(const Type* type, double value) {
    const Type* s = types_.scalar_of(type);
    Value* c = lang::is_floating(s->scalar) ? const_float(s, value) : const_int(s, int64_t(value));
    return type->is_scalar() ? c : splat(c, type);
}

Value* Builder::zero(const Type* type) {
    switch (type->kind) {
    case TypeKind::Scalar:
    case TypeKind::Vector:
    case TypeKind::Matrix: return const_splat(type, 0.0);
    case TypeKind::Array: {
        Value* e = zero(type->element);
        return construct(type, std::vector<Value*>(size_t(type->count), e));
    }
    case TypeKind::Struct: {
        std::vector<Value*> members;
        for (const auto& f : types_.fields(type)) members.push_back(zero(f.type));
        return construct(type, members);
    }
    case TypeKind::DiffPair: {
        Value* p = zero(type->element);
        return construct(type, {p, zero(types_.differential(type->element))});
    }
    default: return undef(type);
    }
}

Value* Builder::undef(const Type* type) { return make(OpKind::Undef, {}, {type})->result(); }

static bool is_comparison(OpKind op) {
    return op == OpKind::Eq || op == OpKind::Ne || op == OpKind::Lt || op == OpKind::Le || op == OpKind::Gt ||
           op == OpKind::Ge;
}

Value* Builder::binary(OpKind op, Value* a, Value* b) {
    IR_ASSERT(a->type == b->type, std::string(op_name(op)) + " of mismatched types " + type_name(a->type) +
                                      " and " + type_name(b->type));
    IR_ASSERT(a->type->is_numeric(), std::string(op_name(op)) + " of non-numeric type " + type_name(a->type));
    const Type* result = a->type;
    if (is_comparison(op)) result = types_.with_scalar(a->type, ScalarKind::Bool);
    if (op == OpKind::LogicAnd || op == OpKind::LogicOr)
        IR_ASSERT(a->type->scalar == ScalarKind::Bool, "logic op on non-bool");
    if (op == OpKind::BitAnd || op == OpKind::BitOr || op == OpKind::BitXor || op == OpKind::Shl ||
        op == OpKind::Shr)
        IR_ASSERT(!lang::is_floating(a->type->scalar), "bit op on floating type");
    return make(op, {a, b}, {result})->result();
}

Value* Builder::unary(OpKind op, Value* a) {
    IR_ASSERT(a->type->is_numeric(), std::string(op_name(op)) + " of non-numeric type");
    if (op == OpKind::LogicNot) IR_ASSERT(a->type->scalar == ScalarKind::Bool, "not of non-bool");
    return make(op, {a}, {a->type})->result();
}

Value* Builder::select(Value* cond, Value* a, Value* b) {
    IR_ASSERT(a->type == b->type, "select of mismatched types");
    IR_ASSERT(cond->type->scalar == ScalarKind::Bool &&
                  (cond->type->is_scalar() || cond->type->components() == a->type->components()),
              "select condition must be bool or a bool vector of the operand's shape");
    return make(OpKind::Select, {cond, a, b}, {a->type})->result();
}

Value* Builder::detach(Value* x) { return make(OpKind::Detach, {x}, {x->type})->result(); }
Value* Builder::keep_derivative(Value* x, Value* from) {
    SG_INTERNAL_ASSERT(x->type == from->type, "keep_derivative: operands of different types");
    return make(OpKind::KeepDerivative, {x, from}, {x->type})->result();
}

Value* Builder::convert(Value* x, const Type* to) {
    if (x->type == to) return x;
    IR_ASSERT(x->type->is_numeric() && to->is_numeric() && x->type->components() == to->components() &&
                  x->type->kind == to->kind,
              "convert " + type_name(x->type) + " to " + type_name(to));
    return make(OpKind::Convert, {x}, {to})->result();
}

Value* Builder::splat(Value* s, const Type* to) {
    IR_ASSERT(s->type->is_scalar() && (to->is_vector() || to->is_matrix()) && to->scalar == s->type->scalar,
              "splat " + type_name(s->type) + " to " + type_name(to));
    return make(OpKind::Splat, {s}, {to})->result();
}

Value* Builder::construct(const Type* type, const std::vector<Value*>& members) {
    switch (type->kind) {
    case TypeKind::Vector:
        IR_ASSERT(int(members.size()) == type->rows, "vector construct arity");
        for (Value* m : members) IR_ASSERT(m->type == types_.scalar_of(type), "vector construct member type");
        break;
    case TypeKind::Matrix:
        IR_ASSERT(int(members.size()) == type->rows, "matrix construct takes rows");
        for (Value* m : members)
            IR_ASSERT(m->type == types_.vector(type->scalar, type->cols), "matrix construct row type");
        break;
    case TypeKind::Array:
        IR_ASSERT(int64_t(members.size()) == type->count, "array construct arity");
        for (Value* m : members) IR_ASSERT(m->type == type->element, "array construct member type");
        break;
    case TypeKind::Struct: {
        const auto& fields = types_.fields(type);
        IR_ASSERT(members.size() == fields.size(), "struct construct arity");
        for (size_t i = 0; i < fields.size(); ++i)
            IR_ASSERT(members[i]->type == fields[i].type, "struct construct member type of " + fields[i].name);
        break;
    }
    case TypeKind::DiffPair:
        IR_ASSERT(members.size() == 2 && members[0]->type == type->element &&
                      members[1]->type == types_.differential(type->element),
                  "pair construct");
        break;
    default: IR_ASSERT(false, "construct of " + type_name(type));
    }
    return make(OpKind::Construct, members, {type})->result();
}

/// Type of member `index` of a composite (vector component, matrix row, array element, ...).
static const Type* member_type(lang::TypeContext& types, const Type* t, int index) {
    switch (t->kind) {
    case TypeKind::Vector: return types.scalar_of(t);
    case TypeKind::Matrix: return types.vector(t->scalar, t->cols);
    case TypeKind::Array: return t->element;
    case TypeKind::Struct: return types.fields(t).at(size_t(index)).type;
    case TypeKind::DiffPair: return index == 0 ? t->element : types.differential(t->element);
    default: return nullptr;
    }
}

Value* Builder::extract(Value* c, int index) {
    const Type* mt = member_type(types_, c->type, index);
    IR_ASSERT(mt != nullptr && index >= 0, "extract from " + type_name(c->type));
    Inst* i = make(OpKind::Extract, {c}, {mt});
    i->imm_int = index;
    return i->result();
}

Value* Builder::insert(Value* c, int index, Value* v) {
    const Type* mt = member_type(types_, c->type, index);
    IR_ASSERT(mt == v->type, "insert type mismatch into " + type_name(c->type));
    Inst* i = make(OpKind::Insert, {c, v}, {c->type});
    i->imm_int = index;
    return i->result();
}

Value* Builder::extract_dyn(Value* c, Value* index) {
    IR_ASSERT(c->type->is_vector() || c->type->is_matrix() || c->type->is_array(), "extract_dyn composite");
    IR_ASSERT(index->type->is_scalar() && lang::is_integer(index->type->scalar), "extract_dyn index");
    return make(OpKind::ExtractDyn, {c, index}, {member_type(types_, c->type, 0)})->result();
}

Value* Builder::insert_dyn(Value* c, Value* index, Value* v) {
    IR_ASSERT(member_type(types_, c->type, 0) == v->type, "insert_dyn value type");
    IR_ASSERT(index->type->is_scalar() && lang::is_integer(index->type->scalar), "insert_dyn index");
    return make(OpKind::InsertDyn, {c, index, v}, {c->type})->result();
}

Value* Builder::swizzle(Value* vec, const std::vector<int>& comps) {
    IR_ASSERT(vec->type->is_vector() || vec->type->is_scalar(), "swizzle of non-vector");
    for (int c : comps) IR_ASSERT(c >= 0 && c < std::max(1, vec->type->rows), "swizzle component");
    const Type* t = types_.vector(vec->type->scalar, int(comps.size()));
    Inst* i = make(OpKind::Swizzle, {vec}, {t});
    i->imm_list = comps;
    return i->result();
}

Value* Builder::intrinsic(lang::IntrinsicId id, const Type* result, const std::vector<Value*>& args) {
    IR_ASSERT(int(args.size()) == lang::intrinsic_info(id).arity,
              std::string("arity of intrinsic ") + lang::intrinsic_info(id).name);
    Inst* i = make(OpKind::Intrinsic, args, {result});
    i->imm_int = int64_t(id);
    return i->result();
}

std::vector<Value*> Builder::call(Function* callee, const std::vector<Value*>& args, bool in_primal_body) {
    // Arguments: one per in/inout parameter, in parameter order (out parameters take none).
    size_t expected = 0;
    for (const auto& p : callee->params) expected += p.dir != ParamDir::Out;
    IR_ASSERT(args.size() == expected, "call of " + callee->name + ": argument count");
    size_t a = 0;
    for (const auto& p : callee->params) {
        if (p.dir == ParamDir::Out) continue;
        IR_ASSERT(args[a]->type == p.type, "call of " + callee->name + ": argument type of " + p.name);
        ++a;
    }
    Inst* i = make(OpKind::Call, args, callee->result_types);
    i->callee = callee;
    i->imm_int = in_primal_body ? 1 : 0;
    return i->results;
}

void Builder::check_tensor_index(Value* t, const std::vector<Value*>& index, const char* what) {
    IR_ASSERT(t->type->is_tensor(), std::string(what) + " of non-tensor");
    // A TensorView's rank is known at the launch: the generated code checks the count.
    IR_ASSERT(t->type->tensor.view ? int(index.size()) <= lang::kMaxViewRank : int(index.size()) == t->type->rank,
              std::string(what) + ": index count != rank");
    for (Value* i : index)
        IR_ASSERT(i->type->is_scalar() && lang::is_integer(i->type->scalar), std::string(what) + ": index type");
}

static std::vector<Value*> concat(Value* t, const std::vector<Value*>& index, Value* v = nullptr) {
    std::vector<Value*> ops{t};
    ops.insert(ops.end(), index.begin(), index.end());
    if (v) ops.push_back(v);
    return ops;
}

Value* Builder::tensor_load(Value* t, const std::vector<Value*>& index) {
    check_tensor_index(t, index, "tensor_load");
    return make(OpKind::TensorLoad, concat(t, index), {t->type->element})->result();
}

void Builder::tensor_store(Value* t, const std::vector<Value*>& index, Value* value) {
    check_tensor_index(t, index, "tensor_store");
    IR_ASSERT(value->type == t->type->element, "tensor_store value type");
    make(OpKind::TensorStore, concat(t, index, value), {});
}

void Builder::tensor_atomic_add(Value* t, const std::vector<Value*>& index, Value* value) {
    check_tensor_index(t, index, "tensor_atomic_add");
    IR_ASSERT(value->type == t->type->element, "tensor_atomic_add value type");
    make(OpKind::TensorAtomicAdd, concat(t, index, value), {});
}

void Builder::tensor_grad_add(Value* t, const std::vector<Value*>& index, Value* value) {
    check_tensor_index(t, index, "tensor_grad_add");
    IR_ASSERT(t->type->tensor.has_grad, "tensor_grad_add on a tensor without gradient");
    IR_ASSERT(value->type == t->type->element, "tensor_grad_add value type");
    make(OpKind::TensorGradAdd, concat(t, index, value), {});
}

Value* Builder::tensor_grad_load(Value* t, const std::vector<Value*>& index) {
    check_tensor_index(t, index, "tensor_grad_load");
    IR_ASSERT(t->type->tensor.has_grad, "tensor_grad_load on a tensor without gradient");
    return make(OpKind::TensorGradLoad, concat(t, index), {t->type->element})->result();
}

void Builder::tensor_grad_store(Value* t, const std::vector<Value*>& index, Value* value) {
    check_tensor_index(t, index, "tensor_grad_store");
    IR_ASSERT(t->type->tensor.has_grad, "tensor_grad_store on a tensor without gradient");
    make(OpKind::TensorGradStore, concat(t, index, value), {});
}

Value* Builder::tensor_shape(Value* t, int dim) {
    IR_ASSERT(t->type->is_tensor() && dim >= 0 && dim < t->type->rank, "tensor_shape dim");
    Inst* i = make(OpKind::TensorShape, {t}, {types_.uint32()});
    i->imm_int = dim;
    return i->result();
}

Value* Builder::tensor_slice(Value* t, const std::vector<Value*>& index, const Type* type) {
    IR_ASSERT(t->type->is_tensor() && !index.empty() && int(index.size()) < t->type->rank, "tensor_slice index count");
    IR_ASSERT(type->is_tensor() && type->element == t->type->element && type->tensor == t->type->tensor &&
                  type->rank == t->type->rank - int(index.size()),
              "tensor_slice result type");
    for (Value* i : index)
        IR_ASSERT(i->type->is_scalar() && lang::is_integer(i->type->scalar), "tensor_slice: index type");
    return make(OpKind::TensorSlice, concat(t, index), {type})->result();
}

Value* Builder::call_index(int dim, const Type* type) {
    IR_ASSERT(dim >= 0 && dim < 8, "call_index dim");
    if (!type) type = types_.int32();
    IR_ASSERT(type == types_.int32() || type == types_.scalar(lang::ScalarKind::Int64), "call_index type");
    Inst* i = make(OpKind::CallIndex, {}, {type});
    i->imm_int = dim;
    return i->result();
}

Value* Builder::local_alloc(const Type* element, int64_t count) {
    IR_ASSERT(count > 0, "local_alloc count");
    Inst* i = make(OpKind::LocalAlloc, {}, {types_.array(element, count)});
    i->imm_int = count;
    return i->result();
}

Value* Builder::local_load(Value* handle, Value* index) {
    IR_ASSERT(handle->def && handle->def->op == OpKind::LocalAlloc, "local_load of non-local");
    return make(OpKind::LocalLoad, {handle, index}, {handle->type->element})->result();
}

void Builder::local_store(Value* handle, Value* index, Value* value) {
    IR_ASSERT(handle->def && handle->def->op == OpKind::LocalAlloc, "local_store of non-local");
    IR_ASSERT(value->type == handle->type->element, "local_store value type");
    make(OpKind::LocalStore, {handle, index, value}, {});
}

Inst* Builder::if_(Value* cond, const std::vector<const Type*>& result_types) {
    IR_ASSERT(cond->type->is_bool(), "if condition must be bool");
    Inst* i = make(OpKind::If, {cond}, result_types);
    for (int r = 0; r < 2; ++r) {
        i->regions.push_back(std::make_unique<Block>());
        i->regions.back()->parent = i;
    }
    return i;
}

Inst* Builder::loop(const std::vector<Value*>& init, int64_t max_iters) {
    std::vector<const Type*> types;
    for (Value* v : init) types.push_back(v->type);
    Inst* i = make(OpKind::Loop, init, types);
    i->imm_int = max_iters;
    auto body = std::make_unique<Block>();
    body->parent = i;
    for (const Type* t : types) {
        Value* p = fn_.new_value(t);
        p->block = body.get();
        body->params.push_back(p);
    }
    i->regions.push_back(std::move(body));
    return i;
}

void Builder::yield(const std::vector<Value*>& values) {
    Inst* owner = block_->parent;
    IR_ASSERT(owner != nullptr, "yield outside a region");
    if (owner->op == OpKind::If) {
        IR_ASSERT(values.size() == owner->results.size(), "if yield arity");
        for (size_t k = 0; k < values.size(); ++k) IR_ASSERT(values[k]->type == owner->results[k]->type, "if yield type");
    } else {
        IR_ASSERT(values.size() == owner->results.size() + 1 && values[0]->type->is_bool(), "loop yield arity");
        for (size_t k = 1; k < values.size(); ++k)
            IR_ASSERT(values[k]->type == owner->results[k - 1]->type, "loop yield type");
    }
    make(OpKind::Yield, values, {});
}

void Builder::ret(const std::vector<Value*>& values) {
    IR_ASSERT(block_ == fn_.body.get(), "return outside the function body block");
    IR_ASSERT(values.size() == fn_.result_types.size(), "return arity of " + fn_.name);
    for (size_t k = 0; k < values.size(); ++k)
        IR_ASSERT(values[k]->type == fn_.result_types[k], "return type of " + fn_.name);
    make(OpKind::Return, values, {});
}

void Builder::trap(int64_t code) { make(OpKind::Trap, {}, {})->imm_int = code; }

void Builder::trap(int64_t code, Value* index, Value* extent) {
    SG_INTERNAL_ASSERT(index->type->is_scalar() && lang::is_integer(index->type->scalar) && extent->type->is_scalar() &&
                           lang::is_integer(extent->type->scalar),
                       "trap operands must be integer scalars");
    make(OpKind::Trap, {index, extent}, {})->imm_int = code;
}

}  // namespace sg::ir

namespace sg::ir {

// ---- cooperative kernels

Value* Builder::coop_id(lang::CoopId id) {
    Inst* i = make(OpKind::CoopId, {}, {types_.vector(lang::ScalarKind::UInt32, 3)});
    i->imm_int = int64_t(id);
    return i->result();
}

Value* Builder::call_shape_id(lang::CoopId id, Value* dim) {
    SG_INTERNAL_ASSERT(lang::is_call_shape_id(id) && (dim != nullptr) == (id != lang::CoopId::CallRank),
                       "call_shape_id: not a call-group id, or a wrong operand");
    Inst* i = make(OpKind::CoopId, dim ? std::vector<Value*>{dim} : std::vector<Value*>{}, {types_.int32()});
    i->imm_int = int64_t(id);
    return i->result();
}

Value* Builder::wave(lang::WaveOp op, const std::vector<Value*>& operands, const Type* result) {
    IR_ASSERT(operands.size() <= 2, "wave operands");
    Inst* i = make(OpKind::Wave, operands, {result});
    i->imm_int = int64_t(op);
    return i->result();
}

void Builder::barrier(bool sync, bool device) {
    Inst* i = make(OpKind::Barrier, {}, {});
    i->imm_int = (sync ? 1 : 0) | (device ? 2 : 0);
}

Value* Builder::shared_view(int index, const Type* view_type) {
    IR_ASSERT(view_type->is_tensor() && view_type->tensor.shared, "shared_view type");
    Inst* i = make(OpKind::SharedView, {}, {view_type});
    i->imm_int = index;
    return i->result();
}

Value* Builder::tensor_atomic(lang::AtomicOp op, Value* t, const std::vector<Value*>& index, Value* compare,
                              Value* value, const std::vector<int>& path) {
    check_tensor_index(t, index, "tensor_atomic");
    const Type* leaf = t->type->element;
    for (int k : path) {
        IR_ASSERT(leaf->is_struct() || leaf->is_vector(), "tensor_atomic path through a " + lang::type_name(leaf));
        if (leaf->is_vector()) {
            IR_ASSERT(k >= 0 && k < leaf->rows, "tensor_atomic component");
            leaf = types_.scalar(leaf->scalar);
        } else {
            const auto& fields = types_.fields(leaf);
            IR_ASSERT(k >= 0 && size_t(k) < fields.size(), "tensor_atomic field");
            leaf = fields[size_t(k)].type;
        }
    }
    IR_ASSERT(value->type == leaf && leaf->is_scalar(), "tensor_atomic value type");
    IR_ASSERT((op == lang::AtomicOp::CompareExchange) == (compare != nullptr), "tensor_atomic compare operand");
    std::vector<Value*> ops = concat(t, index);
    if (compare) {
        IR_ASSERT(compare->type == value->type, "tensor_atomic compare type");
        ops.push_back(compare);
    }
    ops.push_back(value);
    Inst* i = make(OpKind::TensorAtomic, ops, {value->type});
    i->imm_int = int64_t(op);
    i->imm_list = path;
    return i->result();
}

Value* Builder::view_part(Value* view, int which, const Type* type) {
    IR_ASSERT(view->type->is_tensor() && view->type->tensor.view && view->type->tensor.has_grad,
              "view_part of a non-DiffTensorView");
    IR_ASSERT(type->is_tensor() && type->tensor.view && !type->tensor.has_grad, "view_part type");
    Inst* i = make(OpKind::ViewPart, {view}, {type});
    i->imm_int = which;
    return i->result();
}

Value* Builder::view_query(int op, Value* view, Value* dim) {
    IR_ASSERT(view->type->is_tensor() && view->type->tensor.view, "view_query of a non-view");
    IR_ASSERT((op == 2) == (dim == nullptr), "view_query dimension operand");
    std::vector<Value*> ops{view};
    if (dim) {
        IR_ASSERT(dim->type->is_scalar() && lang::is_integer(dim->type->scalar), "view_query dimension type");
        ops.push_back(dim);
    }
    Inst* i = make(OpKind::ViewQuery, ops, {types_.uint32()});
    i->imm_int = op;
    return i->result();
}

}  // namespace sg::ir
