// src/call/call_group.h — SlangPy's call groups in the call layer: `fn.call_group_shape(shape)`
// cuts a vectorized call's shape into groups of `shape` elements, each run as one launch block
// (codegen: emit_call_group.cpp, prelude_call_group.inc), so that a function called per element
// can share groupshared memory and meet at barriers with the elements of its group.
//
// In: the shape as the user gave it (checked when the function object is made), the call's
// binding (its rank). Out: the padded group extents in the codegen options (and so in the
// kernel's key), and the launch shape of a call-group kernel. Every error names the function
// and the parameter `shape`, with SlangPy's phrases after ours.
#pragma once

#include <string>
#include <vector>

#include "call/binder.h"
#include "call/compile_kernel.h"
#include "codegen/codegen.h"
#include "runtime/backend.h"

namespace sg::call {

/// The most elements of one group: a CUDA block's threads.
inline constexpr int kMaxCallGroupElements = 1024;

/// Checks a call group shape as given to fn.call_group_shape: at most 8 extents, each >= 1,
/// at most kMaxCallGroupElements elements. Throws ValueError naming `function` otherwise.
void check_call_group_shape(const std::string& function, const std::vector<int>& shape);

/// Sets the group extents of a call with binding `b` in `options` (padded with leading 1s to
/// the call's rank). Throws ValueError when the shape has more dimensions than the call, and
/// TypeError in deterministic mode (not supported yet with call groups).
void apply_call_group(const Binding& b, const CallModifiers& modifiers, codegen::CodegenOptions& options);

/// A launch of call-group kernel `kernel` (GeneratedKernel::call_group_block > 0) over the
/// call of `header`: blocks of whole groups, a block per CPU work item.
void call_group_launch(const CompiledKernel& kernel, const codegen::CallHeader& header, runtime::LaunchRequest& request);

}  // namespace sg::call
