// src/lang/sema_interface_parameters.cpp — parameters of interface type, resolved statically:
// `float area(IShape s)` called with a concrete struct.
//
// Slang specializes such a function for the argument's type. Here each such parameter becomes
// a generic parameter of its own before anything is declared: `float total(IShape a, IShape b)`
// is checked as `float total<some a : IShape, some b : IShape>(a a, b b)`, so every call is an
// instantiation for its arguments' types (monomorphized as any generic), a constrained generic
// gives its argument through, and the body is checked as declared with a stand-in. The
// generic parameters are named "some <parameter>", which no program can write, so that messages
// can say which parameter an argument was for. Slang's numbers where they differ from a written
// generic's: an argument that does not conform is 30019 (a type mismatch, not 38029), explicit
// generic arguments are 39999 (the function is not generic), and an `out` / `inout` parameter of
// interface type called with a concrete struct is 30077.
#include "lang/sema_internal.h"
#include "syntax/ast_printer.h"

namespace sg::lang {

namespace {

constexpr std::string_view kImplicitPrefix = "some ";

}  // namespace

bool Sema::is_interface_parameter(const GenericParam& p) { return p.name.starts_with(kImplicitPrefix); }

void Sema::make_interface_parameters_generic(const std::vector<ModuleAst*>& modules) {
    std::set<std::string> plain, generic;
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls)
            if (d->kind == DeclKind::Interface) (d->structure->generic_params.empty() ? plain : generic).insert(d->structure->name);
    if (plain.empty() && generic.empty()) return;
    auto rewrite = [&](FunctionDecl* f) {
        for (size_t k = 0; k < f->params.size(); ++k) {
            VarDecl* p = f->params[k];
            TypeExpr* te = p->type_expr;
            if (!te || !te->array_dims.empty() || !te->member.empty()) continue;
            bool with_args = !te->arg_is_value.empty();
            if (!(with_args ? generic.count(te->name) : plain.count(te->name))) continue;
            GenericParam g;
            g.loc = te->loc;
            g.name = std::string(kImplicitPrefix) + (p->name.empty() ? "parameter " + std::to_string(k + 1) : p->name);
            g.constraint = with_args ? print_type(*te) : te->name;
            g.constraint_types.push_back(te);
            auto* as_param = ast_.make<TypeExpr>();
            as_param->loc = te->loc;
            as_param->name = g.name;
            p->type_expr = as_param;
            f->generic_params.push_back(std::move(g));
        }
    };
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls) {
            if (d->kind == DeclKind::Function) rewrite(d->function);
            else if ((d->kind == DeclKind::Struct || d->kind == DeclKind::Extension) && d->structure)
                for (FunctionDecl* f : d->structure->methods)
                    if (!f->is_init) rewrite(f);
        }
}

bool Sema::check_interface_parameter_directions(const FunctionDecl* g, const FunctionDecl* f, SourceLoc at) {
    if (instances_.making_representatives()) return true;  // only a call passes a concrete struct
    for (size_t k = 0; k < g->params.size() && k < f->params.size(); ++k) {
        const VarDecl* p = g->params[k];
        if (p->dir == ParamDir::In || !p->type_expr || !p->type_expr->name.starts_with(kImplicitPrefix)) continue;
        diags_.error(at,
                     "a concrete type is passed to " + std::string(direction_name(p->dir)) + " parameter '" + p->name +
                         "' of interface type (its value could not be given back as the interface; use a generic "
                         "parameter constrained by it)",
                     30077);
        return false;
    }
    return true;
}

std::string Sema::describe_interface_argument(const GenericParam& p, const GenericArg& a) const {
    std::string param = p.name.substr(kImplicitPrefix.size());
    return "argument for parameter '" + param + "' must conform to '" + p.constraint + "', got " +
           (a.is_value ? std::to_string(a.value) : type_name(a.type));
}

}  // namespace sg::lang
