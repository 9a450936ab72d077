// src/call/call_options.h — facts about a call's tensors, beyond their types and shapes, that
// change the generated kernel: a bit each in the call key's `options` word, derived here from
// the ArgInfo of the call and turned into codegen options in one place.
#pragma once

#include <cstddef>
#include <cstdint>

#include "call/arg_info.h"
#include "codegen/codegen.h"

namespace sg::call {

enum CallOption : uint32_t {
    /// Some tensor's element offsets or the call's thread count may reach 2^31: offsets are
    /// computed in 64-bit (CodegenOptions::index_64bit).
    kOption64BitIndex = 1u << 0,
    /// Two tensor arguments share memory (the same tensor twice, views of one storage, an
    /// in-place `_result`): the kernel may write what it reads, so no read-only loads.
    kOptionTensorsOverlap = 1u << 1,
};

/// The option bits of a call with `args`. Cheap: linear in the tensors' ranks, quadratic only in
/// the number of tensor arguments.
uint32_t call_options(const ArgInfo* args, size_t count);

/// Codegen options for a call with option bits `options` on `device`. Kernels of both backends
/// check tensor indices, integer divisors and [MaxIters] bounds (kernel_faults.h); `debug`
/// (SHADEGRAD_DEBUG) changes when a CUDA fault is raised, not the generated code.
codegen::CodegenOptions codegen_options(uint32_t options, DeviceType device, bool debug);

}  // namespace sg::call
