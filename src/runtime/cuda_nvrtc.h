// src/runtime/cuda_nvrtc.h — NVRTC (the CUDA run-time compiler), loaded with dlopen: finding
// the library, identifying it for cache keys, and compiling one source to CUBIN or PTX.
//
// In: search directories from the caller (the Python layer passes sys.path, where the
// nvidia-cuda-nvrtc wheel installs), environment variables, CUDA toolkit locations. Out: a
// loaded NVRTC and a compile function that returns the binary or the compiler's log. Needs no
// GPU and no CUDA driver, so CI machines can compile generated CUDA code. Knows nothing about
// caching; cuda_module.cpp decides what to compile and keeps.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace sg::runtime {

using NvrtcResult = int;         // nvrtcResult
using NvrtcProgram = struct NvrtcProgramOpaque*;  // nvrtcProgram

inline constexpr NvrtcResult kNvrtcSuccess = 0;

/// A loaded NVRTC. Never unloaded: kernels' compile results may be in use until exit.
struct Nvrtc {
    std::string path;                 ///< the file that was loaded (resolved through dladdr)
    int major = 0, minor = 0;         ///< nvrtcVersion
    std::vector<int> supported_archs; ///< 10 * major + minor, ascending; empty when not reported
    /// What names this compiler's output in cache keys: the version and the library file's
    /// size, so two patch releases of one major.minor do not share cached binaries.
    std::string identity;

    const char* (*nvrtcGetErrorString)(NvrtcResult) = nullptr;
    NvrtcResult (*nvrtcVersion)(int*, int*) = nullptr;
    NvrtcResult (*nvrtcGetNumSupportedArchs)(int*) = nullptr;  ///< optional (NVRTC >= 11.2)
    NvrtcResult (*nvrtcGetSupportedArchs)(int*) = nullptr;     ///< optional (NVRTC >= 11.2)
    NvrtcResult (*nvrtcCreateProgram)(NvrtcProgram*, const char*, const char*, int,
                                      const char* const*, const char* const*) = nullptr;
    NvrtcResult (*nvrtcDestroyProgram)(NvrtcProgram*) = nullptr;
    NvrtcResult (*nvrtcCompileProgram)(NvrtcProgram, int, const char* const*) = nullptr;
    NvrtcResult (*nvrtcGetProgramLogSize)(NvrtcProgram, size_t*) = nullptr;
    NvrtcResult (*nvrtcGetProgramLog)(NvrtcProgram, char*) = nullptr;
    NvrtcResult (*nvrtcGetPTXSize)(NvrtcProgram, size_t*) = nullptr;
    NvrtcResult (*nvrtcGetPTX)(NvrtcProgram, char*) = nullptr;
    NvrtcResult (*nvrtcGetCUBINSize)(NvrtcProgram, size_t*) = nullptr;  ///< optional (>= 11.1)
    NvrtcResult (*nvrtcGetCUBIN)(NvrtcProgram, char*) = nullptr;        ///< optional (>= 11.1)

    /// Whether it can emit machine code (a CUBIN) for `arch` (90 = sm_90). An NVRTC that does
    /// not report its list is assumed to (NVRTC then reports the error itself).
    bool supports_arch(int arch) const;
    /// 1000 * major + 10 * minor, the driver's numbering (13000 = 13.0).
    int version() const { return 1000 * major + 10 * minor; }
};

/// Sets the extra directories searched for the nvidia-cuda-nvrtc wheel (site-packages dirs:
/// `<dir>/nvidia/cu13/lib/libnvrtc.so*`, `<dir>/nvidia/cuda_nvrtc/lib/libnvrtc.so*`). Call it
/// before the first compile; once NVRTC has loaded it has no effect, and after a failed search
/// it allows one new search.
void set_nvrtc_search_dirs(std::vector<std::string> dirs);

/// The libraries nvrtc() tries, in order: $SHADEGRAD_NVRTC alone when set (an explicit choice is
/// never silently replaced); else the wheel directories under each of `extra_dirs`, then
/// $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda-*/lib64 (newest first), and last
/// the loader's own search (`libnvrtc.so`, `libnvrtc.so.13`, `libnvrtc.so.12`). Within a
/// directory, newer sonames first. Only existing files are listed, except the loader names.
std::vector<std::string> nvrtc_candidates(const std::vector<std::string>& extra_dirs);

/// Loads one NVRTC library (a path, or a bare name for the loader's search). Null, with the
/// reason in `error`, when it cannot be loaded or lacks required entry points.
std::shared_ptr<const Nvrtc> load_nvrtc_library(const std::string& path_or_name,
                                                std::string& error);

/// The process's NVRTC: the first candidate that loads, preferring one whose major version the
/// installed driver accepts (a CUDA 12 driver cannot load CUDA 13 output) when a driver is
/// present. Thread-safe; loaded once. Throws BackendError "NVRTC not found: ..." naming what was
/// tried and what to install.
const Nvrtc& nvrtc();
/// Starts nvrtc()'s search and load on a thread of its own, once per process, and returns at
/// once; a later nvrtc() waits for it (or finds the library loaded). A failure is left for
/// nvrtc() to report. Used before a compile's front end runs, so that opening NVRTC and its
/// builtins (several ms) overlaps it.
void nvrtc_prefetch();
/// Whether NVRTC is loaded in this process (one atomic load; never starts a search).
bool nvrtc_loaded() noexcept;

/// The directories nvrtc_candidates lists, in its order (existing or not; not $SHADEGRAD_NVRTC).
std::vector<std::string> nvrtc_search_locations(const std::vector<std::string>& extra_dirs);

/// What decides which NVRTC nvrtc() loads and what it produces, without loading it and without
/// listing a directory: the driver's version; each search location (nvrtc_search_locations) that
/// exists, by inode and modification time, with the usual sonames in it by size and modification
/// time; the loader names and LD_LIBRARY_PATH ($SHADEGRAD_NVRTC alone, by its file, when set).
/// Installing, removing, renaming or overwriting a library changes it. For keys computed before
/// anything is compiled; memoized until the search directories change.
std::string nvrtc_fingerprint();

/// One line for diagnostics: the loaded NVRTC's path and version, or why none loaded (this may
/// trigger the search). Never throws.
std::string nvrtc_status();

struct NvrtcOutput {
    bool ok = false;
    std::string binary;  ///< the CUBIN (or PTX text, NUL-terminated in the string's buffer)
    std::string log;     ///< the compiler's log (warnings on success, errors on failure)
    std::string error;   ///< on failure: the nvrtcResult name, e.g. NVRTC_ERROR_COMPILATION
};

/// Compiles `source` as a program named `program_name` (what diagnostics and line info call the
/// file) with `options`, returning the CUBIN (or the PTX when `want_ptx`). Compile failures,
/// invalid options included, come back as ok = false with the log; only failures of the API
/// itself (out of memory, a broken library) throw BackendError. Thread-safe.
NvrtcOutput nvrtc_compile(const Nvrtc& compiler, const std::string& source,
                          const std::string& program_name,
                          const std::vector<std::string>& options, bool want_ptx);

}  // namespace sg::runtime
