// src/runtime/cuda_launch.cpp — the CUDA launch path (see cuda_launch.h). The common case is
// inline and straight; argument errors and the context switch live in out-of-line functions.
#include "runtime/cuda_launch.h"

#include "runtime/cpu_module.h"  // BackendError
#include "runtime/module_cache.h"  // load stats

namespace sg::runtime {
namespace {

[[noreturn, gnu::noinline, gnu::cold]] void throw_invalid_launch(const CudaFunction& function,
                                                                 size_t params_size,
                                                                 int64_t total_threads,
                                                                 const void* params) {
    std::string reason;
    if (!function.handle || !function.driver)
        reason = "the function was never loaded";
    else if (total_threads < 0)
        reason = "negative thread count " + std::to_string(total_threads);
    else if (!params)
        reason = "no parameter block";
    else if (function.param_size != 0 && params_size != function.param_size)
        reason = "parameter block of " + std::to_string(params_size) +
                 " bytes, but the kernel's parameter is " + std::to_string(function.param_size) +
                 " bytes (generated code and call layer disagree on the layout)";
    else
        reason = std::to_string(total_threads) + " threads need more than the device's " +
                 std::to_string(function.max_blocks) + " blocks of " +
                 std::to_string(function.block_size);
    throw BackendError("cannot launch CUDA kernel '" + function.name + "' on device " +
                       std::to_string(function.device) + ": " + reason);
}

[[noreturn, gnu::noinline, gnu::cold]] void throw_launch_error(const CudaFunction& function,
                                                               CuResult result,
                                                               int64_t blocks) {
    throw BackendError("cuLaunchKernel of '" + function.name + "' on device " +
                       std::to_string(function.device) + " (" + std::to_string(blocks) +
                       " blocks of " + std::to_string(function.block_size) +
                       ") failed: " + cuda_error_text(result));
}

CuResult launch_raw(const CudaFunction& function, void* params, int64_t blocks, void* stream) {
    // The kernel has one parameter, the Params struct: kernelParams holds one pointer to it and
    // the driver copies sizeof(Params) bytes from there (the size is known from the kernel).
    void* arguments[1] = {params};
    return function.driver->cuLaunchKernel(function.handle, unsigned(blocks), 1, 1,
                                           unsigned(function.block_size), 1, 1, 0,
                                           static_cast<CuStream>(stream), arguments, nullptr);
}

std::atomic<uint64_t> g_context_binds{0};
std::atomic<uint64_t> g_context_pushes{0};

/// Makes `function`'s context current on this thread for a launch (cuda_enter_context: a thread
/// with none gets device 0's primary context bound); true when it was pushed and the caller must
/// pop it after. Counts binds and pushes for cuda_context_switches().
bool enter_context(const CudaFunction& function) {
    switch (cuda_enter_context(*function.driver, function.context, function.device)) {
        case ContextEntry::kCurrent:
            return false;
        case ContextEntry::kBound:
            g_context_binds.fetch_add(1, std::memory_order_relaxed);
            return false;
        case ContextEntry::kPushed:
            break;
    }
    g_context_pushes.fetch_add(1, std::memory_order_relaxed);
    return true;
}

/// Pops what enter_context pushed; a failed pop is an error only when the work itself succeeded.
void leave_context(const CudaFunction& function, CuResult work) {
    const CuResult pop = cuda_leave_context(*function.driver);
    if (work == kCudaSuccess) check_cuda(pop, "cuCtxPopCurrent");
}

}  // namespace

void cuda_launch_shaped(const CudaFunction& function, const void* params, size_t params_size, const int64_t grid[3],
                        const int64_t block[3], void* stream) {
    if (!function.driver || !function.handle || !params ||
        (function.param_size != 0 && params_size != function.param_size)) [[unlikely]]
        throw_invalid_launch(function, params_size, 0, params);
    const CudaDriver& d = *function.driver;
    const bool pushed = enter_context(function);
    void* arguments[1] = {const_cast<void*>(params)};
    const CuResult result =
        d.cuLaunchKernel(function.handle, unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]), unsigned(block[0]),
                         unsigned(block[1]), unsigned(block[2]), 0, static_cast<CuStream>(stream), arguments, nullptr);
    if (pushed) leave_context(function, result);
    if (result != kCudaSuccess) [[unlikely]]
        throw BackendError("cuLaunchKernel of '" + function.name + "' on device " + std::to_string(function.device) +
                           " (grid " + std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" +
                           std::to_string(grid[2]) + ", block " + std::to_string(block[0]) + "x" +
                           std::to_string(block[1]) + "x" + std::to_string(block[2]) + ") failed: " +
                           cuda_error_text(result));
}

void cuda_zero_async(const CudaFunction& function, void* data, size_t bytes, void* stream) {
    if (bytes == 0) return;
    if (!function.driver || !function.context) throw_invalid_launch(function, 0, 0, nullptr);
    const CudaDriver& d = *function.driver;
    const auto address = reinterpret_cast<CuDevicePtr>(data);
    const auto cu_stream = static_cast<CuStream>(stream);
    auto zero = [&] {
        return address % 4 == 0 && bytes % 4 == 0 ? d.cuMemsetD32Async(address, 0u, bytes / 4, cu_stream)
                                                  : d.cuMemsetD8Async(address, 0, bytes, cu_stream);
    };
    const bool pushed = enter_context(function);
    const CuResult result = zero();
    if (pushed) leave_context(function, result);
    check_cuda(result, "cuMemsetAsync of a gradient buffer");
}

void cuda_launch(const CudaFunction& function, const void* params, size_t params_size,
                 int64_t total_threads, void* stream) {
    const int64_t block = function.block_size;
    // Written so that no intermediate overflows: total_threads < 2^63, block <= 1024.
    const int64_t blocks = total_threads / block + (total_threads % block != 0);
    const bool valid = function.driver && function.handle && total_threads >= 0 && params &&
                       (function.param_size == 0 || params_size == function.param_size) &&
                       blocks <= function.max_blocks;
    if (!valid) [[unlikely]]
        throw_invalid_launch(function, params_size, total_threads, params);
    if (blocks == 0) return;  // an empty call: nothing to run, and a 0-block launch is an error

    const bool pushed = enter_context(function);
    void* block_pointer = const_cast<void*>(params);  // the driver only reads it
    const bool first = !function.launched.load(std::memory_order_relaxed);
    const auto start = first ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const CuResult result = launch_raw(function, block_pointer, blocks, stream);
    if (pushed) leave_context(function, result);
    if (first) [[unlikely]] {
        function.launched.store(true, std::memory_order_relaxed);
        add_load_stats(LoadStats{.first_launch_ms = ms_since(start)});
    }
    if (result != kCudaSuccess) [[unlikely]]
        throw_launch_error(function, result, blocks);
}

CudaContextSwitches cuda_context_switches() {
    return {g_context_binds.load(std::memory_order_relaxed), g_context_pushes.load(std::memory_order_relaxed)};
}

}  // namespace sg::runtime
