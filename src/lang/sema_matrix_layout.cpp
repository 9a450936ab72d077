// src/lang/sema_matrix_layout.cpp — `column_major` on matrices.
//
// In Slang a layout qualifier changes no value a function computes with: a `column_major
// float2x3` parameter, local or field holds the same rows and columns as any float2x3, and
// converts to and from one freely (slangc 0.43.1 agrees: tests/lang/matrix_layout). It says how
// a matrix field is laid out in memory: in a buffer's element, a column_major field is stored
// column by column. Matrices are stored row by row everywhere here, so a buffer or tensor whose
// element holds a column_major matrix field (directly, in a nested struct or in an array) is not
// supported yet: it is reported where the buffer type is written.
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// A column_major matrix field somewhere in `t` (a struct, or an array of them): its name.
const VarDecl* column_major_field(const Type* t, int depth = 0) {
    while (t->is_array()) t = t->element;
    if (!t->is_struct() || !t->decl || depth > 32) return nullptr;
    for (const VarDecl* f : t->decl->fields) {
        if (!f->type) continue;
        const Type* ft = f->type;
        while (ft->is_array()) ft = ft->element;
        if (f->column_major.valid() && ft->is_matrix()) return f;
        if (const VarDecl* inner = column_major_field(f->type, depth + 1)) return inner;
    }
    return nullptr;
}

}  // namespace

void Sema::check_element_layout(const TypeExpr* te, const Type* elem) {
    if (const VarDecl* f = column_major_field(elem))
        diags_.unsupported(te->loc, te->name + " of " + type_name(elem) + ", whose field '" + f->name +
                                        "' is column_major (stored column by column in memory)");
}

}  // namespace sg::lang
