// src/call/kernel_faults.cpp — launch sites, fault messages, raising the faults backends report,
// and the debug mode (see kernel_faults.h).
#include "call/kernel_faults.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

#include "call/errors.h"
#include "syntax/diagnostics.h"

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

void raise_launch_fault(const runtime::LaunchResult& result, const runtime::Backend& backend) {
    switch (result.origin) {
    case runtime::FaultOrigin::Waited:
        throw CallError(ErrorKind::Runtime,
                        describe_fault(result.record) + " (on " + backend.device_name(result.device) + ")");
    case runtime::FaultOrigin::Earlier: raise_fault(result.record, backend.device_name(result.device));
    default: raise_fault(result.record);
    }
}

void check_all_device_faults() {
    for (const runtime::Backend* backend : runtime::backends()) {
        FaultRecord record{};
        int device = -1;
        if (backend->take_fault(record, device)) [[unlikely]]
            raise_fault(record, backend->device_name(device));
    }
}

void synchronize_devices() {
    for (const runtime::Backend* backend : runtime::backends()) backend->synchronize();
    check_all_device_faults();
}

bool debug_mode() noexcept { return debug_flag().load(std::memory_order_relaxed); }
void set_debug_mode(bool on) noexcept { debug_flag().store(on, std::memory_order_relaxed); }

}  // namespace sg::call
