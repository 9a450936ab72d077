// src/call/compile_kernel.h — the compiler pipeline for one kernel, in a straight line:
// parse (user module + glue) → sema → lower the glue entry → autodiff → inline → strip detach →
// dead code → codegen → backend (CPU: host compiler + kernel cache).
#pragma once

#include <memory>
#include <string>

#include "call/glue.h"
#include "call/user_module.h"
#include "codegen/codegen.h"
#include "call/tensor_info.h"
#include "runtime/cpu_module.h"
#include "runtime/cuda_module.h"

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
    DeviceType target = DeviceType::CPU;
    std::shared_ptr<runtime::CpuModule> cpu_module;
    runtime::CpuKernelFn cpu_entry = nullptr;
    std::shared_ptr<runtime::CudaModule> cuda_module;
    const runtime::CudaFunction* cuda_entry = nullptr;  ///< owned by cuda_module
    /// The second entry of a kernel with ordered gradient tables (GeneratedKernel::final_entry),
    /// launched after cuda_entry with the same parameter block; nullptr otherwise.
    const runtime::CudaFunction* cuda_final = nullptr;
    /// The third entry of a kernel with fixed-point gradient tables (GeneratedKernel::fixed_entry),
    /// launched last with the same parameter block; nullptr otherwise.
    const runtime::CudaFunction* cuda_fixed = nullptr;
    /// With fixed-point tables: the scan variant (CodegenOptions::FixedPhase::Scan) of this kernel,
    /// launched first with the same parameter block (the layouts are the same); null otherwise.
    std::shared_ptr<const CompiledKernel> fixed_scan;
    int32_t site = -1;  ///< launch site of its faults (kernel_faults.h), set by the call plan
    /// CPU: run the launch's threads in order on the calling thread (deterministic mode: its
    /// atomics and reductions then add in one fixed order).
    bool sequential = false;
};

/// Runs the front end and codegen; returns the generated kernel without loading it.
CompiledKernel generate(const UserModule& module, const Glue& glue, DeviceType target,
                        const codegen::CodegenOptions& options);
/// Generates and loads a CPU kernel (host compiler, kernel cache).
CompiledKernel compile_cpu_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options);
/// Generates, compiles (NVRTC, kernel cache) and loads a CUDA kernel for `device_index`.
CompiledKernel compile_cuda_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                                   int device_index);
/// The backend for `device`.
CompiledKernel compile_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                              DeviceType device, int device_index);

}  // namespace sg::call
