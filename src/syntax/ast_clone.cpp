// src/syntax/ast_clone.cpp — deep copies of declarations (see ast_clone.h).
#include "syntax/ast_clone.h"

namespace sg::lang {

namespace {

class Cloner {
public:
    explicit Cloner(AstContext& ast) : ast_(ast) {}

    TypeExpr* type(const TypeExpr* t) {
        if (!t) return nullptr;
        auto* c = ast_.make<TypeExpr>();
        c->loc = t->loc;
        c->name = t->name;
        for (TypeExpr* a : t->type_args) c->type_args.push_back(type(a));
        for (Expr* v : t->value_args) c->value_args.push_back(expr(v));
        c->arg_is_value = t->arg_is_value;
        c->member = t->member;
        c->member_locs = t->member_locs;
        for (Expr* d : t->array_dims) c->array_dims.push_back(expr(d));
        return c;
    }

    Expr* expr(const Expr* e) {
        if (!e) return nullptr;
        auto* c = ast_.make<Expr>();
        c->kind = e->kind;
        c->loc = e->loc;
        c->op = e->op;
        for (Expr* o : e->operands) c->operands.push_back(expr(o));
        c->name = e->name;
        c->int_value = e->int_value;
        c->float_value = e->float_value;
        c->suffix = e->suffix;
        c->type_expr = type(e->type_expr);
        return c;
    }

    std::vector<Attribute> attrs(const std::vector<Attribute>& in) {
        std::vector<Attribute> out;
        for (const Attribute& a : in) {
            Attribute c{a.loc, a.name, {}};
            for (Expr* x : a.args) c.args.push_back(expr(x));
            out.push_back(std::move(c));
        }
        return out;
    }

    VarDecl* var(const VarDecl* v) {
        if (!v) return nullptr;
        auto* c = ast_.make<VarDecl>();
        c->loc = v->loc;
        c->name = v->name;
        c->type_expr = type(v->type_expr);
        c->init = expr(v->init);
        c->default_value = expr(v->default_value);
        c->default_text = v->default_text;
        c->dir = v->dir;
        c->is_no_diff = v->is_no_diff;
        c->visibility = v->visibility;
        c->is_constref = v->is_constref;
        c->column_major = v->column_major;
        c->derivative_member = expr(v->derivative_member);
        c->is_const = v->is_const;
        c->is_static = v->is_static;
        c->is_param = v->is_param;
        c->is_global = v->is_global;
        return c;
    }

    Stmt* stmt(const Stmt* s) {
        if (!s) return nullptr;
        auto* c = ast_.make<Stmt>();
        c->kind = s->kind;
        c->loc = s->loc;
        c->attrs = attrs(s->attrs);
        for (Stmt* b : s->body) c->body.push_back(stmt(b));
        for (VarDecl* v : s->decls) c->decls.push_back(var(v));
        c->expr = expr(s->expr);
        c->cond = expr(s->cond);
        c->init = stmt(s->init);
        c->step = expr(s->step);
        c->then_stmt = stmt(s->then_stmt);
        c->else_stmt = stmt(s->else_stmt);
        if (s->alias) {  // a local typealias: resolved anew in the instantiation
            c->alias = ast_.make<TypeAliasDecl>();
            c->alias->loc = s->alias->loc;
            c->alias->name = s->alias->name;
            c->alias->type = type(s->alias->type);
        }
        return c;
    }

    std::vector<GenericParam> generic_params(const std::vector<GenericParam>& in) {
        std::vector<GenericParam> out = in;
        for (GenericParam& p : out) {
            p.value_type = type(p.value_type);
            for (TypeExpr*& c : p.constraint_types) c = type(c);
        }
        return out;
    }

    FunctionDecl* function(const FunctionDecl* f) {
        auto* c = ast_.make<FunctionDecl>();
        c->loc = f->loc;
        c->name = f->name;
        c->attrs = attrs(f->attrs);
        c->return_type = type(f->return_type);
        c->return_no_diff = f->return_no_diff;
        for (VarDecl* p : f->params) c->params.push_back(var(p));
        c->body = stmt(f->body);
        c->generic_params = generic_params(f->generic_params);
        c->owner = f->owner;
        c->member_name = f->member_name;
        c->is_static = f->is_static;
        c->is_mutating = f->is_mutating;
        c->is_init = f->is_init;
        c->is_override = f->is_override;
        c->visibility = f->visibility;
        return c;
    }

    StructDecl* structure(const StructDecl* s) {
        auto* c = ast_.make<StructDecl>();
        c->loc = s->loc;
        c->name = s->name;
        c->bases = s->bases;
        c->base_locs = s->base_locs;
        for (TypeExpr* b : s->base_types) c->base_types.push_back(type(b));
        c->visibility = s->visibility;
        for (VarDecl* f : s->fields) c->fields.push_back(var(f));
        for (FunctionDecl* m : s->methods) {
            FunctionDecl* mc = function(m);
            mc->owner = c;
            c->methods.push_back(mc);
        }
        for (VarDecl* v : s->static_consts) c->static_consts.push_back(var(v));
        for (VarDecl* v : s->type_aliases) c->type_aliases.push_back(var(v));
        c->generic_params = generic_params(s->generic_params);
        c->associated_types = s->associated_types;
        c->associated_locs = s->associated_locs;
        c->associated_constraints = s->associated_constraints;
        c->associated_constraint_locs = s->associated_constraint_locs;
        c->is_interface = s->is_interface;
        return c;
    }

private:
    AstContext& ast_;
};

}  // namespace

FunctionDecl* clone_function(AstContext& ast, const FunctionDecl* f) { return Cloner(ast).function(f); }

StructDecl* clone_struct(AstContext& ast, const StructDecl* s) { return Cloner(ast).structure(s); }

Expr* clone_expr(AstContext& ast, const Expr* e) { return Cloner(ast).expr(e); }

}  // namespace sg::lang
