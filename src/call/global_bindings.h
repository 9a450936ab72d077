// src/call/global_bindings.h — global buffers (`RWStructuredBuffer<float> g_buf;` at module
// scope) in a call from Python.
//
// A module that declares global buffers loads, and its functions that use none are called as
// usual. Binding a global buffer from Python (SlangPy's `fn.set(g_buf=tensor)`) is not
// implemented yet: a call of a function that uses one, directly or through its callees, is a
// TypeError naming the function and the global, raised when the call is bound.
#pragma once

#include "lang/sema.h"

namespace sg::call {

/// Throws the TypeError above when `fn` uses a global buffer.
void check_global_bindings(const lang::FunctionDecl& fn, const std::string& name);

}  // namespace sg::call
