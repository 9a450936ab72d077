// src/codegen/emit_dense.cpp — dense launches: vector loads and stores of four consecutive call
// elements a thread, when every call-shaped view of a launch is laid out as the call is.
//
// The glue reads and writes its elementwise arguments, results and gradient buffers at the call
// index (index_in_bounds_by_construction): element (i0, ..., iD-1) of a rank-D view at offset
// sum(i_d * stride_d). When the view has the call's rank and its strides are the row-major ones of
// the call shape (any stride where the call's extent is 1), that offset is the linear call index:
// the four elements a thread of a small CUDA kernel runs (emit_cpp.cpp) may then be four
// consecutive ones, whose scalars one 16-byte access (8 for half, two for double) moves instead
// of four. On instruction-bound kernels such as bench row 8's chain that saves the address
// arithmetic and the load and store instructions of three elements in four.
//
// Strides are not part of the call key, so such a kernel's thread function is a template on
// SG_DENSE, and the entry point picks the instantiation per launch from
// `sg_dense_<kernel>(params)` (the same for every thread: no divergence): 2 where every dense view
// is laid out as the call and aligned for the vector accesses, else 0. Layout 2 runs only the
// full blocks, whose accesses at the call index all go through the vector accesses: the entry
// loads each view's four scalars into the sg_pre structs (emit_prefetch.cpp) before phase 0, runs
// both phases of the four elements, and stores each deferred view's four from the sg_post structs
// after phase 1. The partial last block, and every launch with a view broadcast (stride 0),
// transposed, sliced or misaligned, runs the generic instantiation.
//
// The kernel qualifies (plan_dense) when it is a two-phase kernel of four elements a thread and
// every access at the call index of a view of the call's rank is either a prefetched load or a
// deferrable store of a 2-, 4- or 8-byte scalar. A deferred store is in the kernel's top-level
// block (it runs once per element), after nothing that can end the thread (a trap), and its tensor
// is not touched after it. Anything else (a load of a written tensor, a store in a branch, a
// second store to a view, elements that are vectors, matrices, structs or arrays, a gradient
// view) leaves the kernel with its one instantiation: four consecutive elements a thread without
// vector accesses would break the coalescing of the scalar ones.
#include <algorithm>
#include <functional>

#include "codegen/emitter.h"

