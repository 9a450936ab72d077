// src/call/view_call.cpp — SlangPy's calls of a function that takes TensorView or DiffTensorView
// parameters without being a [CUDAKernel] function (docs/calling.md, "Functions that take
// views"). SlangPy binds a view whole (it adds no call dimension), so such a call runs as many
// times as its other arguments say: once for numbers alone, N times with `_thread_count=N`, or
// once per element of an `sg.grid(shape)` argument. Here that call is a cooperative launch of a
// small [CUDAKernel] glue that calls the function (or bwd_diff / fwd_diff of it) from each
// thread: a view binds exactly as a kernel's does (coop_launch.cpp) and a grid parameter
// receives the grid's extents, from which the glue computes the thread's coordinate.
#include "call/coop_launch.h"

#include "call/errors.h"
#include "call/resolve.h"
#include "call/value_kind.h"

namespace sg::call {

namespace {

bool takes_view(const lang::FunctionDecl& f) {
    for (const lang::VarDecl* p : f.params)
        if (p->type && p->type->is_tensor() && p->type->tensor.view) return true;
    return false;
}

/// The coordinate of the thread in a grid whose extents parameter `p` holds (a vector's .x is
/// the last, fastest dimension, as for sg.grid in calls per element: glue.cpp).
std::string grid_coordinate(const lang::VarDecl& p, const std::string& name) {
    const lang::Type* t = p.type;
    const std::string comp = t->scalar == lang::ScalarKind::UInt32 ? "uint" : "int";
    if (t->is_scalar()) return comp + "(__sg_t)";
    static const char* kXyzw[] = {"x", "y", "z", "w"};
    std::string s = lang::type_name(t) + "(", below = "1u";
    for (int c = 0; c < t->rows; ++c) {
        const std::string extent = "uint(" + name + "." + kXyzw[c] + ")";
        std::string v = c == 0 ? "__sg_t" : "(__sg_t / (" + below + "))";
        if (c + 1 < t->rows) v += " % " + extent;
        s += (c ? ", " : "") + comp + "(" + v + ")";
        below += " * " + extent;
    }
    return s + ")";
}

}  // namespace

const lang::FunctionDecl* view_function_decl(const UserModule& module, const Callee& callee) {
    const lang::FunctionDecl* view = nullptr;
    for (const lang::FunctionDecl* f : candidate_declarations(module, callee)) {
        if (lang::find_attribute(f->attrs, "CUDAKernel")) return nullptr;
        if (!view && takes_view(*f)) view = f;
    }
    return view;
}

bool is_view_function(const UserModule& module, const Callee& callee) {
    return view_function_decl(module, callee) != nullptr;
}

bool view_function_returns_value(const UserModule& module, const Callee& callee) {
    const lang::FunctionDecl* f = view_function_decl(module, callee);
    return f && f->result_type && !f->result_type->is_void();
}

bool is_grid_parameter(const lang::Type* t) {
    return (t->is_scalar() || (t->is_vector() && t->rows <= 3)) && !t->enumeration &&
           (t->scalar == lang::ScalarKind::Int32 || t->scalar == lang::ScalarKind::UInt32);
}

Glue view_call_glue(const FunctionState& fn, const lang::FunctionDecl& decl, CoopPass pass, const ViewCallForm& form) {
    const char* what = pass == CoopPass::Backward ? "bwd" : pass == CoopPass::Forward ? "fwd" : "call";
    if (pass != CoopPass::Primal && !decl.is_differentiable)
        throw_type_error(fn.name + ".bwds(): " + fn.name +
                         " is not [Differentiable]: mark it [Differentiable] to run its derivative");
    const lang::Type* rt = decl.result_type;
    const bool result = rt && !rt->is_void();
    if (result && !((rt->is_scalar() || (rt->is_vector() && rt->scalar != lang::ScalarKind::Bool)) && !rt->enumeration))
        throw_type_error(fn.name + "(): it takes a TensorView and returns a " + lang::type_name(rt) +
                         ": a call of a function that takes views returns scalars and vectors only yet (write other "
                         "results through a view)");
    if (result && pass != CoopPass::Primal)
        throw_type_error(fn.name + ".bwds(): it takes a TensorView and returns a " + lang::type_name(rt) +
                         ": the derivative of such a function is not supported yet (return void and write the result "
                         "through a DiffTensorView)");
    if (result && form.rank + (rt->is_vector() ? 1 : 0) > 8)
        throw_value_error(fn.name + "(): its results would have more than 8 dimensions");
    Glue glue;
    glue.entry = "__sg_view_" + std::string(what) + "_" + decl.name;
    std::string params, setup, args;
    for (size_t k = 0; k < decl.params.size(); ++k) {
        const lang::VarDecl& p = *decl.params[k];
        const std::string name = "p" + std::to_string(k);
        const std::string type = lang::type_name(p.type);
        if (p.dir != lang::ParamDir::In)
            throw_type_error(fn.name + "(): parameter '" + p.name +
                             "' is out or inout: a function that takes views is called with in parameters only yet");
        std::string value = name;
        if (form.tensors & (1u << k)) {
            // One element per thread of a tensor bound to a value parameter: read through a view,
            // at the thread's coordinate in the call shape (the last dimension fastest).
            params += (k ? ", " : "") + std::string("TensorView<") + type + "> " + name;
            setup += "    uint r" + name + " = __sg_t;\n";
            std::string index;
            for (int d = form.rank - 1; d >= 0; --d) {
                const std::string c = "c" + name + "_" + std::to_string(d);
                setup += "    uint " + c + " = r" + name + " % " + name + ".size(" + std::to_string(d) + ");\n";
                if (d > 0) setup += "    r" + name + " /= " + name + ".size(" + std::to_string(d) + ");\n";
                index = c + (index.empty() ? "" : ", ") + index;
            }
            setup += "    " + type + " v" + name + " = " + name + "[" + index + "];\n";
            value = "v" + name;
        } else {
            params += (k ? ", " : "") + type + " " + name;
        }
        if (form.grids & (1u << k)) {
            setup += "    " + type + " g" + name + " = " + grid_coordinate(p, name) + ";\n";
            value = "g" + name;
        }
        if (pass != CoopPass::Primal && decl.is_differentiable && is_differentiable_value(p)) {
            // bwd_diff takes an inout pair, fwd_diff a pair: its derivative starts at zero and is dropped.
            setup += "    DifferentialPair<" + type + "> d" + name + " = diffPair(" + value + ", " + type + "(0));\n";
            value = "d" + name;
        }
        args += (k ? ", " : "") + value;
    }
    const std::string callee = pass == CoopPass::Primal ? decl.name : std::string(what) + "_diff(" + decl.name + ")";
    std::string call = "    " + callee + "(" + args + ");\n";
    if (result) {
        // One result per call, at the thread's coordinate in the call shape (the result view's
        // own extents); a single call writes element 0.
        params += std::string(params.empty() ? "" : ", ") + "TensorView<" + lang::type_name(rt) + "> __sg_result";
        std::string index = form.rank == 0 ? "0" : "", at;
        if (form.rank > 0) at = "    uint __sg_rr = __sg_t;\n";
        for (int d = form.rank - 1; d >= 0; --d) {
            const std::string c = "__sg_rc" + std::to_string(d);
            at += "    uint " + c + " = __sg_rr % __sg_result.size(" + std::to_string(d) + ");\n";
            if (d > 0) at += "    __sg_rr /= __sg_result.size(" + std::to_string(d) + ");\n";
            index = c + (index.empty() ? "" : ", ") + index;
        }
        call = at + "    __sg_result[" + index + "] = " + callee + "(" + args + ");\n";
    }
    const std::string thread = form.grids || form.tensors
                                   ? "    uint __sg_t = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;\n"
                                   : "";
    glue.source = "[CUDAKernel]\nvoid " + glue.entry + "(" + params + ")\n{\n" + thread + setup + call + "}\n";
    return glue;
}

ViewCallForm view_call_form(const std::string& name, const lang::FunctionDecl& decl,
                            const std::vector<const ArgInfo*>& bound, const LaunchShape& shape, LaunchShape& out) {
    out = shape;
    ViewCallForm form;
    // The call shape: every grid's and every per-element tensor's (one shape for all of them).
    std::vector<int64_t> call_shape;
    const char* shape_from = nullptr;
    for (size_t p = 0; p < decl.params.size(); ++p) {
        const lang::VarDecl& param = *decl.params[p];
        const ArgInfo& arg = *bound[p];
        const std::string what = name + "(): parameter '" + param.name + "' (" + lang::type_name(param.type) + ")";
        if (param.type->is_tensor()) continue;  // a view: coop_launch.cpp checks it
        if (arg.kind == ArgKind::Tensor && !shape.implicit)
            throw_value_error(name + "(): _thread_count is only valid for kernels with call dimensionality 0, and "
                              "parameter '" + param.name + "' (" + lang::type_name(param.type) +
                              ") is given a tensor, which gives the call dimensions of its own");
        if (arg.kind != ArgKind::Grid && arg.kind != ArgKind::Tensor) {
            if (arg.kind >= ArgKind::CallId && arg.kind <= ArgKind::RandFloat)
                throw_type_error(what + " is given " + arg_kind_name(arg.kind) + ": a call of a function that takes "
                                 "views takes numbers, tensors and sg.grid(shape) for its other parameters yet");
            continue;
        }
        if (p >= 16)
            throw_type_error(what + ": a call of a function that takes views vectorizes its first 16 parameters only");
        std::vector<int64_t> here;
        if (arg.kind == ArgKind::Tensor) {
            // SlangPy's vectorization beside views: one element of the tensor per call.
            const lang::Type* t = param.type;
            const bool value = (t->is_scalar() || (t->is_vector() && t->scalar != lang::ScalarKind::Bool)) &&
                               !t->enumeration;
            if (!value)
                throw_type_error(what + " is given a tensor: beside views, a tensor gives one element per call to a "
                                        "scalar or vector parameter only yet");
            const int components = t->is_vector() ? t->rows : 1;
            const int rank = arg.tensor.ndim - (components > 1 ? 1 : 0);
            if (rank < 1)
                throw_type_error(what + " is given a tensor of no call dimensions: pass the value as a number");
            if (arg.tensor.requires_grad && is_differentiable_value(param))
                throw_type_error(what + " is given a tensor that requires grad: beside views, gradients of per-element "
                                        "arguments are not computed yet (pass it detached, or read it through a "
                                        "DiffTensorView parameter)");
            here.assign(arg.tensor.shape, arg.tensor.shape + rank);
            form.tensors |= 1u << p;
        } else {
            if (!is_grid_parameter(param.type))
                throw_type_error(what + " is given an sg.grid: a grid's coordinate is an int or uint, or an int2/int3 "
                                        "(uint2/uint3) for a 2-D/3-D grid");
            const int components = param.type->is_vector() ? param.type->rows : 1;
            if (arg.number != 0)
                throw_type_error(what + ": an sg.grid with a stride or offset is not supported for a function that "
                                        "takes views yet");
            if (arg.tensor.ndim != components)
                throw_type_error(what + " takes the coordinate of a " + std::to_string(components) + "-D grid, got a " +
                                 std::to_string(arg.tensor.ndim) + "-D sg.grid");
            for (int d = 0; d < arg.tensor.ndim; ++d)
                if (arg.tensor.shape[d] < 0) throw_value_error(what + ": an sg.grid extent is negative");
            here.assign(arg.tensor.shape, arg.tensor.shape + arg.tensor.ndim);
            form.grids |= 1u << p;
        }
        if (shape_from && here != call_shape)
            throw_value_error(what + ": its call shape " + shape_text(here.data(), int(here.size())) + " differs from " +
                              shape_text(call_shape.data(), int(call_shape.size())) + " of an earlier argument (" +
                              shape_from + "); beside views, the shapes are not broadcast yet");
        call_shape = here;
        shape_from = arg.kind == ArgKind::Grid ? "an sg.grid" : "a tensor";
    }
    if (!shape_from) return form;
    if (!shape.implicit)
        throw_value_error(name + "(): _thread_count is only valid for kernels with call dimensionality 0: the sg.grid "
                                 "argument gives the call its threads (one per grid element); pass one or the other");
    form.rank = int(call_shape.size());
    form.call_shape = call_shape;
    int64_t threads = 1;
    for (int64_t e : call_shape) threads *= e;
    if (threads == 0) {
        out.grid[0] = 0;
        return form;
    }
    out.block[0] = threads < 256 ? threads : 256;
    out.block[1] = out.block[2] = out.grid[1] = out.grid[2] = 1;
    out.grid[0] = (threads + out.block[0] - 1) / out.block[0];
    out.thread_count = threads;
    out.implicit = true;
    return form;
}

}  // namespace sg::call
