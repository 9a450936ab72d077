// src/runtime/cuda_driver.h — the CUDA driver API, loaded at run time with dlopen (no link-time
// CUDA dependency): the entry points we use, error reporting, devices and their primary contexts.
//
// In: nothing (libcuda.so.1 is found by the dynamic loader, as torch finds it). Out: a table of
// driver functions resolved through cuGetProcAddress at a pinned API version (so a newer driver
// cannot hand us an entry point with another signature), device queries, and each device's
// PRIMARY context — the one the CUDA runtime and therefore torch use, so device pointers and
// streams are interchangeable with torch's.
//
// Nothing here includes cuda.h: the few driver types are declared below with our own names, and
// must match the driver's ABI (all are ints or opaque pointers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sg::runtime {

// ---- driver ABI types (cuda.h's names in comments) -----------------------------------------

using CuResult = int;                                   // CUresult
using CuDevice = int;                                   // CUdevice
using CuDevicePtr = unsigned long long;                 // CUdeviceptr (64-bit on every host)
using CuContext = struct CuContextOpaque*;              // CUcontext
using CuModule = struct CuModuleOpaque*;                // CUmodule
using CuFunction = struct CuFunctionOpaque*;            // CUfunction
using CuStream = struct CuStreamOpaque*;                // CUstream
using CuOccupancyBlockToSmem = size_t (*)(int block);   // CUoccupancyB2DSize

inline constexpr CuResult kCudaSuccess = 0;
inline constexpr CuResult kCudaErrorNoDevice = 100;
inline constexpr CuResult kCudaErrorNotFound = 500;

// CUdevice_attribute values we read.
inline constexpr int kCuDeviceAttrMaxThreadsPerBlock = 1;
inline constexpr int kCuDeviceAttrMaxGridDimX = 5;
inline constexpr int kCuDeviceAttrMultiprocessorCount = 16;
inline constexpr int kCuDeviceAttrComputeCapabilityMajor = 75;
inline constexpr int kCuDeviceAttrComputeCapabilityMinor = 76;
// CUfunction_attribute values we read.
inline constexpr int kCuFuncAttrMaxThreadsPerBlock = 0;
inline constexpr int kCuFuncAttrNumRegs = 4;
// CUstreamCaptureStatus values.
inline constexpr int kCuStreamCaptureNone = 0;
/// CUstreamCaptureMode: a thread in relaxed mode may make calls that a global capture elsewhere forbids.
inline constexpr int kCuStreamCaptureModeRelaxed = 2;
inline constexpr int kCuStreamCaptureActive = 1;
inline constexpr int kCuStreamCaptureInvalidated = 2;
// cuMemHostAlloc flags.
inline constexpr unsigned kCuMemHostAllocPortable = 0x01;
inline constexpr unsigned kCuMemHostAllocDeviceMap = 0x02;
// cuMemHostRegister flags.
inline constexpr unsigned kCuMemHostRegisterPortable = 0x01;
inline constexpr unsigned kCuMemHostRegisterDeviceMap = 0x02;
// CUjit_option values for cuModuleLoadDataEx's error log.
inline constexpr int kCuJitErrorLogBuffer = 5;
inline constexpr int kCuJitErrorLogBufferSizeBytes = 6;

/// The driver entry points. Required ones are non-null once cuda_driver() returned; optional
/// ones (marked) are null on drivers too old to have them.
struct CudaDriver {
    std::string library_path;  ///< what dlopen was given (e.g. "libcuda.so.1")
    int version = 0;           ///< cuDriverGetVersion: 1000 * major + 10 * minor (13000 = 13.0)