namespace sg::codegen::detail {

namespace {

/// Whether a kernel-level instruction can end its thread (a trap, or a return inside a region).
bool may_end_thread(const Inst& inst) {
    if (inst.op == OpKind::Trap) return true;
    for (const auto& region : inst.regions)
        for (const auto& i : region->insts)
            if (i->op == OpKind::Return || may_end_thread(*i)) return true;
    return false;
}

/// Whether `inst` or an instruction of its regions takes `v` as an operand.
bool touches(const Inst& inst, const Value* v) {
    for (const Value* o : inst.operands)
        if (o == v) return true;
    for (const auto& region : inst.regions)
        for (const auto& i : region->insts)
            if (touches(*i, v)) return true;
    return false;
}

/// Bytes of a scalar element a vector access can take (2, 4, 8), else 0.
int vector_scalar_bytes(const Type* e) {
    if (!e->is_scalar() || e->scalar == lang::ScalarKind::Bool) return 0;
    const int bits = lang::scalar_bits(e->scalar);
    return bits == 16 || bits == 32 || bits == 64 ? bits / 8 : 0;
}

/// The alignment the vector accesses of four `bytes`-byte scalars need: 8 bytes for half (one
/// 8-byte access), 16 for the others (one or two 16-byte accesses).
int vector_alignment(int bytes) { return 4 * bytes < 16 ? 4 * bytes : 16; }

bool is_tensor_access(OpKind op) {
    return op == OpKind::TensorLoad || op == OpKind::TensorStore || op == OpKind::TensorAtomicAdd ||
           op == OpKind::TensorGradAdd || op == OpKind::TensorGradLoad || op == OpKind::TensorGradStore;
}

}  // namespace

bool Emitter::dense_access(const Inst& inst) const {
    if (!is_tensor_access(inst.op) || inst.operands.empty()) return false;
    const Type* tt = inst.operands[0]->type;
    return tt->rank > 0 && tt->rank == options_.call_rank && tensor_params_.count(inst.operands[0]) != 0 &&
           index_in_bounds_by_construction(inst);
}

void Emitter::plan_dense(const Function& kernel) {
    dense_ = false;
    deferred_.clear();
    if (!dense_enabled_ || vector_elements_ != 4 || prefetch_.empty()) return;
    // The stores the entry can make: top-level, before anything that ends the thread, the last
    // touch of their tensor.
    const auto& insts = kernel.body->insts;
    bool ended = false;
    for (size_t k = 0; k < insts.size() && !ended; ++k) {
        const Inst& inst = *insts[k];
        if (inst.op == OpKind::TensorStore) {
            bool later = false;
            for (size_t j = k + 1; j < insts.size() && !later; ++j) later = touches(*insts[j], inst.operands[0]);
            if (!later) deferred_.insert(&inst);
        }
        ended = may_end_thread(inst);
    }
    // Every dense access must have its vector form.
    bool any = false, all = true;
    std::function<void(const ir::Block&)> walk = [&](const ir::Block& block) {
        for (const auto& i : block.insts) {
            if (dense_access(*i)) {
                any = true;
                const bool scalar = vector_scalar_bytes(i->operands[0]->type->element) > 0;
                const bool load = i->op == OpKind::TensorLoad && prefetched(*i);
                const bool store = i->op == OpKind::TensorStore && deferred_.count(i.get()) != 0;
                all &= scalar && (load || store);
            }
            for (const auto& region : i->regions) walk(*region);
        }
    };
    walk(*kernel.body);
    dense_ = any && all;
}

void Emitter::note_dense_view(const Inst& inst, const std::string& view) {
    // dense_: every dense access is a load or a store of a scalar (no gradient view).
    const std::string check =
        "sg_dense_view<" + std::to_string(inst.operands[0]->type->rank) + ">(P.header, " + view + ".strides)";
    if (std::find(dense_checks_.begin(), dense_checks_.end(), check) == dense_checks_.end()) dense_checks_.push_back(check);
}

void Emitter::note_vector_load(const Inst& inst, const std::string& view) {
    const int bytes = vector_scalar_bytes(inst.operands[0]->type->element);
    SG_INTERNAL_ASSERT(bytes > 0, "codegen: a dense load without a vector form");
    vector_loads_.push_back({local_name(inst.result()), view, type(inst.result()->type), bytes});
}

void Emitter::emit_deferred_store(const Inst& inst, const std::string& view, const std::string& call) {
    const int bytes = vector_scalar_bytes(inst.operands[0]->type->element);
    SG_INTERNAL_ASSERT(bytes > 0 && deferred_.count(&inst), "codegen: a dense store without a vector form");
    const std::string field = "s" + std::to_string(vector_stores_.size());
    const std::string scalar = type(inst.operands[0]->type->element);
    vector_stores_.push_back({field, view, scalar, bytes});
    post_fields_ += "    " + scalar + " " + field + ";\n";
    line("if constexpr (SG_DENSE == 2) sg_post." + field + " = " + ref(inst.operands.back()) +
         ";  // stored by the entry, four at a time");
    line("else " + call + ";");
}

std::string Emitter::dense_functions(const std::string& params, const std::string& base) {
    if (!dense_) return {};
    SG_INTERNAL_ASSERT(!dense_checks_.empty(), "codegen: a dense kernel without dense views");
    dense_check_ = "sg_dense_" + base;
    vector_load_fn_ = "sg_vload_" + base;
    vector_store_fn_ = "sg_vstore_" + base;
    std::string layout;
    for (const std::string& c : dense_checks_) layout += (layout.empty() ? "" : "\n        && ") + c;
    std::string loads, stores;
    for (const VectorField& v : vector_loads_) {
        layout += "\n        && sg_aligned(" + v.view + ".data, " + std::to_string(vector_alignment(v.bytes)) + ")";
        loads += "    {\n        " + v.scalar + " v[4];\n        sg_dense_load4((const " + v.scalar + "*)" + v.view +
                 ".data + base, v);\n        for (int k = 0; k < 4; ++k) pre[k]." + v.field + " = v[k];\n    }\n";
    }
    for (const VectorField& v : vector_stores_) {
        layout += "\n        && sg_aligned(" + v.view + ".data, " + std::to_string(vector_alignment(v.bytes)) + ")";
        stores += "    {\n        const " + v.scalar + " v[4] = {post[0]." + v.field + ", post[1]." + v.field + ", post[2]." +
                  v.field + ", post[3]." + v.field + "};\n        sg_dense_store4((" + v.scalar + "*)" + v.view +
                  ".data + base, v);\n    }\n";
    }
    return "// The layout of a launch (emit_dense.cpp): 2 when every call-shaped view is laid out as the call\n"
           "// and aligned for the vector accesses of four consecutive elements a thread, else 0.\n"
           "SG_FN int " + dense_check_ + "(const " + params + "& P) {\n    return " + layout + " ? 2 : 0;\n}\n" +
           "// Layout 2: the prefetched loads of elements base .. base + 3, four scalars at a time.\n"
           "SG_FN void " + vector_load_fn_ + "(const " + params + "& P, int64_t base, " + prefetch_struct_ +
           " (&pre)[4]) {\n" + loads + "}\n" +
           "// Layout 2: the deferred stores of elements base .. base + 3, four scalars at a time.\n"
           "SG_FN void " + vector_store_fn_ + "(const " + params + "& P, int64_t base, const " + post_struct_ +
           " (&post)[4]) {\n" + stores + "}\n";
}

}  // namespace sg::codegen::detail
