// src/ir/passes.h — the IR passes, one function per file (printer.cpp, verify.cpp, inline_calls.cpp,
// dead_code.cpp, cse.cpp, sincos.cpp), and the pass pipeline hook that dumps IR between passes.
#pragma once

#include <string>

#include "ir/ir.h"

namespace sg::ir {

/// Readable text of a function / program: `%3:float = mul %1, %2` with nested regions indented.
std::string print_function(const Function& fn);
std::string print_program(const Program& program);

/// Checks structural invariants (terminators, operand scoping, types of yields/returns, tensor
/// ops on tensors). Throws InternalError naming the violation; `after` names the pass that ran.
void verify_function(const Function& fn, const char* after);

/// Inlines every Call in `fn` whose callee has no custom derivative (those stay calls: autodiff
/// calls the user's derivative in their place). Input: any function; output: the same function without such
/// calls. Callees are inlined recursively; recursion is a user error reported by sema earlier.
void inline_calls(Function& fn);

/// Removes instructions whose results are unused and that have no side effects (regions
/// included: an If/Loop without used results and without side effects inside is removed).
void dead_code(Function& fn);

/// Common-subexpression elimination: a pure instruction (arithmetic, comparisons, logic,
/// select, conversions, composites, intrinsics, tensor shapes, call indices) that repeats a
/// dominating one with the same op, type, operands and immediates uses the earlier result;
/// the duplicates are removed (dead_code). Loads, local storage, calls and anything with side
/// effects never take part. Values are unchanged: each result is computed the same way, once.
void cse(Function& fn);

/// A sin and a cos of the same float or double scalar, one dominating the other, become one
/// SinCos at the first of them (one argument reduction for both: CUDA sincosf/sincos). The
/// values are those of sin and cos. Runs after cse (which has merged repeated sins and coss).
void pair_sincos(Function& fn);

/// Runs verify_function in debug builds or when SHADEGRAD_VERIFY_IR=1, and prints the function
/// to stderr when SHADEGRAD_DUMP_IR=1 (or names this pass: SHADEGRAD_DUMP_IR=inline_calls).
void after_pass(const Function& fn, const char* pass);

}  // namespace sg::ir