    CuResult (*cuGetErrorName)(CuResult, const char**) = nullptr;
    CuResult (*cuGetErrorString)(CuResult, const char**) = nullptr;
    CuResult (*cuDriverGetVersion)(int*) = nullptr;
    CuResult (*cuInit)(unsigned) = nullptr;
    CuResult (*cuDeviceGetCount)(int*) = nullptr;
    CuResult (*cuDeviceGet)(CuDevice*, int) = nullptr;
    CuResult (*cuDeviceGetAttribute)(int*, int, CuDevice) = nullptr;
    CuResult (*cuDeviceGetName)(char*, int, CuDevice) = nullptr;
    CuResult (*cuDevicePrimaryCtxRetain)(CuContext*, CuDevice) = nullptr;
    CuResult (*cuCtxGetCurrent)(CuContext*) = nullptr;
    CuResult (*cuCtxSetCurrent)(CuContext) = nullptr;
    CuResult (*cuCtxPushCurrent)(CuContext) = nullptr;
    CuResult (*cuCtxPopCurrent)(CuContext*) = nullptr;
    CuResult (*cuCtxSynchronize)() = nullptr;
    CuResult (*cuModuleLoadData)(CuModule*, const void*) = nullptr;
    CuResult (*cuModuleLoadDataEx)(CuModule*, const void*, unsigned, int*, void**) = nullptr;
    CuResult (*cuModuleGetFunction)(CuFunction*, CuModule, const char*) = nullptr;
    CuResult (*cuModuleUnload)(CuModule) = nullptr;
    CuResult (*cuFuncGetAttribute)(int*, int, CuFunction) = nullptr;
    /// Optional (driver >= 12.4): byte offset and size of a kernel parameter.
    CuResult (*cuFuncGetParamInfo)(CuFunction, size_t, size_t*, size_t*) = nullptr;
    CuResult (*cuOccupancyMaxPotentialBlockSize)(int*, int*, CuFunction, CuOccupancyBlockToSmem,
                                                 size_t, int) = nullptr;
    CuResult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CuFunction, int,
                                                            size_t) = nullptr;
    CuResult (*cuLaunchKernel)(CuFunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CuStream, void**, void**) = nullptr;
    CuResult (*cuStreamSynchronize)(CuStream) = nullptr;
    /// Whether a stream is capturing a CUDA graph (CUstreamCaptureStatus: kCuStreamCapture*).
    CuResult (*cuStreamIsCapturing)(CuStream, int*) = nullptr;
    /// Optional: the calling thread's stream capture mode (kCuStreamCaptureMode*), exchanged.
    CuResult (*cuThreadExchangeStreamCaptureMode)(int*) = nullptr;
    CuResult (*cuMemsetD8Async)(CuDevicePtr, unsigned char, size_t, CuStream) = nullptr;
    CuResult (*cuMemsetD32Async)(CuDevicePtr, unsigned, size_t, CuStream) = nullptr;
    // Memory: only tests and tools use these (the call layer gets memory from torch).
    CuResult (*cuMemAlloc)(CuDevicePtr*, size_t) = nullptr;
    CuResult (*cuMemFree)(CuDevicePtr) = nullptr;
    CuResult (*cuMemcpyHtoD)(CuDevicePtr, const void*, size_t) = nullptr;
    CuResult (*cuMemcpyDtoH)(void*, CuDevicePtr, size_t) = nullptr;
    CuResult (*cuMemsetD8)(CuDevicePtr, unsigned char, size_t) = nullptr;
    // Pinned host memory mapped into the device (kernel fault records, cuda_mapped_memory.h).
    CuResult (*cuMemHostAlloc)(void**, size_t, unsigned) = nullptr;
    CuResult (*cuMemHostGetDevicePointer)(CuDevicePtr*, void*, unsigned) = nullptr;
    // Optional: pins memory the process already has (cheaper on first use than cuMemHostAlloc).
    CuResult (*cuMemHostRegister)(void*, size_t, unsigned) = nullptr;
    /// Optional, resolved with cuMemHostRegister: unpins what it pinned.
    CuResult (*cuMemHostUnregister)(void*) = nullptr;

    int device_count = 0;  ///< devices visible to this process (after CUDA_VISIBLE_DEVICES)
};

