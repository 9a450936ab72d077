// src/runtime/backend.h — one interface over the CPU and CUDA backends: load a generated kernel
// (through the kernel cache), launch its entries over a parameter block, zero-fill device memory,
// the device fault records, and graph-capture state. backend(DeviceType) is the one place the
// choice of backend is made; the call layer above only talks to a Backend and a LoadedKernel.
//
// In: a generated kernel's source and entry names (codegen::GeneratedKernel), a packed parameter
// block (codegen::CallHeader first), a stream. Out: a LoadedKernel (opaque above runtime), the
// kernel's work run (CPU) or enqueued (CUDA), and the fault a launch found, for the caller to
// raise as a user error (the call layer names the function from the launch site).
//
// The backends: cpu_backend.cpp (host compiler and dlopen, the thread pool; launches are
// synchronous and their fault record lives on the launching stack) and cuda_backend.cpp (NVRTC
// and the driver through dlopen; launches are enqueued on the caller's stream, their faults land
// in one mapped host record per device and are found at the next launch there).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/device_type.h"
#include "codegen/fault_record.h"
#include "runtime/cpu_module.h"  // CpuKernelFn, BackendError

namespace sg::runtime {

struct CudaFunction;

/// What to load: a generated kernel and its entry points (codegen::GeneratedKernel names them).
struct KernelSpec {
    const std::string* source = nullptr;  ///< the translation unit; read during load() only
    std::string entry;                    ///< the main entry point
    std::string final_entry;              ///< ordered gradient tables' second entry; empty: none
    std::string fixed_entry;              ///< fixed-point tables' last entry; empty: none
    /// CPU: the scalar sums of the reduced gradients (GeneratedKernel::reduced_slots); with it,
    /// final_entry adds the chunks' sums to the gradients after the main entry's chunks ran.
    int reduced_slots = 0;
    int device = 0;                       ///< the device index (CUDA); the CPU has one device
    bool debug = false;                   ///< CUDA: line info (the CPU backend ignores it)
    bool fast_math = false;               ///< CUDA: approximate float division (CPU: ignored)
};

/// A generated kernel loaded by one backend for one device. It keeps its module (and so the
/// kernel cache entry) alive; only its backend looks inside.
class LoadedKernel {
public:
    virtual ~LoadedKernel() = default;
    DeviceType device_type() const noexcept { return device_type_; }
    int device_index() const noexcept { return device_index_; }  ///< -1 on the CPU
    /// Threads per block of the main entry and multiprocessors of its device: the sizes of the
    /// bounded grids and block sums of deterministic kernels. 1 and 1 on the CPU.
    int block_size() const noexcept { return block_size_; }
    int multiprocessors() const noexcept { return multiprocessors_; }
    /// The key of its compiled module in the backend's cache: Backend::load_cached() loads the
    /// same module again from it, in another process too, without the source.
    const std::string& module_key() const noexcept { return module_key_; }

protected:
    LoadedKernel(DeviceType type, int device_index, int block_size, int multiprocessors, std::string module_key)
        : device_type_(type), device_index_(device_index), block_size_(block_size),
          multiprocessors_(multiprocessors), module_key_(std::move(module_key)) {}

private:
    DeviceType device_type_;
    int device_index_;
    int block_size_;
    int multiprocessors_;
    std::string module_key_;
};

/// One launch of a loaded kernel over its packed parameter block: the call elements, the
/// scratch pointer and the parameters are in the block; the backend writes the launch site and
/// its fault record into the header. With `scan`, `final_extent` and `fixed_extent` the launch
/// runs, in this order: the scan variant, the main entry, the final entry, the fixed entry.
struct LaunchRequest {
    const LoadedKernel* kernel = nullptr;
    uint8_t* block = nullptr;
    size_t block_size = 0;
    int64_t total = 0;                    ///< call elements (CallHeader::total), > 0
    void* stream = nullptr;               ///< a CUstream of the kernel's device (CPU: ignored)
    int32_t site = -1;                    ///< CallHeader::site of the kernel
    int64_t elements_per_thread = 1;      ///< GeneratedKernel::elements_per_thread
    /// Fixed-point tables: the scan variant (same layout), launched first; null otherwise.
    const LoadedKernel* scan = nullptr;
    int32_t scan_site = -1;
    int64_t scan_elements_per_thread = 1;
    /// Ordered gradient tables: the main entry's bounded grid in blocks; 0 when unbounded.
    int64_t grid_blocks = 0;
    /// Scalar elements of the largest ordered table (the final entry runs a block per 32).
    int64_t final_extent = 0;
    /// Scalar entries of the largest fixed-point table (the fixed entry runs a thread per entry).
    int64_t fixed_extent = 0;
    /// CPU: run the threads in order on the calling thread (deterministic mode). CUDA: ignored.
    bool sequential = false;
    /// Debug mode: wait for the launch and report its own fault (not inside a graph capture).
    bool wait = false;
    /// A cooperative kernel ([CUDAKernel]): its block and grid shape (x, y, z); `total` is the
    /// number of blocks. Zeros: an ordinary call kernel.
    int64_t coop_block[3] = {0, 0, 0};
    int64_t coop_grid[3] = {0, 0, 0};
};

/// Where a fault a launch reports comes from (LaunchResult::origin).
enum class FaultOrigin : uint8_t {
    None,         ///< no fault
    Synchronous,  ///< this launch's, found when it returned (the CPU)
    Waited,       ///< this launch's, found after waiting for it (LaunchRequest::wait)
    Earlier,      ///< an earlier launch's on the device, found before this one ran (it did not)
};

/// What a launch found. The record is a copy: the device's own record is cleared.
struct LaunchResult {
    FaultOrigin origin = FaultOrigin::None;
    int device = -1;                ///< the device index of an Earlier or Waited fault
    codegen::FaultRecord record{};  ///< valid unless origin is None
};

/// A backend: one kind of device. The two instances live for the process.
class Backend {
public:
    virtual ~Backend() = default;
    DeviceType device_type() const noexcept { return device_type_; }
    /// Whether kernels of this backend may need scratch memory (deterministic sums in two passes,
    /// ordered and fixed-point tables: CUDA). The CPU's never do.
    bool needs_scratch() const noexcept { return needs_scratch_; }

