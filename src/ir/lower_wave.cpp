// src/ir/lower_wave.cpp — lowering of the wave intrinsics (lang/wave.h): one Wave instruction per
// call, its arguments converted to the types sema chose (a bool for the predicates, uint for a
// lane index, the value's own type otherwise).
#include "ir/lower_internal.h"
#include "lang/wave.h"

namespace sg::ir {

using Lower = Lowering::FunctionLowering;

Value* Lower::lower_wave_call(Expr* e) {
    lang::WaveOp op;
    lang::find_wave_op(e->builtin->name, op);
    std::vector<Value*> operands;
    switch (op) {
    case lang::WaveOp::AllTrue:
    case lang::WaveOp::AnyTrue:
    case lang::WaveOp::Ballot:
    case lang::WaveOp::CountBits: operands.push_back(lower_expr_as(e->operands[1], types_.boolean())); break;
    case lang::WaveOp::ReadLaneAt:
        operands.push_back(lower_expr(e->operands[1]));
        operands.push_back(lower_expr_as(e->operands[2], types_.uint32()));
        break;
    default:
        for (size_t k = 1; k < e->operands.size(); ++k) operands.push_back(lower_expr(e->operands[k]));
        break;
    }
    b_.set_loc(e->loc);
    return b_.wave(op, operands, e->type);
}

}  // namespace sg::ir
