// src/call/written_checks.h — what a call refuses to write, as torch's in-place rules do: a
// tensor whose elements overlap in memory (an expanded one: an extent > 1 with stride 0), and,
// in grad mode, a leaf tensor that requires grad. Checked on every call that writes tensors
// (`_result=`, out / inout parameters, writable tensor parameters): strides and requires_grad of
// a given tensor are not all part of the call key.
#pragma once

#include "call/arg_info.h"
#include "call/binder.h"

namespace sg::call {

/// Throws a ValueError naming the parameter (or `_result=`) when a tensor `b` writes may not be
/// written. `args` are the call's described arguments.
void check_written_tensors(const Binding& b, const ArgInfo* args, bool grad_mode);

}  // namespace sg::call
