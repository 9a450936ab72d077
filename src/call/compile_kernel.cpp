// src/call/compile_kernel.cpp — the per-kernel compile: the compiler driver (driver/driver.h) on
// the user module and the call's glue, then loading through the kernel's backend.
#include "call/compile_kernel.h"

#include <chrono>
#include <mutex>

#include "call/kernel_faults.h"
#include "driver/driver.h"
#include "runtime/module_cache.h"  // ms_since

namespace sg::call {

namespace {
std::mutex g_stats_mutex;
PlanStats g_stats;
}  // namespace

PlanStats plan_stats() {
    std::lock_guard<std::mutex> lock(g_stats_mutex);
    return g_stats;
}

void add_plan_stats(const PlanStats& d) {
    std::lock_guard<std::mutex> lock(g_stats_mutex);
    g_stats.plans += d.plans;
    g_stats.index_hits += d.index_hits;
    g_stats.index_misses += d.index_misses;
    g_stats.quick_kernels += d.quick_kernels;
    g_stats.upgrades += d.upgrades;
    g_stats.bind_ms += d.bind_ms;
    g_stats.glue_ms += d.glue_ms;
    g_stats.module_parse_ms += d.module_parse_ms;
    g_stats.generate_ms += d.generate_ms;
    g_stats.index_ms += d.index_ms;
    g_stats.index_key_ms += d.index_key_ms;
    g_stats.backend_load_ms += d.backend_load_ms;
}

CompiledKernel generate(const UserModule& module, const Glue& glue, DeviceType target,
                        const codegen::CodegenOptions& options) {
    // A fresh compilation per kernel: the user module is re-checked beside the glue (cheap next
    // to the backend compile, and it keeps every compilation's types and AST independent).
    const auto start = std::chrono::steady_clock::now();
    auto compilation = std::make_shared<Compilation>();
    lang::Diagnostics diags;
    driver::Workspace workspace{compilation->sources, compilation->ast, compilation->types, diags};
    driver::Input input;
    input.modules = module.parse_into(compilation->sources, compilation->ast, diags, /*require_values=*/true);
    add_plan_stats(PlanStats{.module_parse_ms = runtime::ms_since(start)});
    input.glue.emplace_back("<glue>", glue.source);
    driver::Options driver_options;
    driver_options.scope = driver::Scope::Kernel;
    driver_options.entry = glue.entry;
    driver_options.allow_internal = true;
    driver_options.target = target;
    driver_options.codegen = options;
    driver::Result compiled;
    driver::compile(workspace, input, driver_options, compiled);

    CompiledKernel out;
    out.compilation = compilation;
    out.ir_text = std::move(compiled.ir_text);
    out.generated = std::move(compiled.kernel);
    out.options = options;
    add_plan_stats(PlanStats{.generate_ms = runtime::ms_since(start)});
    return out;
}

runtime::KernelSpec kernel_spec(const codegen::GeneratedKernel& g, const codegen::CodegenOptions& options,
                                int device_index) {
    runtime::KernelSpec spec;
    spec.source = &g.source;
    spec.entry = g.entry;
    spec.final_entry = g.final_entry;
    spec.fixed_entry = g.fixed_entry;
    spec.reduced_slots = g.reduced_slots;
    spec.device = device_index < 0 ? 0 : device_index;
    spec.debug = debug_mode();  // line info for tools; the checks are in the code
    spec.fast_math = options.fast_math;
    return spec;
}

CompiledKernel compile_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                              DeviceType device, int device_index) {
    const runtime::Backend& backend = runtime::backend(device);
    CompiledKernel k = generate(module, glue, backend.device_type(), options);
    k.device_type = backend.device_type();
    k.options = options;
    const runtime::KernelSpec spec = kernel_spec(k.generated, options, device_index);
    const auto start = std::chrono::steady_clock::now();
    k.loaded = backend.load(spec);
    add_plan_stats(PlanStats{.backend_load_ms = runtime::ms_since(start)});
    return k;
}

}  // namespace sg::call
