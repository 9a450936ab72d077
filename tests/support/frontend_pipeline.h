// tests/support/frontend_pipeline.h — the whole compiler front end on one module, for the fuzzer,
// the resource-limit tests and the front-end benchmark.
//
// In: one source text. Out: whether it compiled, the rendered diagnostics, and how long each
// phase took. The phases are the compiler driver's (src/driver/driver.h), the same line as
// shadegradc and the call layer's kernel compiles, with the same IR pass pipeline
// (driver::pipeline(): inline_calls, strip_detach, dead_code, cse, pair_sincos): load_modules
// (preprocess, imports) → parse → sema → lower every function → autodiff → the passes → (IR text)
// → CPU code generation. Unlike a kernel compilation there is no glue entry: every function of
// the module is instantiated (and, on request, differentiated both ways) — with its declared
// parameter types, or, for a function with interface tensor parameters (`IDiffTensor<float,2>`),
// either skipped or instantiated with the concrete tensor type a call with gradients would give
// it (driver::concrete_params).
//
// A user error (CompileError) is caught and returned as `ok == false`. An InternalError or any
// other exception propagates: for these callers that is a compiler bug.
#pragma once

#include <string>

#include "driver/driver.h"

namespace sg::test {

struct FrontendOptions {
    /// Instantiate functions with interface tensor parameters with the concrete, gradient-bound
    /// tensor type (`IDiffTensor` → `DiffTensor` with a gradient buffer); false skips them.
    bool concrete_tensors = false;
    /// Also request the forward and the backward derivative of every [Differentiable] function
    /// (as `fwd_diff(f)` / `bwd_diff(f)` calls anywhere would), not only those the module uses.
    bool differentiate_all = false;
    /// Run ir::verify_function after lowering, after autodiff and after every pass on every
    /// function (after_pass only does so in debug builds or with SHADEGRAD_VERIFY_IR=1).
    bool verify = false;
    bool print_ir = false;  ///< render ir::print_program after the passes
    /// Stop after sema: the part of every kernel compilation that covers the whole module
    /// (lowering and what follows only see the functions a kernel reaches).
    bool check_only = false;
    bool codegen = true;    ///< generate CPU C++ (codegen::generate_functions)
};

/// Wall time per phase, in milliseconds. A phase that did not run stays 0.
using FrontendTimes = driver::PhaseTimes;

struct FrontendResult {
    bool ok = false;             ///< compiled without errors
    std::string diagnostics;     ///< rendered errors (and warnings)
    size_t ir_functions = 0;     ///< IR functions produced, derivatives included
    size_t output_bytes = 0;     ///< size of the IR text and the generated CPU source
    FrontendTimes times;
    const driver::Pipeline* pipeline = nullptr;  ///< the IR pass pipeline that ran (test_driver.cpp)
};

/// Runs the front end on `source` (see the file comment). Throws InternalError (or another
/// exception) only for compiler bugs.
inline FrontendResult run_frontend(const std::string& name, std::string source, const FrontendOptions& options = {}) {
    FrontendResult result;
    lang::SourceManager sources;
    lang::AstContext ast;
    lang::TypeContext types;
    lang::Diagnostics diags;
    // Preprocessor and imports included; includes and imports find only the two virtual files
    // below, never the file system.
    lang::SourceLoader loader;
    loader.use_virtual_files({{"fuzz.h", "#pragma once\n#define FZ(x) ((x) + 1)\nfloat fz(float x) { return FZ(x); }\n"},
                              {"fuzzmod.slang", "import fuzzmod;\nfloat fm(float x) { return x * 2; }\n"}});
    // As a kernel compile does: every extern needs its value (here: its default) by now.
    const lang::LinkConstants no_constants;
    driver::Input input;
    input.roots.push_back({name, std::move(source), "", &loader, &no_constants});

    driver::Options driver_options;
    driver_options.scope = driver::Scope::Functions;
    driver_options.concrete_tensors = options.concrete_tensors;
    driver_options.derivatives = options.differentiate_all ? driver::Derivatives::AllRequestable : driver::Derivatives::None;
    driver_options.stop_after = options.check_only ? driver::Phase::Sema : driver::Phase::Everything;
    driver_options.verify = options.verify;
    driver_options.emit_ir = options.print_ir;
    driver_options.emit_code = options.codegen;
    driver_options.target = DeviceType::CPU;

    driver::Result compiled;
    try {
        driver::compile({sources, ast, types, diags}, input, driver_options, compiled);
        result.ok = true;
        result.diagnostics = diags.render();  // warnings
    } catch (const lang::CompileError& e) {
        result.ok = false;
        result.diagnostics = e.what();
    }
    result.ir_functions = compiled.program.functions.size();
    result.output_bytes = compiled.ir_text.size() + compiled.code.size();
    result.times = compiled.times;
    result.pipeline = compiled.pipeline;
    return result;
}

}  // namespace sg::test
