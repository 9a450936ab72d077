// src/lang/wave.cpp — the table of wave intrinsics (wave.h).
#include "lang/wave.h"

namespace sg::lang {

namespace {

constexpr const char* kNames[kWaveOpCount] = {
    "WaveGetLaneIndex",  "WaveGetLaneCount",  "WaveActiveSum",   "WaveActiveProduct",   "WaveActiveMin",
    "WaveActiveMax",     "WaveActiveAllTrue", "WaveActiveAnyTrue", "WaveActiveBallot", "WaveActiveCountBits",
    "WaveReadLaneAt",    "WaveReadLaneFirst", "WavePrefixSum",   "WaveIsFirstLane",
};

}  // namespace

bool find_wave_op(std::string_view name, WaveOp& out) {
    for (int k = 0; k < kWaveOpCount; ++k)
        if (name == kNames[k]) {
            out = WaveOp(k);
            return true;
        }
    return false;
}

const char* wave_op_name(WaveOp op) { return kNames[int(op)]; }

bool wave_op_meets(WaveOp op) { return op != WaveOp::LaneIndex && op != WaveOp::LaneCount; }

}  // namespace sg::lang
