// src/codegen/emit_prefetch.cpp — loads issued ahead of the work: the thread function of a
// multi-element CUDA kernel in two phases.
//
// A CUDA thread of a small kernel runs E call elements (emit_cpp.cpp). Run one after the other,
// each element's loads wait for the previous element's work: the compiler does not move a load
// above the branches of sinf or sqrt, nor above a store it cannot prove apart, so a thread keeps
// one load in flight, too few to reach DRAM bandwidth. The thread function is therefore a
// template on SG_PHASE: phase 0 runs the kernel body up to its last prefetched load and keeps the
// loaded values in an sg_pre struct; phase 1 runs the whole body, taking those values from the
// struct instead of loading them; phase 2 is the plain body (the partial last block). The entry
// point runs phase 0 for its E elements, then phase 1 for each: their loads are all issued first.
//
// A load is prefetched when it reads a read-only tensor (the call guarantees that no tensor of
// the call overlaps another: CodegenOptions::readonly_loads) with no debug check to make, and
// nothing before it in the kernel's top-level block has an effect (a store, an add, a fault
// check, a branch or loop): phase 0 then has no effect but the loads, and running it early
// changes nothing a thread can observe. The pure instructions before the last prefetched load
// run in both phases; the compiler drops what phase 0 does not need.
#include "codegen/emitter.h"

namespace sg::codegen::detail {

namespace {

/// Whether the emitted code of `inst` only computes its result (no effect, no fault check).
bool pure_in_phase_zero(const Inst& inst, const CodegenOptions& options) {
    if (!inst.regions.empty() || ir::has_side_effects(inst.op)) return false;
    switch (inst.op) {
    case OpKind::ConstInt: case OpKind::ConstFloat: case OpKind::Undef:
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Neg:
    case OpKind::BitAnd: case OpKind::BitOr: case OpKind::BitXor: case OpKind::BitNot:
    case OpKind::Shl: case OpKind::Shr: case OpKind::Eq: case OpKind::Ne: case OpKind::Lt: case OpKind::Le:
    case OpKind::Gt: case OpKind::Ge: case OpKind::LogicAnd: case OpKind::LogicOr: case OpKind::LogicNot:
    case OpKind::Select: case OpKind::Convert: case OpKind::Detach:
    case OpKind::Splat: case OpKind::Construct: case OpKind::Extract: case OpKind::Insert: case OpKind::Swizzle:
    case OpKind::Intrinsic: case OpKind::SinCos: case OpKind::CallIndex: case OpKind::TensorShape:
        return true;
    case OpKind::Div: case OpKind::Rem:  // an integer divisor is checked in debug mode
        return lang::is_floating(inst.operands[0]->type->scalar) || !options.debug_checks;
    case OpKind::ExtractDyn: case OpKind::InsertDyn: return !options.debug_checks;
    default: return false;
    }
}

}  // namespace

void Emitter::plan_prefetch(const Function& kernel) {
    prefetch_.clear();
    prefetch_last_ = nullptr;
    prefetch_fields_.clear();
    if (target_ != DeviceType::CUDA || !options_.readonly_loads) return;
    for (const auto& inst : kernel.body->insts) {
        if (inst->op == OpKind::TensorLoad) {
            const Type* tt = inst->operands[0]->type;
            const bool unchecked = !options_.debug_checks || tt->rank == 0 || index_in_bounds_by_construction(*inst);
            if (!unchecked) break;  // a checked load records a fault: an effect
            if (tt->tensor.access == lang::TensorAccess::Read) {
                prefetch_.insert(inst.get());
                prefetch_last_ = inst.get();
            }
            continue;  // a load of a written tensor stays where it is (phase 0 drops it unused)
        }
        if (!pure_in_phase_zero(*inst, options_)) break;
    }
}

void Emitter::emit_prefetched_load(const Inst& inst, const std::string& call, bool vector) {
    const std::string name = local_name(inst.result());
    const std::string t = type(inst.result()->type);
    prefetch_fields_ += "    " + t + " " + name + ";\n";
    line(t + " " + name + ";");
    if (vector)  // the vector mode of a dense launch (emit_dense.cpp): the entry loaded it
        line("if constexpr (SG_PHASE == 1 || SG_DENSE == 2) " + name + " = sg_pre." + name + ";");
    else
        line("if constexpr (SG_PHASE == 1) " + name + " = sg_pre." + name + ";");
    line("else " + name + " = " + call + ";");
    line("if constexpr (SG_PHASE == 0) sg_pre." + name + " = " + name + ";");
    if (&inst == prefetch_last_) line("if constexpr (SG_PHASE == 0) return;  // the prefetched loads are issued");
    bind(inst.result(), name);
}

}  // namespace sg::codegen::detail
