// src/lang/coop.h — the built-ins of cooperative kernels ([CUDAKernel] functions): thread and
// block ids, barriers and Interlocked atomics, named once here for sema, lowering and codegen.
//
// A cooperative kernel runs once per thread of an explicit launch (block size and grid size, up
// to 3-D). Its threads read their ids, share `groupshared` memory within a block, meet at
// barriers and combine values with atomics (docs/language.md, "Cooperative kernels").
#pragma once

#include <cstdint>
#include <string_view>

namespace sg::lang {

/// `cudaThreadIdx()`, `cudaBlockIdx()`, `cudaBlockDim()`, `cudaGridDim()`: each a uint3.
/// Then the ids of a vectorized call's element in SlangPy's call groups (lang/call_shape.cpp:
/// `CallShapeInfo`, whose methods call these internal built-ins): `__slangpy_call_id(d)`,
/// `__slangpy_call_group_id(d)` and `__slangpy_call_group_thread_id(d)` (an int each, dimension
/// d of the call's shape, outermost first) and `__slangpy_call_rank()` (the call's dimensions).
enum class CoopId : uint8_t { ThreadIdx, BlockIdx, BlockDim, GridDim, CallId, CallGroupId, CallGroupThreadId, CallRank };
inline constexpr int kCoopIdCount = 8;
/// Whether `id` is one of a call element's call-group ids (not a launch's thread id).
inline bool is_call_shape_id(CoopId id) { return id >= CoopId::CallId; }

/// The memory barriers. `sync`: the ...WithGroupSync forms also wait for every thread of the
/// block. `device`: the fence covers device memory (tensors) as well as groupshared memory.
struct BarrierInfo {
    const char* name;
    bool sync;
    bool device;
};

/// The Interlocked operations; each returns the value the element held before.
enum class AtomicOp : uint8_t { Add, Min, Max, And, Or, Xor, Exchange, CompareExchange };

/// The id a name calls, or false.
bool find_coop_id(std::string_view name, CoopId& out);
/// The barrier a name calls, or nullptr.
const BarrierInfo* find_barrier(std::string_view name);
/// The atomic a name calls (`InterlockedAdd` ...), or false.
bool find_atomic(std::string_view name, AtomicOp& out);
const char* atomic_name(AtomicOp op);
const char* coop_id_name(CoopId id);

/// Whether `name` is a method of TensorView / DiffTensorView (load, store, storeOnce, loadOnce,
/// size, stride, dims and the Interlocked operations); sema_coop.cpp checks each use.
bool is_view_method_name(std::string_view name);

/// The largest rank a TensorView may have at a launch (the view record holds this many extents).
inline constexpr int kMaxViewRank = 8;

}  // namespace sg::lang
