// src/ir/ir.cpp — op tables, value ownership and the instruction cloner.
#include "ir/ir.h"

#include <unordered_map>

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
    case OpKind::Barrier:       // orders memory between the threads of a block
    case OpKind::TensorAtomic:  // writes its element
    case OpKind::Wave:          // depends on the lanes that reach it: never moved, merged or removed
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

Inst* clone_inst(Function& dst_fn, Block& dst, const Inst& src, const CloneMap& map) {
    if (!dst.insts.empty()) {
        OpKind last = dst.insts.back()->op;
        SG_INTERNAL_ASSERT(last != OpKind::Yield && last != OpKind::Return, "clone: instruction after a terminator");
    }
    auto inst = std::make_unique<Inst>();
    inst->op = src.op;
    inst->loc = src.loc;
    inst->imm_int = src.imm_int;
    inst->imm_float = src.imm_float;
    inst->imm_list = src.imm_list;
    inst->callee = src.callee;
    inst->primal_only = src.primal_only;
    inst->parent = &dst;
    for (Value* o : src.operands) inst->operands.push_back(map.operand(o));
    Inst* raw = inst.get();
    dst.insts.push_back(std::move(inst));
    // Value ids follow creation order, which the printer and codegen show: results first, then
    // each region's parameters before its instructions.
    for (const Value* r : src.results) {
        Value* nv = dst_fn.new_value(r->type, r->hint);
        nv->def = raw;
        raw->results.push_back(nv);
        map.define(r, nv);
    }
    for (const auto& region : src.regions) {
        auto block = std::make_unique<Block>();
        block->parent = raw;
        for (const Value* p : region->params) {
            Value* np = dst_fn.new_value(p->type, p->hint);
            np->block = block.get();
            block->params.push_back(np);
            map.define(p, np);
        }
        Block* copy = block.get();
        raw->regions.push_back(std::move(block));
        for (const auto& child : region->insts) clone_inst(dst_fn, *copy, *child, map);
    }
    return raw;
}

std::vector<Value*> clone_block_into(Function& dst_fn, Block& dst, const Block& src, const std::vector<Value*>& args) {
    SG_INTERNAL_ASSERT(args.size() == src.params.size(), "clone_block_into: argument count");
    std::unordered_map<const Value*, Value*> mapped;
    for (size_t k = 0; k < args.size(); ++k) mapped[src.params[k]] = args[k];
    auto get = [&](Value* v) {
        auto it = mapped.find(v);
        return it == mapped.end() ? v : it->second;  // values from enclosing scopes stay
    };
    CloneMap map{get, [&](const Value* from, Value* to) { mapped[from] = to; }};
    for (const auto& inst : src.insts) {
        if (inst->op == OpKind::Yield || inst->op == OpKind::Return) {
            std::vector<Value*> out;
            for (Value* v : inst->operands) out.push_back(get(v));
            return out;
        }
        clone_inst(dst_fn, dst, *inst, map);
    }
    return {};
}

}  // namespace sg::ir
