// src/codegen/emit_wave.cpp — code of the wave intrinsics: one call of prelude_wave.inc per
// instruction, with the instruction's site number (its place in emission order: on the CPU the
// lanes of a wave that wait at the earliest site run it together, see prelude_wave.inc).
#include "codegen/emitter.h"
#include "lang/wave.h"

namespace sg::codegen::detail {

void Emitter::emit_wave(const Inst& inst) {
    const Value* r = inst.result();
    const std::string site = std::to_string(wave_sites_++);
    auto arg = [&](size_t k) { return ref(inst.operands[k]); };
    switch (lang::WaveOp(inst.imm_int)) {
    case lang::WaveOp::LaneIndex: define(r, "sg_wave_lane_index()"); return;
    case lang::WaveOp::LaneCount: define(r, "sg_wave_lane_count()"); return;
    case lang::WaveOp::ActiveSum: define(r, "sg_wave_active<SG_WAVE_SUM>(" + arg(0) + ", " + site + ")"); return;
    case lang::WaveOp::ActiveProduct:
        define(r, "sg_wave_active<SG_WAVE_PRODUCT>(" + arg(0) + ", " + site + ")");
        return;
    case lang::WaveOp::ActiveMin: define(r, "sg_wave_active<SG_WAVE_MIN>(" + arg(0) + ", " + site + ")"); return;
    case lang::WaveOp::ActiveMax: define(r, "sg_wave_active<SG_WAVE_MAX>(" + arg(0) + ", " + site + ")"); return;
    case lang::WaveOp::AllTrue: define(r, "sg_wave_all(" + arg(0) + ", " + site + ")"); return;
    case lang::WaveOp::AnyTrue: define(r, "sg_wave_any(" + arg(0) + ", " + site + ")"); return;
    case lang::WaveOp::Ballot: define(r, "sg_wave_ballot(" + arg(0) + ", " + site + ")"); return;
    case lang::WaveOp::CountBits: define(r, "sg_wave_count_bits(" + arg(0) + ", " + site + ")"); return;
    case lang::WaveOp::ReadLaneAt:
        define(r, "sg_wave_read_lane(" + arg(0) + ", (uint32_t)" + arg(1) + ", " + site + ")");
        return;
    case lang::WaveOp::ReadLaneFirst: define(r, "sg_wave_read_first(" + arg(0) + ", " + site + ")"); return;
    case lang::WaveOp::PrefixSum: define(r, "sg_wave_prefix_sum(" + arg(0) + ", " + site + ")"); return;
    case lang::WaveOp::IsFirstLane: define(r, "sg_wave_is_first_lane(" + site + ")"); return;
    }
    SG_INTERNAL_ASSERT(false, "codegen: unexpected wave op");
}

}  // namespace sg::codegen::detail