    /// Compiles (or takes from the kernel cache) and loads `spec`'s kernel for its device.
    /// Throws BackendError when the compiler or the device refuses.
    virtual std::shared_ptr<const LoadedKernel> load(const KernelSpec& spec) const = 0;
    /// Loads the module a kernel was compiled into before (LoadedKernel::module_key()) from the
    /// memory or the disk cache, with `spec`'s entries (its source is not read): nullptr when the
    /// cache no longer has it (or it does not load here), never a compile. Throws BackendError
    /// when the device refuses a module it has.
    virtual std::shared_ptr<const LoadedKernel> load_cached(const KernelSpec& spec,
                                                            const std::string& module_key) const = 0;
    /// What identifies the compiler load() would run for `device` and its options (`debug`,
    /// `fast_math` of a KernelSpec), cheaply: no compiler is started or opened (CPU: the
    /// compiler command, the size, time and inode of its executables, the flags; CUDA: the
    /// device's architecture, the driver's version, the NVRTC libraries the search would try,
    /// with their sizes and times, the options). A kernel cached under a key that holds it is
    /// rebuilt when the compiler changes. Memoized per process.
    virtual std::string compiler_fingerprint(int device, bool debug, bool fast_math) const = 0;
    /// Called when a compile will follow (a kernel index miss), before the front end and codegen
    /// run: starts opening the compiler load() will use, in the background, so that the two
    /// overlap (CUDA: finding and opening NVRTC). Never throws: load() reports a compiler that
    /// cannot be opened. The CPU's compiler is a process started per compile: nothing to do.
    virtual void prepare_compiler() const {}
    /// Called once on a thread of the call layer's own (a background compile, call/kernel_upgrade.h)
    /// before it loads kernels: CUDA puts the thread in relaxed stream capture mode, so that a
    /// module load there neither fails nor breaks a graph the user captures meanwhile on another
    /// thread. Never throws.
    virtual void enter_background_thread() const {}
    /// Runs (CPU: the threads on the pool, or in order) or enqueues (CUDA: on the stream) the
    /// request's entries. Throws BackendError when the driver refuses a launch.
    virtual LaunchResult launch(const LaunchRequest& request) const = 0;
    /// Zero-fills `bytes` at `data` on `kernel`'s device: a memset (CPU) or an asynchronous
    /// memset on `stream` in the kernel's context (CUDA).
    virtual void zero(const LoadedKernel& kernel, void* data, size_t bytes, void* stream) const = 0;
    /// Whether `stream` of `device` is capturing a graph; the CPU never is.
    virtual bool capturing(int device, void* stream) const = 0;
    /// Takes (copies and clears) a fault recorded by an earlier launch on any device of this
    /// backend, without waiting; false when there is none (the CPU's are raised at their launch).
    virtual bool take_fault(codegen::FaultRecord& record, int& device) const = 0;
    /// Waits for all work on every device this backend launched on (nothing on the CPU).
    virtual void synchronize() const = 0;
    /// The device's name in messages: "cuda:0", "cpu".
    virtual std::string device_name(int device) const = 0;

protected:
    Backend(DeviceType type, bool needs_scratch) : device_type_(type), needs_scratch_(needs_scratch) {}

private:
    DeviceType device_type_;
    bool needs_scratch_;
};

/// The backend of `type`. DeviceType::Other has none of its own: it gets the CPU backend (the
/// binder refuses such tensors before anything is compiled).
const Backend& backend(DeviceType type) noexcept;

/// Every backend, CPU first (loops over devices: synchronize, fault checks).
std::span<const Backend* const> backends() noexcept;

/// The entry points inside a loaded kernel, for tests that launch a kernel by hand: the CPU
/// entry of a CPU backend's kernel, the main CUDA function of a CUDA backend's kernel.
CpuKernelFn cpu_kernel_entry(const LoadedKernel& kernel);
const CudaFunction& cuda_kernel_entry(const LoadedKernel& kernel);

}  // namespace sg::runtime
