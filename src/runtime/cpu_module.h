// src/runtime/cpu_module.h — the CPU backend's modules: generated C++ compiled by the system
// compiler into a shared object (content-addressed, cached in memory and on disk), and a thread
// pool to run it. The backend itself (Backend, backend.h) is cpu_backend.cpp.
//
// In: C++ source text (from codegen), compile options. Out: a loaded module whose exported
// kernel entry points can be looked up and launched over a range of thread indices.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sg::runtime {

/// Raised when the host compiler fails on generated code (a compiler bug or a missing toolchain);
/// the message holds the compiler's output and the path of the source it kept.
class BackendError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The signature of a generated CPU kernel: runs threads [begin, end) of the call.
using CpuKernelFn = void (*)(const void* params, int64_t begin, int64_t end);

struct CpuCompileOptions {
    std::string compiler;                 ///< empty: $SHADEGRAD_CXX, else $CXX, else "c++"
    std::vector<std::string> flags;       ///< extra flags (default: -O2 -std=c++17 -fPIC ...)
    bool debug = false;                   ///< -O0 -g
};

/// A loaded shared object. Unloaded when the last reference goes.
class CpuModule {
public:
    virtual ~CpuModule() = default;
    /// The address of an exported symbol; throws BackendError when absent.
    virtual void* symbol(const char* name) const = 0;
    /// Content hash (hex) that names this module in the cache.
    virtual const std::string& hash() const = 0;
    /// Whether this load compiled the source (false: it came from the memory or disk cache).
    virtual bool compiled() const = 0;
};

/// Returns the module for `source`: from the in-memory cache, else the disk cache
/// ($SHADEGRAD_CACHE_DIR, default ~/.cache/shadegrad; entries verified by hash on read, a corrupt
/// or stale entry is rebuilt), else compiles it (written to disk atomically). Thread-safe.
std::shared_ptr<CpuModule> load_cpu_module(const std::string& source, const CpuCompileOptions& options = {});

/// The module compiled before under `key` (CpuModule::hash()), from the memory or disk cache;
/// nullptr when neither has it or it does not load here. Never compiles. Thread-safe.
std::shared_ptr<CpuModule> find_cpu_module(const std::string& key, const CpuCompileOptions& options = {});

/// What identifies the compiler load_cpu_module would run with `options`, without running it
/// (host_compiler_fingerprint, the flags, the runtime's ABI version). Memoized per process.
std::string cpu_compiler_fingerprint(const CpuCompileOptions& options = {});

/// Runs fn(params, begin, end) over [0, n) split across the process-wide thread pool
/// ($SHADEGRAD_NUM_THREADS, default hardware concurrency). Small n runs on the calling thread.
/// Blocks until done. Exceptions are not expected from kernels (they are noexcept C code).
/// Safe to call from several threads (launches take turns) and from inside a kernel (runs
/// inline). Details and tuning constants: thread_pool.h.
void cpu_launch(CpuKernelFn fn, const void* params, int64_t n) noexcept;
/// The same for work items that are large each (the blocks of a cooperative kernel): chunks of
/// at least `min_chunk` items rather than thread_pool.h's kCpuMinChunkItems.
void cpu_launch_items(CpuKernelFn fn, const void* params, int64_t n, int64_t min_chunk) noexcept;

/// Clears the in-memory module cache (tests). Modules already handed out stay loaded; the next
/// load of their source comes from the disk cache.
void clear_cpu_module_cache();

/// Path of the disk cache directory in use (see disk_cache.h; tests may override it with
/// set_cache_directory_for_testing).
std::string cache_directory();

/// A stable 128-bit content hash as 32 hex characters (used for cache keys).
std::string content_hash(const std::string& data);

}  // namespace sg::runtime
