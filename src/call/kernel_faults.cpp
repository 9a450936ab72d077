// src/call/kernel_faults.cpp — launch sites, fault messages, per-device CUDA fault records and
// the debug mode (see kernel_faults.h).
#include "call/kernel_faults.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

#include "call/errors.h"
#include "lang/diagnostics.h"
#include "runtime/cuda_mapped_memory.h"

namespace sg::call {
namespace {

using codegen::FaultKind;
using codegen::FaultRecord;

// Sites are appended and never removed: a record may name a kernel whose plan is gone. A deque
// keeps references stable while it grows.
struct SiteTable {
    std::mutex mutex;
    std::deque<LaunchSite> sites;
};
SiteTable& site_table() {
    static SiteTable* table = new SiteTable();  // never destroyed: used until exit
    return *table;
}

constexpr int kMaxDevices = 64;
struct DeviceRecords {
    std::mutex mutex;
    std::array<std::atomic<const DeviceFaultRecord*>, kMaxDevices> records{};
};
DeviceRecords& device_records() {
    static DeviceRecords* records = new DeviceRecords();
    return *records;
}

std::atomic<bool>& debug_flag() {
    static std::atomic<bool> flag{[] {
        const char* v = std::getenv("SHADEGRAD_DEBUG");
        return v && *v && std::strcmp(v, "0") != 0;
    }()};
    return flag;
}

std::string location(const LaunchSite* site, const FaultRecord& r) {
    if (r.line <= 0) return "";
    return " at " + (site ? site->file : std::string("<module>")) + ":" + std::to_string(r.line) + ":" +
           std::to_string(r.column);
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

[[noreturn, gnu::noinline, gnu::cold]] void raise_device_fault(int device, FaultRecord* r, bool own_launch) {
    const FaultRecord copy = read_record(r);
    clear_record(r);
    if (own_launch) throw CallError(ErrorKind::Runtime, describe_fault(copy) + " (on cuda:" + std::to_string(device) + ")");
    raise_fault(copy, "cuda:" + std::to_string(device));
}

}  // namespace

int32_t register_launch_site(LaunchSite site) {
    SiteTable& table = site_table();
    std::lock_guard<std::mutex> lock(table.mutex);
    table.sites.push_back(std::move(site));
    return int32_t(table.sites.size() - 1);
}

std::string describe_fault(const FaultRecord& r, const std::string& device) {
    const LaunchSite* site = nullptr;
    {
        SiteTable& table = site_table();
        std::lock_guard<std::mutex> lock(table.mutex);
        if (r.site >= 0 && size_t(r.site) < table.sites.size()) site = &table.sites[size_t(r.site)];
    }
    std::string out = (site ? site->function : std::string("<unknown function>")) + "()";
    if (site && site->backward) out += " backward";
    out += ": ";
    switch (FaultKind(r.code)) {
    case FaultKind::IndexOutOfBounds:
        if (r.param >= 0) {
            const bool named = site && size_t(r.param) < site->params.size();
            out += (named ? site->params[size_t(r.param)] : "tensor parameter #" + std::to_string(r.param)) +
                   ": index " + std::to_string(r.index) + " out of bounds for dimension " + std::to_string(r.dim) +
                   " of extent " + std::to_string(r.extent) + location(site, r);
        } else {
            out += "index " + std::to_string(r.index) + " out of range of a local array, vector or matrix of " +
                   std::to_string(r.extent) + " elements" + location(site, r);
        }
        out += "; the access was skipped";
        break;
    case FaultKind::LoopPastMaxIters:
        out += "a loop" + location(site, r) + " ran past its [MaxIters(" + std::to_string(r.extent) +
               ")] bound (iteration " + std::to_string(r.index) +
               "): its reverse pass cannot replay it; raise the bound";
        break;
    case FaultKind::DivisionByZero: out += "integer division or remainder by zero" + location(site, r); break;
    default: out += "the kernel reported fault code " + std::to_string(r.code); break;
    }
    out += "; the results of that call are not valid";
    if (!device.empty())
        out += " (a kernel launched earlier on " + device +
               ", reported at the next shadegrad call or synchronize(); set SHADEGRAD_DEBUG=1 to raise at the "
               "faulting call)";
    return out;
}

void raise_fault(const FaultRecord& r, const std::string& device) {
    throw CallError(ErrorKind::Runtime, describe_fault(r, device));
}

const DeviceFaultRecord& device_fault_record(int device) {
    SG_INTERNAL_ASSERT(device >= 0 && device < kMaxDevices, "CUDA device index out of range for fault records");
    DeviceRecords& all = device_records();
    std::atomic<const DeviceFaultRecord*>& slot = all.records[size_t(device)];
    if (const DeviceFaultRecord* r = slot.load(std::memory_order_acquire)) [[likely]]
        return *r;
    std::lock_guard<std::mutex> lock(all.mutex);
    if (const DeviceFaultRecord* r = slot.load(std::memory_order_relaxed)) return *r;
    const runtime::MappedHostMemory memory = runtime::cuda_alloc_mapped(device, sizeof(FaultRecord));
    auto* record = new DeviceFaultRecord{static_cast<FaultRecord*>(memory.host),
                                         reinterpret_cast<FaultRecord*>(uintptr_t(memory.device))};
    slot.store(record, std::memory_order_release);
    return *record;
}

void check_device_faults(int device, bool own_launch) {
    FaultRecord* r = device_fault_record(device).host;
    if (reinterpret_cast<const std::atomic<uint32_t>*>(&r->code)->load(std::memory_order_relaxed) != 0) [[unlikely]]
        raise_device_fault(device, r, own_launch);
}

void check_all_device_faults() {
    DeviceRecords& all = device_records();
    for (int d = 0; d < kMaxDevices; ++d)
        if (all.records[size_t(d)].load(std::memory_order_acquire)) check_device_faults(d);
}

void synchronize_devices() {
    DeviceRecords& all = device_records();
    for (int d = 0; d < kMaxDevices; ++d)
        if (all.records[size_t(d)].load(std::memory_order_acquire)) runtime::cuda_synchronize_device(d);
    check_all_device_faults();
}

bool debug_mode() noexcept { return debug_flag().load(std::memory_order_relaxed); }
void set_debug_mode(bool on) noexcept { debug_flag().store(on, std::memory_order_relaxed); }

}  // namespace sg::call
