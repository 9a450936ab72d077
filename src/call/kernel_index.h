// src/call/kernel_index.h — the kernel index: a call plan's kernel found again, in a later process,
// without the front end or codegen.
//
// The backend's kernel cache (runtime/module_cache.h) is keyed by the generated source, so it can
// only be consulted after the front end and codegen have run. The index is keyed by what that
// source is made from, all known before either runs:
//   the compiler build (driver::compiler_build_id), the user module's content key (its name,
//   every file its load read, defines, extern values: UserModule::content_key), the glue's entry
//   and text (which the binding — dtypes, ranks, argument kinds, grad mask, modifiers — decides),
//   every codegen option, the target, and the backend's compiler fingerprint (which compiler, its
//   files' sizes and times, its flags; Backend::compiler_fingerprint: nothing is started).
// Its entry (disk cache kind "index") holds what the call layer needs of the generated kernel —
// entry names, the parameter-block layout (offsets and plain-value field shapes, no lang types),
// the reduction and table metadata — and the backend's module key, which load_cached() finds in
// the backend's own cache. A miss, an unreadable entry, or a module the backend no longer has
// runs the whole compile (compile_kernel) and writes the entry again.
#pragma once

#include <optional>
#include <string>

#include "call/compile_kernel.h"

namespace sg::call {

/// The kernel of `glue` for `device`, as compile_kernel makes it, from the kernel index when it
/// has the kernel (then neither the front end nor codegen runs: CompiledKernel::from_index).
CompiledKernel cached_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                             DeviceType device, int device_index);

/// The kernel from the index, or nullopt when the index does not have it (cached_kernel's first half).
std::optional<CompiledKernel> indexed_kernel(const UserModule& module, const Glue& glue,
                                             const codegen::CodegenOptions& options, DeviceType device,
                                             int device_index);
/// The whole compile (compile_kernel), its index entry written (cached_kernel's second half).
CompiledKernel compile_and_index(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                                 DeviceType device, int device_index);

/// The kernel's own code, after the device prelude, for debug output: generated again (front end
/// and codegen) when `k` came from the index.
std::string kernel_body(const UserModule& module, const Glue& glue, const CompiledKernel& k);

/// The index key of a kernel (tests compare keys; cached_kernel computes it itself).
std::string kernel_index_key(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                             DeviceType device, int device_index);

}  // namespace sg::call
