// src/lang/sema_defaults.cpp — default parameter values: `float f(float x, float s = 2.0)`.
//
// A default is checked once at its declaration, in the scope of the module (it may name global
// constants, types and functions, not the function's other parameters), and converted to its
// parameter's type. A call that leaves trailing arguments out gets a freshly checked copy of
// each missing default as its argument, so lowering, autodiff and codegen see an ordinary call.
// The Python call layer leaves arguments out the same way, by keyword or position (the glue
// passes the default's text, VarDecl::default_text).
#include "lang/ast_clone.h"
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// The first plain name in `e` for which `pick` holds.
template <class Pick>
const Expr* first_name(const Expr* e, const Pick& pick) {
    if (!e) return nullptr;
    if (e->kind == ExprKind::Name && !e->type_expr && pick(e->name)) return e;
    for (const Expr* o : e->operands)
        if (const Expr* hit = first_name(o, pick)) return hit;
    return nullptr;
}

bool already_reported(const Diagnostics& diags, const Diagnostic& d) {
    for (const Diagnostic& o : diags.all())
        if (o.severity == d.severity && o.message == d.message && o.location.file == d.location.file &&
            o.location.line == d.location.line && o.location.col == d.location.col)
            return true;
    return false;
}

}  // namespace

bool accepts_argument_count(const FunctionDecl& f, size_t nargs) {
    if (nargs > f.params.size()) return false;
    for (size_t k = nargs; k < f.params.size(); ++k)
        if (!f.params[k]->default_value) return false;
    return true;
}

size_t required_arguments(const FunctionDecl& f) {
    size_t n = f.params.size();
    while (n > 0 && f.params[n - 1]->default_value) --n;
    return n;
}

void Sema::check_param_defaults(FunctionDecl* f) {
    const VarDecl* first_default = nullptr;
    for (size_t k = 0; k < f->params.size(); ++k) {
        VarDecl* p = f->params[k];
        if (!p->default_value) {
            if (first_default && p != f->this_param)
                diags_.error(p->loc,
                             "parameter '" + p->name + "' does not have a default value, but follows a parameter "
                             "that does ('" + first_default->name + "')",
                             30704);
            continue;
        }
        if (!first_default) first_default = p;
        if (p->dir != ParamDir::In) {
            diags_.error(p->default_value->loc, "an 'out' or 'inout' parameter cannot have a default value", 30700);
            continue;
        }
        if (f->owner && f->owner->is_interface) continue;  // reported by declare_interface
        if (const Expr* hit = first_name(p->default_value, [&](const std::string& n) {
                for (const VarDecl* q : f->params)
                    if (q->name == n) return true;
                return false;
            })) {
            diags_.unsupported(hit->loc, "a default value that refers to a parameter ('" + hit->name + "')");
            continue;
        }
        // Checked at module scope, where a member is not in scope unqualified (Slang finds it,
        // before a global of the same name).
        if (const Expr* hit = first_name(p->default_value, [&](const std::string& n) {
                if (!f->owner) return false;
                for (const VarDecl* field : f->owner->fields)
                    if (field->name == n) return true;
                for (const FunctionDecl* m : f->owner->methods)
                    if (m->member_name == n) return true;
                return find_static_const(f->owner, n) != nullptr;
            })) {
            diags_.unsupported(hit->loc, "a default value that names member '" + hit->name + "' of '" + f->owner->name +
                                             "' unqualified (write " + f->owner->name + "." + hit->name + ")");
            continue;
        }
        if (!p->type->is_error()) default_argument(f, k, true);  // its errors and warnings, once
    }
}

Expr* Sema::default_argument(FunctionDecl* f, size_t k, bool report) {
    VarDecl* p = f->params[k];
    Expr* e = clone_expr(ast_, p->default_value);
    if (!expanding_defaults_.insert(p).second) {
        // `float g(float x, float s = h(1))` beside `float h(float x, float t = g(1))`.
        diags_.error(p->default_value->loc,
                     "the default value of parameter '" + p->name + "' of '" + f->name + "' depends on itself");
        e->type = types_.error_type();
        return e;
    }
    const size_t first_diagnostic = diags_.all().size();
    // Checked as a global constant's initializer is: no locals, no implicit `this`.
    auto saved_scopes = std::move(scopes_);
    auto saved_alias_scopes = std::move(alias_scopes_);
    FunctionDecl* saved_fn = current_fn_;
    const Substitution* saved_subst = subst_;
    int saved_loops = loop_depth_;
    scopes_.clear();
    alias_scopes_.clear();
    current_fn_ = nullptr;
    subst_ = substitution_of(f);
    loop_depth_ = 0;
    push_scope();
    if (e->kind == ExprKind::InitList) check_init_list(e, p->type);
    else check_convertible(e, p->type, "default value");
    scopes_ = std::move(saved_scopes);
    alias_scopes_ = std::move(saved_alias_scopes);
    current_fn_ = saved_fn;
    subst_ = saved_subst;
    loop_depth_ = saved_loops;
    expanding_defaults_.erase(p);
    // A call's copy repeats what the declaration's check reported; only an error new here (a
    // default that depends on itself, found through this copy) stays.
    if (!report)
        for (Diagnostic& d : diags_.take_from(first_diagnostic))
            if (d.severity == Severity::Error && !already_reported(diags_, d)) diags_.restore(std::move(d));
    return e;
}

}  // namespace sg::lang
