// src/call/compile_kernel.cpp — the per-kernel compiler driver, and loading through the backend.
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
    spec.device = device_index < 0 ? 0 : device_index;
    spec.debug = debug_mode();  // line info for tools; the checks are in the code
    spec.fast_math = options.fast_math;
    k.loaded = backend.load(spec);
    return k;
}

}  // namespace sg::call
