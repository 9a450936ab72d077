// src/runtime/cuda_backend.cpp — the CUDA backend (see backend.h): generated CUDA C++ compiled by
// NVRTC (cuda_module.h, with its kernel cache) and loaded into the device's primary context, its
// entries launched on the caller's stream (cuda_launch.h), zero fills as asynchronous memsets,
// one fault record per device in mapped host memory, and stream capture state.
//
// Fault records: a device's record is made with its first kernel, not at its first launch (a
// launch may be the first one inside a graph capture, which cannot allocate pinned memory), and
// never freed. A launch first takes a fault an earlier kernel recorded there (one host load when
// there is none) and then points its kernels' headers at the record.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <pthread.h>

#include "codegen/call_header.h"
#include "runtime/backend.h"
#include "runtime/cuda_capture.h"
#include "runtime/cuda_mapped_memory.h"
#include "runtime/cuda_module.h"
#include "runtime/cuda_nvrtc.h"  // nvrtc_prefetch
#include "runtime/module_cache.h"  // load stats

namespace sg::runtime {
namespace {

using codegen::FaultRecord;

class CudaKernel final : public LoadedKernel {
public:
    CudaKernel(std::shared_ptr<CudaModule> module, const CudaFunction& main, const CudaFunction* final_entry,
               const CudaFunction* fixed_entry)
        : LoadedKernel(DeviceType::CUDA, main.device, main.block_size, main.multiprocessors, module->hash()),
          module_(std::move(module)), main_(main), final_(final_entry), fixed_(fixed_entry) {}

    const CudaFunction& main() const noexcept { return main_; }
    /// The ordered tables' second entry, launched after the main one; null without them.
    const CudaFunction* final_entry() const noexcept { return final_; }
    /// The fixed-point tables' entry, launched last; null without them.
    const CudaFunction* fixed_entry() const noexcept { return fixed_; }

private:
    std::shared_ptr<CudaModule> module_;  // owns the functions
    const CudaFunction& main_;
    const CudaFunction* final_;
    const CudaFunction* fixed_;
};

// ---------------------------------------------------------------- fault records

struct DeviceFaultRecord {
    FaultRecord* host = nullptr;    // what the host reads
    FaultRecord* device = nullptr;  // the address kernels write
};

constexpr int kMaxDevices = 64;
struct DeviceRecords {
    std::mutex mutex;
    std::array<std::atomic<const DeviceFaultRecord*>, kMaxDevices> records{};
};
DeviceRecords& device_records() {
    static DeviceRecords* records = new DeviceRecords();  // never destroyed: used until exit
    return *records;
}

/// A fork()ed child does not have the records' pinned pages (they are not inherited:
/// cuda_mapped_memory.cpp), nor a usable CUDA context: it forgets the records, so that a fault
/// check there finds none instead of reading an unmapped page, and a lock a parent thread held at
/// the fork does not stay held.
void forget_records_in_child() {
    DeviceRecords& all = device_records();
    for (auto& slot : all.records) slot.store(nullptr, std::memory_order_relaxed);
    new (&all.mutex) std::mutex();
}

/// The record of `device`, allocated on first use (BackendError when the driver refuses).
const DeviceFaultRecord& device_fault_record(int device) {
    if (device < 0 || device >= kMaxDevices) [[unlikely]]
        throw BackendError("CUDA device index " + std::to_string(device) + " out of range for fault records");
    DeviceRecords& all = device_records();
    std::atomic<const DeviceFaultRecord*>& slot = all.records[size_t(device)];
    if (const DeviceFaultRecord* r = slot.load(std::memory_order_acquire)) [[likely]]
        return *r;
    std::lock_guard<std::mutex> lock(all.mutex);
    if (const DeviceFaultRecord* r = slot.load(std::memory_order_relaxed)) return *r;
    static const bool forget_at_fork = ::pthread_atfork(nullptr, nullptr, &forget_records_in_child) == 0;
    (void)forget_at_fork;
    const auto start = std::chrono::steady_clock::now();
    const MappedHostMemory memory = cuda_alloc_mapped(device, sizeof(FaultRecord));
    add_load_stats(LoadStats{.fault_record_ms = ms_since(start)});
    auto* record = new DeviceFaultRecord{static_cast<FaultRecord*>(memory.host),
                                         reinterpret_cast<FaultRecord*>(uintptr_t(memory.device))};
    slot.store(record, std::memory_order_release);
    return *record;
}

/// Copies a record the device may still be writing: `code` is read first (the writer publishes
/// it last), then the details.
FaultRecord read_record(const FaultRecord* r) {
    FaultRecord out{};
    out.code = reinterpret_cast<const std::atomic<uint32_t>*>(&r->code)->load(std::memory_order_acquire);
    if (out.code == 0) return out;
    const volatile FaultRecord* v = r;
    out.site = v->site;
    out.param = v->param;
    out.dim = v->dim;
    out.line = v->line;
    out.column = v->column;
    out.index = v->index;
    out.extent = v->extent;
    return out;
}

/// Clears a record for the next fault: `code` first, then `claim` (a writer claims before it
/// writes, so a fault that lands in between is dropped rather than torn).
void clear_record(FaultRecord* r) {
    reinterpret_cast<std::atomic<uint32_t>*>(&r->code)->store(0, std::memory_order_relaxed);
    reinterpret_cast<std::atomic<uint32_t>*>(&r->claim)->store(0, std::memory_order_release);
}

[[gnu::noinline, gnu::cold]] FaultRecord take_record(FaultRecord* r) {
    const FaultRecord copy = read_record(r);
    clear_record(r);
    return copy;
}

/// Takes the fault recorded on `device` into `out`; false (one host load) when there is none.
bool take_device_fault(const DeviceFaultRecord& record, FaultRecord& out) {
    FaultRecord* r = record.host;
    if (reinterpret_cast<const std::atomic<uint32_t>*>(&r->code)->load(std::memory_order_relaxed) == 0) [[likely]]
        return false;
    out = take_record(r);
    return true;
}

int64_t ceil_div(int64_t n, int64_t d) { return n / d + (n % d != 0); }

// ---------------------------------------------------------------- the backend

class CudaBackend final : public Backend {
public:
    CudaBackend() : Backend(DeviceType::CUDA, /*needs_scratch=*/true) {}

