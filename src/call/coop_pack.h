// src/call/coop_pack.h — packing the parameter block of a cooperative launch (coop_launch.cpp):
// numbers and sg values at scalar, vector and matrix fields, tensors at view fields (a
// DiffTensorView's gradient record beside its values'), and the views a function that takes
// views reads its per-element tensors through (the call's extents, broadcast dimensions of
// stride 0: view_call.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "call/arg_info.h"
#include "codegen/codegen.h"
#include "lang/types.h"

namespace sg::call {

/// Writes number `a` as a value of scalar kind `k` at `out`.
void write_scalar(uint8_t* out, lang::ScalarKind k, const ArgInfo& a);

/// A per-element tensor of a function that takes views, as the view the glue reads: the call's
/// extents, then its last `element_dims` dims as they are (a vector's components, a matrix's rows
/// and columns, a struct's fields' components); its own strides where its extent is the call's,
/// 0 where it is broadcast; with `map` (fn.map()), its dim i at call dim map[i].
TensorInfo expanded(const TensorInfo& t, int element_dims, const std::vector<int64_t>& call_shape,
                    const std::vector<int>* map = nullptr);

/// The trailing dims of a value of type `t` in a tensor: a vector's 1, a matrix's 2, else 0.
int element_dims_of(const lang::Type& t);

/// Writes fields of a parameter block (`args`: the call's argument nodes, for values' children).
struct ParamPacker {
    std::vector<uint8_t>& block;
    const ArgInfo* args;

    /// A view field from a tensor; returns the view's rank (a vector element's components are
    /// the tensor's last dimension, not one of the view's).
    int view(const codegen::ParamField& f, const TensorInfo& t);
    /// The gradient's record of a DiffTensorView field, laid out as the values' `t` (of `rank`).
    void grad(const codegen::ParamField& f, const TensorInfo& t, const TensorInfo& g, int rank);
    /// A number, an sg value's components or a list's (a matrix: rows of numbers) at a scalar,
    /// vector or matrix field.
    void value(const codegen::ParamField& f, const ArgInfo& arg);
};

}  // namespace sg::call
