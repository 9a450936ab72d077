// src/codegen/param_layout.cpp — the parameter-block layout of a kernel and the byte layout of
// plain values. The generated code declares the same layout as a C++ struct and static_asserts
// every offset computed here (emit_cpp.cpp), so the two cannot drift apart silently.
#include <algorithm>
#include <string>

#include "codegen/codegen.h"
#include "lang/coop.h"

namespace sg::codegen {

using lang::ScalarKind;
using lang::Type;
using lang::TypeKind;

namespace {

constexpr size_t kHeaderEnd = 96;  // sizeof(CallHeader)

size_t round_up(size_t value, size_t align) { return (value + align - 1) / align * align; }

size_t scalar_size(ScalarKind k) { return size_t(lang::scalar_bits(k) / 8); }

/// A tensor view: {void* data; int64 shape[D]; int64 strides[D]; int64 inner[2]}.
size_t view_size(int rank) { return 8 + 16 * size_t(rank) + 16; }
/// A gradient view (shares the primal's shape): {void* data; int64 strides[D]; int64 inner[2]}.
size_t grad_view_size(int rank) { return 8 + 8 * size_t(rank) + 16; }

/// Field types of a struct-like value, for the C layout rule. The one-argument
/// compute_param_layout has no TypeContext and so cannot look into structs.
struct LayoutContext {
    const lang::TypeContext* types = nullptr;

    std::vector<const Type*> members(const Type* t) const {
        std::vector<const Type*> out;
        if (t->is_pair()) {
            SG_INTERNAL_ASSERT(types != nullptr, "layout of a DifferentialPair needs the TypeContext");
            out = {t->element, types->differential(t->element)};
            SG_INTERNAL_ASSERT(out[1] != nullptr, "pair of a non-differentiable type");
            return out;
        }
        SG_INTERNAL_ASSERT(types != nullptr, "layout of struct " + lang::type_name(t) +
                                                 " needs the TypeContext (use the two-argument "
                                                 "compute_param_layout)");
        for (const auto& f : types->fields(t)) out.push_back(f.type);
        return out;
    }

    size_t align(const Type* t) const {
        switch (t->kind) {
        case TypeKind::Scalar:
        case TypeKind::Vector:
        case TypeKind::Matrix: return scalar_size(t->scalar);  // no vector over-alignment
        case TypeKind::Array: return align(t->element);
        case TypeKind::Tensor: return 8;
        case TypeKind::Struct:
        case TypeKind::DiffPair: {
            size_t a = 1;
            for (const Type* m : members(t)) a = std::max(a, align(m));
            return a;
        }
        default: SG_INTERNAL_ASSERT(false, "no storage layout for type " + lang::type_name(t));
        }
        return 1;
    }

    size_t size(const Type* t) const {
        switch (t->kind) {
        case TypeKind::Scalar:
        case TypeKind::Vector:
        case TypeKind::Matrix: return scalar_size(t->scalar) * size_t(t->components());
        case TypeKind::Array: return size(t->element) * size_t(t->count);
        case TypeKind::Tensor:
            SG_INTERNAL_ASSERT(!t->tensor.interface, "layout of an unspecialized tensor interface type");
            // sg_view: then the rank; a DiffTensorView (sg_diff_view) is two of them
            if (t->tensor.view) return (view_size(lang::kMaxViewRank) + 8) * (t->tensor.has_grad ? 2 : 1);
            return view_size(t->rank) + (t->tensor.has_grad ? grad_view_size(t->rank) : 0);
        case TypeKind::Struct:
        case TypeKind::DiffPair: {
            // The C++ rule: each member at its alignment, the total rounded to the struct's.
            size_t offset = 0;
            for (const Type* m : members(t)) offset = round_up(offset, align(m)) + size(m);
            return round_up(offset, align(t));
        }
        default: SG_INTERNAL_ASSERT(false, "no storage layout for type " + lang::type_name(t));
        }
        return 0;
    }
};

FieldShape::Form form_of(const Type* t) {
    if (t->is_scalar()) return FieldShape::Form::Scalar;
    if (t->is_vector()) return FieldShape::Form::Vector;
    if (t->is_matrix()) return FieldShape::Form::Matrix;
    if (t->is_tensor()) return FieldShape::Form::Tensor;
    return FieldShape::Form::Other;
}

ParamLayout layout_with(const ir::Function& kernel, const LayoutContext& ctx) {
    ParamLayout layout;
    size_t offset = kHeaderEnd;
    for (const ir::Param& p : kernel.params) {
        SG_INTERNAL_ASSERT(p.dir == ir::ParamDir::In, "kernel parameter " + p.name + " is not `in`");
        ParamField field;
        field.name = p.name;
        field.type = p.type;
        field.shape = field_shape(p.type);
        offset = round_up(offset, ctx.align(p.type));
        field.offset = offset;
        field.size = ctx.size(p.type);
        if (p.type->is_tensor()) {
            const size_t d = size_t(p.type->tensor.view ? lang::kMaxViewRank : p.type->rank);
            TensorFieldLayout& t = field.tensor;
            t.data = offset;
            t.shape = offset + 8;
            t.strides = t.shape + 8 * d;
            t.inner = t.strides + 8 * d;
            if (p.type->tensor.view) t.view_rank = t.inner + 16;
            if (p.type->tensor.view && p.type->tensor.has_grad) {
                // A DiffTensorView: the gradient's sg_view follows, laid out as the primal's.
                t.grad_view = t.view_rank + 8;
                t.grad_data = t.grad_view;
                t.grad_strides = t.grad_view + (t.strides - t.data);
                t.grad_inner = t.grad_view + (t.inner - t.data);
            } else if (p.type->tensor.has_grad) {
                t.grad_data = t.inner + 16;
                t.grad_strides = t.grad_data + 8;
                t.grad_inner = t.grad_strides + 8 * d;
            }
        }
        offset += field.size;
        layout.fields.push_back(std::move(field));
    }
    // No field is aligned beyond 8, so the C++ struct (whose header holds pointers and int64s)
    // has alignment 8 and its size is the end rounded up to 8.
    layout.size = round_up(offset, 8);
    return layout;
}

}  // namespace

size_t value_size(const Type* t, const lang::TypeContext& types) { return LayoutContext{&types}.size(t); }

size_t value_align(const Type* t, const lang::TypeContext& types) { return LayoutContext{&types}.align(t); }

ParamLayout compute_param_layout(const ir::Function& kernel) { return layout_with(kernel, LayoutContext{}); }

ParamLayout compute_param_layout(const ir::Function& kernel, const lang::TypeContext& types) {
    return layout_with(kernel, LayoutContext{&types});
}

FieldShape field_shape(const Type* t) {
    FieldShape out;
    out.form = form_of(t);
    const Type* value = t;
    if (t->is_tensor()) {
        out.rank = t->rank;
        out.has_grad = t->tensor.has_grad;
        value = t->element;
        out.element = form_of(value);
    }
    out.scalar = value->scalar;
    if (value->is_vector()) out.rows = value->rows;
    if (value->is_matrix()) {
        out.rows = value->rows;
        out.cols = value->cols;
    }
    return out;
}

}  // namespace sg::codegen
