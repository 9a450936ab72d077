// src/lang/sema_typedecl.cpp — declarations that name types (typealias, typedef, enum),
// enumerators (`Mode.A`, `Mode::A`) and C-style casts.
//
// An alias is resolved on first use, like a struct, so that it may name a type declared later
// in the file. An enum is a distinct integer type (types.h): it converts implicitly to the
// integer types, and a value becomes an enum only through a cast (`(Mode)k`, `Mode(k)`), as in
// Slang (30019 otherwise).
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// Slang's "conflicting declaration".
constexpr int kConflictingDeclaration = 30200;
/// Slang's "type mismatch in expression" (an impossible conversion).
constexpr int kTypeMismatch = 30019;

}  // namespace

EnumDecl* Sema::lookup_enum(const std::string& name) const {
    auto it = module_.enums.find(name);
    return it == module_.enums.end() ? nullptr : it->second;
}

void Sema::declare_type_name(Decl* d) {
    const std::string& name = d->kind == DeclKind::Enum ? d->enumeration->name : d->alias->name;
    SourceLoc where = d->kind == DeclKind::Enum ? d->enumeration->loc : d->alias->loc;
    if (module_.structs.count(name) || module_.aliases.count(name) || module_.enums.count(name) ||
        resolve_named_type(name, where, false)) {
        diags_.error(where, "redefinition of type '" + name + "' (conflicting declaration)", kConflictingDeclaration);
        return;
    }
    if (d->kind == DeclKind::Enum) module_.enums[name] = d->enumeration;
    else module_.aliases[name] = d->alias;
}

const Type* Sema::resolve_alias(TypeAliasDecl* a) {
    if (a->resolved) return a->resolved;
    if (!resolving_aliases_.insert(a).second) {
        diags_.error(a->loc, "type alias '" + a->name + "' refers to itself", 40002);  // Slang: cyclic reference
        return a->resolved = types_.error_type();
    }
    // A top-level alias names the same type wherever it is used, also inside a generic's
    // instantiation (whose parameters it cannot see); a local one is resolved where it stands.
    const Substitution* saved = subst_;
    if (module_.aliases.count(a->name) && module_.aliases[a->name] == a) subst_ = nullptr;
    const Type* t = resolve_type(a->type);
    subst_ = saved;
    resolving_aliases_.erase(a);
    if (t->is_void()) {
        diags_.error(a->type->loc, "type alias '" + a->name + "' cannot name void");
        t = types_.error_type();
    }
    return a->resolved = t;
}

void Sema::declare_local_alias(TypeAliasDecl* a) {
    if (scopes_.innermost_has_alias(a->name) || lookup_local(a->name) || module_.aliases.count(a->name) ||
        module_.enums.count(a->name) || module_.structs.count(a->name)) {
        diags_.error(a->loc, "redefinition of '" + a->name + "' (conflicting declaration)", kConflictingDeclaration);
        return;
    }
    // Resolved now: a local alias names the types in scope where it is written.
    resolve_alias(a);
    scopes_.declare_alias(a);
}

void Sema::declare_enum(EnumDecl* e) {
    if (!declared_enums_.insert(e).second) return;
    ScalarKind underlying = ScalarKind::Int32;
    if (e->underlying) {
        const Type* u = resolve_type(e->underlying);
        if (!u->is_error() && (!u->is_scalar() || !is_integer(u->scalar) || u->is_enum()))
            diags_.error(e->underlying->loc,
                         "the underlying type of enum '" + e->name + "' must be an integer type, got " + type_name(u));
        else if (!u->is_error()) underlying = u->scalar;
    }
    e->type = types_.enumeration(e, underlying);
    // Enumerator values may name the earlier enumerators bare (`C = A + 10`): the members are
    // resolved in order, and enum_member_value() finds the resolved ones by name.
    int64_t next = 0;
    for (size_t k = 0; k < e->members.size(); ++k) {
        EnumMember& m = e->members[k];
        for (size_t j = 0; j < k; ++j)
            if (e->members[j].name == m.name)
                diags_.error(m.loc, "enumerator '" + m.name + "' is declared twice in enum '" + e->name +
                                        "' (conflicting declaration)",
                             kConflictingDeclaration);
        if (m.value) {
            EnumScope saved = enum_scope_;  // a value may name another enum, declared on the way
            enum_scope_ = {e, k};
            auto v = eval_const_int(m.value);
            enum_scope_ = saved;
            if (!v) diags_.error(m.value->loc, "the value of enumerator '" + m.name + "' must be a constant integer");
            else next = *v;
        }
        m.resolved = next;
        next = m.resolved + 1;
    }
}