    std::shared_ptr<const LoadedKernel> load(const KernelSpec& spec) const override {
        const CudaCompileOptions options = options_of(spec);
        return kernel_of(load_cuda_module(*spec.source, options), spec);
    }

    std::shared_ptr<const LoadedKernel> load_cached(const KernelSpec& spec, const std::string& key) const override {
        std::shared_ptr<CudaModule> module = find_cuda_module(key, options_of(spec));
        return module ? kernel_of(std::move(module), spec) : nullptr;
    }

    std::string compiler_fingerprint(int device, bool debug, bool fast_math) const override {
        KernelSpec spec;
        spec.device = device;
        spec.debug = debug;
        spec.fast_math = fast_math;
        return cuda_compiler_fingerprint(options_of(spec));
    }

    void prepare_compiler() const override { nvrtc_prefetch(); }

    void enter_background_thread() const override {
        if (!cuda_available()) return;  // the quick kernel loaded: the driver is up
        const CudaDriver& d = cuda_driver();
        if (d.cuThreadExchangeStreamCaptureMode == nullptr) return;
        int mode = kCuStreamCaptureModeRelaxed;
        (void)d.cuThreadExchangeStreamCaptureMode(&mode);
    }

    static CudaCompileOptions options_of(const KernelSpec& spec) {
        CudaCompileOptions options;
        options.arch = cuda_device_arch(spec.device);
        options.debug = spec.debug;  // line info for tools; the checks are in the code
        options.fast_math = spec.fast_math;
        return options;
    }

    static std::shared_ptr<const LoadedKernel> kernel_of(std::shared_ptr<CudaModule> module, const KernelSpec& spec) {
        const CudaFunction& main = module->function(spec.device, spec.entry);
        auto entry = [&](const std::string& name) { return name.empty() ? nullptr : &module->function(spec.device, name); };
        const CudaFunction* final_entry = entry(spec.final_entry);
        const CudaFunction* fixed_entry = entry(spec.fixed_entry);
        (void)device_fault_record(spec.device);  // see the banner: made here, not at a launch
        return std::make_shared<CudaKernel>(std::move(module), main, final_entry, fixed_entry);
    }

