// src/runtime/thread_pool.h — the process-wide thread pool behind cpu_launch (cpu_module.h).
//
// One pool per process, created on the first launch that is large enough to split, never
// destroyed: workers sleep on a futex between launches and simply end with the process, so exit
// never waits on (or races with) a worker. A fork() child starts a fresh pool on first use.
//
// A launch splits [0, n) into equal chunks of at least kCpuMinChunkItems items (at most
// kCpuChunksPerThread per thread, claimed dynamically so a slow chunk does not stall the rest);
// the calling thread works too and returns when every chunk is done. Launches from several
// threads take turns; a launch from inside a kernel (nested) runs inline on that thread.
#pragma once

#include <cstdint>

namespace sg::runtime {

/// Launches smaller than two chunks of this size run inline on the calling thread: below it the
/// wake-up of a worker costs more than it saves.
inline constexpr int64_t kCpuMinChunkItems = 4096;
/// Chunks per thread: enough slack to balance uneven chunks, few enough to keep claims cheap.
inline constexpr int64_t kCpuChunksPerThread = 4;

/// Threads a launch may use, the caller included: $SHADEGRAD_NUM_THREADS when set to a positive
/// number, else the CPUs this process may run on. Creates the pool.
int cpu_thread_count() noexcept;

/// The chunk size cpu_launch(fn, params, n) uses when called now from this thread: the chunks
/// are [k * size, min(n, (k + 1) * size)). n itself when the launch runs inline.
int64_t cpu_chunk_size(int64_t n) noexcept;

/// Whether the current thread is running a chunk of a pool launch (where launches run inline).
bool cpu_inside_pool_launch() noexcept;

}  // namespace sg::runtime
