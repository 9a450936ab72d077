// src/driver/pipeline.h — the IR pass pipeline: the one ordered list of the passes every
// compilation runs on its functions after autodiff (kernels of the call layer, shadegradc, the
// test pipeline and the fuzzer alike).
//
// A straight line (as in Halide's lowering driver): a plain loop over a list of named passes, each
// optionally followed by the verifier and a caller's hook. No pass manager: adding a pass is one
// line in pipeline.cpp. Each pass also ends in ir::after_pass itself, so SHADEGRAD_DUMP_IR and
// SHADEGRAD_VERIFY_IR work the same for a pass run here or on its own.
//
// There is exactly one Pipeline object (pipeline()); its constructor is private, so no caller
// can run a list of its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace sg::driver {

/// One IR pass: in, a function; out, the same function transformed in place.
struct Pass {
    const char* name;  ///< the pass's function name (inline_calls, ...), as in SHADEGRAD_DUMP_IR
    void (*run)(ir::Function& fn);
};

/// What a caller adds around each pass.
struct PassHooks {
    /// ir::verify_function after every pass (ir::after_pass verifies only in debug builds or with
    /// SHADEGRAD_VERIFY_IR=1); the test pipeline and the fuzzer turn it on.
    bool verify = false;
    /// Called after every pass with the function it ran on (an IR dump, a trace); may be empty.
    std::function<void(const Pass& pass, const ir::Function& fn)> after_each;
};

class Pipeline {
public:
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    const std::vector<Pass>& passes() const { return passes_; }
    /// The passes' names, in order.
    std::vector<std::string> names() const;

    /// Runs every pass in order on `fn`.
    void run(ir::Function& fn, const PassHooks& hooks = {}) const;
    /// Runs every pass in order on each function of `program` in turn (a function's callees are
    /// inlined, and so go through the pipeline again, as part of it).
    void run(ir::Program& program, const PassHooks& hooks = {}) const;

    /// How many functions this pipeline has run on in this process: a cheap count by which the
    /// tests check that each caller runs this pipeline (test_driver.cpp).
    uint64_t functions_run() const { return functions_run_.load(std::memory_order_relaxed); }

private:
    friend const Pipeline& pipeline();
    explicit Pipeline(std::vector<Pass> passes) : passes_(std::move(passes)) {}

    std::vector<Pass> passes_;
    mutable std::atomic<uint64_t> functions_run_{0};
};

/// The pipeline: inline_calls, strip_detach, dead_code, cse, pair_sincos (pipeline.cpp says why
/// in this order). Process-wide, immutable, safe to run from several threads at once.
const Pipeline& pipeline();

}  // namespace sg::driver
