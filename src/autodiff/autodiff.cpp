// src/autodiff/autodiff.cpp — the derivative driver and the cleanup of Detach and KeepDerivative.
#include "autodiff/autodiff.h"

#include <unordered_map>

#include "ir/passes.h"

namespace sg::autodiff {

using namespace ir;

void generate_derivatives(Program& program, const std::vector<DerivativeRequest>& requests) {
    for (const DerivativeRequest& r : requests) {
        if (!r.stub->body->insts.empty()) continue;  // already generated
        if (r.kind == DerivativeKind::Backward) reverse_mode(program, *r.stub, *r.primal);
        else forward_mode(program, *r.stub, *r.primal);
    }
}

namespace {

void collect_detach(Block& b, std::unordered_map<Value*, Value*>& map) {
    for (auto& inst : b.insts) {
        for (auto& r : inst->regions) collect_detach(*r, map);
        if (inst->op == OpKind::Detach || inst->op == OpKind::KeepDerivative) map[inst->result()] = inst->operands[0];
    }
}

void rewrite(Block& b, const std::unordered_map<Value*, Value*>& map) {
    for (auto& inst : b.insts) {
        for (Value*& o : inst->operands) {
            auto it = map.find(o);
            while (it != map.end()) {
                o = it->second;
                it = map.find(o);
            }
        }
        for (auto& r : inst->regions) rewrite(*r, map);
    }
}

}  // namespace

void strip_detach(Function& fn) {
    std::unordered_map<Value*, Value*> map;
    collect_detach(*fn.body, map);
    if (map.empty()) return;
    rewrite(*fn.body, map);
    dead_code(fn);
    after_pass(fn, "strip_detach");
}

}  // namespace sg::autodiff
