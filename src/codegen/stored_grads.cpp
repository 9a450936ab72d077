// src/codegen/stored_grads.cpp — which table gradients a kernel may store instead of add to
// (CodegenOptions::stored_table_params, GeneratedKernel::stored_grads).
//
// A differentiable tensor read at computed indices collides in general: its gradient is a zeroed
// buffer that the backward adds to. When the kernel reads it only at the call element's own index
// (`a[pix]` with `pix` the grid's index and the tensor shaped as the call), each entry has one
// call element, and one add into a fresh buffer is a store: no zero fill, no atomics, one launch.
// Proven here on the kernel's IR, after inlining and autodiff:
//   * every use of the parameter is a load of its primal, a shape query, or a gradient add;
//   * there is exactly one gradient add, in the kernel body's top level (it runs once per call
//     element: not in a branch or loop), and the body has no trap (which would end the element
//     before its store);
//   * the add's index in tensor dimension d is, through integer conversions and vector
//     constructors and components, the call index of dimension dims[d], every call dimension
//     once: distinct call elements store distinct entries.
// Whether a launch's buffer is the call's shape (so that every entry is stored) is the caller's
// test at each launch (StoredGrad).
#include "codegen/emitter.h"

namespace sg::codegen::detail {

namespace {

/// The call dimension `v` is the call index of (through integer conversions, vector
/// constructors and their components), or -1.
int call_dim_of(const Value* v, bool index_64bit) {
    for (int depth = 0; depth < 32 && v && v->def; ++depth) {
        const Inst& d = *v->def;
        switch (d.op) {
        case OpKind::CallIndex: return int(d.imm_int);
        case OpKind::Convert: {
            // A call index is never negative and fits 32 bits unless the call is 64-bit indexed:
            // any integer conversion of 32 bits or more keeps it (64 bits when it is 64-bit).
            const Type* to = v->type;
            const Type* from = d.operands[0]->type;
            if (!to->is_scalar() || !from->is_scalar() || !lang::is_integer(to->scalar) || !lang::is_integer(from->scalar))
                return -1;
            const bool wide = to->scalar == lang::ScalarKind::Int64 || to->scalar == lang::ScalarKind::UInt64;
            const bool narrow32 = to->scalar == lang::ScalarKind::Int32 || to->scalar == lang::ScalarKind::UInt32;
            if (!(wide || (narrow32 && !index_64bit))) return -1;
            v = d.operands[0];
            continue;
        }
        case OpKind::Extract: {
            // A component of a vector built from components: that component.
            const Value* whole = d.operands[0];
            if (!whole->def || !whole->type->is_vector()) return -1;
            const Inst& w = *whole->def;
            if (w.op == OpKind::Construct && w.operands.size() == size_t(whole->type->rows) && d.imm_int >= 0 &&
                size_t(d.imm_int) < w.operands.size()) {
                v = w.operands[size_t(d.imm_int)];
                continue;
            }
            if (w.op == OpKind::Swizzle && d.imm_int >= 0 && size_t(d.imm_int) < w.imm_list.size()) {
                // .yx of a vector, then a component of it: the source's component.
                const Value* src = w.operands[0];
                if (!src->def || src->def->op != OpKind::Construct || !src->type->is_vector()) return -1;
                const int c = w.imm_list[size_t(d.imm_int)];
                if (c < 0 || size_t(c) >= src->def->operands.size()) return -1;
                v = src->def->operands[size_t(c)];
                continue;
            }
            return -1;
        }
        default: return -1;
        }
    }
    return -1;
}

/// Whether `block` or a region under it has a trap.
bool has_trap(const Block& block) {
    for (const auto& inst : block.insts) {
        if (inst->op == OpKind::Trap) return true;
        for (const auto& region : inst->regions)
            if (has_trap(*region)) return true;
    }
    return false;
}

/// Every instruction under `block` that uses `v` as an operand.
void uses_of(const Block& block, const Value* v, std::vector<const Inst*>& out) {
    for (const auto& inst : block.insts) {
        for (const Value* o : inst->operands)
            if (o == v) {
                out.push_back(inst.get());
                break;
            }
        for (const auto& region : inst->regions) uses_of(*region, v, out);
    }
}

}  // namespace

std::vector<StoredGrad> find_stored_grads(const Function& kernel, const CodegenOptions& options) {
    std::vector<StoredGrad> out;
    if (options.stored_table_params == 0 || options.deterministic || options.call_rank <= 0 ||
        options.fixed_phase != CodegenOptions::FixedPhase::Accumulate || kernel.cooperative || !kernel.body ||
        has_trap(*kernel.body))
        return out;
    for (size_t k = 0; k < kernel.params.size() && k < 64; ++k) {
        if (!((options.stored_table_params >> k) & 1)) continue;
        const Type* t = kernel.params[k].type;
        if (!t->is_tensor() || !t->tensor.has_grad || t->tensor.view || t->tensor.shared || t->rank != options.call_rank)
            continue;
        const int entry = kernel.entry_param_index(k);
        if (entry < 0) continue;
        const Value* param = kernel.body->params.at(size_t(entry));
        std::vector<const Inst*> uses;
        uses_of(*kernel.body, param, uses);
        const Inst* add = nullptr;
        bool ok = true;
        for (const Inst* u : uses) {
            const bool as_tensor = u->operands[0] == param;
            if (u->op == OpKind::TensorGradAdd && as_tensor && !add) {
                add = u;
            } else if (!((u->op == OpKind::TensorLoad || u->op == OpKind::TensorShape) && as_tensor)) {
                ok = false;  // a second add, a gradient load or store, a slice, a call, a select, ...
                break;
            }
            for (size_t o = 1; o < u->operands.size(); ++o)
                if (u->operands[o] == param) ok = false;  // the tensor as an index or value
        }
        if (!ok || !add || add->parent != kernel.body.get()) continue;
        StoredGrad s;
        s.param = int(k);
        s.rank = t->rank;
        unsigned seen = 0;
        for (int d = 0; d < t->rank && ok; ++d) {
            const int c = call_dim_of(add->operands[size_t(1 + d)], options.index_64bit);
            ok = c >= 0 && c < options.call_rank && !((seen >> c) & 1u);
            if (ok) seen |= 1u << c;
            s.dims[d] = c;
        }
        if (ok) out.push_back(s);
    }
    return out;
}

}  // namespace sg::codegen::detail
