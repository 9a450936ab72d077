// src/call/compile_kernel.cpp — the per-kernel compile: the compiler driver (driver/driver.h) on
// the user module and the call's glue, then loading through the kernel's backend.
#include "call/compile_kernel.h"

#include "call/kernel_faults.h"
#include "driver/driver.h"

namespace sg::call {

CompiledKernel generate(const UserModule& module, const Glue& glue, DeviceType target,
                        const codegen::CodegenOptions& options) {
    // A fresh compilation per kernel: the user module is re-checked beside the glue (cheap next
    // to the backend compile, and it keeps every compilation's types and AST independent).
    auto compilation = std::make_shared<Compilation>();
    lang::Diagnostics diags;
    driver::Workspace workspace{compilation->sources, compilation->ast, compilation->types, diags};
    driver::Input input;
    input.modules = module.parse_into(compilation->sources, compilation->ast, diags, /*require_values=*/true);
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
    return out;
}

CompiledKernel compile_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                              DeviceType device, int device_index) {
    const runtime::Backend& backend = runtime::backend(device);
    CompiledKernel k = generate(module, glue, backend.device_type(), options);
    k.device_type = backend.device_type();
    runtime::KernelSpec spec;
    spec.source = &k.generated.source;
    spec.entry = k.generated.entry;
    spec.final_entry = k.generated.final_entry;
    spec.fixed_entry = k.generated.fixed_entry;
    spec.reduced_slots = k.generated.reduced_slots;
    spec.device = device_index < 0 ? 0 : device_index;
    spec.debug = debug_mode();  // line info for tools; the checks are in the code
    spec.fast_math = options.fast_math;
    k.loaded = backend.load(spec);
    return k;
}

}  // namespace sg::call
