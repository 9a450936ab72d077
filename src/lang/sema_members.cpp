// src/lang/sema_members.cpp — struct members: method signatures (a method is a function whose
// params[0] is `this`: `in`, or `inout` when [mutating]), implicit `this`, member and static
// calls, static constants and `__init` constructors. Lowering, autodiff and codegen see methods
// as the plain functions they become here.
#include "lang/sema_internal.h"

namespace sg::lang {

void Sema::declare_signature(FunctionDecl* f) {
    const Substitution* saved = subst_;
    const StructDecl* saved_struct = resolving_struct_;
    subst_ = substitution_of(f);
    // A method's signature may use its struct's static constants and type aliases (also when a
    // call elsewhere instantiates a generic method).
    if (f->owner && !f->owner->is_interface) resolving_struct_ = f->owner;
    f->is_differentiable = find_attribute(f->attrs, "Differentiable") ||
                           find_attribute(f->attrs, "BackwardDifferentiable") ||
                           find_attribute(f->attrs, "ForwardDifferentiable");
    f->is_glue_entry = allow_internal_ && find_attribute(f->attrs, "__sg_kernel");
    f->is_mutating = find_attribute(f->attrs, "mutating") != nullptr;
    if (f->owner && !f->owner->is_interface) {
        if (f->is_static && f->is_mutating) diags_.error(f->loc, "a static member function cannot be [mutating]");
        if (f->is_init && f->is_mutating) diags_.error(f->loc, "'__init' is [mutating] already");
    }  // [mutating] on a free function means nothing; Slang accepts it too
    if (find_attribute(f->attrs, "NoDiffThis") && (!f->owner || f->is_static || f->is_init))
        diags_.error(f->loc, "[NoDiffThis] applies to member functions that have 'this'");
    f->result_type = f->is_init ? f->owner->type : resolve_type(f->return_type);
    if (f->owner && !f->owner->is_interface && !f->is_static && !f->is_init && !f->this_param) {
        // `this` is the first parameter: by value, or inout for a [mutating] method. A
        // non-mutating method may not assign to it (Slang's 30011).
        auto* self = ast_.make<VarDecl>();
        self->loc = f->loc;
        self->name = "this";
        self->type = f->owner->type;
        self->dir = f->is_mutating ? ParamDir::InOut : ParamDir::In;
        self->is_const = !f->is_mutating;
        self->is_param = true;
        self->is_no_diff = find_attribute(f->attrs, "NoDiffThis") != nullptr;
        f->this_param = self;
        f->params.insert(f->params.begin(), self);
    }
    for (size_t k = 0; k < f->params.size(); ++k) {
        VarDecl* p = f->params[k];
        if (p != f->this_param) p->type = resolve_type(p->type_expr);
        p->index = int(k);
        p->is_param = true;
        if (p->type->is_void()) diags_.error(p->loc, "parameter '" + p->name + "' cannot have type void");
        if (p->is_constref && f->is_differentiable && param_is_differentiable(types_, *p))  // Slang: 38034
            diags_.error(p->loc, "__constref parameter '" + p->name + "' of differentiable function '" + f->name +
                                     "' must be no_diff (a reference cannot carry a derivative)",
                         38034);
    }
    // Defaults may call functions and methods declared later: checked once all signatures are
    // (Sema::run), and at once for the instantiations made after that.
    if (attributes_checked_) defaults_.check_declaration(f);
    if (!f->owner || !f->owner->is_interface) result_.functions.push_back(f);
    subst_ = saved;
    resolving_struct_ = saved_struct;
}

void Sema::declare_members(StructDecl* s) {
    if (!blanket_extensions_.empty()) apply_blanket_extensions(s);  // sema_extensions_blanket.cpp
    const Substitution* saved = subst_;
    subst_ = substitution_of_struct(s);
    for (VarDecl* v : s->static_consts) {
        check_global(v);
        for (VarDecl* o : s->static_consts)
            if (o != v && o->name == v->name && o->loc.offset < v->loc.offset)
                diags_.error(v->loc, "redefinition of '" + v->name + "' in struct " + s->name);
        for (VarDecl* f : s->fields)
            if (f->name == v->name) diags_.error(v->loc, "'" + v->name + "' is a field of struct " + s->name);
    }
    for (VarDecl* a : s->type_aliases)
        if (!a->type) a->type = resolve_type(a->type_expr);  // a field may have resolved it
    subst_ = saved;
    for (FunctionDecl* m : s->methods) {
        for (VarDecl* f : s->fields)
            if (f->name == m->member_name)
                diags_.error(m->loc, "'" + m->member_name + "' is a field of struct " + s->name);
        if (!m->generic_params.empty()) continue;  // a generic method: declared per instantiation
        const StructDecl* saved_struct = resolving_struct_;
        resolving_struct_ = s;  // signatures may use the struct's static constants
        // Before the signature: its defaults may instantiate further (a depth that must grow).
        instances_.inherit_depth(s, m);
        declare_signature(m);
        resolving_struct_ = saved_struct;
    }
    // Overloads of one method with the same parameter types.
    for (size_t i = 0; i < s->methods.size(); ++i)
        for (size_t j = 0; j < i; ++j) {
            FunctionDecl *a = s->methods[i], *b = s->methods[j];
            if (a->member_name != b->member_name || a->params.size() != b->params.size()) continue;
            if (!a->generic_params.empty() || !b->generic_params.empty()) continue;
            bool same = true;
            for (size_t k = 0; k < a->params.size(); ++k) same &= a->params[k]->type == b->params[k]->type;
            if (same)
                diags_.error(a->loc, "redefinition of '" + a->name + "' with the same parameter types", 30201);
        }
    check_conformance(s);
}

VarDecl* Sema::find_static_const(const StructDecl* s, const std::string& name) const {
    for (VarDecl* v : s->static_consts)
        if (v->name == name) return v;
    return nullptr;
}

std::vector<FunctionDecl*> Sema::find_methods(const StructDecl* s, const std::string& name) const {
    std::vector<FunctionDecl*> out;
    for (FunctionDecl* m : s->methods)
        if (m->member_name == name && m->generic_params.empty()) out.push_back(m);
    return out;
}

const Type* Sema::static_base_type(Expr* base) {
    if (base->kind != ExprKind::Name || lookup_local(base->name)) return nullptr;
    if (!base->type_expr) {
        if (module_.globals.count(base->name) || (subst_ && subst_->values.count(base->name))) return nullptr;
        if (current_fn_ && current_fn_->owner && current_fn_->this_param) {
            for (const VarDecl* f : current_fn_->owner->fields)
                if (f->name == base->name) return nullptr;
        }
    }
    TypeExpr te;
    if (base->type_expr) te = *base->type_expr;
    else {
        te.loc = base->loc;
        te.name = base->name;
    }
    // Only struct names (and type parameters standing for structs) have static members.
    bool known = module_.structs.count(te.name) || module_.generic_structs.count(te.name) ||
                 (subst_ && subst_->types.count(te.name));
    if (!known && !base->type_expr && current_fn_ && current_fn_->owner) {
        // `Item.of(x)` where the struct (or one around it) declares Item (sema_assoc_types.cpp).
        const Type* t = member_alias_type(current_fn_->owner, te.name);
        return t && t->is_struct() ? t : nullptr;
    }
    if (!known) return nullptr;
    const Type* t = resolve_type(&te);
    return t->is_struct() || t->is_error() ? t : nullptr;
}

bool Sema::resolve_implicit_member(Expr* e) {
    // In a method: its struct's fields and static constants; in a field's default value: the
    // struct's static constants.
    const StructDecl* s = current_fn_ ? current_fn_->owner : field_defaults_of_;
    if (!s) return false;
    if (current_fn_ && (current_fn_->this_param || current_fn_->is_init)) {
        for (const VarDecl* f : s->fields) {
            if (f->name != e->name) continue;
            // `v` is `this.v`: the node becomes the member access.
            auto* self = ast_.make<Expr>();
            self->kind = ExprKind::Name;
            self->loc = e->loc;
            self->name = "this";
            e->kind = ExprKind::Member;
            e->operands = {self};
            return true;
        }
    }
    if (VarDecl* v = find_static_const(s, e->name)) {
        e->ref = RefKind::Global;
        e->var_ref = v;
        return true;
    }
    return false;
}

bool Sema::rewrite_implicit_member_call(Expr* e) {
    Expr* callee = e->operands[0];
    if (!current_fn_ || !current_fn_->owner || lookup_local(callee->name)) return false;
    StructDecl* s = current_fn_->owner;
    std::vector<FunctionDecl*> methods;  // generic ones too: `get(x)`, `get<float>(x)`
    for (FunctionDecl* m : s->methods)
        if (m->member_name == callee->name && (!callee->type_expr || !m->generic_params.empty())) methods.push_back(m);
    if (methods.empty()) return false;
    // `f(x)` inside a method is `this.f(x)`, or `S.f(x)` when the candidates are static.
    bool has_this = current_fn_->this_param || current_fn_->is_init;
    bool any_instance = false;
    for (FunctionDecl* m : methods) any_instance |= !m->is_static && !m->is_init;
    auto* base = ast_.make<Expr>();
    base->kind = ExprKind::Name;
    base->loc = callee->loc;
    base->name = any_instance && has_this ? "this" : s->name;
    auto* member = ast_.make<Expr>();
    member->kind = ExprKind::Member;
    member->loc = callee->loc;
    member->name = callee->name;
    member->type_expr = callee->type_expr;
    member->operands = {base};
    e->operands[0] = member;
    return true;
}

const Type* Sema::check_member_call(Expr* e) {
    Expr* callee = e->operands[0];
    Expr* base = callee->operands[0];
    auto check_args = [&]() {
        for (size_t k = 1; k < e->operands.size(); ++k)
            if (e->operands[k]->kind != ExprKind::InitList) check_expr(e->operands[k]);
    };
    // `S.f(x)` / `S::f(x)`: a static member function.
    if (const Type* st = static_base_type(base)) {
        check_args();
        if (st->is_error()) return st;
        std::vector<FunctionDecl*> statics;
        bool reported = false;
        for (FunctionDecl* m : member_candidates(e, callee, st->decl, reported))
            if (m->is_static) statics.push_back(m);
        if (reported) return types_.error_type();
        if (statics.empty()) {
            bool instance = false;  // generic ones included
            for (const FunctionDecl* m : st->decl->methods) instance |= m->member_name == callee->name;
            diags_.error(callee->loc,
                         instance ? "'" + callee->name + "' of struct " + type_name(st) +
                                        " is not static: call it on a value"
                                  : "struct " + type_name(st) + " has no static member function '" + callee->name + "'",
                         instance ? 30100 : 30027);
            return types_.error_type();
        }
        for (size_t k = 1; k < e->operands.size(); ++k)
            if (e->operands[k]->type && e->operands[k]->type->is_error()) return types_.error_type();
        return check_static_method_call(e, callee->loc, statics);
    }
    const Type* bt = check_expr(base);
    check_args();
    if (bt->is_error()) return bt;
    // A struct's methods, or those an extension gives a built-in type (sema_extensions_builtin.cpp).
    const StructDecl* owner = bt->is_struct() ? bt->decl : builtin_extension(bt);
    if (!owner) return nullptr;  // not a method call: the caller handles other types
    std::vector<FunctionDecl*> methods;
    bool reported = false;
    for (FunctionDecl* m : member_candidates(e, callee, owner, reported))
        if (!m->is_init) methods.push_back(m);
    if (reported) return types_.error_type();
    if (methods.empty() && !bt->is_struct()) return nullptr;  // `v.length()` and the rest: the caller's
    if (methods.empty()) {
        bool field = false;
        for (const auto& f : types_.fields(bt)) field |= f.name == callee->name;
        diags_.error(callee->loc,
                     field ? "field '" + callee->name + "' of struct " + type_name(bt) + " is not a function"
                           : "struct " + type_name(bt) + " has no member function '" + callee->name + "'",
                     field ? 30016 : 30027);
        return types_.error_type();
    }
    for (size_t k = 1; k < e->operands.size(); ++k)
        if (e->operands[k]->type && e->operands[k]->type->is_error()) return types_.error_type();
    bool all_static = true;
    for (FunctionDecl* m : methods) all_static &= m->is_static;
    auto* name = ast_.make<Expr>();
    name->kind = ExprKind::Name;
    name->loc = callee->loc;
    name->name = methods.front()->name;
    name->ref = RefKind::Function;
    name->type = types_.void_type();
    if (all_static) {
        // `s.staticf(x)`: the value is not passed (it has no side effects to keep: a name or
        // a member path is all a struct value can be here, or the call result is evaluated for
        // nothing).
        e->operands[0] = name;
        const Type* t = check_user_call(e, methods);
        if (e->callee) check_member_access(callee->loc, owner, e->callee->visibility, callee->name);
        return t;
    }
    std::vector<FunctionDecl*> instance;
    for (FunctionDecl* m : methods)
        if (!m->is_static) instance.push_back(m);
    bool all_mutating = true;
    for (FunctionDecl* m : instance) all_mutating &= m->is_mutating;
    if (all_mutating && !base->is_lvalue) {
        diags_.error(base->loc,
                     "cannot call [mutating] '" + callee->name + "' on a value that cannot be assigned" +
                         (base->kind == ExprKind::Name && base->name == "this" ? " ('this' in a non-mutating method)"
                                                                                 : ""),
                     30050);
        return types_.error_type();
    }
    // The method is a function of `this` first: the call passes the base as argument 0.
    e->operands[0] = name;
    e->operands.insert(e->operands.begin() + 1, base);
    const Type* t = check_user_call(e, instance);
    if (e->callee) check_member_access(callee->loc, owner, e->callee->visibility, callee->name);
    if (e->callee && e->callee->is_mutating && !base->is_lvalue && !base->type->is_error())
        diags_.error(base->loc,
                     "cannot call [mutating] '" + e->callee->member_name + "' on a value that cannot be assigned" +
                         (base->kind == ExprKind::Name && base->name == "this" ? " ('this' in a non-mutating method)"
                                                                                 : ""),
                     30050);
    return t;
}

const Type* Sema::check_struct_constructor(Expr* e, const Type* t) {
    std::vector<FunctionDecl*> inits;
    for (FunctionDecl* m : t->decl->methods)
        if (m->is_init) inits.push_back(m);
    if (inits.empty()) {
        // Without `__init`, `S(a, b)` initializes the fields in order, as `{a, b}` does (Slang
        // synthesizes that constructor): the node becomes the initializer list.
        size_t first = e->kind == ExprKind::TypeCtor ? 0 : 1;
        std::vector<Expr*> args(e->operands.begin() + long(first), e->operands.end());
        const auto& fields = types_.fields(t);
        if (args.size() > fields.size()) {
            diags_.error(e->loc, "struct " + type_name(t) + " has " + std::to_string(fields.size()) + " fields, " +
                                     std::to_string(args.size()) + " arguments given");
            return types_.error_type();
        }
        e->kind = ExprKind::InitList;
        e->operands = args;
        e->ref = RefKind::None;
        e->type_ref = nullptr;
        e->type_expr = nullptr;
        for (size_t k = 0; k < args.size(); ++k)
            if (args[k]->kind != ExprKind::InitList && args[k]->type &&
                !implicitly_convertible(args[k]->type, fields[k].type))
                diags_.error(args[k]->loc, "cannot convert " + type_name(args[k]->type) + " to " +
                                               type_name(fields[k].type) + " for field '" + fields[k].name + "'");
            else if (args[k]->kind == ExprKind::InitList)
                check_init_list(args[k], fields[k].type);
        e->type = t;
        return t;
    }
    if (e->kind == ExprKind::TypeCtor) {
        // Into call form: operands[0] is the callee, as for every user call.
        auto* name = ast_.make<Expr>();
        name->kind = ExprKind::Name;
        name->loc = e->loc;
        e->kind = ExprKind::Call;
        e->operands.insert(e->operands.begin(), name);
    }
    Expr* callee = e->operands[0];
    callee->ref = RefKind::Function;
    callee->name = inits.front()->name;
    e->ref = RefKind::None;
    e->type_ref = nullptr;
    return check_user_call(e, inits);
}

void Sema::prepare_init_body(FunctionDecl* f) {
    if (!f->body || f->this_param) return;
    // `__init(...) { v = x; }` is `S __init(...) { S this; v = x; return this; }`.
    auto* self = ast_.make<VarDecl>();
    self->loc = f->loc;
    self->name = "this";
    self->type_expr = ast_.make<TypeExpr>();
    self->type_expr->loc = f->loc;
    self->type_expr->name = f->owner->name;
    f->this_param = self;  // not a parameter: marks the body as prepared
    auto this_name = [&](SourceLoc at) {
        auto* n = ast_.make<Expr>();
        n->kind = ExprKind::Name;
        n->loc = at;
        n->name = "this";
        return n;
    };
    std::vector<Stmt*> stack = {f->body};
    while (!stack.empty()) {
        Stmt* s = stack.back();
        stack.pop_back();
        if (!s) continue;
        if (s->kind == StmtKind::Return) {
            if (s->expr) diags_.error(s->expr->loc, "'__init' cannot return a value", 30019);
            else s->expr = this_name(s->loc);
        }
        for (Stmt* b : s->body) stack.push_back(b);
        for (Stmt* c : {s->init, s->then_stmt, s->else_stmt}) stack.push_back(c);
    }
    auto* decl = ast_.make<Stmt>();
    decl->kind = StmtKind::Decl;
    decl->loc = f->loc;
    decl->decls = {self};
    auto* ret = ast_.make<Stmt>();
    ret->kind = StmtKind::Return;
    ret->loc = f->loc;
    ret->expr = this_name(f->loc);
    f->body->body.insert(f->body->body.begin(), decl);
    f->body->body.push_back(ret);
}

const Type* Sema::check_static_method_call(Expr* e, SourceLoc loc, const std::vector<FunctionDecl*>& statics) {
    auto* name = ast_.make<Expr>();
    name->kind = ExprKind::Name;
    name->loc = loc;
    name->name = statics.front()->name;
    name->ref = RefKind::Function;
    name->type = types_.void_type();
    e->operands[0] = name;
    return check_user_call(e, statics);
}

}  // namespace sg::lang
