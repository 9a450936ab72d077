// src/driver/driver.h — the compiler driver: the whole compilation of a module set in one
// straight line, shared by the call layer (call/compile_kernel.cpp: one kernel per call), the
// command-line compiler (tools/shadegradc.cpp) and the test pipeline (tests/support/
// frontend_pipeline.h: the fuzzer, the resource-limit tests, the front-end benchmark).
//
//   load (preprocess, imports, link constants; the call glue parsed as is) → sema → lower the
//   entries (and request derivatives) → autodiff → the IR passes (pipeline.h) → IR text → codegen
//
// What differs between the callers is an Option, never a copy of the line: a kernel's glue entry
// or every function, concrete tensor parameters, which derivatives, check-only, the target. Every
// caller runs the one pass pipeline, driver::pipeline().
//
// In: a Workspace (the caller's sources, AST, types and diagnostics: the IR, the generated
// kernel's parameter layout and the diagnostics point into them, so the caller decides how long
// they live), an Input and Options. Out: a Result, filled as the phases run. A mistake in the
// source ends the compile with lang::CompileError (Diagnostics::throw_if_errors) after the phase
// that found it; what the Result had by then stays readable. An InternalError is a compiler bug.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "codegen/codegen.h"
#include "driver/pipeline.h"
#include "ir/ir.h"
#include "syntax/ast.h"
#include "syntax/diagnostics.h"
#include "lang/link_constants.h"
#include "syntax/source_loader.h"
#include "lang/types.h"

namespace sg::driver {

/// The caller's front-end state for one compilation.
struct Workspace {
    lang::SourceManager& sources;
    lang::AstContext& ast;
    lang::TypeContext& types;
    lang::Diagnostics& diags;
};

/// A file loaded with its includes and imports (lang::load_modules).
struct RootFile {
    std::string name;  ///< as diagnostics show it
    std::string text;
    std::string path;  ///< where it is on disk: includes and imports resolve beside it ("": nowhere)
    lang::SourceLoader* loader = nullptr;  ///< finds included and imported files; nullptr: a default one
    /// The values of its `extern static const`s, bound with every extern required to have one (a
    /// kernel compile's rule); nullptr leaves them unbound (shadegradc).
    const lang::LinkConstants* constants = nullptr;
};

/// The modules of one compilation, in this order.
struct Input {
    /// Modules the caller has already loaded into the workspace (the call layer's user module,
    /// UserModule::parse_into); errors they reported are thrown with the others after loading.
    std::vector<lang::ModuleAst*> modules;
    std::vector<RootFile> roots;  ///< loaded here
    /// Sources parsed as they are, each one module, without preprocessing or imports: the call
    /// layer's generated glue (name, text).
    std::vector<std::pair<std::string, std::string>> glue;
};

/// What is lowered and generated.
enum class Scope : uint8_t {
    /// The one function named Options::entry (the call layer's glue entry point; missing: an
    /// internal error), with its declared parameter types: its IR text, codegen::generate_kernel.
    Kernel,
    /// Every function, or each one named Options::entry when that is set: the program's IR text,
    /// codegen::generate_functions.
    Functions,
};

/// Which derivatives are requested beyond those the source asks for (bwd_diff/fwd_diff calls).
enum class Derivatives : uint8_t {
    None,
    /// shadegradc: right after each [Differentiable] function is lowered, its backward then its
    /// forward derivative, as a bwd_diff/fwd_diff call would generate them; none of a kind the
    /// user supplies ([BackwardDerivative] / [ForwardDerivative]), nor one sema would refuse (through
    /// a callee with only the other kind's derivative).
    EachLowered,
    /// The fuzzer and the limits tests: once every function is lowered, the forward then the
    /// backward derivative of every differentiable IR function, each only where sema would accept
    /// the call that asks for it (bwd_diff(f) of an f that reaches a function with only a
    /// [ForwardDerivative] is an error, and the reverse).
    AllRequestable,
};

enum class Phase : uint8_t { Load, Sema, Everything };

struct Options {
    Scope scope = Scope::Functions;
    std::string entry;  ///< Kernel: the entry point; Functions: "" for every function
    /// Functions: a function with interface tensor parameters (ITensor, IDiffTensor, ...) is
    /// lowered with concrete_params (true) or left out (false).
    bool concrete_tensors = true;
    Derivatives derivatives = Derivatives::None;
    bool allow_internal = false;           ///< sema accepts internal names (__sg_...): the call glue
    Phase stop_after = Phase::Everything;  ///< Load: parse only (shadegradc --emit ast); Sema: check only
    /// ir::verify_function after lowering, after autodiff and after every pass on every function.
    bool verify = false;
    bool emit_ir = true;    ///< Result::ir_text
    bool emit_code = true;  ///< Result::code (Functions) or Result::kernel (Kernel)
    DeviceType target = DeviceType::CPU;
    codegen::CodegenOptions codegen;  ///< Kernel only
};

/// Wall time per phase, in milliseconds; a phase that did not run stays 0. The IR text counts
/// with the passes.
struct PhaseTimes {
    double parse_ms = 0, sema_ms = 0, lower_ms = 0, autodiff_ms = 0, passes_ms = 0, codegen_ms = 0;
    double total_ms() const { return parse_ms + sema_ms + lower_ms + autodiff_ms + passes_ms + codegen_ms; }
};

struct Result {
    std::vector<lang::ModuleAst*> modules;  ///< every module, in Input order (a root's own last of its set)
    ir::Program program;                    ///< IR functions, derivatives included
    /// The functions lowered as entries: Kernel, the one; Functions, those lowered (empty with a
    /// named entry that no function has: the compile stops there).
    std::vector<ir::Function*> entries;
    const Pipeline* pipeline = nullptr;  ///< the pipeline that ran (always &driver::pipeline())
    std::string ir_text;                 ///< Kernel: the entry's IR; Functions: the program's
    std::string code;                    ///< Functions: generated CPU or CUDA C++
    codegen::GeneratedKernel kernel;     ///< Kernel: the generated kernel
    PhaseTimes times;
};

/// Runs the compilation (see the file comment) into `result`.
void compile(const Workspace& workspace, const Input& input, const Options& options, Result& result);

/// What compile() did in this process so far (all threads): how often it ran (the front end:
/// load and sema), how often it reached codegen, and the wall time of each phase, summed. Tests
/// read the counts to see that a call was served without compiling (call/kernel_index.h), the
/// first-call profile reads the times (docs/performance.md).
struct Totals {
    uint64_t front_end_runs = 0;
    uint64_t codegen_runs = 0;
    PhaseTimes times;
};
Totals totals();

/// The parameter types a function is compiled with outside a call: its declared types, except
/// that an interface tensor (ITensor, IDiffTensor, ...) takes its concrete kind with every buffer
/// bound (for IDiffTensor: a DiffTensor with a gradient), the kind of a call in which every input
/// requires grad.
std::vector<const lang::Type*> concrete_params(const lang::FunctionDecl& f, lang::TypeContext& types);

/// Whether `f` has a parameter of an interface tensor type.
bool has_interface_tensor_param(const lang::FunctionDecl& f);

}  // namespace sg::driver
