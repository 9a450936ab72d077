// src/ir/lower_differential.cpp — lowering of the synthesized differential members:
// `X.dadd(a, b)` adds two values of X.Differential component by component (struct fields,
// array elements and the two halves of a DifferentialPair each added; numbers with Add), and
// `X.dzero()` is that type's zero. Plain arithmetic: a differentiated body that uses them
// differentiates through the adds.
#include "ir/lower_internal.h"

namespace sg::ir {

using Lower = Lowering::FunctionLowering;

Value* Lower::differential_add(Value* a, Value* b) {
    const Type* t = a->type;
    if (t->is_numeric()) return b_.binary(OpKind::Add, a, b);
    std::vector<Value*> members;
    int count = 0;
    if (t->is_array()) count = int(t->count);
    else if (t->is_pair()) count = 2;
    else if (t->is_struct()) count = int(types_.fields(t).size());
    else SG_INTERNAL_ASSERT(false, "dadd of non-differentiable type " + lang::type_name(t));
    for (int k = 0; k < count; ++k) members.push_back(differential_add(b_.extract(a, k), b_.extract(b, k)));
    return b_.construct(t, members);
}

Value* Lower::lower_differential_member(Expr* e) {
    b_.set_loc(e->loc);
    if (e->builtin->kind == lang::BuiltinKind::DZero) return b_.zero(e->type);
    Value* a = lower_expr_as(e->operands[1], e->type);
    Value* b = lower_expr_as(e->operands[2], e->type);
    b_.set_loc(e->loc);
    return differential_add(a, b);
}

}  // namespace sg::ir
