// src/ir/ir.cpp — op tables, value ownership and structural cloning.
#include "ir/ir.h"

#include <unordered_map>

#include "ir/builder.h"

namespace sg::ir {

const char* op_name(OpKind op) {
    static const char* kNames[] = {
#define SG_IR_OP(Name, text, results, regions) text,
#include "ir/ir_ops.def"
#undef SG_IR_OP
    };
    return kNames[int(op)];
}

bool has_side_effects(OpKind op) {
    switch (op) {
    case OpKind::TensorStore:
    case OpKind::TensorAtomicAdd:
    case OpKind::TensorGradAdd:
    case OpKind::TensorGradStore:
    case OpKind::LocalStore:
    case OpKind::Yield:
    case OpKind::Return:
    case OpKind::Trap:
    case OpKind::Call:  // conservatively: callees may store to tensors
        return true;
    default: return false;
    }
}

Value* Function::new_value(const Type* type, std::string hint) {
    auto v = std::make_unique<Value>();
    v->type = type;
    v->id = next_value_id++;
    v->hint = std::move(hint);
    values.push_back(std::move(v));
    return values.back().get();
}

int Function::entry_param_index(size_t param) const {
    int index = 0;
    for (size_t k = 0; k < params.size(); ++k) {
        if (params[k].dir == ParamDir::Out) {
            if (k == param) return -1;
            continue;
        }
        if (k == param) return index;
        ++index;
    }
    return -1;
}

Function* Program::find(const std::string& name) const {
    if (indexed_ > functions.size()) {  // functions were removed: index again
        by_name_.clear();
        indexed_ = 0;
    }
    for (; indexed_ < functions.size(); ++indexed_)
        by_name_.emplace(functions[indexed_]->name, functions[indexed_].get());  // keeps the first
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
}

Function* Program::add(std::unique_ptr<Function> fn) {
    functions.push_back(std::move(fn));
    return functions.back().get();
}

namespace {

/// Copies instructions, remapping values; nested regions are copied recursively.
class Cloner {
public:
    Cloner(Function& fn, bool drop_side_effects) : fn_(fn), drop_(drop_side_effects) {}
    std::unordered_map<const Value*, Value*> map;

    Value* get(Value* v) {
        auto it = map.find(v);
        return it == map.end() ? v : it->second;  // values from enclosing scopes stay
    }

    /// Clones `src`'s instructions into `dst` except its terminator; returns the terminator.
    const Inst* clone_body(Block& dst, const Block& src) {
        for (const auto& inst : src.insts) {
            if (inst->op == OpKind::Yield || inst->op == OpKind::Return) return inst.get();
            if (drop_ && is_store(inst->op)) continue;
            clone_inst(dst, *inst);
        }
        return nullptr;
    }

private:
    static bool is_store(OpKind op) {
        return op == OpKind::TensorStore || op == OpKind::TensorAtomicAdd || op == OpKind::TensorGradAdd ||
               op == OpKind::TensorGradStore;
    }

    void clone_inst(Block& dst, const Inst& src) {
        auto inst = std::make_unique<Inst>();
        inst->op = src.op;
        inst->loc = src.loc;
        inst->imm_int = src.imm_int;
        inst->imm_float = src.imm_float;
        inst->imm_list = src.imm_list;
        inst->callee = src.callee;
        inst->parent = &dst;
        for (Value* o : src.operands) inst->operands.push_back(get(o));
        Inst* raw = inst.get();
        for (Value* r : src.results) {
            Value* nv = fn_.new_value(r->type, r->hint);
            nv->def = raw;
            raw->results.push_back(nv);
            map[r] = nv;
        }
        for (const auto& region : src.regions) {
            auto block = std::make_unique<Block>();
            block->parent = raw;
            for (Value* p : region->params) {
                Value* np = fn_.new_value(p->type, p->hint);
                np->block = block.get();
                block->params.push_back(np);
                map[p] = np;
            }
            for (const auto& child : region->insts) {
                if (drop_ && is_store(child->op)) continue;
                clone_inst(*block, *child);
            }
            raw->regions.push_back(std::move(block));
        }
        dst.insts.push_back(std::move(inst));
    }

    Function& fn_;
    bool drop_;
};

}  // namespace

std::vector<Value*> clone_block_into(Function& dst_fn, Block& dst, const Block& src, const std::vector<Value*>& args,
                                     bool drop_side_effects) {
    SG_INTERNAL_ASSERT(args.size() == src.params.size(), "clone_block_into: argument count");
    Cloner cloner(dst_fn, drop_side_effects);
    for (size_t k = 0; k < args.size(); ++k) cloner.map[src.params[k]] = args[k];
    const Inst* term = cloner.clone_body(dst, src);
    std::vector<Value*> out;
    if (term)
        for (Value* v : term->operands) out.push_back(cloner.get(v));
    return out;
}

}  // namespace sg::ir
