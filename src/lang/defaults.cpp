// src/lang/defaults.cpp — default parameter values: `float f(float x, float s = 2.0)`.
//
// A default is checked once at its declaration, in the scope of the module (it may name global
// constants, types and functions, not the function's other parameters), and converted to its
// parameter's type. A call that leaves trailing arguments out gets a freshly checked copy of
// each missing default as its argument, so lowering, autodiff and codegen see an ordinary call.
// The Python call layer leaves arguments out the same way, by keyword or position (the glue
// passes the default's text, VarDecl::default_text).
#include "lang/defaults.h"

#include "base/on_exit.h"
#include "syntax/ast_clone.h"
#include "lang/sema.h"

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

DefaultArguments::DefaultArguments(AstContext& ast, TypeContext& types, Diagnostics& diags, CheckValue check)
    : ast_(ast), types_(types), diags_(diags), check_(std::move(check)) {}

void DefaultArguments::check_declaration(FunctionDecl* f) {
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
        auto reject = [&](SourceLoc at, const std::string& what, bool unsupported) {
            if (unsupported) diags_.unsupported(at, what);
            else diags_.error(at, what, 30700);
            rejected_defaults_.insert(p);  // calls that leave it out report nothing more
        };
        if (p->dir != ParamDir::In) {
            reject(p->default_value->loc, "an 'out' or 'inout' parameter cannot have a default value", false);
            continue;
        }
        if (f->owner && f->owner->is_interface) {  // reported by declare_interface
            rejected_defaults_.insert(p);
            continue;
        }
        if (const Expr* hit = first_name(p->default_value, [&](const std::string& n) {
                for (const VarDecl* q : f->params)
                    if (q->name == n) return true;
                return false;
            })) {
            reject(hit->loc, "a default value that refers to a parameter ('" + hit->name + "')", true);
            continue;
        }
        // Checked at module scope, where a member is not in scope unqualified (Slang finds it,
        // before a global of the same name).
        const StructDecl* s = f->owner;
        bool field = false;
        if (const Expr* hit = first_name(p->default_value, [&](const std::string& n) {
                if (!s) return false;
                for (const VarDecl* v : s->fields)
                    if (v->name == n) return field = true;
                for (const VarDecl* a : s->type_aliases)
                    if (a->name == n) return true;
                for (const FunctionDecl* m : s->methods)
                    if (m->member_name == n) return true;
                for (const VarDecl* c : s->static_consts)
                    if (c->name == n) return true;
                return false;
            })) {
            reject(hit->loc,
                   field ? "a default value that names field '" + hit->name + "' of '" + s->name + "'"
                         : "a default value that names member '" + hit->name + "' of '" + s->name +
                               "' unqualified (write " + s->name + "." + hit->name + ")",
                   true);
            continue;
        }
        if (!p->type->is_error()) argument(f, k, true);  // its errors and warnings, once
    }
}

Expr* DefaultArguments::argument(FunctionDecl* f, size_t k, bool report) {
    VarDecl* p = f->params[k];
    Expr* e = clone_expr(ast_, p->default_value);
    if (rejected_defaults_.count(p)) {
        e->type = types_.error_type();
        return e;
    }
    // Defaults that call functions leaving out arguments with defaults that do the same grow
    // exponentially with the chain's length: a bound keeps that a diagnostic.
    if (++default_expansions_ > kMaxDefaultExpansions) {
        diags_.error(p->default_value->loc, "default values expand into more than " +
                                                std::to_string(kMaxDefaultExpansions) +
                                                " copies (each call leaving an argument out copies its default)");
        rejected_defaults_.insert(p);
        e->type = types_.error_type();
        return e;
    }
    if (!expanding_defaults_.insert(p).second) {
        // `float g(float x, float s = h(1))` beside `float h(float x, float t = g(1))`.
        diags_.error(p->default_value->loc,
                     "the default value of parameter '" + p->name + "' of '" + f->name + "' depends on itself");
        rejected_defaults_.insert(p);
        e->type = types_.error_type();
        return e;
    }
    const size_t first_diagnostic = diags_.all().size();
    {
        // Puts the context back however the check ends (a CompileError too).
        OnExit restore{[this, p, saved_of = defaults_of_]() {
            defaults_of_ = saved_of;
            expanding_defaults_.erase(p);
        }};
        defaults_of_ = f;
        check_(f, p, e);
    }
    // Each diagnostic once: a call's copy repeats what the declaration's check reports (which
    // may come first or later); only an error (a default that depends on itself, found through
    // this copy) stays from a call's.
    for (Diagnostic& d : diags_.take_from(first_diagnostic))
        if ((report || d.severity == Severity::Error) && !already_reported(diags_, d)) diags_.restore(std::move(d));
    return e;
}

}  // namespace sg::lang
