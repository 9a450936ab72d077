// src/autodiff/custom_calls.h — how a call that survived inlining reaches the callee's custom
// derivative when globals are involved.
//
// Every function passes the module globals it uses (static variables, uniform globals, global
// buffers) as hidden parameters after its declared ones (ir::Function::hidden_globals); sema
// makes a function's hidden globals include those of its custom derivatives and of its primal
// substitute. The derivative that replaces a call may use fewer of them and place them
// elsewhere (a user-written backward derivative has them after dResult, a derived one before),
// so arguments and results are matched by which global they carry, not by position.
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "syntax/diagnostics.h"

namespace sg::autodiff {

/// Whether params[k] of `fn` is one of its hidden globals; `global` gets which.
inline bool hidden_global(const ir::Function& fn, size_t k, const void** global = nullptr) {
    const size_t n = fn.hidden_globals.size();
    if (n == 0 || k < fn.hidden_first || k >= fn.hidden_first + n) return false;
    if (global) *global = fn.hidden_globals[k - fn.hidden_first];
    return true;
}

/// The arguments of a call of `fn`: `declared` in order for its declared parameters (those not
/// `out`), the value in `globals` for each hidden global.
inline std::vector<ir::Value*> arguments_with_globals(const ir::Function& fn, const std::vector<ir::Value*>& declared,
                                                      const std::unordered_map<const void*, ir::Value*>& globals) {
    std::vector<ir::Value*> args;
    size_t next = 0;
    for (size_t k = 0; k < fn.params.size(); ++k) {
        const void* g = nullptr;
        if (hidden_global(fn, k, &g)) {
            auto it = globals.find(g);
            SG_INTERNAL_ASSERT(it != globals.end(), "call of @" + fn.name + ": a global its caller does not pass");
            args.push_back(it->second);
        } else if (fn.params[k].dir != ir::ParamDir::Out) {
            SG_INTERNAL_ASSERT(next < declared.size(), "call of @" + fn.name + ": argument count");
            args.push_back(declared[next++]);
        }
    }
    SG_INTERNAL_ASSERT(next == declared.size(), "call of @" + fn.name + ": argument count");
    return args;
}

/// Splits the results of a call of `fn` (its return value, then each out / inout parameter in
/// order) into those of its declared parameters (return value first) and those of its hidden
/// globals (by global).
inline void split_results(const ir::Function& fn, const std::vector<ir::Value*>& results,
                          std::vector<ir::Value*>& declared, std::unordered_map<const void*, ir::Value*>& globals) {
    size_t r = fn.return_type && !fn.return_type->is_void() ? 1 : 0;
    declared.assign(results.begin(), results.begin() + long(r));
    for (size_t k = 0; k < fn.params.size(); ++k) {
        if (fn.params[k].dir == ir::ParamDir::In) continue;
        SG_INTERNAL_ASSERT(r < results.size(), "call of @" + fn.name + ": result count");
        const void* g = nullptr;
        if (hidden_global(fn, k, &g)) globals[g] = results[r++];
        else declared.push_back(results[r++]);
    }
}

}  // namespace sg::autodiff
