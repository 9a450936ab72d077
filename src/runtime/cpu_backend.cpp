// src/runtime/cpu_backend.cpp — the CPU backend (see backend.h): generated C++ built by the host
// compiler into a shared object (cpu_module.h, with its kernel cache) and run on the thread pool,
// or in order on the calling thread. Launches are synchronous, so a launch's fault record lives
// on its stack and its fault is reported when it returns.
#include <cstring>

#include "codegen/call_header.h"
#include "runtime/backend.h"

namespace sg::runtime {
namespace {

class CpuKernel final : public LoadedKernel {
public:
    CpuKernel(std::shared_ptr<CpuModule> module, CpuKernelFn entry)
        : LoadedKernel(DeviceType::CPU, -1, 1, 1), module_(std::move(module)), entry_(entry) {}
    CpuKernelFn entry() const noexcept { return entry_; }

private:
    std::shared_ptr<CpuModule> module_;  // keeps the shared object loaded
    CpuKernelFn entry_;
};

class CpuBackend final : public Backend {
public:
    CpuBackend() : Backend(DeviceType::CPU, /*needs_scratch=*/false) {}

    std::shared_ptr<const LoadedKernel> load(const KernelSpec& spec) const override {
        // Debug and fast-math options are CUDA's: the CPU build is the same either way.
        std::shared_ptr<CpuModule> module = load_cpu_module(*spec.source);
        auto entry = reinterpret_cast<CpuKernelFn>(module->symbol(spec.entry.c_str()));
        return std::make_shared<CpuKernel>(std::move(module), entry);
    }

    LaunchResult launch(const LaunchRequest& r) const override {
        const CpuKernelFn entry = static_cast<const CpuKernel&>(*r.kernel).entry();
        LaunchResult result;
        codegen::FaultRecord& fault = result.record;
        codegen::CallHeader header;
        std::memcpy(&header, r.block, sizeof(header));
        header.site = r.site;
        header.fault = &fault;
        std::memcpy(r.block, &header, sizeof(header));
        if (r.sequential) entry(r.block, 0, r.total);
        else if (r.coop_block[0] > 0) cpu_launch_items(entry, r.block, r.total, 1);  // a block per item
        else cpu_launch(entry, r.block, r.total);
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
