// src/call/element_layout.h — how the element of a tensor or buffer parameter lies in the
// trailing dims of the torch tensor bound to it. Scalars, vectors and matrices take their
// natural shape ((), (N,), (R, C)); arrays their nested shape ((4,) for float[4], (2, 3) for
// float3[2]); a struct one dim of its flattened scalar components, fields in declaration order
// (prelude_tensor.inc: sg_flat reads them, inner[0] apart). A struct must hold one scalar type:
// a tensor has one dtype.
#pragma once

#include <string>
#include <vector>

#include "lang/types.h"

namespace sg::call {

struct ElementLayout {
    std::vector<int64_t> shape;  ///< the trailing dims of the tensor
    lang::ScalarKind scalar = lang::ScalarKind::Float;
    /// Read component by component with one stride (arrays and structs): the element dims of
    /// the tensor must be contiguous among themselves.
    bool flat = false;
};

/// The layout of `element` as a whole-tensor or buffer element; false with `why` set ("struct
/// M mixes float and int fields") when no tensor can hold it.
bool element_layout(const lang::TypeContext& types, const lang::Type* element, ElementLayout& out, std::string& why);

/// Whether the last `dims` dims of a tensor with `shape`/`strides` are contiguous among
/// themselves (dim d's stride is dim d+1's stride times its extent), so one stride walks them.
bool inner_dims_flat(const int64_t* shape, const int64_t* strides, int ndim, int dims);

}  // namespace sg::call
