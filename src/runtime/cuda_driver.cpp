// src/runtime/cuda_driver.cpp — loading libcuda with dlopen, resolving its entry points at a
// pinned API version, and devices' primary contexts (see cuda_driver.h).
#include "runtime/cuda_driver.h"

#include "runtime/cpu_module.h"  // BackendError
#include "runtime/module_cache.h"  // load stats

#include <algorithm>
#include <atomic>
#include <dlfcn.h>
#include <memory>
#include <mutex>

namespace sg::runtime {
namespace {

// The soname, not "libcuda.so": only the driver package installs the versioned name, while a
// toolkit's stub "libcuda.so" (which fails every call) may sit on the loader path.
constexpr const char* kDriverLibrary = "libcuda.so.1";

// Every entry point is requested as it was in CUDA 12.0: the prototypes in CudaDriver are the
// 12.0 ones, and a newer driver keeps serving those versions under this request even where its
// own headers moved on (the reason cuGetProcAddress exists).
constexpr int kPinnedApiVersion = 12000;
// Optional entry points newer than the pin are requested at the version that introduced them.
constexpr int kFuncGetParamInfoVersion = 12040;
// CU_GET_PROC_ADDRESS_LEGACY_STREAM: a null stream is the legacy default stream, as for torch.
constexpr unsigned long long kProcAddressLegacyStream = 1;

using GetProcAddressV2 = CuResult (*)(const char*, void**, int, unsigned long long, int*);
using GetProcAddressV1 = CuResult (*)(const char*, void**, int, unsigned long long);

// Finds entry points: cuGetProcAddress (v2 from CUDA 12.0, v1 from 11.3) when the driver has it,
// else the versioned export names that older drivers' headers mapped to.
class SymbolResolver {
public:
    SymbolResolver(void* handle, int driver_version) : handle_(handle), version_(driver_version) {
        get_v2_ = reinterpret_cast<GetProcAddressV2>(::dlsym(handle, "cuGetProcAddress_v2"));
        if (!get_v2_)
            get_v1_ = reinterpret_cast<GetProcAddressV1>(::dlsym(handle, "cuGetProcAddress"));
    }

    // `export_name` is the symbol with the same ABI as `name` at `version` (e.g. cuMemAlloc_v2).
    template <class Fn>
    bool resolve(Fn& slot, const char* name, const char* export_name,
                 int version = kPinnedApiVersion) {
        slot = reinterpret_cast<Fn>(find(name, export_name, version));
        return slot != nullptr;
    }

private:
    void* find(const char* name, const char* export_name, int version) const {
        if (version > kPinnedApiVersion && version_ < version) return nullptr;
        // An older driver is asked for its own version: what it serves then is what it has.
        const int request = std::min(version, std::max(version_, 1));
        void* address = nullptr;
        if (get_v2_) {
            int status = 0;
            if (get_v2_(name, &address, request, kProcAddressLegacyStream, &status) ==
                    kCudaSuccess && address)
                return address;
        } else if (get_v1_) {
            if (get_v1_(name, &address, request, kProcAddressLegacyStream) == kCudaSuccess &&
                address)
                return address;
        }
        // A symbol newer than the pin has no fixed export name to fall back to safely.
        if (version > kPinnedApiVersion) return nullptr;
        return ::dlsym(handle_, export_name);
    }

