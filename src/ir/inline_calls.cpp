// src/ir/inline_calls.cpp — replaces calls by the callee's body (recursively).
#include <unordered_map>

#include "ir/passes.h"

namespace sg::ir {

namespace {

class Inliner {
public:
    explicit Inliner(Function& fn) : fn_(fn) {}

    void run() {
        inline_block(*fn_.body);
        if (!replace_.empty()) substitute(*fn_.body);
    }

private:
    void inline_block(Block& block) {
        std::vector<std::unique_ptr<Inst>> out;
        out.reserve(block.insts.size());
        for (auto& inst : block.insts) {
            for (auto& region : inst->regions) inline_block(*region);
            if (inst->op != OpKind::Call || inst->callee->has_custom_derivative() || !inst->callee->body ||
                inst->callee->body->insts.empty()) {
                out.push_back(std::move(inst));
                continue;
            }
            Function* callee = inst->callee;
            inline_calls(*callee);  // callees first: their bodies are then call-free
            Block scratch;
            std::vector<Value*> args;
            for (Value* a : inst->operands) args.push_back(get(a));
            std::vector<Value*> results = clone_block_into(fn_, scratch, *callee->body, args);
            SG_INTERNAL_ASSERT(results.size() == inst->results.size(), "inline: result count of @" + callee->name);
            for (size_t k = 0; k < results.size(); ++k) replace_[inst->results[k]] = results[k];
            if (inst->primal_only) mark_primal_only(scratch);  // a call that carries no derivative (lower_call.cpp)
            for (auto& moved : scratch.insts) {
                moved->parent = &block;
                out.push_back(std::move(moved));
            }
        }
        block.insts = std::move(out);
    }

    static void mark_primal_only(Block& block) {
        for (auto& inst : block.insts) {
            inst->primal_only = true;
            for (auto& region : inst->regions) mark_primal_only(*region);
        }
    }

    Value* get(Value* v) {
        auto it = replace_.find(v);
        while (it != replace_.end()) {
            v = it->second;
            it = replace_.find(v);
        }
        return v;
    }

    void substitute(Block& block) {
        for (auto& inst : block.insts) {
            for (Value*& o : inst->operands) o = get(o);
            for (auto& region : inst->regions) substitute(*region);
        }
    }

    Function& fn_;
    std::unordered_map<Value*, Value*> replace_;
};

}  // namespace

void inline_calls(Function& fn) {
    Inliner(fn).run();
    after_pass(fn, "inline_calls");
}

}  // namespace sg::ir
