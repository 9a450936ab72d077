// src/runtime/cpu_backend.cpp — the CPU backend (see backend.h): generated C++ built by the host
// compiler into a shared object (cpu_module.h, with its kernel cache) and run on the thread pool,
// or in order on the calling thread. Launches are synchronous, so a launch's fault record lives
// on its stack and its fault is reported when it returns.
#include <cstring>
#include <memory>

#include "codegen/call_header.h"
#include "runtime/backend.h"
#include "runtime/thread_pool.h"

namespace sg::runtime {
namespace {

/// The second entry of a kernel with reduced gradients (GeneratedKernel::final_entry).
using CpuFinalFn = void (*)(const void* params);

class CpuKernel final : public LoadedKernel {
public:
    CpuKernel(std::shared_ptr<CpuModule> module, CpuKernelFn entry, CpuFinalFn final_entry, int reduced_slots)
        : LoadedKernel(DeviceType::CPU, -1, 1, 1, module->hash()), module_(std::move(module)), entry_(entry),
          final_(final_entry), reduced_slots_(reduced_slots) {}
    CpuKernelFn entry() const noexcept { return entry_; }
    CpuFinalFn final_entry() const noexcept { return final_; }
    int reduced_slots() const noexcept { return reduced_slots_; }

private:
    std::shared_ptr<CpuModule> module_;  // keeps the shared object loaded
    CpuKernelFn entry_;
    CpuFinalFn final_;
    int reduced_slots_;
};

/// Reduced gradients and chunk tables: the launch's per-chunk sums (CallHeader::scratch): the
/// chunk size and the chunk count as two int64, then `slots` doubles per chunk, each written by
/// its chunk. Up to 512 doubles live on the stack; more (many threads, many sums, chunk tables)
/// on the heap.
class ChunkSums {
public:
    ChunkSums(int64_t total, int64_t chunk_size, int slots) {
        const int64_t chunks = (total + chunk_size - 1) / chunk_size;
        const size_t n = 2 + size_t(chunks) * size_t(slots);
        // Not zeroed: each chunk writes (reduced sums) or zeroes (chunk tables) its own slots.
        data_ = n <= sizeof(local_) / sizeof(local_[0]) ? local_
                                                         : (heap_ = std::make_unique_for_overwrite<double[]>(n)).get();
        const int64_t head[2] = {chunk_size, chunks};
        std::memcpy(data_, head, sizeof(head));
    }
    void* data() noexcept { return data_; }

private:
    double local_[514];
    std::unique_ptr<double[]> heap_;
    double* data_;
};

class CpuBackend final : public Backend {
public:
    CpuBackend() : Backend(DeviceType::CPU, /*needs_scratch=*/false) {}

    std::shared_ptr<const LoadedKernel> load(const KernelSpec& spec) const override {
        // Debug and fast-math options are CUDA's: the CPU build is the same either way.
        return kernel_of(load_cpu_module(*spec.source), spec);
    }

    std::shared_ptr<const LoadedKernel> load_cached(const KernelSpec& spec, const std::string& key) const override {
        std::shared_ptr<CpuModule> module = find_cpu_module(key);
        if (!module) return nullptr;
        try {
            return kernel_of(std::move(module), spec);
        } catch (const BackendError&) {
            return nullptr;  // not the module the caller's record says (an entry is missing): rebuilt
        }
    }

    std::string compiler_fingerprint(int, bool, bool) const override { return cpu_compiler_fingerprint(); }

    static std::shared_ptr<const LoadedKernel> kernel_of(std::shared_ptr<CpuModule> module, const KernelSpec& spec) {
        auto entry = reinterpret_cast<CpuKernelFn>(module->symbol(spec.entry.c_str()));
        CpuFinalFn final_entry = nullptr;
        if (spec.reduced_slots > 0 && !spec.final_entry.empty())
            final_entry = reinterpret_cast<CpuFinalFn>(module->symbol(spec.final_entry.c_str()));
        return std::make_shared<CpuKernel>(std::move(module), entry, final_entry, spec.reduced_slots);
    }

    LaunchResult launch(const LaunchRequest& r) const override {
        const CpuKernel& kernel = static_cast<const CpuKernel&>(*r.kernel);
        const CpuKernelFn entry = kernel.entry();
        LaunchResult result;
        codegen::FaultRecord& fault = result.record;
        codegen::CallHeader header;
        std::memcpy(&header, r.block, sizeof(header));
        header.site = r.site;
        header.fault = &fault;
        if (!kernel.final_entry()) {
            std::memcpy(r.block, &header, sizeof(header));
            if (r.sequential) entry(r.block, 0, r.total);
            else if (r.coop_block[0] > 0) cpu_launch_items(entry, r.block, r.total, 1);  // a block per item
            else cpu_launch(entry, r.block, r.total);
        } else {
            // Reduced gradients: each chunk's sums in its own slots, then added once in a
            // fixed (pairwise) order by the final entry.
            ChunkSums sums(r.total, r.sequential ? r.total : cpu_chunk_size(r.total), kernel.reduced_slots());
            header.scratch = sums.data();
            std::memcpy(r.block, &header, sizeof(header));
            if (r.sequential) entry(r.block, 0, r.total);
            else cpu_launch(entry, r.block, r.total);
            if (fault.code == 0) kernel.final_entry()(r.block);
            header.scratch = nullptr;  // the block outlives this frame
            std::memcpy(r.block, &header, sizeof(header));
        }
        if (fault.code != 0) [[unlikely]]
            result.origin = FaultOrigin::Synchronous;
        return result;
    }

    void zero(const LoadedKernel&, void* data, size_t bytes, void*) const override { std::memset(data, 0, bytes); }
    bool capturing(int, void*) const override { return false; }
    bool take_fault(codegen::FaultRecord&, int&) const override { return false; }
    void synchronize() const override {}
    std::string device_name(int) const override { return "cpu"; }
};

}  // namespace

const Backend& cpu_backend() noexcept {
    static const CpuBackend* const instance = new CpuBackend();  // never destroyed: used until exit
    return *instance;
}

CpuKernelFn cpu_kernel_entry(const LoadedKernel& kernel) {
    if (kernel.device_type() != DeviceType::CPU) throw BackendError("not a CPU backend's kernel");
    return static_cast<const CpuKernel&>(kernel).entry();
}

}  // namespace sg::runtime
