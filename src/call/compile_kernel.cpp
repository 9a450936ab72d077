// src/call/compile_kernel.cpp — the per-kernel compiler driver.
#include "call/compile_kernel.h"

#include "autodiff/autodiff.h"
#include "call/kernel_faults.h"
#include "ir/lower.h"
#include "ir/passes.h"
#include "lang/parser.h"

namespace sg::call {

CompiledKernel generate(const UserModule& module, const Glue& glue, DeviceType target,
                        const codegen::CodegenOptions& options) {
    // A fresh compilation per kernel: the user module is re-checked beside the glue (cheap next
    // to the backend compile, and it keeps every compilation's types and AST independent).
    auto compilation = std::make_shared<Compilation>();
    lang::SourceManager& sources = compilation->sources;
    lang::AstContext& ast = compilation->ast;
    lang::TypeContext& types = compilation->types;
    lang::Diagnostics diags;
    std::vector<lang::ModuleAst*> modules = module.parse_into(sources, ast, diags, /*require_values=*/true);
    modules.push_back(lang::parse_module(sources.add("<glue>", glue.source), ast, diags));
    diags.throw_if_errors();
    lang::SemaResult sema = lang::analyze(modules, ast, types, diags, /*allow_internal=*/true);
    diags.throw_if_errors();
    lang::FunctionDecl* entry = nullptr;
    for (lang::FunctionDecl* f : sema.functions)
        if (f->name == glue.entry) entry = f;
    SG_INTERNAL_ASSERT(entry != nullptr, "glue entry " + glue.entry + " not found");

    ir::Program program;
    program.types = &types;
    ir::Lowering lowering(program, diags);
    ir::Function* kernel = lowering.instantiate(entry);
    diags.throw_if_errors();
    autodiff::generate_derivatives(program, lowering.derivative_requests());
    ir::inline_calls(*kernel);
    autodiff::strip_detach(*kernel);
    ir::dead_code(*kernel);
    ir::cse(*kernel);
    ir::pair_sincos(*kernel);

    CompiledKernel out;
    out.compilation = compilation;
    out.ir_text = ir::print_function(*kernel);
    out.generated = codegen::generate_kernel(program, *kernel, target, options);
    return out;
}

CompiledKernel compile_cpu_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options) {
    CompiledKernel k = generate(module, glue, DeviceType::CPU, options);
    k.target = DeviceType::CPU;
    k.cpu_module = runtime::load_cpu_module(k.generated.source);
    k.cpu_entry = reinterpret_cast<runtime::CpuKernelFn>(k.cpu_module->symbol(k.generated.entry.c_str()));
    return k;
}

CompiledKernel compile_cuda_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                                   int device_index) {
    CompiledKernel k = generate(module, glue, DeviceType::CUDA, options);
    k.target = DeviceType::CUDA;
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