/// The driver, loaded and initialized (cuInit) on first use; thread-safe. Throws BackendError
/// when it is unusable: "CUDA driver not found: <loader message>" when libcuda cannot be loaded,
/// "CUDA driver initialization failed: ..." when cuInit fails. The outcome is decided once per
/// process (a driver does not appear later), so failing calls are cheap.
const CudaDriver& cuda_driver();

/// Whether the driver loaded, initialized and sees at least one device. Never throws.
bool cuda_available() noexcept;

/// Devices visible to this process; 0 when the driver is absent or unusable. Never throws.
int cuda_device_count() noexcept;

/// One line for diagnostics: the driver's path, version and device count, or why it is unusable.
std::string cuda_driver_status();

/// The driver's CUDA version (13000 for 13.0) read WITHOUT cuInit — callers that only want to
/// know which toolkit the driver accepts (NVRTC selection) must not initialize CUDA, which would
/// break fork()ed workers that use it later. 0 when there is no driver. Never throws.
int cuda_driver_version_without_init() noexcept;

/// Compute capability as 10 * major + minor (90 for an H100/H200). Throws BackendError for an
/// index outside [0, cuda_device_count()) or when the driver is unusable.
int cuda_device_arch(int device);

/// The device's name ("NVIDIA H200"), for messages and diagnostics.
std::string cuda_device_name(int device);

/// A device attribute (kCuDeviceAttr*). Not cached: call it off the hot path. Throws
/// BackendError.
int cuda_device_attribute(int device, int attribute);

/// The device's primary context, retained on first use and never released: it lives as long as
/// the process, like torch's use of it, so nothing we cache can outlive it. Throws BackendError.
CuContext cuda_primary_context(int device);

/// How cuda_enter_context found the calling thread's context.
enum class ContextEntry {
    kCurrent,  ///< `context` was already current: nothing was done
    kBound,    ///< the thread had none; `context` is bound for good (no pop)
    kPushed,   ///< another was current; `context` was pushed and the caller must pop it
};

/// Makes `context` current on the calling thread, for a launch or any other driver work.
///
/// A thread with no context at all gets `context` bound for good when `bind_device` is 0 and
/// `context` is that device's primary context: the CUDA runtime binds the same one at such a
/// thread's first runtime call. Torch's autograd thread for cuda:0 is such a thread (c10 skips
/// cudaSetDevice(0), already the thread's device); when every node of a backward is ours it never
/// makes a runtime call, so binding spares every later launch there a push and a pop. Other
/// devices' threads have their context bound by cudaSetDevice, so no thread's current device
/// changes. Pass -1 to never bind. Throws BackendError when the driver refuses.
ContextEntry cuda_enter_context(const CudaDriver& d, CuContext context, int bind_device);

/// Pops what cuda_enter_context pushed (call it only for kPushed); returns the driver's result.
CuResult cuda_leave_context(const CudaDriver& d) noexcept;

/// Makes `context` current on this thread for the guard's lifetime, and restores the previous
/// one after. Costs one cuCtxGetCurrent when it is already current (the usual case under torch,
/// which sets the device before calling us). Never binds: off the launch path the push is cheap
/// and leaves every thread as it found it. Throws BackendError when the driver refuses.
class CudaContextGuard {
public:
    explicit CudaContextGuard(CuContext context);
    ~CudaContextGuard();
    CudaContextGuard(const CudaContextGuard&) = delete;
    CudaContextGuard& operator=(const CudaContextGuard&) = delete;

private:
    bool pushed_ = false;
};

/// "CUDA_ERROR_X (driver's description)" for a result code; works while the driver is unusable.
std::string cuda_error_text(CuResult result);

/// Throws BackendError("<what> failed: CUDA_ERROR_X (description)"). Out of line, so that
/// check_cuda costs one compare on success.
[[noreturn]] void throw_cuda_error(CuResult result, const char* what);

inline void check_cuda(CuResult result, const char* what) {
    if (result != kCudaSuccess) [[unlikely]]
        throw_cuda_error(result, what);
}

}  // namespace sg::runtime
