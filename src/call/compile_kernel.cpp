// src/call/compile_kernel.cpp — the per-kernel compile: the compiler driver (driver/driver.h) on
// the user module and the call's glue, then the backend.
#include "call/compile_kernel.h"

#include "call/kernel_faults.h"
#include "driver/driver.h"

namespace sg::call {

CompiledKernel generate(const UserModule& module, const Glue& glue, codegen::Target target,
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

CompiledKernel compile_cpu_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options) {
    CompiledKernel k = generate(module, glue, codegen::Target::Cpu, options);
    k.target = codegen::Target::Cpu;
    k.cpu_module = runtime::load_cpu_module(k.generated.source);
    k.cpu_entry = reinterpret_cast<runtime::CpuKernelFn>(k.cpu_module->symbol(k.generated.entry.c_str()));
    return k;
}

CompiledKernel compile_cuda_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                                   int device_index) {
    CompiledKernel k = generate(module, glue, codegen::Target::Cuda, options);
    k.target = codegen::Target::Cuda;
    runtime::CudaCompileOptions cuda_options;
    cuda_options.arch = runtime::cuda_device_arch(device_index);
    cuda_options.debug = debug_mode();  // line info for tools; the checks are in the code
    cuda_options.fast_math = options.fast_math;
    k.cuda_module = runtime::load_cuda_module(k.generated.source, cuda_options);
    k.cuda_entry = &k.cuda_module->function(device_index, k.generated.entry);
    if (!k.generated.final_entry.empty()) k.cuda_final = &k.cuda_module->function(device_index, k.generated.final_entry);
    if (!k.generated.fixed_entry.empty()) k.cuda_fixed = &k.cuda_module->function(device_index, k.generated.fixed_entry);
    // The device's fault record is made with its first kernel, not at its first launch: a launch
    // may be the first one inside a CUDA graph capture, which cannot allocate pinned memory.
    (void)device_fault_record(device_index);
    return k;
}

CompiledKernel compile_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                              DeviceType device, int device_index) {
    if (device == DeviceType::CUDA) return compile_cuda_kernel(module, glue, options, device_index < 0 ? 0 : device_index);
    return compile_cpu_kernel(module, glue, options);
}

}  // namespace sg::call
