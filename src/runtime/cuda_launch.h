// src/runtime/cuda_launch.h — launching a generated CUDA kernel: one thread per call element on
// a 1-D grid, its parameter block passed by value, on the caller's stream.
//
// In: a CudaFunction (from CudaModule::function, cuda_module.h), the packed parameter block,
// the thread count and a CUstream (torch's current stream, or null for the legacy default
// stream). Out: the kernel is enqueued; nothing waits for it. The path allocates nothing and
// makes two driver calls (cuCtxGetCurrent, cuLaunchKernel) in the usual case.
#pragma once

#include "runtime/cuda_driver.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace sg::runtime {

/// One kernel entry point loaded into one device's primary context, with what a launch needs.
/// Owned by its CudaModule; valid as long as the module is.
struct CudaFunction {
    CuFunction handle = nullptr;
    CuContext context = nullptr;  ///< the primary context of `device`
    const CudaDriver* driver = nullptr;
    int device = -1;
    int block_size = 256;        ///< threads per block, chosen once per (kernel, device)
    int64_t max_blocks = 0;      ///< the device's grid-x limit (2^31 - 1 on every current GPU)
    int multiprocessors = 0;     ///< the device's SM count (bounded grids: ordered gradient tables)
    size_t param_size = 0;       ///< the kernel's parameter size; 0 when the driver cannot tell
    std::string name;            ///< the entry point's name, for messages
    int registers = 0;           ///< registers per thread (diagnostics)
    /// Launched once already: the first launch's host time goes to the load stats (where the
    /// driver loads modules lazily, the load happens there).
    mutable std::atomic<bool> launched{false};
};

/// Enqueues `function` over `total_threads` threads (ceil(total / block) blocks of
/// function.block_size) on `stream` (a CUstream of the function's device, or null). `params`
/// points at the kernel's single by-value parameter (the Params struct), `params_size` bytes;
/// the driver copies it, so it may live on the caller's stack. total_threads == 0 launches
/// nothing. The function's context is made current for the launch when it is not already, and
/// the previous one restored; a thread with no context at all gets device 0's bound for good, as
/// the CUDA runtime's first call on it would (cuda_launch.cpp). Throws BackendError naming the
/// kernel and the CUDA error when the arguments are invalid (negative count, more blocks than the
/// grid allows, a parameter size that differs from the kernel's) or the driver refuses the launch.
/// Errors the kernel itself raises surface at the next synchronization, as with any asynchronous
/// CUDA work.
void cuda_launch(const CudaFunction& function, const void* params, size_t params_size,
                 int64_t total_threads, void* stream);

/// Enqueues `function` with an explicit grid and block shape (a cooperative kernel), as
/// cuda_launch does otherwise. Throws BackendError when the driver refuses (a block of more
/// than 1024 threads, too much shared memory, ...).
void cuda_launch_shaped(const CudaFunction& function, const void* params, size_t params_size, const int64_t grid[3],
                        const int64_t block[3], void* stream);

/// Enqueues zero-filling `bytes` bytes at device address `data` on `stream`, in the context of
/// `function` (the device the memory lives on). 32-bit stores when address and size allow.
/// Throws BackendError when the driver refuses.
void cuda_zero_async(const CudaFunction& function, void* data, size_t bytes, void* stream);

/// How often launches found another context current on their thread: `binds`, a thread with none
/// got device 0's primary context bound (once per such thread); `pushes`, a launch pushed its
/// context and popped it after (each time). Diagnostics (`_core._compile_stats()`, tests).
struct CudaContextSwitches {
    uint64_t binds = 0, pushes = 0;
};
CudaContextSwitches cuda_context_switches();

}  // namespace sg::runtime
