// src/driver/driver.cpp — the compilation of a module set, phase after phase (driver.h).
#include "driver/driver.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>

#include "autodiff/autodiff.h"
#include "ir/lower.h"
#include "ir/passes.h"
#include "syntax/module_loader.h"
#include "syntax/parser.h"
#include "lang/coop.h"
#include "lang/sema.h"
#include "lang/wave.h"

namespace sg::driver {

namespace {

/// Adds the wall time of its scope to a phase's total (also when the phase throws).
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

/// Whether differentiating `fn` in this direction is something a user could ask for: sema rejects
/// `bwd_diff(f)` when f reaches a function with only a [ForwardDerivative] (and `fwd_diff(f)`
/// the reverse), so Derivatives::AllRequestable must not request those either. Conservative:
/// any call counts.
bool derivative_requestable(const ir::Function& fn, bool backward) {
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
        if (backward && f->forward_only) return false;  // [ForwardDifferentiable]
        if (f->body) visit_block(*f->body, visit_block);
    }
    return true;
}

std::vector<lang::ModuleAst*> load(const Workspace& ws, const Input& input) {
    std::vector<lang::ModuleAst*> modules = input.modules;
    for (const RootFile& root : input.roots) {
        lang::SourceFile* file = ws.sources.add(root.name, root.text);
        file->path = root.path;
        lang::SourceLoader default_loader;
        std::vector<lang::ModuleAst*> loaded =
            lang::load_modules(file, ws.sources, root.loader ? *root.loader : default_loader, ws.ast, ws.diags);
        if (root.constants)
            lang::bind_link_constants(loaded, *root.constants, /*require_values=*/true, ws.ast, ws.diags);
        modules.insert(modules.end(), loaded.begin(), loaded.end());
    }
    for (const auto& [name, text] : input.glue)
        modules.push_back(lang::parse_module(ws.sources.add(name, text), ws.ast, ws.diags));
    return modules;
}

/// Lowers the entries Options name into `result` and records the derivative requests.
void lower_entries(const Workspace& ws, const Options& options, const lang::SemaResult& sema, ir::Lowering& lowering,
                   Result& result) {
    if (options.scope == Scope::Kernel) {
        lang::FunctionDecl* entry = nullptr;
        for (lang::FunctionDecl* f : sema.functions)
            if (f->name == options.entry) entry = f;
        SG_INTERNAL_ASSERT(entry != nullptr, "glue entry " + options.entry + " not found");
        result.entries.push_back(lowering.instantiate(entry));
        return;
    }
    for (lang::FunctionDecl* f : sema.functions) {
        if (!options.entry.empty() && f->name != options.entry) continue;
        if (!options.concrete_tensors && has_interface_tensor_param(*f)) continue;
        ir::Function* fn = lowering.instantiate(f, concrete_params(*f, ws.types));
        result.entries.push_back(fn);
        if (options.derivatives == Derivatives::EachLowered && f->is_differentiable) {
            // As AllRequestable: not through a callee that has only the other kind's derivative.
            if (!fn->custom_backward && derivative_requestable(*fn, true))
                lowering.derivative(fn, ir::DerivativeKind::Backward);
            if (!fn->custom_forward && derivative_requestable(*fn, false))
                lowering.derivative(fn, ir::DerivativeKind::Forward);
        }
    }
    if (options.derivatives == Derivatives::AllRequestable) {
        // derivative() appends stubs to program.functions: walk the primals only.
        size_t primal_count = result.program.functions.size();
        for (size_t k = 0; k < primal_count; ++k) {
            ir::Function* fn = result.program.functions[k].get();
            if (!fn->differentiable) continue;
            // A custom derivative is used as written: the body is not differentiated in its place
            // (it may hold what that derivative exists to avoid, e.g. a loop without [MaxIters]).
            if (!fn->custom_forward && derivative_requestable(*fn, false))
                lowering.derivative(fn, ir::DerivativeKind::Forward);
            if (!fn->custom_backward && derivative_requestable(*fn, true))
                lowering.derivative(fn, ir::DerivativeKind::Backward);
        }
    }
}

/// Derivative stubs have an empty body until autodiff fills them (`stubs_pending`).
void verify_all(const ir::Program& program, const char* after, bool stubs_pending = false) {
    for (const auto& fn : program.functions)
        if (!(stubs_pending && fn->body->insts.empty())) ir::verify_function(*fn, after);
}

/// A kernel that is not a [CUDAKernel] function runs once per call element, with no block to
/// share memory with or to meet at a barrier: the first cooperative construct it (or a function
/// it still calls) uses is a located error.
const ir::Inst* first_cooperative_inst(const ir::Block& block, std::set<const ir::Function*>& seen) {
    for (const auto& inst : block.insts) {
        switch (inst->op) {
        case ir::OpKind::CoopId:
            // SlangPy's call-group ids belong to calls, not launches (call_shape_inst finds them).
            if (lang::is_call_shape_id(lang::CoopId(inst->imm_int))) break;
            return inst.get();
        case ir::OpKind::Barrier:
        case ir::OpKind::Wave:
        case ir::OpKind::SharedView: return inst.get();
        case ir::OpKind::Call:
            if (inst->callee->body && seen.insert(inst->callee).second)
                if (const ir::Inst* found = first_cooperative_inst(*inst->callee->body, seen)) return found;
            break;
        default: break;
        }
        for (const auto& region : inst->regions)
            if (const ir::Inst* found = first_cooperative_inst(*region, seen)) return found;
    }
    return nullptr;
}

/// The first of SlangPy's call-group ids (CallShapeInfo) that `block` or a function it calls
/// reads.
const ir::Inst* call_shape_inst(const ir::Block& block, std::set<const ir::Function*>& seen) {
    for (const auto& inst : block.insts) {
        if (inst->op == ir::OpKind::CoopId && lang::is_call_shape_id(lang::CoopId(inst->imm_int))) return inst.get();
        if (inst->op == ir::OpKind::Call && inst->callee->body && seen.insert(inst->callee).second)
            if (const ir::Inst* found = call_shape_inst(*inst->callee->body, seen)) return found;
        for (const auto& region : inst->regions)
            if (const ir::Inst* found = call_shape_inst(*region, seen)) return found;
    }
    return nullptr;
}

/// A kernel called per element may use its block (groupshared memory, barriers, waves) only in
/// call groups (CodegenOptions::call_group_rank); a [CUDAKernel] function has no call shape.
void check_not_cooperative(const ir::Program& program, const ir::Function& kernel, const codegen::CodegenOptions& options,
                           lang::Diagnostics& diags) {
    if (kernel.cooperative) {
        // A function that takes views called in call groups (call/view_call.cpp): its glue is a
        // [CUDAKernel] entry run as the blocks of the groups, whose ids it reads.
        if (options.call_group_rank >= 0) return;
        std::set<const ir::Function*> seen;
        if (const ir::Inst* inst = call_shape_inst(*kernel.body, seen))
            diags.error(inst->loc, "CallShapeInfo (SlangPy's call ids) is only available in a function called per "
                                   "element; a [CUDAKernel] function runs once per thread of a launch: use "
                                   "cudaThreadIdx() and cudaBlockIdx()");
        return;
    }
    if (options.call_group_rank >= 0) return;
    std::set<const ir::Function*> seen;
    const ir::Inst* inst = first_cooperative_inst(*kernel.body, seen);
    if (!inst) return;
    std::string what;
    if (inst->op == ir::OpKind::CoopId) what = std::string(lang::coop_id_name(lang::CoopId(inst->imm_int))) + "()";
    else if (inst->op == ir::OpKind::Barrier) what = "a barrier";
    else if (inst->op == ir::OpKind::Wave) what = std::string(lang::wave_op_name(lang::WaveOp(inst->imm_int))) + "()";
    else what = "groupshared variable '" + program.shared.at(size_t(inst->imm_int)).name + "'";
    diags.error(inst->loc, what + " is only available in a [CUDAKernel] function (and the functions it calls), which "
                                  "runs once per thread of a launch, or in a call in call groups "
                                  "(fn.call_group_shape(...)); this function is called per element");
}

std::mutex g_totals_mutex;
Totals g_totals;

/// Adds one compile's phase times to the process totals when it ends (also by an exception).
struct AddToTotals {
    const PhaseTimes& times;
    const PhaseTimes before = times;  // a Result may come in with times of an earlier compile
    bool codegen = false;
    ~AddToTotals() {
        std::lock_guard<std::mutex> lock(g_totals_mutex);
        ++g_totals.front_end_runs;
        if (codegen) ++g_totals.codegen_runs;
        PhaseTimes& t = g_totals.times;
        t.parse_ms += times.parse_ms - before.parse_ms;
        t.sema_ms += times.sema_ms - before.sema_ms;
        t.lower_ms += times.lower_ms - before.lower_ms;
        t.autodiff_ms += times.autodiff_ms - before.autodiff_ms;
        t.passes_ms += times.passes_ms - before.passes_ms;
        t.codegen_ms += times.codegen_ms - before.codegen_ms;
    }
};

}  // namespace