std::optional<int64_t> Sema::enum_member_value(const Expr* e) {
    if (e->kind == ExprKind::Name) {
        // Inside an enum's own values only: the enumerators before the one being evaluated.
        if (!enum_scope_.decl) return std::nullopt;
        for (size_t j = 0; j < enum_scope_.resolved; ++j)
            if (enum_scope_.decl->members[j].name == e->name) return enum_scope_.decl->members[j].resolved;
        return std::nullopt;
    }
    if (e->kind != ExprKind::Member || e->operands[0]->kind != ExprKind::Name) return std::nullopt;
    const std::string& base = e->operands[0]->name;
    if (lookup_local(base)) return std::nullopt;
    EnumDecl* decl = lookup_enum(base);
    if (!decl) return std::nullopt;
    if (decl == enum_scope_.decl) {  // `Mode.A` inside Mode's own values
        for (size_t j = 0; j < enum_scope_.resolved; ++j)
            if (decl->members[j].name == e->name) return decl->members[j].resolved;
        return std::nullopt;
    }
    declare_enum(decl);
    for (const EnumMember& m : decl->members)
        if (m.name == e->name) return m.resolved;
    return std::nullopt;
}

const Type* Sema::check_enum_member(Expr* e) {
    Expr* base = e->operands[0];
    if (base->kind != ExprKind::Name || lookup_local(base->name) || module_.globals.count(base->name)) return nullptr;
    const Type* t = resolve_named_type(base->name, base->loc, false);
    if (!t || !t->is_enum()) return nullptr;
    EnumDecl* decl = const_cast<EnumDecl*>(t->enumeration);
    declare_enum(decl);
    base->ref = RefKind::Type;
    base->type_ref = t;
    base->type = types_.void_type();
    for (const EnumMember& m : decl->members)
        if (m.name == e->name) {
            e->ref = RefKind::EnumMember;
            e->enum_value = m.resolved;
            return t;
        }
    diags_.error(e->loc, "enum '" + decl->name + "' has no member '" + e->name + "'", 30027);
    return types_.error_type();
}

// A C-style cast converts as the constructor of its type does: between scalar kinds, between
// vectors or matrices of the same shape, a scalar splat into a vector or matrix, and between
// an enum and the integers. Anything else (a struct, a vector of another length) is 30019.
const Type* Sema::check_cast(Expr* e) {
    const Type* to = resolve_type(e->type_expr);
    const Type* from = check_expr(e->operands[0]);
    if (to->is_error() || from->is_error()) return types_.error_type();
    if (const Type* r = check_standin_construct(e, to, {e->operands[0]})) return r;
    TypeExpr* te = e->type_expr;
    if (te->type_args.empty() && te->array_dims.empty() && te->member.empty()) {
        construct_through_constraint(e, te->name, 0);
        from = e->operands[0]->type;
    }
    bool ok = implicitly_convertible(from, to) && !from->is_enum();
    if (from->is_scalar() && to->is_numeric() && !(to->is_enum() && !is_integer(from->scalar)) &&
        !(from->is_enum() && !to->is_scalar()))
        ok = true;  // scalar kinds, enum <-> integer, splat
    if ((from->is_vector() || from->is_matrix()) && from->kind == to->kind && from->rows == to->rows &&
        from->cols == to->cols)
        ok = true;
    ok |= matrix_resizes(from, to);  // `(float2x2)m3`: the top-left part
    if (!ok) {
        diags_.error(e->loc, "cannot cast " + type_name(from) + " to " + type_name(to) + " (type mismatch)",
                     kTypeMismatch);
        return types_.error_type();
    }
    return to;
}

}  // namespace sg::lang
