// src/lang/sema_uniform_globals.cpp — uniform globals: a global variable of a value type that
// is neither `static`, `const` nor `groupshared` (`float g_scale;`, `uniform float3 g_color;`,
// `Light g_light;`). As in Slang, such a global is a parameter of the module: the caller gives it
// one value per call (from Python: `fn.set(g_scale=2.0)`), every function reads it, and none may
// write it (Slang's 30011 for `=`, 30047 for `+=`, `++` and an out/inout argument, 30050 for a
// [mutating] method: the ordinary l-value checks, since the name is not an l-value).
//
// Like a global buffer (sema_globals.cpp), each function that uses one takes it as a hidden `in`
// parameter (FunctionDecl::static_globals) and the generated entry assigns it before the call.
// A uniform holds no derivative: a read is a constant for differentiation.
#include "lang/sema_internal.h"

namespace sg::lang {

bool is_uniform_global(const VarDecl* v) {
    return v && v->is_global && !v->is_static && !v->is_const && !v->is_groupshared && !v->is_extern && v->type &&
           !v->type->is_tensor() && !v->type->is_error();
}

bool is_module_parameter(const VarDecl* v) { return is_global_resource(v) || is_uniform_global(v); }

bool Sema::check_uniform_global(VarDecl* g, const Type* t) {
    g->is_global = true;
    g->type = t;
    if (g->init)
        diags_.unsupported(g->init->loc, "an initializer on uniform global '" + g->name +
                                             "' (the caller gives its value: fn.set(" + g->name + "=...))");
    return true;
}

void Sema::check_uniform_type(VarDecl* g) {
    // After struct fields are declared (a struct's fields decide what it may hold).
    const Type* t = g->type;
    while (t && t->is_array()) t = t->element;
    if (!t || t->is_error()) return;
    if (t->is_void()) {
        diags_.error(g->type_expr ? g->type_expr->loc : g->loc,
                     "invalid type 'void' for global variable '" + g->name + "'", 30009);
        g->type = types_.error_type();
    } else if (!t->is_numeric() && !t->is_struct()) {
        diags_.unsupported(g->loc, "a uniform global of type " + type_name(g->type));
        g->type = types_.error_type();
    }
}

}  // namespace sg::lang
