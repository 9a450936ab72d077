// src/ir/dead_code.cpp — removes side-effect-free instructions whose results are unused, and
// unused results of If instructions (with the matching yield operands).
//
// One backward sweep with use counts, linear in the size of the function. In structured SSA a
// value is used only after its definition in the same block or inside the regions of later
// instructions, so visiting each block's instructions last to first (an instruction's regions
// before the instruction itself) sees every use of a value before its definition: when the sweep
// reaches a definition, its use count is final. Removing an instruction releases the uses of its
// operands (and of everything in its regions), which may make earlier definitions dead in the
// same sweep — a chain of any length goes at once (an earlier version iterated whole-function
// rounds, one link of a chain per round, and dominated compile time on large modules).
#include <vector>

#include "ir/passes.h"

namespace sg::ir {

namespace {

class DeadCode {
public:
    explicit DeadCode(Function& fn) : uses_(fn.next_value_id, 0) { count_uses(*fn.body); }

    /// Sweeps `b`; returns whether what stays in it has side effects (Yield aside).
    bool sweep(Block& b) {
        bool side_effects = false;
        for (size_t k = b.insts.size(); k-- > 0;) {
            Inst& inst = *b.insts[k];
            if (inst.op == OpKind::If) prune_if_results(inst);
            bool region_effects = false;
            for (auto& region : inst.regions) region_effects |= sweep(*region);
            if (removable(inst, region_effects)) {
                release(inst);
                b.insts[k].reset();
                continue;
            }
            side_effects |= region_effects || (inst.op != OpKind::Yield && has_side_effects(inst.op));
        }
        std::erase_if(b.insts, [](const std::unique_ptr<Inst>& i) { return i == nullptr; });
        return side_effects;
    }

private:
    uint32_t& uses(const Value* v) {
        // Every value of a function comes from its new_value(), so ids are below next_value_id;
        // grow rather than trust that for IR a buggy pass produced (the verifier reports it).
        if (v->id >= uses_.size()) uses_.resize(size_t(v->id) + 1, 0);
        return uses_[v->id];
    }

    void count_uses(const Block& b) {
        for (const auto& inst : b.insts) {
            for (const Value* o : inst->operands) ++uses(o);
            for (const auto& region : inst->regions) count_uses(*region);
        }
    }

    /// Drops the uses of `inst`'s operands and of everything inside its regions.
    void release(const Inst& inst) {
        for (const Value* o : inst.operands) --uses(o);
        for (const auto& region : inst.regions)
            for (const auto& nested : region->insts) release(*nested);
    }

    bool removable(const Inst& inst, bool region_effects) {
        if (inst.op == OpKind::Yield || inst.op == OpKind::Return) return false;
        if (region_effects || has_side_effects(inst.op)) return false;
        for (const Value* r : inst.results)
            if (uses(r) != 0) return false;
        return true;
    }

    /// Drops If results nobody reads, and their yield operands. Runs before the regions are
    /// swept, so that the yielded values' definitions can go too.
    void prune_if_results(Inst& inst) {
        for (size_t k = inst.results.size(); k-- > 0;) {
            if (uses(inst.results[k]) != 0) continue;
            inst.results.erase(inst.results.begin() + long(k));
            for (auto& region : inst.regions) {
                Inst* y = region->terminator();
                SG_INTERNAL_ASSERT(y && y->op == OpKind::Yield && k < y->operands.size(),
                                   "dead_code: If region without a matching yield");
                --uses(y->operands[k]);
                y->operands.erase(y->operands.begin() + long(k));
            }
        }
    }

    std::vector<uint32_t> uses_;  ///< by Value::id
};

}  // namespace

void dead_code(Function& fn) {
    DeadCode(fn).sweep(*fn.body);
    after_pass(fn, "dead_code");
}

}  // namespace sg::ir