Totals totals() {
    std::lock_guard<std::mutex> lock(g_totals_mutex);
    return g_totals;
}

void compile(const Workspace& ws, const Input& input, const Options& options, Result& result) {
    PhaseTimes& times = result.times;
    AddToTotals add{times};
    {
        PhaseTimer t(times.parse_ms);
        result.modules = load(ws, input);
        ws.diags.throw_if_errors();
    }
    if (options.stop_after == Phase::Load) return;

    lang::SemaResult sema;
    {
        PhaseTimer t(times.sema_ms);
        sema = lang::analyze(result.modules, ws.ast, ws.types, ws.diags, options.allow_internal);
        ws.diags.throw_if_errors();
    }
    if (options.stop_after == Phase::Sema) return;
    {
        // A root loaded without link values (shadegradc) may leave an extern without one: code
        // cannot be generated for it, which is its located 45001 here as in a kernel compile.
        const lang::LinkConstants none;
        for (const RootFile& root : input.roots)
            if (!root.constants) lang::bind_link_constants(result.modules, none, /*require_values=*/true, ws.ast, ws.diags);
        ws.diags.throw_if_errors();
    }

    result.program.types = &ws.types;
    ir::Lowering lowering(result.program, ws.diags);
    {
        PhaseTimer t(times.lower_ms);
        lower_entries(ws, options, sema, lowering, result);
        ws.diags.throw_if_errors();
        if (options.verify) verify_all(result.program, "lower", /*stubs_pending=*/true);
    }
    if (result.entries.empty() && !options.entry.empty()) return;  // the caller says so

    {
        PhaseTimer t(times.autodiff_ms);
        autodiff::generate_derivatives(result.program, lowering.derivative_requests());
        if (options.verify) verify_all(result.program, "autodiff");
    }
    {
        PhaseTimer t(times.passes_ms);
        PassHooks hooks;
        hooks.verify = options.verify;
        result.pipeline = &pipeline();
        // A kernel is the only function its generated code needs (its callees are inlined).
        if (options.scope == Scope::Kernel) {
            result.pipeline->run(*result.entries.front(), hooks);
            check_not_cooperative(result.program, *result.entries.front(), options.codegen, ws.diags);
            ws.diags.throw_if_errors();
        } else {
            result.pipeline->run(result.program, hooks);
        }
        if (options.emit_ir)
            result.ir_text = options.scope == Scope::Kernel ? ir::print_function(*result.entries.front())
                                                            : ir::print_program(result.program);
    }
    if (options.emit_code) {
        add.codegen = true;
        PhaseTimer t(times.codegen_ms);
        if (options.scope == Scope::Kernel)
            result.kernel =
                codegen::generate_kernel(result.program, *result.entries.front(), options.target, options.codegen);
        else result.code = codegen::generate_functions(result.program, options.target);
    }
}

std::vector<const lang::Type*> concrete_params(const lang::FunctionDecl& f, lang::TypeContext& types) {
    std::vector<const lang::Type*> out;
    for (const lang::VarDecl* p : f.params) {
        const lang::Type* t = p->type;
        if (t && t->is_tensor() && t->tensor.interface) {
            lang::TensorKind kind = t->tensor;
            kind.interface = false;
            kind.has_grad = kind.differentiable;
            t = types.tensor(t->element, t->rank, kind);
        }
        out.push_back(t);
    }
    return out;
}

bool has_interface_tensor_param(const lang::FunctionDecl& f) {
    for (const lang::VarDecl* p : f.params)
        if (p->type && p->type->is_tensor() && p->type->tensor.interface) return true;
    return false;
}

}  // namespace sg::driver
