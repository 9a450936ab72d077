// src/python/compile_stats.cpp — `_core._compile_stats()`: what the compile path of this process
// did so far (the call layer's plans and kernel index, the driver's phases, the kernel caches),
// as one dict. The first-call profile (scripts/first_call_profile.py) and the tests that check a
// warm call compiles nothing read it; no call path reads it.
#include <nanobind/nanobind.h>

#include "call/autograd_node.h"
#include "call/compile_kernel.h"
#include "call/kernel_upgrade.h"
#include "driver/driver.h"
#include "python/compile_stats.h"
#include "runtime/cuda_launch.h"
#include "runtime/module_cache.h"

namespace nb = nanobind;

namespace sg::py {

namespace {

nb::dict compile_stats() {
    const call::PlanStats p = call::plan_stats();
    const driver::Totals d = driver::totals();
    const runtime::LoadStats l = runtime::load_stats();
    nb::dict out;
    out["plans"] = p.plans;
    out["index_hits"] = p.index_hits;
    out["index_misses"] = p.index_misses;
    out["quick_kernels"] = p.quick_kernels;  // plans started with a quick kernel (kernel_upgrade.h)
    out["upgrades"] = p.upgrades;            // full kernels taken from the background
    out["front_end_runs"] = d.front_end_runs;
    out["codegen_runs"] = d.codegen_runs;
    out["memory_hits"] = l.memory_hits;
    out["disk_hits"] = l.disk_hits;
    out["compiles"] = l.compiles;
    out["gradient_fills"] = call::gradient_fills();  // zero fills of backward gradient buffers
    // CUDA launches that found no context current (a bind, once per thread) or another one (a
    // push and a pop, each time; runtime/cuda_launch.h).
    const runtime::CudaContextSwitches switches = runtime::cuda_context_switches();
    out["cuda_context_binds"] = switches.binds;
    out["cuda_context_pushes"] = switches.pushes;
    nb::dict ms;
    ms["bind"] = p.bind_ms;
    ms["glue"] = p.glue_ms;
    ms["index"] = p.index_ms;
    ms["index_key"] = p.index_key_ms;
    ms["module_parse"] = p.module_parse_ms;
    ms["generate"] = p.generate_ms;
    ms["glue_parse"] = d.times.parse_ms;
    ms["sema"] = d.times.sema_ms;
    ms["lower"] = d.times.lower_ms;
    ms["autodiff"] = d.times.autodiff_ms;
    ms["passes"] = d.times.passes_ms;
    ms["codegen"] = d.times.codegen_ms;
    ms["backend_load"] = p.backend_load_ms;
    ms["compiler_identity"] = l.identity_ms;
    ms["disk_read"] = l.disk_read_ms;
    ms["disk_decode"] = l.decode_ms;
    ms["compile"] = l.compile_ms;
    ms["device_load"] = l.device_load_ms;
    ms["cuda_context"] = l.context_ms;
    ms["cuda_fault_record"] = l.fault_record_ms;
    ms["cuda_function"] = l.function_ms;
    ms["cuda_first_launch"] = l.first_launch_ms;
    out["ms"] = ms;
    return out;
}

}  // namespace

void bind_compile_stats(nb::module_& m) {
    m.def("_compile_stats", &compile_stats,
          "What the compile path did in this process so far: counts (plans, kernel-index hits and misses, "
          "front-end and codegen runs, kernel-cache memory and disk hits, compiles; CUDA launches that bound "
          "or pushed their context) and 'ms', the wall time of each step summed (tests and "
          "scripts/first_call_profile.py).");
    m.def(
        "_wait_for_kernel_upgrades",
        [] {
            nb::gil_scoped_release unlocked;
            call::wait_for_kernel_upgrades();
        },
        "Blocks until every full kernel compiling in the background (a cold plan's first call launched a "
        "quick one) has been compiled, loaded and indexed (tests, benchmarks).");
}

}  // namespace sg::py
