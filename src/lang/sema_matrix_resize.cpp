// src/lang/sema_matrix_resize.cpp — matrix resizing conversions, as in Slang: a constructor or
// C-style cast to a matrix type with no more rows and no more columns than the operand's keeps
// its top-left part (`float2x2(m3)`, `(float2x3)m4`), converting the scalar kind as an
// element-wise conversion does. Growing a matrix (`float3x3(m2)`) stays an error (30019).
#include "lang/sema_internal.h"

namespace sg::lang {

bool matrix_resizes(const Type* from, const Type* to) {
    if (!from || !to || !from->is_matrix() || !to->is_matrix()) return false;
    if (from->rows == to->rows && from->cols == to->cols) return false;  // a plain conversion
    return to->rows <= from->rows && to->cols <= from->cols;
}

}  // namespace sg::lang
