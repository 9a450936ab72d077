// src/driver/pipeline.cpp — the one list of IR passes and the loop that runs it.
#include "driver/pipeline.h"

#include "autodiff/autodiff.h"
#include "ir/passes.h"

namespace sg::driver {

const Pipeline& pipeline() {
    // The order matters: inline first, so that every later pass sees the whole function;
    // strip_detach once autodiff no longer needs its markers; dead_code before cse, so that cse
    // compares only live code; pair_sincos after cse has merged repeated sins and coss.
    static const Pipeline the_pipeline({
        {"inline_calls", ir::inline_calls},
        {"strip_detach", autodiff::strip_detach},
        {"dead_code", ir::dead_code},
        {"cse", ir::cse},
        {"pair_sincos", ir::pair_sincos},
    });
    return the_pipeline;
}

std::vector<std::string> Pipeline::names() const {
    std::vector<std::string> out;
    for (const Pass& pass : passes_) out.push_back(pass.name);
    return out;
}

void Pipeline::run(ir::Function& fn, const PassHooks& hooks) const {
    functions_run_.fetch_add(1, std::memory_order_relaxed);
    for (const Pass& pass : passes_) {
        pass.run(fn);
        if (hooks.verify) ir::verify_function(fn, pass.name);
        if (hooks.after_each) hooks.after_each(pass, fn);
    }
}

void Pipeline::run(ir::Program& program, const PassHooks& hooks) const {
    for (auto& fn : program.functions) run(*fn, hooks);
}

}  // namespace sg::driver
