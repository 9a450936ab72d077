// src/lang/sema_globals.cpp — `static` global variables that are not const (thread-private
// state, as in Slang: every thread of a call starts from the declared initial value, and the
// functions it runs read and write one copy).
//
// Sema checks the declaration (a plain value type; an initializer is optional, zero without one)
// and computes, for every function, the static globals it uses through its callees too
// (FunctionDecl::static_globals). Lowering passes those in and out of each function as hidden
// no_diff inout parameters, and a kernel entry starts them from their initializers. A global
// holds no derivative: a read is a constant for differentiation, and storing a value that
// carries a derivative into one inside a differentiated function is Slang's 41031
// (sema_flow.cpp).
#include <algorithm>
#include <map>

#include "lang/sema_internal.h"

namespace sg::lang {

bool is_static_variable(const VarDecl* v) {
    return v && v->is_global && v->is_static && !v->is_const && !v->is_groupshared && !v->is_extern;
}

bool is_global_resource(const VarDecl* v) {
    return v && v->is_global && !v->is_static && !v->is_const && !v->is_groupshared && !v->is_extern && v->type &&
           v->type->is_tensor();
}

bool uses_global_storage(const VarDecl* v) { return is_static_variable(v) || is_module_parameter(v); }

bool Sema::check_global_resource(VarDecl* g) {
    if (!g->type_expr) return false;
    const Type* t = resolve_type(g->type_expr);
    if (!t->is_tensor()) return check_uniform_global(g, t);  // sema_uniform_globals.cpp
    g->is_global = true;
    g->type = t;
    if (t->tensor.differentiable || t->tensor.interface || t->tensor.view) {
        // Global buffers and tensors hold no gradient: StructuredBuffer, RWStructuredBuffer,
        // Tensor and RWTensor.
        diags_.unsupported(g->loc, "a global of type " + type_name(t));
        g->type = types_.error_type();
    }
    if (g->init) diags_.unsupported(g->init->loc, "an initializer on global buffer '" + g->name + "' (the caller binds it)");
    return true;
}

void Sema::check_static_variable(VarDecl* g) {
    // The type now; what it holds and the initializer once structs and functions are declared
    // (check_static_initializers).
    g->is_global = true;
    g->type = g->type_expr ? resolve_type(g->type_expr) : nullptr;
}

/// Whether a value of `t` holds a buffer or tensor (itself, or a field of a struct within it).
static bool holds_resource(TypeContext& types, const Type* t, int depth = 0) {
    while (t->is_array()) t = t->element;
    if (t->is_tensor()) return true;
    if (!t->is_struct() || depth > 64) return false;
    for (const FieldInfo& f : types.fields(t))
        if (holds_resource(types, f.type, depth + 1)) return true;
    return false;
}

void Sema::check_static_type(VarDecl* g) {
    if (!g->type) g->type = types_.error_type();
    const Type* t = g->type;
    while (t->is_array()) t = t->element;
    if (holds_resource(types_, t)) {
        diags_.error(g->loc, "static variable '" + g->name + "' cannot have opaque type " + type_name(g->type) +
                                 " (a global buffer or tensor is a parameter of the module, not static)",
                     30076);
        g->type = types_.error_type();
    } else if (!t->is_error() && !t->is_scalar() && !t->is_vector() && !t->is_matrix() && !t->is_struct()) {
        diags_.unsupported(g->loc, "a static variable of type " + type_name(g->type));
        g->type = types_.error_type();
    }
}

void Sema::check_static_initializers() {
    for (VarDecl* g : result_.globals) {
        if (is_uniform_global(g)) check_uniform_type(g);
        if (!is_static_variable(g)) continue;
        if (g->type_expr) check_static_type(g);
        check_static_initializer(g);
    }
}

void Sema::check_static_initializer(VarDecl* g) {
    if (g->init) {
        AtModuleScope module_scope(*this);
        if (g->init->kind == ExprKind::InitList && g->type) check_init_list(g->init, g->type);
        else if (g->type) check_convertible(g->init, g->type, "global initializer");
        else g->type = check_expr(g->init);
    } else if (!g->type) {
        diags_.error(g->loc, "static variable '" + g->name + "' needs a type or an initializer");
    }
    if (!g->type_expr) check_static_type(g);
    if (!g->type) g->type = types_.error_type();
}

namespace {

/// The static globals `f` uses directly or through the functions it calls; memoized in `done`.
class StaticGlobalUses {
public:
    const std::vector<VarDecl*>& of(FunctionDecl* f) {
        auto it = done_.find(f);
        if (it != done_.end()) return f->static_globals;
        done_[f] = true;  // a recursive call (reported elsewhere) sees the uses found so far
        std::vector<VarDecl*> uses;
        stmt(f->body, uses);
        // A derivative that replaces f's calls (a custom one, or its primal substitute's) is
        // passed the globals it uses through f's callers: f takes them too (autodiff/custom_calls.h).
        for (FunctionDecl* d : {f->custom_backward, f->custom_forward, f->primal_substitute}) add_all(d, uses);
        std::sort(uses.begin(), uses.end(), [](const VarDecl* a, const VarDecl* b) {
            if (a->loc.offset != b->loc.offset) return a->loc.offset < b->loc.offset;
            return a->name < b->name;
        });
        uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
        f->static_globals = std::move(uses);
        return f->static_globals;
    }

private:
    void add_all(FunctionDecl* callee, std::vector<VarDecl*>& out) {
        if (!callee) return;
        const std::vector<VarDecl*>& c = of(callee);
        out.insert(out.end(), c.begin(), c.end());
    }
    void expr(Expr* e, std::vector<VarDecl*>& out) {
        if (!e) return;
        if (e->kind == ExprKind::Name && uses_global_storage(e->var_ref)) out.push_back(e->var_ref);
        add_all(e->callee, out);
        add_all(e->diff_target, out);
        for (Expr* o : e->operands) expr(o, out);
    }
    void stmt(Stmt* s, std::vector<VarDecl*>& out) {
        if (!s) return;
        for_each_part(s, [&](Stmt* c) { stmt(c, out); }, [&](Expr* e) { expr(e, out); });
    }
    std::map<FunctionDecl*, bool> done_;
};

}  // namespace

void Sema::collect_static_globals(size_t first) {
    bool any = false;
    for (const auto& [name, g] : module_.globals) any |= uses_global_storage(g);
    if (!any) return;
    StaticGlobalUses uses;
    for (size_t k = first; k < result_.functions.size(); ++k) {
        FunctionDecl* f = result_.functions[k];
        uses.of(f);
    }
    // A [CUDAKernel] is launched with its own arguments only: nothing binds a global buffer or
    // a uniform global.
    for (size_t k = first; k < result_.functions.size(); ++k) {
        FunctionDecl* f = result_.functions[k];
        if (!find_attribute(f->attrs, "CUDAKernel")) continue;
        for (const VarDecl* g : f->static_globals)
            if (is_module_parameter(g)) {
                diags_.unsupported(f->loc, std::string(is_global_resource(g) ? "global buffer '" : "uniform global '") +
                                               g->name + "' used by [CUDAKernel] function '" + f->name +
                                               (is_global_resource(g) ? "' (pass it as a TensorView parameter)"
                                                                      : "' (pass it as a parameter)"));
                break;
            }
    }
}

}  // namespace sg::lang
