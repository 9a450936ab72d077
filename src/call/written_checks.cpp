// src/call/written_checks.cpp — the refusals of written_checks.h.
#include "call/written_checks.h"

#include "call/errors.h"

namespace sg::call {

namespace {

/// The first dimension of `t` with an extent above 1 and stride 0, or -1 (torch's definite
/// internal overlap; other overlapping layouts cannot come from torch's views).
int overlapping_dim(const TensorInfo& t) {
    for (int d = 0; d < t.ndim; ++d)
        if (t.shape[d] > 1 && t.strides[d] == 0) return d;
    return -1;
}

[[gnu::noinline]] void check_one(const Binding& b, const TensorInfo& t, const std::string& what, const char* how,
                                 bool grad_mode) {
    if (int d = overlapping_dim(t); d >= 0)
        throw_value_error(b.function + "(): " + what + " got a tensor whose elements overlap in memory (dimension " +
                          std::to_string(d) + " has extent " + std::to_string(t.shape[d]) +
                          " and stride 0, as expand() makes): a call cannot write it; pass a tensor of its own "
                          "(x.contiguous() or x.clone())");
    if (grad_mode && t.is_leaf && t.requires_grad)
        throw_value_error(b.function + "(): " + what + " is " + how +
                          " and got a leaf tensor that requires grad; torch does not allow writing such a tensor in "
                          "place (pass one that does not require grad: the written values join the graph through the "
                          "call anyway; or write it under torch.no_grad())");
}

}  // namespace

void check_written_tensors(const Binding& b, const ArgInfo* args, bool grad_mode) {
    if (b.result_arg >= 0) check_one(b, args[b.result_arg].tensor, "_result=", "written by the call", grad_mode);
    for (const ParamBinding& p : b.params) {
        if (!p.is_output || p.arg_kind != ArgKind::Tensor) [[likely]]
            continue;
        // inout tensors that are leaves requiring grad are refused under autograd by invoke.cpp,
        // with its own message; here only when the call records no node.
        const char* how = p.dir == lang::ParamDir::Out ? "out" : p.dir == lang::ParamDir::InOut ? "inout" : "written";
        if (p.dir == lang::ParamDir::InOut && b.autograd) {
            check_one(b, args[p.arg].tensor, "parameter '" + p.name + "'", how, false);
            continue;
        }
        check_one(b, args[p.arg].tensor, "parameter '" + p.name + "'", how, grad_mode);
    }
}

}  // namespace sg::call
