// src/lang/sema_assoc_types.cpp — associated types and the member types of structs.
//
//   interface IModel { associatedtype Param : IDifferentiable; [Differentiable] float eval(Param p); }
//   struct Line : IModel { typedef float Param; ... };          // or `struct Param { ... };`
//   [Differentiable] float loss<M : IModel>(M m, M.Param p) { return m.eval(p); }
//
// A struct meets `associatedtype Param` with a member type named Param: a `typealias` /
// `typedef`, or a nested struct (the parser gives its container a member alias for it). Each
// constraint the requirement lists must hold for that type (Slang's 38029, at the base that
// requires it). `T.Param` and `T::Param` name the member type of a type parameter's argument in
// any type position (parameters, locals, results); a path goes on through member types and
// `Differential` (`T.Param.Differential`), and in expressions a path to a type is a type's name
// (`T.Param.dadd(a, b)`, `M.Param.Differential(...)`). A member a type does not have is 30027,
// at the member. Generics are monomorphized, so in each instance `T.Param` is a concrete type.
#include "lang/sema_internal.h"

namespace sg::lang {

const Type* Sema::member_alias_type(const StructDecl* owner, const std::string& name) {
    // The struct's own member types, then those of the structs a nested one is declared in
    // (`Outer.Inner` sees Outer's, its own name among them).
    for (const StructDecl* s = owner; s;) {
        for (VarDecl* a : s->type_aliases) {
            if (a->name != name) continue;
            if (!a->type && !resolving_member_aliases_.insert(a).second) {
                // Slang: 40002 cyclic reference
                diags_.error(a->loc, "type alias '" + a->name + "' refers to itself", 40002);
                a->type = types_.error_type();
            } else if (!a->type) {
                const Substitution* saved = subst_;
                const StructDecl* saved_struct = resolving_struct_;
                subst_ = substitution_of_struct(s);
                resolving_struct_ = s;
                const Type* t = resolve_type(a->type_expr);
                subst_ = saved;
                resolving_struct_ = saved_struct;
                resolving_member_aliases_.erase(a);
                if (!a->type) a->type = t;
            }
            return a->type;
        }
        size_t dot = s->name.rfind('.');
        if (dot == std::string::npos || s->generic_origin) break;
        auto outer = module_.structs.find(s->name.substr(0, dot));
        s = outer != module_.structs.end() ? outer->second : nullptr;
    }
    return nullptr;
}

const Type* Sema::resolve_member_type_path(TypeExpr* te, const Type* base) {
    size_t start = 0;
    for (size_t k = 0; start <= te->member.size(); ++k) {
        size_t dot = te->member.find('.', start);
        if (dot == std::string::npos) dot = te->member.size();
        const std::string part = te->member.substr(start, dot - start);
        start = dot + 1;
        SourceLoc at = k < te->member_locs.size() ? te->member_locs[k] : te->loc;
        // A member type of the struct (what satisfies an associatedtype); `Differential` of a
        // differentiable type is its Differential (`typedef T Differential;` of a struct that is
        // not differentiable is just a member type).
        if (base->is_struct() && base->decl && (part != "Differential" || !types_.is_differentiable(base))) {
            if (!declared_structs_.count(base->decl) && !declaring_structs_.count(base->decl))
                declare_struct(const_cast<StructDecl*>(base->decl));
            if (const Type* t = member_alias_type(base->decl, part)) {
                base = t;
                if (base->is_error()) return base;
                continue;
            }
        }
        if (part == "Differential") {
            const Type* d = types_.differential(base);
            if (!d) {
                diags_.error(at, type_name(base) + " is not differentiable and has no Differential", 30027);
                return types_.error_type();
            }
            base = d;
            continue;
        }
        // Slang: 30027 member not found
        diags_.error(at, "unknown member type '" + part + "' of " + type_name(base), 30027);
        return types_.error_type();
    }
    return base;
}

void Sema::check_associated_constraint_names(const StructDecl* iface) {
    for (size_t k = 0; k < iface->associated_constraints.size(); ++k)
        for (size_t j = 0; j < iface->associated_constraints[k].size(); ++j) {
            const std::string& c = iface->associated_constraints[k][j];
            if (c == "IDifferentiable" || module_.interfaces.count(c) || is_builtin_interface(c)) continue;
            bool located = k < iface->associated_constraint_locs.size() && j < iface->associated_constraint_locs[k].size();
            diags_.error(located ? iface->associated_constraint_locs[k][j] : iface->loc,
                         "unknown interface '" + c + "' constraining associatedtype '" + iface->associated_types[k] + "'",
                         30015);  // Slang: undefined identifier
        }
}

bool Sema::check_associated_type_constraints(const StructDecl* s, const StructDecl* iface, size_t k, const Type* t) {
    if (k >= iface->associated_constraints.size() || t->is_error()) return true;
    for (const std::string& c : iface->associated_constraints[k]) {
        if (satisfies_constraint(c, t)) continue;
        // Where the struct names the interface (or the base that brings it in).
        SourceLoc at = s->loc;
        for (size_t b = 0; b < s->bases.size() && b < s->base_locs.size(); ++b) {
            auto it = module_.interfaces.find(s->bases[b]);
            if (s->bases[b] == iface->name || (it != module_.interfaces.end() && interface_extends(it->second, iface->name))) {
                at = s->base_locs[b];
                break;
            }
        }
        // Slang: 38029 type argument doesn't conform to interface
        diags_.error(at,
                     "struct " + s->name + "'s associated type '" + iface->associated_types[k] + "' (" + type_name(t) +
                         ") does not conform to '" + c + "', which interface '" + iface->name + "' requires",
                     38029);
        return false;
    }
    return true;
}

bool Sema::fold_type_path(Expr* e) {
    // `T.Param` / `M.Param.Differential` in an expression: the members after the root name are
    // member types. The node becomes a type name (a Name with its TypeExpr), which static member
    // calls, constructors and the differential members take. Nothing is reported here: a path
    // that is not one (`S.k.x`, a static constant's field) is left to the usual checks.
    std::vector<const Expr*> chain;
    const Expr* root = e;
    while (root->kind == ExprKind::Member && !root->operands.empty()) {
        chain.push_back(root);
        root = root->operands[0];
    }
    if (chain.empty() || root->kind != ExprKind::Name || lookup_local(root->name) || module_.globals.count(root->name))
        return false;
    if (subst_ && subst_->values.count(root->name)) return false;
    const Type* t = nullptr;
    if (root->type_expr) {
        if (!module_.generic_structs.count(root->name)) return false;
        t = resolve_type(root->type_expr);
    } else {
        t = resolve_named_type(root->name, root->loc, false);
    }
    if (!t || t->is_error()) return false;
    std::string member;
    std::vector<SourceLoc> locs;
    bool any_alias = false;  // `V.Differential` alone is the differential members' (sema_differential_members.cpp)
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const std::string& part = (*it)->name;
        if (t->is_struct() && t->decl && (part != "Differential" || !types_.is_differentiable(t))) {
            if (!declared_structs_.count(t->decl) && !declaring_structs_.count(t->decl))
                declare_struct(const_cast<StructDecl*>(t->decl));
            bool alias = false;
            for (const VarDecl* a : t->decl->type_aliases) alias |= a->name == part;
            if (alias) {
                t = member_alias_type(t->decl, part);
            } else if (part == "Differential" && types_.differential(t)) {
                t = types_.differential(t);
            } else {
                return false;
            }
        } else if (part == "Differential" && types_.differential(t)) {
            t = types_.differential(t);
        } else {
            return false;
        }
        if (!t || t->is_error()) return false;
        any_alias |= part != "Differential";
        member += (member.empty() ? "" : ".") + part;
        locs.push_back((*it)->loc);
    }
    if (!any_alias) return false;
    auto* te = ast_.make<TypeExpr>();
    if (root->type_expr) *te = *root->type_expr;
    te->loc = root->loc;
    te->name = root->name;
    te->member = member;
    te->member_locs = locs;
    te->resolved = nullptr;
    const std::string name = root->name;
    e->kind = ExprKind::Name;
    e->name = name;
    e->operands.clear();
    e->type_expr = te;
    return true;
}

}  // namespace sg::lang
