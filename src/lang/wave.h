// src/lang/wave.h — the wave intrinsics of cooperative kernels, named once here for sema,
// lowering and codegen.
//
// A wave is 32 threads of a block, by linear thread index (x fastest): lanes 0..31 of wave
// t / 32. A wave operation combines the values of the wave's active lanes — those that reach it
// together; a lane that has returned, or whose block ends before it (a partial wave), takes no
// part — and gives each of them the result (docs/language.md, "Cooperative kernels").
#pragma once

#include <cstdint>
#include <string_view>

namespace sg::lang {

enum class WaveOp : uint8_t {
    LaneIndex,      ///< WaveGetLaneIndex() -> uint
    LaneCount,      ///< WaveGetLaneCount() -> uint (32)
    ActiveSum,      ///< WaveActiveSum(T) -> T
    ActiveProduct,  ///< WaveActiveProduct(T) -> T
    ActiveMin,      ///< WaveActiveMin(T) -> T
    ActiveMax,      ///< WaveActiveMax(T) -> T
    AllTrue,        ///< WaveActiveAllTrue(bool) -> bool
    AnyTrue,        ///< WaveActiveAnyTrue(bool) -> bool
    Ballot,         ///< WaveActiveBallot(bool) -> uint4 (x: lanes 0..31)
    CountBits,      ///< WaveActiveCountBits(bool) -> uint
    ReadLaneAt,     ///< WaveReadLaneAt(T, uint lane) -> T
    ReadLaneFirst,  ///< WaveReadLaneFirst(T) -> T
    PrefixSum,      ///< WavePrefixSum(T) -> T: the sum over the active lanes below this one
    IsFirstLane,    ///< WaveIsFirstLane() -> bool
};

inline constexpr int kWaveOpCount = 14;
/// The lanes of a wave on both targets (CUDA's warp).
inline constexpr int kWaveSize = 32;

/// The operation a name calls, or false.
bool find_wave_op(std::string_view name, WaveOp& out);
const char* wave_op_name(WaveOp op);
/// Whether the operation depends on which lanes are active (all but the lane index and count):
/// on the CPU such an operation is a meeting point of the wave's lanes.
bool wave_op_meets(WaveOp op);

}  // namespace sg::lang
