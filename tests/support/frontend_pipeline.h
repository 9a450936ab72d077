// tests/support/frontend_pipeline.h — the whole compiler front end on one module, for the fuzzer,
// the resource-limit tests and the front-end benchmark.
//
// In: one source text. Out: whether it compiled, the rendered diagnostics, and how long each
// phase took. The phases are those of shadegradc and call/compile_kernel.cpp in a straight line:
// load_modules (preprocess, imports) → parse → sema → lower every function → autodiff → inline_calls → strip_detach → dead_code →
// (IR text) → CPU code generation. Unlike a kernel compilation there is no glue entry: every
// function of the module is instantiated (and, on request, differentiated both ways) — with its
// declared parameter types, or, for a function with interface tensor parameters
// (`IDiffTensor<float,2>`), either skipped or instantiated with the concrete tensor type a call
// with gradients would give it.
//
// A user error (CompileError) is caught and returned as `ok == false`. An InternalError or any
// other exception propagates: for these callers that is a compiler bug.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "codegen/codegen.h"
#include "ir/lower.h"
#include "ir/passes.h"
#include "lang/link_constants.h"
#include "lang/module_loader.h"
#include "lang/parser.h"
#include "lang/sema.h"

namespace sg::test {

struct FrontendOptions {
    /// Instantiate functions with interface tensor parameters with the concrete, gradient-bound
    /// tensor type (`IDiffTensor` → `DiffTensor` with a gradient buffer); false skips them, as
    /// `shadegradc` does.
    bool concrete_tensors = false;
    /// Also request the forward and the backward derivative of every [Differentiable] function
    /// (as `fwd_diff(f)` / `bwd_diff(f)` calls anywhere would), not only those the module uses.
    bool differentiate_all = false;
    /// Run ir::verify_function after every pass on every function (after_pass only does so in
    /// debug builds or with SHADEGRAD_VERIFY_IR=1).
    bool verify = false;
    bool print_ir = false;  ///< render ir::print_program after the passes
    /// Stop after sema: the part of every kernel compilation that covers the whole module
    /// (lowering and what follows only see the functions a kernel reaches).
    bool check_only = false;
    bool codegen = true;    ///< generate CPU C++ (codegen::generate_functions)
};

/// Wall time per phase, in milliseconds. A phase that did not run stays 0.
struct FrontendTimes {
    double parse_ms = 0, sema_ms = 0, lower_ms = 0, autodiff_ms = 0, passes_ms = 0, codegen_ms = 0;
    double total_ms() const { return parse_ms + sema_ms + lower_ms + autodiff_ms + passes_ms + codegen_ms; }
};

struct FrontendResult {
    bool ok = false;             ///< compiled without errors
    std::string diagnostics;     ///< rendered errors (and warnings)
    size_t ir_functions = 0;     ///< IR functions produced, derivatives included
    size_t output_bytes = 0;     ///< size of the generated CPU source
    FrontendTimes times;
};

namespace detail {

class PhaseTimer {
public:
    explicit PhaseTimer(double& out_ms) : out_ms_(out_ms), start_(std::chrono::steady_clock::now()) {}
    ~PhaseTimer() {
        out_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    }
    PhaseTimer(const PhaseTimer&) = delete;
    PhaseTimer& operator=(const PhaseTimer&) = delete;

private:
    double& out_ms_;
    std::chrono::steady_clock::time_point start_;
};

inline bool has_interface_tensor_param(const lang::FunctionDecl& f) {
    for (const lang::VarDecl* p : f.params)
        if (p->type && p->type->is_tensor() && p->type->tensor.interface) return true;
    return false;
}

/// The parameter types a call with gradients for every differentiable tensor would bind.
inline std::vector<const lang::Type*> concrete_param_types(lang::TypeContext& types, const lang::FunctionDecl& f) {
    std::vector<const lang::Type*> out;
    for (const lang::VarDecl* p : f.params) {
        const lang::Type* t = p->type;
        if (t->is_tensor() && t->tensor.interface) {
            lang::TensorKind kind = t->tensor;
            kind.interface = false;
            kind.has_grad = kind.differentiable;
            t = types.tensor(t->element, t->rank, kind);
        }
        out.push_back(t);
    }
    return out;
}

/// Whether differentiating `fn` in this direction is something a user could ask for: sema rejects
/// `bwd_diff(f)` when f reaches a function with only a [ForwardDerivative] (and `fwd_diff(f)`
/// the reverse), so the harness must not request those either. Conservative: any call counts.
inline bool derivative_requestable(const ir::Function& fn, bool backward) {
    std::vector<const ir::Function*> pending{&fn};
    std::vector<const ir::Function*> seen;
    auto visit_block = [&](const ir::Block& b, auto&& self) -> void {
        for (const auto& inst : b.insts) {
            if (inst->op == ir::OpKind::Call && inst->callee) pending.push_back(inst->callee);
            for (const auto& region : inst->regions) self(*region, self);
        }
    };
    while (!pending.empty()) {
        const ir::Function* f = pending.back();
        pending.pop_back();
        if (std::find(seen.begin(), seen.end(), f) != seen.end()) continue;
        seen.push_back(f);
        if (backward ? f->custom_backward : f->custom_forward) continue;  // used as is
        if (backward ? f->custom_forward : f->custom_backward) return false;
        if (f->body) visit_block(*f->body, visit_block);
    }
    return true;
}

}  // namespace detail

/// Runs the front end on `source` (see the file comment). Throws InternalError (or another
/// exception) only for compiler bugs.
inline FrontendResult run_frontend(const std::string& name, std::string source, const FrontendOptions& options = {}) {
    FrontendResult result;
    lang::SourceManager sources;
    lang::AstContext ast;
    lang::TypeContext types;
    lang::Diagnostics diags;
    ir::Program program;
    program.types = &types;
    // Derivative stubs have an empty body until autodiff fills them (`stubs_pending`).
    auto verify_all = [&](const char* after, bool stubs_pending = false) {
        if (!options.verify) return;
        for (const auto& fn : program.functions)
            if (!(stubs_pending && fn->body->insts.empty())) ir::verify_function(*fn, after);
    };
    try {
        std::vector<lang::ModuleAst*> modules;
        {
            // Preprocessor and imports included; includes and imports find only the two virtual
            // files below, never the file system.
            detail::PhaseTimer t(result.times.parse_ms);
            lang::SourceLoader loader;
            loader.use_virtual_files({{"fuzz.h", "#pragma once\n#define FZ(x) ((x) + 1)\nfloat fz(float x) { return FZ(x); }\n"},
                                      {"fuzzmod.slang", "import fuzzmod;\nfloat fm(float x) { return x * 2; }\n"}});
            modules = lang::load_modules(sources.add(name, std::move(source)), sources, loader, ast, diags);
            // As a kernel compile does: every extern needs its value (here: its default) by now.
            lang::bind_link_constants(modules, {}, /*require_values=*/true, ast, diags);
            diags.throw_if_errors();
        }
        lang::SemaResult sema;
        {
            detail::PhaseTimer t(result.times.sema_ms);
            sema = lang::analyze(modules, ast, types, diags);
            diags.throw_if_errors();
        }
        if (options.check_only) {
            result.ok = true;
            result.diagnostics = diags.render();  // warnings
            return result;
        }
        ir::Lowering lowering(program, diags);
        {
            detail::PhaseTimer t(result.times.lower_ms);
            for (lang::FunctionDecl* f : sema.functions) {
                if (!detail::has_interface_tensor_param(*f)) lowering.instantiate(f);
                else if (options.concrete_tensors) lowering.instantiate(f, detail::concrete_param_types(types, *f));
            }
            diags.throw_if_errors();
            if (options.differentiate_all) {
                // derivative() appends stubs to program.functions: walk the primals only.
                size_t primal_count = program.functions.size();
                for (size_t k = 0; k < primal_count; ++k) {
                    ir::Function* fn = program.functions[k].get();
                    if (!fn->differentiable) continue;
                    if (detail::derivative_requestable(*fn, false)) lowering.derivative(fn, ir::DerivativeKind::Forward);
                    if (detail::derivative_requestable(*fn, true)) lowering.derivative(fn, ir::DerivativeKind::Backward);
                }
            }
            verify_all("lower", /*stubs_pending=*/true);
        }
        {
            detail::PhaseTimer t(result.times.autodiff_ms);
            autodiff::generate_derivatives(program, lowering.derivative_requests());
            diags.throw_if_errors();
            verify_all("autodiff");
        }
        {
            detail::PhaseTimer t(result.times.passes_ms);
            for (auto& fn : program.functions) {
                ir::inline_calls(*fn);
                autodiff::strip_detach(*fn);
                ir::dead_code(*fn);
            }
            diags.throw_if_errors();
            verify_all("dead_code");
            if (options.print_ir) result.output_bytes += ir::print_program(program).size();
        }
        if (options.codegen) {
            detail::PhaseTimer t(result.times.codegen_ms);
            result.output_bytes += codegen::generate_functions(program, DeviceType::CPU).size();
        }
        result.ok = true;
        result.diagnostics = diags.render();  // warnings
    } catch (const lang::CompileError& e) {
        result.ok = false;
        result.diagnostics = e.what();
    }
    result.ir_functions = program.functions.size();
    return result;
}

}  // namespace sg::test
