// src/call/compile_kernel.h — the compiler pipeline for one kernel, in a straight line:
// parse (user module + glue) → sema → lower the glue entry → autodiff → inline → strip detach →
// dead code → codegen (generate()), then the device's backend loads it (compile_kernel()).
#pragma once

#include <memory>
#include <string>

#include "call/glue.h"
#include "call/user_module.h"
#include "codegen/codegen.h"
#include "call/tensor_info.h"
#include "runtime/backend.h"

namespace sg::call {

/// The front-end state of one kernel compilation. The layout's types point into it, so a
/// CompiledKernel keeps it alive.
struct Compilation {
    lang::SourceManager sources;
    lang::AstContext ast;
    lang::TypeContext types;
};

struct CompiledKernel {
    std::shared_ptr<Compilation> compilation;
    codegen::GeneratedKernel generated;   ///< target source, entry name, parameter layout
    std::string ir_text;                  ///< the kernel's final IR (debugging)
    /// The device kind it was generated for; its backend (runtime/backend.h) loads and launches it.
    DeviceType device_type = DeviceType::CPU;
    /// The kernel loaded for its device; null when only generated (generate()).
    std::shared_ptr<const runtime::LoadedKernel> loaded;
    /// With fixed-point tables: the scan variant (CodegenOptions::FixedPhase::Scan) of this kernel,
    /// launched first with the same parameter block (the layouts are the same); null otherwise.
    std::shared_ptr<const CompiledKernel> fixed_scan;
    int32_t site = -1;  ///< launch site of its faults (kernel_faults.h), set by the call plan
    /// The codegen options it was generated with (debug output generates it again from them).
    codegen::CodegenOptions options;
    /// Loaded through the kernel index (kernel_index.h) without the front end or codegen: no
    /// compilation, no IR text, no source (generated.source is empty), a layout without types.
    bool from_index = false;
    /// The backward of a deterministic call: the CPU backend runs its threads in order on the
    /// calling thread (its atomics and reductions then add in one fixed order); CUDA's kernels
    /// order their sums themselves.
    bool sequential = false;
};

/// What the call layer's compile path did in this process so far (all threads): plans made, the
/// wall time of binding (resolve_call), of writing glue, of re-reading the user module into a
/// kernel's compilation, and of the rest of generate() (the driver: driver::totals() splits it),
/// and the kernel index's lookups (kernel_index.h). The first-call profile reads them.
struct PlanStats {
    uint64_t plans = 0, index_hits = 0, index_misses = 0;
    /// Plans started with a quick kernel, and full kernels taken from the background (kernel_upgrade.h).
    uint64_t quick_kernels = 0, upgrades = 0;
    double bind_ms = 0, glue_ms = 0, module_parse_ms = 0, generate_ms = 0, index_ms = 0, backend_load_ms = 0;
    /// Of index_ms: computing the index key (the compiler's identity, hashing) on a lookup.
    double index_key_ms = 0;
};
PlanStats plan_stats();
/// Adds `delta` to the totals.
void add_plan_stats(const PlanStats& delta);

/// Runs the front end and codegen; returns the generated kernel without loading it.
CompiledKernel generate(const UserModule& module, const Glue& glue, DeviceType target,
                        const codegen::CodegenOptions& options);
/// What the backend loads for generated kernel `g`: its source and entries, for device
/// `device_index` (0 when negative), with the debug and fast-math options of `options`.
runtime::KernelSpec kernel_spec(const codegen::GeneratedKernel& g, const codegen::CodegenOptions& options,
                                int device_index);
/// Generates a kernel for `device` and loads it through that device's backend (CPU: host
/// compiler; CUDA: NVRTC for device `device_index`, 0 when negative; both through the kernel
/// cache). Always runs the front end and codegen; call plans go through the kernel index
/// (kernel_index.h: cached_kernel), which skips both when it can.
CompiledKernel compile_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                              DeviceType device, int device_index);

}  // namespace sg::call
