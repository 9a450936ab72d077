// src/lang/sema_buffers.cpp — StructuredBuffer<T> and RWStructuredBuffer<T>: their types,
// `buf[i]` and the methods GetDimensions and Load.
//
// A buffer is a rank-1 tensor type with TensorKind::buffer set: it lowers, generates code and
// binds like a Tensor / RWTensor of rank 1 whose element may also be an array or a struct
// (flattened in declaration order, tensor_layout in the call layer).
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

const Builtin kBufferLoad{BuiltinKind::TensorLoad, IntrinsicId::Count, "Load"};
const Builtin kBufferDimensions{BuiltinKind::BufferDimensions, IntrinsicId::Count, "GetDimensions"};

/// Whether `t` may be a buffer element: a scalar, vector, matrix, or an array or struct of them.
bool is_buffer_element(const Type* t) {
    while (t->is_array()) t = t->element;
    return t->is_scalar() || t->is_vector() || t->is_matrix() || t->is_struct();
}

}  // namespace

// buffer_type = ("StructuredBuffer" | "RWStructuredBuffer") "<" type ">"
const Type* Sema::resolve_buffer_type(TypeExpr* te) {
    const std::string& n = te->name;
    if (te->arg_is_value.empty()) {
        diags_.error(te->loc, "generic type '" + n + "' used without an element type: " + n + "<float>", 30408);
        return types_.error_type();
    }
    if (te->arg_is_value.size() != 1 || te->arg_is_value[0]) {
        diags_.error(te->loc, n + " takes one element type: " + n + "<float>", 30060);
        return types_.error_type();
    }
    const Type* elem = resolve_type(te->type_args[0]);
    if (elem->is_error()) return elem;
    if (!is_buffer_element(elem)) {
        diags_.unsupported(te->loc, n + " of " + type_name(elem));
        return types_.error_type();
    }
    TensorKind kind;
    kind.access = n == "StructuredBuffer" ? TensorAccess::Read : TensorAccess::ReadWrite;
    kind.buffer = true;
    return types_.tensor(elem, 1, kind);
}

const Type* Sema::check_buffer_index(Expr* at, const Type* buffer) {
    if (at->operands.size() != 2) {
        diags_.error(at->loc, type_name(buffer) + " takes one index, got " + std::to_string(at->operands.size() - 1));
        return types_.error_type();
    }
    Expr* index = at->operands[1];
    if (index->type->is_error()) return index->type;
    if (index->type->is_scalar() && (is_floating(index->type->scalar) || index->type->is_bool())) {
        // As in Slang, a floating-point (or bool) index converts to int, a float with a warning.
        if (!index->type->is_bool()) warn_implicit_conversion(index, types_.int32());
        Expr* cast = ast_.make<Expr>();
        cast->kind = ExprKind::Cast;
        cast->loc = index->loc;
        cast->operands = {index};
        cast->type = types_.int32();
        at->operands[1] = index = cast;
    }
    if (!is_integer_scalar(index->type)) {
        diags_.error(index->loc, type_name(buffer) + " index must be an integer, got " + type_name(index->type), 30019);
        return types_.error_type();
    }
    at->is_lvalue = buffer->tensor.access != TensorAccess::Read;
    return buffer->element;
}

const Type* Sema::check_buffer_member(Expr* e, const Type* buffer) {
    e->ref = RefKind::TensorMember;
    if (e->name == "GetDimensions" || e->name == "Load") return types_.void_type();  // resolved as a call
    diags_.error(e->loc, type_name(buffer) + " has no member '" + e->name + "'", 30027);
    return types_.error_type();
}

const Type* Sema::check_buffer_method(Expr* e, const Type* buffer, const std::string& method) {
    const size_t nargs = e->operands.size() - 1;
    if (method == "Load") {
        if (nargs != 1) {
            diags_.error(e->loc, "Load takes one index, got " + std::to_string(nargs) + " arguments", 39999);
            return types_.error_type();
        }
        const Type* t = check_buffer_index(e, buffer);
        e->is_lvalue = false;
        if (!t->is_error()) e->builtin = &kBufferLoad;
        return t;
    }
    if (method == "GetDimensions") {
        if (nargs != 2) {
            diags_.error(e->loc, "GetDimensions takes two arguments (out uint count, out uint stride), got " +
                                     std::to_string(nargs), 39999);
            return types_.error_type();
        }
        bool ok = true;
        for (size_t k = 1; k <= 2; ++k) {
            Expr* a = e->operands[k];
            if (a->type->is_error()) return a->type;
            if (!a->type->is_scalar() || (a->type->scalar != ScalarKind::UInt32 && a->type->scalar != ScalarKind::Int32)) {
                // Slang converts into a temporary, which an out parameter cannot take (30047).
                diags_.error(a->loc, "GetDimensions writes a uint: argument must be an l-value of type uint, got " +
                                         type_name(a->type), 30047);
                ok = false;
                continue;
            }
            require_lvalue(a, "pass to an out parameter");
        }
        if (!ok) return types_.error_type();
        e->builtin = &kBufferDimensions;
        return types_.void_type();
    }
    diags_.error(e->loc, type_name(buffer) + " has no member '" + method + "'", 30027);
    return types_.error_type();
}

}  // namespace sg::lang
