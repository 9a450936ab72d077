// src/ir/dead_code.cpp — removes side-effect-free instructions whose results are unused, and
// unused results of If instructions (with the matching yield operands).
#include <unordered_set>

#include "ir/passes.h"

namespace sg::ir {

namespace {

bool block_has_side_effects(const Block& b) {
    for (const auto& inst : b.insts) {
        if (inst->op != OpKind::Yield && has_side_effects(inst->op)) return true;
        for (const auto& r : inst->regions)
            if (block_has_side_effects(*r)) return true;
    }
    return false;
}

void collect_uses(const Block& b, std::unordered_set<const Value*>& used) {
    for (const auto& inst : b.insts) {
        for (const Value* o : inst->operands) used.insert(o);
        for (const auto& r : inst->regions) collect_uses(*r, used);
    }
}

bool removable(const Inst& inst, const std::unordered_set<const Value*>& used) {
    if (inst.op == OpKind::Yield || inst.op == OpKind::Return) return false;
    if (has_side_effects(inst.op)) return false;
    for (const Value* r : inst.results)
        if (used.count(r)) return false;
    for (const auto& region : inst.regions)
        if (block_has_side_effects(*region)) return false;
    return true;
}

/// Drops If results nobody reads, and their yield operands.
bool prune_if_results(Block& b, const std::unordered_set<const Value*>& used) {
    bool changed = false;
    for (auto& inst : b.insts) {
        for (auto& r : inst->regions) changed |= prune_if_results(*r, used);
        if (inst->op != OpKind::If) continue;
        for (size_t k = inst->results.size(); k-- > 0;) {
            if (used.count(inst->results[k])) continue;
            inst->results.erase(inst->results.begin() + long(k));
            for (auto& region : inst->regions) {
                Inst* y = region->terminator();
                y->operands.erase(y->operands.begin() + long(k));
            }
            changed = true;
        }
    }
    return changed;
}

bool sweep(Block& b, const std::unordered_set<const Value*>& used) {
    bool changed = false;
    std::vector<std::unique_ptr<Inst>> kept;
    kept.reserve(b.insts.size());
    for (auto& inst : b.insts) {
        if (removable(*inst, used)) {
            changed = true;
            continue;
        }
        for (auto& r : inst->regions) changed |= sweep(*r, used);
        kept.push_back(std::move(inst));
    }
    b.insts = std::move(kept);
    return changed;
}

}  // namespace

void dead_code(Function& fn) {
    for (int round = 0; round < 64; ++round) {
        std::unordered_set<const Value*> used;
        collect_uses(*fn.body, used);
        bool changed = prune_if_results(*fn.body, used);
        if (changed) {
            used.clear();
            collect_uses(*fn.body, used);
        }
        changed |= sweep(*fn.body, used);
        if (!changed) break;
    }
    after_pass(fn, "dead_code");
}

}  // namespace sg::ir
