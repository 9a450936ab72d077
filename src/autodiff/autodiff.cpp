// src/autodiff/autodiff.cpp — the derivative driver and the cleanup of Detach and KeepDerivative.
#include "autodiff/autodiff.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/passes.h"

namespace sg::autodiff {

using namespace ir;

namespace {

/// Generates the requested stubs callees first: a primal that calls a derivative stub (a
/// function that uses fwd_diff, itself differentiated: a higher-order derivative) is inlined
/// with the stub's body, so that body must exist before the primal is differentiated. An empty
/// stub would stay an opaque call without a derivative and its tangent would silently be 0.
class DerivativeOrder {
public:
    DerivativeOrder(Program& program, const std::vector<DerivativeRequest>& requests) : program_(program) {
        for (const DerivativeRequest& r : requests) pending_[r.stub] = r;
    }

    void generate(const DerivativeRequest& r) {
        if (!r.stub->body->insts.empty() || !active_.insert(r.stub).second) return;  // done, or on the path
        std::unordered_set<const Function*> seen;
        // fwd_diff(fwd_diff(f)): the primal is itself a stub.
        if (auto it = pending_.find(r.primal); it != pending_.end()) generate(it->second);
        callees_first(*r.primal, seen);
        if (r.kind == DerivativeKind::Backward) reverse_mode(program_, *r.stub, *r.primal);
        else forward_mode(program_, *r.stub, *r.primal);
        active_.erase(r.stub);
    }

private:
    /// Generates every pending stub that `fn` (or a function it calls) calls.
    void callees_first(const Function& fn, std::unordered_set<const Function*>& seen) {
        if (!seen.insert(&fn).second) return;
        walk(*fn.body, seen);
    }
    void walk(const Block& block, std::unordered_set<const Function*>& seen) {
        for (const auto& inst : block.insts) {
            for (const auto& region : inst->regions) walk(*region, seen);
            if (inst->op != OpKind::Call) continue;
            auto it = pending_.find(inst->callee);
            if (it != pending_.end()) generate(it->second);
            callees_first(*inst->callee, seen);
        }
    }

    Program& program_;
    std::unordered_map<const Function*, DerivativeRequest> pending_;
    std::unordered_set<const Function*> active_;
};

}  // namespace

void generate_derivatives(Program& program, const std::vector<DerivativeRequest>& requests) {
    DerivativeOrder order(program, requests);
    for (const DerivativeRequest& r : requests) order.generate(r);
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