    void* handle_;
    int version_;
    GetProcAddressV2 get_v2_ = nullptr;
    GetProcAddressV1 get_v1_ = nullptr;
};

// The process-wide driver state. Created once, never destroyed: modules unloaded from static
// destructors (and torch, which shares the contexts) may still need the driver at exit.
struct DriverState {
    CudaDriver driver;
    bool symbols_loaded = false;  // error names usable, even if cuInit failed
    std::string error;            // empty when the driver is usable
    std::mutex context_mutex;
    std::unique_ptr<std::atomic<CuContext>[]> contexts;  // primary contexts, by device index
};

// cuda_error_text's body, usable while the state is being built (calling cuda_error_text there
// would re-enter the state's initialization).
std::string error_text(const CudaDriver* driver, CuResult result) {
    const char* name = nullptr;
    const char* description = nullptr;
    if (driver) {
        if (driver->cuGetErrorName(result, &name) != kCudaSuccess) name = nullptr;
        if (driver->cuGetErrorString(result, &description) != kCudaSuccess) description = nullptr;
    }
    std::string text = name ? name : "CUDA error " + std::to_string(result);
    if (description) text += std::string(" (") + description + ")";
    return text;
}

std::string dl_error_message() {
    const char* message = ::dlerror();
    return message ? message : "unknown dynamic loader error";
}

// Resolves every entry point; returns the name of a missing required one, or nullptr.
const char* resolve_entry_points(SymbolResolver& resolver, CudaDriver& d) {
#define SG_REQUIRE(field, export_name)                    \
    if (!resolver.resolve(d.field, #field, export_name)) \
        return #field;
    SG_REQUIRE(cuGetErrorName, "cuGetErrorName")
    SG_REQUIRE(cuGetErrorString, "cuGetErrorString")
    SG_REQUIRE(cuInit, "cuInit")
    SG_REQUIRE(cuDeviceGetCount, "cuDeviceGetCount")
    SG_REQUIRE(cuDeviceGet, "cuDeviceGet")
    SG_REQUIRE(cuDeviceGetAttribute, "cuDeviceGetAttribute")
    SG_REQUIRE(cuDeviceGetName, "cuDeviceGetName")
    SG_REQUIRE(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
    SG_REQUIRE(cuCtxGetCurrent, "cuCtxGetCurrent")
    SG_REQUIRE(cuCtxSetCurrent, "cuCtxSetCurrent")
    SG_REQUIRE(cuCtxPushCurrent, "cuCtxPushCurrent_v2")
    SG_REQUIRE(cuCtxPopCurrent, "cuCtxPopCurrent_v2")
    SG_REQUIRE(cuCtxSynchronize, "cuCtxSynchronize")
    SG_REQUIRE(cuModuleLoadData, "cuModuleLoadData")
    SG_REQUIRE(cuModuleLoadDataEx, "cuModuleLoadDataEx")
    SG_REQUIRE(cuModuleGetFunction, "cuModuleGetFunction")
    SG_REQUIRE(cuModuleUnload, "cuModuleUnload")
    SG_REQUIRE(cuFuncGetAttribute, "cuFuncGetAttribute")
    SG_REQUIRE(cuOccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize")
    SG_REQUIRE(cuOccupancyMaxActiveBlocksPerMultiprocessor,
               "cuOccupancyMaxActiveBlocksPerMultiprocessor")
    SG_REQUIRE(cuLaunchKernel, "cuLaunchKernel")
    SG_REQUIRE(cuStreamSynchronize, "cuStreamSynchronize")
    SG_REQUIRE(cuStreamIsCapturing, "cuStreamIsCapturing")
    SG_REQUIRE(cuMemsetD8Async, "cuMemsetD8Async")
    SG_REQUIRE(cuMemsetD32Async, "cuMemsetD32Async")
    SG_REQUIRE(cuMemAlloc, "cuMemAlloc_v2")
    SG_REQUIRE(cuMemFree, "cuMemFree_v2")
    SG_REQUIRE(cuMemcpyHtoD, "cuMemcpyHtoD_v2")
    SG_REQUIRE(cuMemcpyDtoH, "cuMemcpyDtoH_v2")
    SG_REQUIRE(cuMemsetD8, "cuMemsetD8_v2")
    SG_REQUIRE(cuMemHostAlloc, "cuMemHostAlloc")
    SG_REQUIRE(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2")
#undef SG_REQUIRE
    resolver.resolve(d.cuFuncGetParamInfo, "cuFuncGetParamInfo", "", kFuncGetParamInfoVersion);
    resolver.resolve(d.cuMemHostRegister, "cuMemHostRegister", "cuMemHostRegister_v2");
    resolver.resolve(d.cuMemHostUnregister, "cuMemHostUnregister", "cuMemHostUnregister");
    // Registering is only used when the pages can be unpinned again.
    if (d.cuMemHostUnregister == nullptr) d.cuMemHostRegister = nullptr;
    resolver.resolve(d.cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode",
                     "cuThreadExchangeStreamCaptureMode");
    return nullptr;
}

DriverState* load_driver() {
    auto* state = new DriverState;
    CudaDriver& d = state->driver;
    void* handle = ::dlopen(kDriverLibrary, RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
        state->error = "CUDA driver not found: " + dl_error_message();
        return state;
    }
    d.library_path = kDriverLibrary;
    // cuDriverGetVersion is exported unversioned by every driver and works before cuInit.
    d.cuDriverGetVersion =
        reinterpret_cast<decltype(d.cuDriverGetVersion)>(::dlsym(handle, "cuDriverGetVersion"));
    if (!d.cuDriverGetVersion || d.cuDriverGetVersion(&d.version) != kCudaSuccess) {
        state->error = std::string("CUDA driver not usable: ") + kDriverLibrary +
                       " has no working cuDriverGetVersion (a stub library?)";
        return state;
    }
    SymbolResolver resolver(handle, d.version);
    if (const char* missing = resolve_entry_points(resolver, d)) {
        state->error = std::string("CUDA driver too old: ") + kDriverLibrary + " (CUDA " +
                       std::to_string(d.version / 1000) + "." +
                       std::to_string(d.version % 1000 / 10) + ") lacks " + missing;
        return state;
    }
    state->symbols_loaded = true;
    if (const CuResult result = d.cuInit(0); result != kCudaSuccess) {
        state->error = "CUDA driver initialization failed: cuInit: " + error_text(&d, result);
        return state;
    }
    if (const CuResult result = d.cuDeviceGetCount(&d.device_count); result != kCudaSuccess) {
        state->error = "CUDA driver initialization failed: cuDeviceGetCount: " +
                       error_text(&d, result);
        d.device_count = 0;
        return state;
    }
    state->contexts = std::make_unique<std::atomic<CuContext>[]>(size_t(d.device_count));
    return state;
}

DriverState& driver_state() {
    static DriverState* const state = load_driver();  // thread-safe, once
    return *state;
}

[[noreturn, gnu::noinline]] void throw_unusable(const std::string& error) {
    throw BackendError(error);
}

// The state of a usable driver, or throws why it is not.
DriverState& usable_state() {
    DriverState& state = driver_state();
    if (!state.error.empty()) [[unlikely]]
        throw_unusable(state.error);
    return state;
}

[[noreturn, gnu::noinline]] void throw_bad_device(int device, int count) {
    throw BackendError("CUDA device index " + std::to_string(device) + " is out of range (" +
                       std::to_string(count) + " device" + (count == 1 ? "" : "s") +
                       " visible)");
}

CuDevice device_handle(DriverState& state, int device) {
    if (device < 0 || device >= state.driver.device_count) [[unlikely]]
        throw_bad_device(device, state.driver.device_count);
    CuDevice handle = 0;
    check_cuda(state.driver.cuDeviceGet(&handle, device), "cuDeviceGet");
    return handle;
}

}  // namespace

const CudaDriver& cuda_driver() { return usable_state().driver; }

bool cuda_available() noexcept { return cuda_device_count() > 0; }

int cuda_device_count() noexcept {
    const DriverState& state = driver_state();
    return state.error.empty() ? state.driver.device_count : 0;
}

std::string cuda_driver_status() {
    const DriverState& state = driver_state();
    if (!state.error.empty()) return state.error;
    const CudaDriver& d = state.driver;
    return d.library_path + " (CUDA " + std::to_string(d.version / 1000) + "." +
           std::to_string(d.version % 1000 / 10) + "), " + std::to_string(d.device_count) +
           " device" + (d.device_count == 1 ? "" : "s");
}

int cuda_driver_version_without_init() noexcept {
    // RTLD_LAZY, here and in load_driver: torch has usually opened it already, and asking for
    // RTLD_NOW would bind every one of its symbols at this point; we call a few dozen.
    // Opening the library is harmless (torch does it at import); only cuInit is avoided. The
    // handle is kept: the library stays loaded for the process either way.
    void* handle = ::dlopen(kDriverLibrary, RTLD_LAZY | RTLD_LOCAL);
    if (!handle) return 0;
    auto get_version = reinterpret_cast<CuResult (*)(int*)>(::dlsym(handle, "cuDriverGetVersion"));
    int version = 0;
    if (!get_version || get_version(&version) != kCudaSuccess) return 0;
    return version;
}

int cuda_device_attribute(int device, int attribute) {
    DriverState& state = usable_state();
    const CuDevice handle = device_handle(state, device);
    int value = 0;
    check_cuda(state.driver.cuDeviceGetAttribute(&value, attribute, handle),
               "cuDeviceGetAttribute");
    return value;
}

int cuda_device_arch(int device) {
    return 10 * cuda_device_attribute(device, kCuDeviceAttrComputeCapabilityMajor) +
           cuda_device_attribute(device, kCuDeviceAttrComputeCapabilityMinor);
}

std::string cuda_device_name(int device) {
    DriverState& state = usable_state();
    const CuDevice handle = device_handle(state, device);
    char name[256] = {};
    check_cuda(state.driver.cuDeviceGetName(name, int(sizeof name) - 1, handle),
               "cuDeviceGetName");
    return name;
}

CuContext cuda_primary_context(int device) {
    DriverState& state = usable_state();
    if (device < 0 || device >= state.driver.device_count) [[unlikely]]
        throw_bad_device(device, state.driver.device_count);
    std::atomic<CuContext>& slot = state.contexts[size_t(device)];
    if (CuContext context = slot.load(std::memory_order_acquire)) return context;
    std::lock_guard<std::mutex> lock(state.context_mutex);
    if (CuContext context = slot.load(std::memory_order_relaxed)) return context;
    CuContext context = nullptr;
    // Retaining activates the primary context if torch has not yet; the reference is never
    // released, so the context (and every module we load into it) stays valid for the process.
    const auto start = std::chrono::steady_clock::now();
    check_cuda(state.driver.cuDevicePrimaryCtxRetain(&context, device_handle(state, device)),
               "cuDevicePrimaryCtxRetain");
    add_load_stats(LoadStats{.context_ms = ms_since(start)});
    slot.store(context, std::memory_order_release);
    return context;
}

ContextEntry cuda_enter_context(const CudaDriver& d, CuContext context, int bind_device) {
    CuContext current = nullptr;
    if (const CuResult result = d.cuCtxGetCurrent(&current); result != kCudaSuccess) [[unlikely]]
        throw_cuda_error(result, "cuCtxGetCurrent");
    if (current == context) [[likely]]
        return ContextEntry::kCurrent;
    if (current == nullptr && bind_device == 0) {
        check_cuda(d.cuCtxSetCurrent(context), "cuCtxSetCurrent");
        return ContextEntry::kBound;
    }
    check_cuda(d.cuCtxPushCurrent(context), "cuCtxPushCurrent");
    return ContextEntry::kPushed;
}

CuResult cuda_leave_context(const CudaDriver& d) noexcept {
    CuContext popped = nullptr;
    return d.cuCtxPopCurrent(&popped);
}

CudaContextGuard::CudaContextGuard(CuContext context) {
    pushed_ = cuda_enter_context(cuda_driver(), context, -1) == ContextEntry::kPushed;
}

CudaContextGuard::~CudaContextGuard() {
    // Nothing useful can be done about a failure in a destructor; the driver only fails here
    // when it is already shutting down.
    if (pushed_) (void)cuda_leave_context(driver_state().driver);
}

std::string cuda_error_text(CuResult result) {
    const DriverState& state = driver_state();
    return error_text(state.symbols_loaded ? &state.driver : nullptr, result);
}

void throw_cuda_error(CuResult result, const char* what) {
    throw BackendError(std::string(what) + " failed: " + cuda_error_text(result));
}

}  // namespace sg::runtime
