// src/call/coop_derivative.cpp — the derivative kernels of a [Differentiable] [CUDAKernel]
// function, as glue: a [CUDAKernel] entry with the kernel's own parameters that calls
// bwd_diff(kernel) (slangtorch's `.bwd`) or fwd_diff(kernel) (`.fwd`). The launch binds the same
// arguments, a DiffTensorView's gradient beside its values, and uses the same block and grid.
//
// A differentiable scalar, vector or matrix parameter (not no_diff) becomes a pair whose
// derivative starts at zero and is dropped: a kernel's outputs are its views, and so are the
// gradients it produces.
#include "call/coop_launch.h"

#include "call/errors.h"

namespace sg::call {

bool is_differentiable_value(const lang::VarDecl& p) {
    const lang::Type* t = p.type;
    return !p.is_no_diff && (t->is_scalar() || t->is_vector() || t->is_matrix()) && lang::is_floating(t->scalar) &&
           !t->enumeration;
}

Glue coop_derivative_glue(const FunctionState& fn, const lang::FunctionDecl& decl, CoopPass pass) {
    const char* what = pass == CoopPass::Backward ? "bwd" : "fwd";
    if (!lang::find_attribute(decl.attrs, "Differentiable"))
        throw_type_error(fn.name + "." + what + "(): " + fn.name +
                         " is not [Differentiable]: mark the [CUDAKernel] function [Differentiable] to launch its "
                         "derivative");
    Glue glue;
    glue.entry = "__sg_coop_" + std::string(what) + "_" + decl.name;
    std::string params, setup, args;
    for (size_t k = 0; k < decl.params.size(); ++k) {
        const lang::VarDecl& p = *decl.params[k];
        const std::string name = "p" + std::to_string(k);
        const std::string type = lang::type_name(p.type);
        params += (k ? ", " : "") + type + " " + name;
        if (is_differentiable_value(p)) {
            // bwd_diff takes an inout pair, fwd_diff a pair: its derivative starts at zero.
            setup += "    DifferentialPair<" + type + "> d" + name + " = diffPair(" + name + ", " + type + "(0));\n";
            args += (k ? ", " : "") + ("d" + name);
        } else {
            args += (k ? ", " : "") + name;
        }
    }
    glue.source = "[CUDAKernel]\nvoid " + glue.entry + "(" + params + ")\n{\n" + setup + "    " + what + "_diff(" +
                  decl.name + ")(" + args + ");\n}\n";
    return glue;
}

}  // namespace sg::call
