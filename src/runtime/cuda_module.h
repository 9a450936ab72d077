// src/runtime/cuda_module.h — the CUDA backend's modules: generated CUDA C++ compiled by NVRTC
// into a CUBIN (content-addressed, cached in memory and on disk), loaded lazily into each
// device's primary context, with its kernel entry points ready to launch (cuda_launch.h).
//
// Two steps, so that machines without a GPU (CI) can compile and cache:
//   compile_cuda      source -> CUBIN/PTX bytes          needs NVRTC only
//   CudaModule::function(device, entry) -> CudaFunction  needs the driver and that device
// load_cuda_module does the first (through its caches) and hands out a module for the second.
#pragma once

#include "runtime/cuda_launch.h"

#include <memory>
#include <string>
#include <vector>

namespace sg::runtime {

struct CudaCompileOptions {
    /// The target device's compute capability, 10 * major + minor (90 for sm_90): what
    /// cuda_device_arch(device) returns. Required: a CUBIN runs only on its own architecture.
    int arch = 0;
    /// Line info (-lineinfo) for profilers and compute-sanitizer, and the source kept at
    /// <cache>/debug/<hash>.cu so that the line info names a file that exists.
    bool debug = false;
    /// Emit PTX, which the driver compiles when the module is loaded, instead of a CUBIN. Also
    /// chosen automatically when NVRTC is older than `arch` (then for the newest architecture
    /// it knows). Note: PTX from an NVRTC newer than the driver does not load; CUBINs do.
    bool ptx = false;
    /// Extra NVRTC options, appended last (so they can override the defaults).
    std::vector<std::string> flags;
    /// Fast math (codegen::CodegenOptions::fast_math): float division is approximate
    /// (--prec-div=false: 2 ulp) instead of IEEE. Everything else keeps the IEEE options.
    bool fast_math = false;
};

/// The compiler's output for one source and set of options.
struct CompiledCuda {
    std::string bytes;      ///< a CUBIN (an ELF image) or PTX text
    bool is_ptx = false;
    int arch = 0;           ///< the architecture it was compiled for (for PTX: the virtual one)
    std::string hash;       ///< the cache key, 32 hex characters
    bool compiled = false;  ///< NVRTC ran for this result (false: it came from the disk cache)
};

/// Compiles `source` (a complete translation unit exporting `extern "C" __global__` entry
/// points; no system headers) with NVRTC, or takes the result from the disk cache
/// ($SHADEGRAD_CACHE_DIR, kind "cuda"; entries verified on read, a corrupt one is rebuilt).
/// The key is the content hash of the source, the NVRTC options (architecture included), the
/// NVRTC identity (version and library) and the runtime's ABI version. Needs no GPU. Throws
/// BackendError when NVRTC is missing or rejects the source: the message holds the NVRTC log
/// (truncated) and the path where the source and the full log were kept
/// (<cache>/failed/<hash>.cu and .log). Thread-safe.
CompiledCuda compile_cuda(const std::string& source, const CudaCompileOptions& options);

/// The NVRTC options compile_cuda passes for `options` with the loaded NVRTC (diagnostics).
std::vector<std::string> cuda_compile_flags(const CudaCompileOptions& options);

/// A compiled module, loaded into devices on demand. Unloaded from every device when the last
/// reference goes.
class CudaModule {
public:
    virtual ~CudaModule() = default;
    /// Content hash (hex) that names this module in the cache.
    virtual const std::string& hash() const = 0;
    /// Whether this load compiled the source (false: it came from the memory or disk cache).
    virtual bool compiled() const = 0;
    /// The CUBIN or PTX.
    virtual const CompiledCuda& image() const = 0;
    /// The kernel `entry` on `device`: the first call per device loads the module into the
    /// device's primary context (cuModuleLoadDataEx), the first per entry looks it up and
    /// chooses its block size (occupancy API, preferring 256 threads when that reaches the same
    /// occupancy). Later calls are a locked map lookup: callers keep the reference (it lives
    /// as long as the module). Throws BackendError when the device cannot load the image (e.g.
    /// a CUBIN for another architecture; the message names both and the driver's log) or the
    /// entry does not exist. Thread-safe.
    virtual const CudaFunction& function(int device, const std::string& entry) const = 0;
};

/// Returns the module for `source`: from the in-memory cache, else compile_cuda (disk cache,
/// else NVRTC). Needs no GPU until function() is called. Thread-safe.
std::shared_ptr<CudaModule> load_cuda_module(const std::string& source,
                                             const CudaCompileOptions& options);

/// The module compiled before under `key` (CudaModule::hash()) for options.arch, from the memory
/// or disk cache; nullptr when neither has it (or its image is for another architecture). Never
/// compiles, needs no NVRTC. Thread-safe.
std::shared_ptr<CudaModule> find_cuda_module(const std::string& key, const CudaCompileOptions& options);

/// What identifies the compiler load_cuda_module would run with `options`, without opening it:
/// the runtime's ABI version, the architecture, debug and fast-math options, nvrtc_fingerprint().
std::string cuda_compiler_fingerprint(const CudaCompileOptions& options);

/// Clears the in-memory module cache (tests). Modules already handed out stay loaded; the next
/// load of their source comes from the disk cache.
void clear_cuda_module_cache();

}  // namespace sg::runtime
