// src/call/kernel_faults.h — kernel faults as user errors: what a fault record names (launch
// sites), when a fault a backend reports is raised, and the debug mode.
//
// A generated kernel records the first fault of a launch in a codegen::FaultRecord (the kind,
// the kernel parameter, dimension, index and extent, the source line) and the launch site id
// from its call header. A launch site is registered once per compiled kernel and maps that id
// back to the user's function and each kernel parameter to the user's parameter, so that the
// error reads `f(): parameter 'lut': index 300 out of bounds for dimension 0 of extent 256`.
//
// CPU launches are synchronous: their record lives on the launcher's stack and a fault raises
// at the call that made it. CUDA launches are not: the record of a device lives in pinned host
// memory mapped into the device (kept by the CUDA backend, runtime/cuda_backend.cpp), and the
// NEXT launch on that device (or check_all_device_faults / synchronize_devices) reads its code
// word — one host load — and clears the record; the fault is raised here. In debug mode
// (SHADEGRAD_DEBUG=1 or set_debug_mode) every CUDA launch synchronizes its stream and raises at
// the call that faulted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/fault_record.h"
#include "runtime/backend.h"

namespace sg::call {

/// What a fault of one compiled kernel names.
struct LaunchSite {
    std::string function;             ///< the user's function
    bool backward = false;            ///< the backward kernel of that function
    std::string file;                 ///< the user module's file name, for source lines
    std::vector<std::string> params;  ///< per kernel parameter: "parameter 'lut'", "the result", ...
};

/// Registers a site and returns its id (CallHeader::site). Thread-safe; ids are never reused
/// and sites live for the process (one per compiled kernel: a few hundred bytes each).
int32_t register_launch_site(LaunchSite site);

/// The message of a recorded fault, e.g. "f(): parameter 'lut': index 300 out of bounds for
/// dimension 0 of extent 256". `device` ("cuda:0") is named for a fault found after its launch.
std::string describe_fault(const codegen::FaultRecord& record, const std::string& device = "");

/// Raises the RuntimeError (CallError of kind Runtime) for a recorded fault.
[[noreturn]] void raise_fault(const codegen::FaultRecord& record, const std::string& device = "");

/// Raises the RuntimeError for the fault a launch on `backend` reported (origin not None): a
/// synchronous launch's as raise_fault does, one found after waiting for the launch naming its
/// device ("... (on cuda:0)"), an earlier launch's as found after its launch.
[[noreturn]] void raise_launch_fault(const runtime::LaunchResult& result, const runtime::Backend& backend);

/// Waits for all work on every device shadegrad launched on, then raises a fault any of them
/// recorded (shadegrad.synchronize()). Nothing to do without CUDA.
void synchronize_devices();

/// Raises a fault recorded on any device shadegrad launched on, without waiting.
void check_all_device_faults();

/// Debug mode: every CUDA launch waits for its kernel and raises at the faulting call. Starts as
/// SHADEGRAD_DEBUG says (set and not "0"); set_debug_mode changes it for the process.
bool debug_mode() noexcept;
void set_debug_mode(bool on) noexcept;

}  // namespace sg::call
