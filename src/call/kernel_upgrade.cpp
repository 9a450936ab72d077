// src/call/kernel_upgrade.cpp — the full kernel of a plan compiled in the background (see the
// header): the policy, the thread, the check that the two kernels take the same parameter block,
// and the wait at exit.

#include "call/kernel_upgrade.h"

#include <pthread.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>

#include "call/kernel_index.h"
#include "call/user_module.h"
#include "runtime/backend.h"

namespace sg::call {

namespace {

/// SHADEGRAD_QUICK_FIRST_KERNEL: -1 unset (CUDA only), 0 off, 1 on every device.
int quick_setting() {
    static const int setting = [] {
        const char* v = std::getenv("SHADEGRAD_QUICK_FIRST_KERNEL");
        if (v == nullptr || *v == '\0') return -1;
        return std::strcmp(v, "0") == 0 ? 0 : 1;
    }();
    return setting;
}

/// The background compiles in flight, waited for at exit. A forked child has none of the
/// parent's threads: it starts from zero (its plans keep their quick kernels).
struct InFlight {
    std::mutex mutex;
    std::condition_variable idle;
    int count = 0;

    InFlight() {
        pthread_atfork(nullptr, nullptr, [] {
            InFlight& f = in_flight();
            new (&f.mutex) std::mutex();
            new (&f.idle) std::condition_variable();
            f.count = 0;
        });
    }
    ~InFlight() { wait(); }  // exit: a thread still compiling uses the backend's statics
    void wait() {
        std::unique_lock<std::mutex> lock(mutex);
        idle.wait(lock, [&] { return count == 0; });
    }
    static InFlight& in_flight();
};

InFlight& InFlight::in_flight() {
    static InFlight all;  // made at the first upgrade, after the backend it waits for
    return all;
}

bool same_field(const codegen::ParamField& a, const codegen::ParamField& b) {
    const codegen::TensorFieldLayout& s = a.tensor;
    const codegen::TensorFieldLayout& t = b.tensor;
    return a.name == b.name && a.offset == b.offset && a.size == b.size && s.data == t.data && s.shape == t.shape &&
           s.strides == t.strides && s.inner == t.inner && s.grad_data == t.grad_data &&
           s.grad_strides == t.grad_strides && s.grad_inner == t.grad_inner && s.view_rank == t.view_rank &&
           s.grad_view == t.grad_view;
}

/// Whether a block packed for `quick` launches `full` as well: the same fields at the same
/// offsets, and no reduction or table metadata (which a forward kernel never has) in either.
std::string block_mismatch(const codegen::ParamLayout& quick, const codegen::GeneratedKernel& full) {
    if (full.layout.size != quick.size || full.layout.fields.size() != quick.fields.size())
        return "its parameter block differs from the quick kernel's";
    for (size_t i = 0; i < quick.fields.size(); ++i)
        if (!same_field(quick.fields[i], full.layout.fields[i]))
            return "its parameter '" + quick.fields[i].name + "' differs from the quick kernel's";
    if (full.reduced_slots != 0 || !full.ordered.empty() || !full.fixed.empty() || !full.stored_grads.empty() ||
        !full.tree_tables.empty() || full.call_group_block != 0 || !full.final_entry.empty() || !full.fixed_entry.empty())
        return "it has gradient tables or reductions";
    return {};
}

}  // namespace

bool quick_first_kernel(DeviceType device, const codegen::CodegenOptions& options) {
    const int setting = quick_setting();
    if (setting == 0 || options.elements_per_thread != 0 || options.call_group_rank >= 0) return false;
    return setting == 1 || device == DeviceType::CUDA;
}

codegen::CodegenOptions quick_kernel_options(codegen::CodegenOptions options) {
    options.elements_per_thread = 1;
    return options;
}

std::shared_ptr<KernelUpgrade> KernelUpgrade::start(std::shared_ptr<const UserModule> module, const Glue& glue,
                                                    const codegen::CodegenOptions& options, DeviceType device,
                                                    int device_index, const CompiledKernel& quick) {
    std::shared_ptr<KernelUpgrade> upgrade(new KernelUpgrade());
    add_plan_stats(PlanStats{.quick_kernels = 1});
    InFlight& all = InFlight::in_flight();
    {
        std::lock_guard<std::mutex> lock(all.mutex);
        ++all.count;
    }
    try {
        std::thread([upgrade, module = std::move(module), glue, options, device, device_index,
                     layout = quick.generated.layout, site = quick.site]() mutable {
            upgrade->run(std::move(module), std::move(glue), options, device, device_index, std::move(layout), site);
        }).detach();
    } catch (const std::system_error&) {  // no thread: the plan keeps its quick kernel
        upgrade->failure_ = "no thread could be started";
        upgrade->done_.store(true, std::memory_order_release);
        std::lock_guard<std::mutex> lock(all.mutex);
        --all.count;
        all.idle.notify_all();
    }
    return upgrade;
}

void KernelUpgrade::run(std::shared_ptr<const UserModule> module, Glue glue, codegen::CodegenOptions options,
                        DeviceType device, int device_index, codegen::ParamLayout layout, int32_t site) {
    try {
        runtime::backend(device).enter_background_thread();
        auto full = std::make_unique<CompiledKernel>(compile_and_index(*module, glue, options, device, device_index));
        failure_ = block_mismatch(layout, full->generated);
        if (failure_.empty()) {
            full->site = site;
            kernel_ = std::move(full);
            ready_.store(kernel_.get(), std::memory_order_release);
            add_plan_stats(PlanStats{.upgrades = 1});
        }
    } catch (const std::exception& e) {
        failure_ = e.what();
    } catch (...) {
        failure_ = "unknown error";
    }
    module.reset();  // before the count drops: nothing of the module is used after exit waits
    done_.store(true, std::memory_order_release);
    InFlight& all = InFlight::in_flight();
    std::lock_guard<std::mutex> lock(all.mutex);
    --all.count;
    all.idle.notify_all();  // wait() of this upgrade, and the exit's wait for all
}

void KernelUpgrade::wait() const {
    InFlight& all = InFlight::in_flight();
    std::unique_lock<std::mutex> lock(all.mutex);
    all.idle.wait(lock, [&] { return done_.load(std::memory_order_acquire); });
}

void wait_for_kernel_upgrades() { InFlight::in_flight().wait(); }

}  // namespace sg::call