    LaunchResult launch(const LaunchRequest& r) const override {
        const CudaKernel& k = static_cast<const CudaKernel&>(*r.kernel);
        const int device = k.main().device;
        const DeviceFaultRecord& record = device_fault_record(device);
        LaunchResult result;
        // A fault of an earlier kernel on this device is reported before this one runs.
        if (take_device_fault(record, result.record)) [[unlikely]] {
            result.origin = FaultOrigin::Earlier;
            result.device = device;
            return result;
        }
        codegen::CallHeader header;
        std::memcpy(&header, r.block, sizeof(header));
        header.site = r.site;
        header.fault = record.device;
        std::memcpy(r.block, &header, sizeof(header));
        const bool cooperative = r.coop_block[0] > 0;
        int64_t threads = ceil_div(r.total, r.elements_per_thread);
        if (r.grid_blocks > 0)  // ordered tables: a bounded grid, grid-stride over the call
            threads = std::min(threads, r.grid_blocks * k.main().block_size);
        // Fixed-point tables: the scan variant records every entry's exponent and count first.
        if (cooperative)  // its own block and grid shape
            cuda_launch_shaped(k.main(), r.block, r.block_size, r.coop_grid, r.coop_block, r.stream);
        if (r.scan && !cooperative) {
            codegen::CallHeader h = header;
            h.site = r.scan_site;
            std::memcpy(r.block, &h, sizeof(h));
            const CudaKernel& scan = static_cast<const CudaKernel&>(*r.scan);
            cuda_launch(scan.main(), r.block, r.block_size, ceil_div(r.total, r.scan_elements_per_thread), r.stream);
            std::memcpy(r.block, &header, sizeof(header));
        }
        if (!cooperative) cuda_launch(k.main(), r.block, r.block_size, threads, r.stream);
        if (const CudaFunction* final_entry = cooperative ? nullptr : k.final_entry()) {
            // The blocks' partials of each ordered table, added in block order: 32 elements a block.
            const int64_t blocks = ceil_div(r.final_extent, 32);
            cuda_launch(*final_entry, r.block, r.block_size, blocks * final_entry->block_size, r.stream);
        }
        if (const CudaFunction* fixed_entry = cooperative ? nullptr : k.fixed_entry()) {
            // The fixed-point tables' sums into the gradients: one thread per entry (grid-stride).
            if (r.fixed_extent > 0)
                cuda_launch(*fixed_entry, r.block, r.block_size, std::min<int64_t>(r.fixed_extent, 1 << 22), r.stream);
        }
        // Debug mode waits for the kernel to report its fault here, except inside a graph
        // capture, where nothing may wait (the kernel is only recorded; the replay's faults are
        // reported at the next call or synchronize(), as outside debug mode).
        if (r.wait && !capturing(device, r.stream)) [[unlikely]] {
            cuda_synchronize_stream(device, r.stream);
            if (take_device_fault(record, result.record)) {
                result.origin = FaultOrigin::Waited;
                result.device = device;
            }
        }
        return result;
    }

    void zero(const LoadedKernel& kernel, void* data, size_t bytes, void* stream) const override {
        cuda_zero_async(static_cast<const CudaKernel&>(kernel).main(), data, bytes, stream);
    }

    bool capturing(int device, void* stream) const override {
        // Without a usable driver nothing can be capturing (and the caller's own error comes next).
        return cuda_available() && cuda_stream_capturing(device < 0 ? 0 : device, stream);
    }

    bool take_fault(FaultRecord& out, int& device) const override {
        DeviceRecords& all = device_records();
        for (int d = 0; d < kMaxDevices; ++d) {
            const DeviceFaultRecord* record = all.records[size_t(d)].load(std::memory_order_acquire);
            if (record && take_device_fault(*record, out)) {
                device = d;
                return true;
            }
        }
        return false;
    }

    void synchronize() const override {
        DeviceRecords& all = device_records();
        for (int d = 0; d < kMaxDevices; ++d)
            if (all.records[size_t(d)].load(std::memory_order_acquire)) cuda_synchronize_device(d);
    }

    std::string device_name(int device) const override { return "cuda:" + std::to_string(device); }
};

}  // namespace

const Backend& cuda_backend() noexcept {
    static const CudaBackend* const instance = new CudaBackend();  // never destroyed: used until exit
    return *instance;
}

const CudaFunction& cuda_kernel_entry(const LoadedKernel& kernel) {
    if (kernel.device_type() != DeviceType::CUDA) throw BackendError("not a CUDA backend's kernel");
    return static_cast<const CudaKernel&>(kernel).main();
}

}  // namespace sg::runtime
