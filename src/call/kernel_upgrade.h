// src/call/kernel_upgrade.h — a plan's first kernel quick to compile, its full kernel compiled
// on a thread of its own.
//
// On CUDA a small kernel runs four call elements per thread, each element's loads issued first
// and the dense launches vectorized (docs/performance.md): four copies of the thread's work, and
// NVRTC's time grows with them. A new forward plan whose full kernel the kernel index does not
// have (a cold first call) therefore compiles the one-element kernel first, launches it, and
// compiles the full kernel meanwhile in the background; the plan switches to it once it is loaded
// (the two kernels compute the same values: they differ only in which thread runs which element,
// and they have the same parameter block, which is checked). The full kernel's index entry is
// written as usual, so the next process finds it. Work in flight is waited for at exit.
//
// SHADEGRAD_QUICK_FIRST_KERNEL=0 turns it off (every plan compiles its full kernel first); =1 also
// takes it on the CPU, where the one-element kernel is the full kernel (tests).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "call/compile_kernel.h"
#include "call/glue.h"

namespace sg::call {

class UserModule;

/// Whether a forward plan for `device` whose full kernel has `options` starts with the quick one.
bool quick_first_kernel(DeviceType device, const codegen::CodegenOptions& options);

/// The options of the quick kernel: one call element per thread, nothing else changed.
codegen::CodegenOptions quick_kernel_options(codegen::CodegenOptions options);

/// The full kernel of a plan, compiled in the background. Shared by the plan and its thread.
class KernelUpgrade {
public:
    /// Starts compiling `glue`'s kernel with `options` (the full ones) for `device`; `quick` is the
    /// plan's kernel now, whose parameter block the full one must have, and whose launch site it
    /// takes. `module` is kept alive until the compile ends.
    static std::shared_ptr<KernelUpgrade> start(std::shared_ptr<const UserModule> module, const Glue& glue,
                                                const codegen::CodegenOptions& options, DeviceType device,
                                                int device_index, const CompiledKernel& quick);

    /// The full kernel once loaded, else null. Lock-free.
    const CompiledKernel* ready() const noexcept { return ready_.load(std::memory_order_acquire); }
    /// Why the full kernel was not taken (a compile error, another parameter block); empty while
    /// compiling or after success. Read after wait().
    const std::string& failure() const noexcept { return failure_; }
    /// Blocks until the compile has ended (tests).
    void wait() const;

private:
    KernelUpgrade() = default;
    void run(std::shared_ptr<const UserModule> module, Glue glue, codegen::CodegenOptions options,
             DeviceType device, int device_index, codegen::ParamLayout layout, int32_t site);

    std::atomic<const CompiledKernel*> ready_{nullptr};
    std::atomic<bool> done_{false};
    std::unique_ptr<CompiledKernel> kernel_;
    std::string failure_;
};

/// Blocks until every background compile of this process has ended (exit, tests).
void wait_for_kernel_upgrades();

}  // namespace sg::call
