// src/ir/sincos.cpp — pairs sin(x) and cos(x) of one value into one SinCos instruction.
//
// The backward of sin(x) needs cos(x), and the backward kernel recomputes the primal sin(x):
// both reduce the same argument modulo pi/2. One SinCos computes both from one reduction (CUDA
// sincosf/sincos; the CPU prelude calls sinf and cosf, which the host compiler pairs itself).
//
// One walk in program order with a scoped table, as in cse.cpp: the first of the two (the one
// that dominates the other) becomes the SinCos, in place, with a second result; the later one's
// uses take that result, and the later instruction is left unused for dead_code. Only float
// and double scalars: vectors and half keep their elementwise sin and cos.
#include <vector>

#include "ir/passes.h"
#include "ir/scoped_walk.h"

namespace sg::ir {

namespace {

using lang::IntrinsicId;

class SinCosPairing {
public:
    SinCosPairing(Function& fn) : fn_(fn), replaced_(fn) {}

    void walk(Block& b) {
        const size_t scope = first_.mark();
        for (auto& owned : b.insts) {
            Inst& inst = *owned;
            replaced_.rewrite(inst);
            for (auto& region : inst.regions) walk(*region);
            const int kind = trig_kind(inst);  // 0 sin, 1 cos, -1 neither
            if (kind < 0) continue;
            auto [found, inserted] = first_.find_or_insert(inst.operands[0], &inst);
            if (inserted) continue;
            Inst& first = **found;
            if (first.op == OpKind::Intrinsic) {
                const int first_kind = trig_kind(first);
                if (first_kind == kind) continue;  // a repeat cse left (it runs first): leave it
                make_sincos(first, first_kind);
            }
            replaced_.replace(inst.result(), first.results[size_t(kind)]);
        }
        first_.leave(scope);
    }

private:
    static int trig_kind(const Inst& inst) {
        if (inst.op != OpKind::Intrinsic) return -1;
        const IntrinsicId id = inst.intrinsic();
        if (id != IntrinsicId::Sin && id != IntrinsicId::Cos) return -1;
        const Type* t = inst.result()->type;
        if (!t->is_scalar() || (t->scalar != lang::ScalarKind::Float && t->scalar != lang::ScalarKind::Double)) return -1;
        if (inst.operands.size() != 1 || inst.operands[0]->type != t) return -1;
        return id == IntrinsicId::Sin ? 0 : 1;
    }

    /// Turns `inst` (a sin or a cos) into SinCos: its result keeps its place, the other is new.
    void make_sincos(Inst& inst, int kind) {
        Value* own = inst.result();
        Value* other = fn_.new_value(own->type, own->hint);
        other->def = &inst;
        inst.op = OpKind::SinCos;
        inst.imm_int = 0;
        inst.results = kind == 0 ? std::vector<Value*>{own, other} : std::vector<Value*>{other, own};
    }

    Function& fn_;
    ScopedTable<const Value*, Inst*> first_;  ///< argument -> its first sin/cos (or SinCos)
    ValueReplacements replaced_;
};

}  // namespace

void pair_sincos(Function& fn) {
    SinCosPairing(fn).walk(*fn.body);
    dead_code(fn);
    after_pass(fn, "pair_sincos");
}

}  // namespace sg::ir
