// src/codegen/emit_memory.cpp — instructions that touch memory or the thread's identity: tensor
// element access (primal and gradient views), tensor shapes, the call index, tapes (LocalAlloc)
// and traps. Debug checks (CodegenOptions::debug_checks) guard every tensor index here.
#include "codegen/emitter.h"

namespace sg::codegen::detail {

static_assert(ir::kTrapLoopPastMaxIters == int64_t(FaultKind::LoopPastMaxIters), "trap codes are fault kinds");

namespace {

bool is_grad_op(OpKind op) {
    return op == OpKind::TensorGradAdd || op == OpKind::TensorGradLoad || op == OpKind::TensorGradStore;
}

const char* prelude_function(OpKind op) {
    switch (op) {
    case OpKind::TensorLoad: return "sg_tensor_load";
    case OpKind::TensorStore: return "sg_tensor_store";
    case OpKind::TensorAtomicAdd: return "sg_tensor_atomic_add";
    case OpKind::TensorGradAdd: return "sg_grad_add";  // accumulates atomically: threads may collide
    case OpKind::TensorGradLoad: return "sg_grad_load";
    case OpKind::TensorGradStore: return "sg_grad_store";
    default: return nullptr;
    }
}

}  // namespace

void Emitter::emit_tensor(const Inst& inst) {
    const Value* tensor = inst.operands[0];
    const Type* tt = tensor->type;
    if (tt->tensor.view || tt->tensor.shared) {  // cooperative kernels: emit_coop.cpp
        emit_coop(inst);
        return;
    }
    const std::string t = ref(tensor);
    if (inst.op == OpKind::TensorShape) {
        define(inst.result(), "(uint)" + t + ".shape[" + std::to_string(inst.imm_int) + "]");
        return;
    }
    if (inst.op == OpKind::TensorSlice) {
        // A slice of a batch of tensors remembers its parameter (fixed-point tables rebase its adds).
        auto whole = tensor_params_.find(tensor);
        auto sliced = slice_params_.find(tensor);
        if (whole != tensor_params_.end()) slice_params_[inst.result()] = whole->second;
        else if (sliced != slice_params_.end()) slice_params_[inst.result()] = sliced->second;
        std::string call = "sg_tensor_slice<" + std::to_string(inst.operands.size() - 1) + ">(" + t;
        for (size_t k = 1; k < inst.operands.size(); ++k) call += ", (int64_t)" + ref(inst.operands[k]);
        define(inst.result(), call + ")");
        return;
    }
    if (inst.op == OpKind::TensorAtomicAdd) {
        // A reduced gradient (every call dim broadcast: the same element for every thread) goes
        // to the thread's accumulator, whatever the index.
        auto param = tensor_params_.find(tensor);
        if (param != tensor_params_.end() && param->second < 64 && ((options_.reduced_params >> param->second) & 1)) {
            line("sg_reduce_add(sg_acc_" + std::to_string(param->second) + ", " + ref(inst.operands.back()) + ");");
            return;
        }
    }
    // A fixed-point gradient table (deterministic CUDA): the add records its exponent (scan) or
    // adds an integer (prelude_fixed.inc), at its scalar offset in the whole gradient buffer.
    const bool writes = inst.op == OpKind::TensorStore || inst.op == OpKind::TensorAtomicAdd ||
                        inst.op == OpKind::TensorGradAdd || inst.op == OpKind::TensorGradStore;
    std::string fixed_add, fixed_tail;
    if (inst.op == OpKind::TensorGradAdd || (inst.op == OpKind::TensorAtomicAdd && !tt->tensor.has_grad)) {
        auto param = tensor_params_.find(tensor);
        auto sliced = slice_params_.find(tensor);
        const int k = param != tensor_params_.end() ? param->second : sliced != slice_params_.end() ? sliced->second : -1;
        for (size_t j = 0; j < fixed_.size(); ++j) {
            if (k < 0 || fixed_[j].param != k) continue;
            ++fixed_[j].sites;
            // The call's bound on an entry's adds counts every component: two components of one
            // add may land on the same entry (an inner stride of 0).
            const Type* e = tt->element;
            fixed_[j].adds += e->is_vector() ? e->rows : e->is_matrix() ? e->rows * e->cols : 1;
            fixed_[j].in_loop |= loop_depth_ > 0;
            const std::string whole = "P." + fixed_[j].field;
            const std::string rebase = param != tensor_params_.end() ? "" : "sg_fixed_rebase(" + whole + ", " + t + ") + ";
            const std::string table = fixed_accessor_ + "(P, " + std::to_string(j) + ")";
            const bool scan = options_.fixed_phase == CodegenOptions::FixedPhase::Scan;
            fixed_add = (scan ? "sg_fixed_scan(" : "sg_fixed_add<" + std::to_string(fixed_[j].wide) + ">(") + table +
                        ", " + rebase + "(int64_t)";  // + the offset + fixed_tail
            fixed_tail = ", sg_fixed_inner(" + t + "), " + ref(inst.operands.back()) + ")";
        }
    }
    // The scan variant of a kernel with fixed-point tables keeps only their adds.
    if (writes && fixed_add.empty() && options_.fixed_phase == CodegenOptions::FixedPhase::Scan) return;
    // An ordered gradient table (deterministic CUDA): the add is recorded for the entry point to
    // fold in a fixed order; each site has its own record, so it must run at most once per thread.
    std::string ordered_record;
    if ((inst.op == OpKind::TensorAtomicAdd || inst.op == OpKind::TensorGradAdd) && fixed_add.empty()) {
        auto param = tensor_params_.find(tensor);
        auto sliced = slice_params_.find(tensor);
        const int k = param == tensor_params_.end() ? -1 : param->second;
        OrderedParam* ordered = nullptr;
        for (OrderedParam& p : ordered_)
            if (k >= 0 && p.param == k) ordered = &p;
        if (ordered) {
            if (loop_depth_ > 0)
                throw OrderingUnsupported(k, "its gradient is added to inside a loop (each add must run at most once per "
                                             "call element)");
            ordered_record = "sg_or_" + std::to_string(k) + "[" + std::to_string(ordered->sites++) + "]";
        } else if (sliced != slice_params_.end() && options_.deterministic && target_ == DeviceType::CUDA &&
                   ((options_.ordered_params >> sliced->second) & 1)) {
            throw OrderingUnsupported(sliced->second, "it is a batch of tables (each call element adds to its own slice)");
        } else if (inst.op == OpKind::TensorGradAdd && options_.deterministic && target_ == DeviceType::CUDA) {
            throw OrderingUnsupported(k, k < 0 ? "a gradient is added to through a view the kernel computes (a slice of "
                                                 "a batch of tensors, or inside a function that is not inlined)"
                                               : "its gradient adds have no fixed-order scheme");
        }
    }
    std::string private_table;  // a privatized gradient table's shared copy (CUDA)
    if (inst.op == OpKind::TensorGradAdd) {
        auto param = tensor_params_.find(tensor);
        for (const PrivateParam& p : privatized_)
            if (param != tensor_params_.end() && p.param == param->second) private_table = "sg_priv_" + std::to_string(p.param);
    }
    std::string chunk_table;  // a CPU chunk's double copy of a colliding gradient
    if (inst.op == OpKind::TensorGradAdd || inst.op == OpKind::TensorAtomicAdd) {
        auto param = tensor_params_.find(tensor);
        for (const ChunkTableParam& p : chunk_tables_)
            if (param != tensor_params_.end() && p.param == param->second && p.grad == (inst.op == OpKind::TensorGradAdd))
                chunk_table = "sg_ct_" + std::to_string(p.param);
    }
    // A table whose gradient this call element alone writes (stored_grads.cpp): one plain store.
    bool stored = false;
    if (inst.op == OpKind::TensorGradAdd) {
        auto param = tensor_params_.find(tensor);
        stored = param != tensor_params_.end() && param->second < 64 &&
                 ((options_.stored_table_params >> param->second) & 1);
        if (stored) line("// this call element's own entry of the gradient: a store (no zero fill, no atomics)");
    }
    std::string tree_table;  // a CUDA block's double copy of a colliding gradient (and a table's float copy)
    if (inst.op == OpKind::TensorGradAdd || inst.op == OpKind::TensorAtomicAdd) {
        auto param = tensor_params_.find(tensor);
        for (const TreeTableParam& p : tree_tables_)
            if (param != tensor_params_.end() && p.param == param->second && p.grad == (inst.op == OpKind::TensorGradAdd))
                tree_table = "sg_tt_" + std::to_string(p.param) +
                             (p.grad ? ", sg_tp_" + std::to_string(p.param) : std::string());
    }
    const char* fn = stored                 ? "sg_grad_store"
                     : !tree_table.empty()  ? (inst.op == OpKind::TensorGradAdd ? "sg_grad_add_tree" : "sg_tensor_atomic_add_tree")
                     : !private_table.empty() ? "sg_grad_add_private"
                     : !chunk_table.empty() ? (inst.op == OpKind::TensorGradAdd ? "sg_grad_add_chunk" : "sg_tensor_atomic_add_chunk")
                                            : prelude_function(inst.op);
    SG_INTERNAL_ASSERT(fn != nullptr, std::string("codegen: unexpected op ") + ir::op_name(inst.op));
    const int rank = tt->rank;
    const bool loads = inst.op == OpKind::TensorLoad || inst.op == OpKind::TensorGradLoad;

    // offset = sum of index_d * stride_d, in the index type of the options (32-bit unless a
    // tensor may hold 2^31 elements or more). The gradient view has its own strides.
    const std::string index_type = index_type_name();
    const char* strides = is_grad_op(inst.op) ? ".grad_strides[" : ".strides[";
    std::string offset;
    for (int d = 0; d < rank; ++d) {
        offset += d ? " + " : "";
        offset += "(" + index_type + ")" + ref(inst.operands[size_t(1 + d)]) + " * (" + index_type + ")" + t + strides +
                  std::to_string(d) + "]";
    }
    if (rank == 0) offset = "(" + index_type + ")0";
    // A dense kernel's dense access: its view joins the layout test (emit_dense.cpp).
    const bool dense = dense_kernel() && dense_access(inst);
    if (dense) note_dense_view(inst, t);
    const std::string off = "off" + std::to_string(temp_counter_++);

    // Read-only tensors load through the read-only path when the call allows it (CUDA).
    const bool readonly = inst.op == OpKind::TensorLoad && options_.readonly_loads && target_ == DeviceType::CUDA &&
                          tt->tensor.access == lang::TensorAccess::Read;
    std::string call = std::string(readonly ? "sg_tensor_load_ro" : fn) + "(" + t + ", " + off;
    if (!loads) call += ", " + ref(inst.operands.back());
    if (!private_table.empty()) call += ", " + private_table;
    if (!chunk_table.empty()) call += ", " + chunk_table;
    if (!tree_table.empty()) call += ", " + tree_table;
    call += ")";
    if (!ordered_record.empty()) call = "sg_ordered_record(" + ordered_record + ", " + off + ", " + ref(inst.operands.back()) + ")";
    if (!fixed_add.empty()) call = fixed_add + off + fixed_tail;

    if (!options_.debug_checks || rank == 0 || index_in_bounds_by_construction(inst)) {
        line(index_type + " " + off + " = " + offset + ";");
        // A dense kernel's dense accesses have vector forms in layout 2 (emit_dense.cpp).
        if (loads && prefetched(inst)) {
            if (dense) note_vector_load(inst, t);
            emit_prefetched_load(inst, call, dense);
        } else if (dense) {
            emit_deferred_store(inst, t, call);
        } else if (loads) {
            define(inst.result(), call);
        } else {
            line(call + ";");
        }
        return;
    }
    // Debug: an index outside the shape records the fault (which parameter, dimension, index and
    // extent, where in the source) and skips the access (a load then yields zero).
    std::string in_bounds, indices;
    for (int d = 0; d < rank; ++d) {
        const std::string i = ref(inst.operands[size_t(1 + d)]);
        in_bounds += std::string(d ? " && " : "") + "sg_in_range(" + i + ", " + t + ".shape[" + std::to_string(d) + "])";
        indices += std::string(d ? ", " : "") + "(int64_t)" + i;
    }
    if (loads) {
        line(type(inst.result()->type) + " " + local_name(inst.result()) + "{};");
        bind(inst.result(), local_name(inst.result()));
    }
    open("if (" + in_bounds + ")");
    line(index_type + " " + off + " = " + offset + ";");
    line(loads ? local_name(inst.result()) + " = " + call + ";" : call + ";");
    reopen("} else {");
    auto param = tensor_params_.find(tensor);
    const int param_index = param == tensor_params_.end() ? -1 : param->second;
    line("const int64_t sg_bad_index[" + std::to_string(rank) + "] = {" + indices + "};");
    line("sg_report_index_fault(sg_faults, " + std::to_string(param_index) + ", sg_bad_index, " + t + ".shape, " +
         std::to_string(rank) + ", " + fault_location(inst) + ");");
    close();
}

bool Emitter::index_in_bounds_by_construction(const Inst& inst) const {
    // The glue reads and writes call-shaped views (an elementwise argument, the result, a
    // gradient buffer) at the call index: dim d of a rank-D view at call dimension
    // call_rank - D + d, whose extent the launcher sets to the call's (broadcast dims included).
    const int rank = inst.operands[0]->type->rank;
    if (options_.call_rank < rank) return false;
    auto param = tensor_params_.find(inst.operands[0]);
    if (param == tensor_params_.end() || param->second >= 64 || !((options_.call_shaped_params >> param->second) & 1))
        return false;
    for (int d = 0; d < rank; ++d) {
        const Value* i = inst.operands[size_t(1 + d)];
        if (i->def && i->def->op == OpKind::Convert && lang::is_integer(i->type->scalar) &&
            lang::is_integer(i->def->operands[0]->type->scalar))
            i = i->def->operands[0];  // int -> uint: a call index is never negative
        if (!i->def || i->def->op != OpKind::CallIndex || i->def->imm_int != options_.call_rank - rank + d) return false;
    }
    return true;
}

std::string Emitter::fault_location(const Inst& inst) const {
    // Only the user's module is named in messages; the glue's lines mean nothing to the user.
    if (!inst.loc.valid() || inst.loc.file->name == "<glue>") return "0, 0";
    const auto [line_number, column] = inst.loc.file->line_col(inst.loc.offset);
    return std::to_string(line_number) + ", " + std::to_string(column);
}

void Emitter::emit_local(const Inst& inst) {
    switch (inst.op) {
    case OpKind::LocalAlloc: {
        // A plain C array: tapes are written slot by slot, never copied as a value.
        const Value* r = inst.result();
        line(type(r->type->element) + " " + local_name(r) + "[" + std::to_string(inst.imm_int) + "];");
        bind(r, local_name(r));
        return;
    }
    case OpKind::LocalLoad:
    case OpKind::LocalStore: {
        const Value* handle = inst.operands[0];
        const std::string index = ref(inst.operands[1]);
        if (options_.debug_checks)
            line("sg_check_index(sg_faults, " + index + ", " + std::to_string(handle->type->count) + ");");
        if (inst.op == OpKind::LocalLoad) define(inst.result(), "sg_local_load(" + ref(handle) + ", " + index + ")");
        else line("sg_local_store(" + ref(handle) + ", " + index + ", " + ref(inst.operands[2]) + ");");
        return;
    }
    default: SG_INTERNAL_ASSERT(false, std::string("codegen: unexpected op ") + ir::op_name(inst.op));
    }
}

void Emitter::emit_call_index(const Inst& inst) {
    SG_INTERNAL_ASSERT(in_kernel_, "call_index outside a kernel (in @" + current_->name + ")");
    define(inst.result(), "sg_call_idx[" + std::to_string(inst.imm_int) + "]");
}

void Emitter::emit_trap(const Inst& inst) {
    // A trap may carry (index, extent) operands: a loop past its [MaxIters] bound passes its
    // iteration count and the bound.
    if (inst.operands.size() == 2)
        line("sg_fault_report(sg_faults, " + std::to_string(uint32_t(inst.imm_int)) + "u, -1, -1, (int64_t)" +
             ref(inst.operands[0]) + ", (int64_t)" + ref(inst.operands[1]) + ", " + fault_location(inst) + ");");
    else
        line("sg_report_error(sg_faults, " + std::to_string(uint32_t(inst.imm_int)) + "u);");
    emit_return(nullptr);  // ends this thread's work (in a function: returns a zero result)
}

}  // namespace sg::codegen::detail
