// src/call/coop_pack.cpp — packing a cooperative launch's parameter block (see coop_pack.h).
#include "call/coop_pack.h"

#include <cstring>

#include "call/scalar_store.h"

namespace sg::call {

void write_scalar(uint8_t* out, lang::ScalarKind k, const ArgInfo& a) {
    const bool integral = a.kind == ArgKind::Int;
    const double d = a.kind == ArgKind::Bool ? a.number : integral ? double(a.integer) : a.number;
    store_scalar(out, k, d, integral ? a.integer : int64_t(d));
}

TensorInfo expanded(const TensorInfo& t, int element_dims, const std::vector<int64_t>& call_shape,
                    const std::vector<int>* map) {
    TensorInfo e = t;
    const int rank = int(call_shape.size()), own = t.ndim - element_dims;
    for (int d = 0; d < rank; ++d) {
        // Its dim at call dim d: right-aligned, or (fn.map()) the one mapped there.
        int td = d - (rank - own);
        if (map) {
            td = -1;
            for (size_t i = 0; i < map->size(); ++i)
                if ((*map)[i] == d) td = int(i);
        }
        e.shape[d] = call_shape[size_t(d)];
        e.strides[d] = td >= 0 && t.shape[td] != 1 ? t.strides[td] : 0;
    }
    for (int k = 0; k < element_dims; ++k) {
        e.shape[rank + k] = t.shape[own + k];
        e.strides[rank + k] = t.strides[own + k];
    }
    e.ndim = rank + element_dims;
    return e;
}

int element_dims_of(const lang::Type& t) { return t.is_vector() ? 1 : t.is_matrix() ? 2 : 0; }

using Form = codegen::FieldShape::Form;

int ParamPacker::view(const codegen::ParamField& f, const TensorInfo& t) {
    const bool vector = f.shape.element == Form::Vector;
    const int rank = t.ndim - (vector ? 1 : 0);
    int64_t extents[8] = {}, strides[8] = {};
    for (int d = 0; d < rank; ++d) {
        extents[d] = t.shape[d];
        strides[d] = t.strides[d];
    }
    const int64_t inner[2] = {vector ? t.strides[t.ndim - 1] : 1, 0};
    const int64_t view_rank = rank;
    std::memcpy(block.data() + f.tensor.data, &t.data, sizeof(void*));
    std::memcpy(block.data() + f.tensor.shape, extents, sizeof extents);
    std::memcpy(block.data() + f.tensor.strides, strides, sizeof strides);
    std::memcpy(block.data() + f.tensor.inner, inner, sizeof inner);
    std::memcpy(block.data() + f.tensor.view_rank, &view_rank, sizeof view_rank);
    return rank;
}

void ParamPacker::grad(const codegen::ParamField& f, const TensorInfo& t, const TensorInfo& g, int rank) {
    const size_t off = f.tensor.grad_view - f.tensor.data;
    int64_t extents[8] = {}, grad_strides[8] = {};
    for (int d = 0; d < rank; ++d) {
        extents[d] = t.shape[d];
        grad_strides[d] = g.strides[d];
    }
    const int64_t view_rank = rank;
    const int64_t grad_inner[2] = {1, 0};
    std::memcpy(block.data() + f.tensor.data + off, &g.data, sizeof(void*));
    std::memcpy(block.data() + f.tensor.shape + off, extents, sizeof extents);
    std::memcpy(block.data() + f.tensor.strides + off, grad_strides, sizeof grad_strides);
    std::memcpy(block.data() + f.tensor.inner + off, grad_inner, sizeof grad_inner);
    std::memcpy(block.data() + f.tensor.view_rank + off, &view_rank, sizeof view_rank);
}

void ParamPacker::value(const codegen::ParamField& f, const ArgInfo& arg) {
    const size_t bytes = size_t(lang::scalar_bits(f.shape.scalar) / 8);
    if (f.shape.form == Form::Scalar) {
        write_scalar(block.data() + f.offset, f.shape.scalar, arg);
    } else if (f.shape.form == Form::Matrix) {
        // Rows of scalars, row-major: an sg value's components, or a list of rows.
        for (int r = 0; r < f.shape.rows; ++r)
            for (int c = 0; c < f.shape.cols; ++c) {
                const ArgInfo& x = arg.kind == ArgKind::Value ? args[arg.first_child + r * f.shape.cols + c]
                                                              : args[args[arg.first_child + r].first_child + c];
                write_scalar(block.data() + f.offset + size_t(r * f.shape.cols + c) * bytes, f.shape.scalar, x);
            }
    } else {
        for (int c = 0; c < f.shape.rows; ++c)
            write_scalar(block.data() + f.offset + size_t(c) * bytes, f.shape.scalar, args[arg.first_child + c]);
    }
}

}  // namespace sg::call
