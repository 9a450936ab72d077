// src/lang/sema_extensions_builtin.cpp — extensions of the built-in scalar, vector and matrix
// types:
//
//   interface IScale { float scaled(float k); }
//   extension float : IScale { float scaled(float k) { return this * k; } }
//   extension float3 { float sum() { return this.x + this.y + this.z; } static float3 up() { ... } }
//
// The members of every extension of one built-in type gather in one holder (a StructDecl whose
// type is the built-in type itself, so each method's `this` is a value of it): `x.scaled(2)` on a
// float, `float3.up()` on the type, and the type meets the extension's interfaces, as a generic's
// argument (`use<T : IScale>(1.5)`) too. As in Slang, an extension adds no storage (a field is
// 31400) and its methods name the value's members through `this` (`x` alone is not `this.x`).
#include "lang/sema_internal.h"

namespace sg::lang {

void Sema::merge_builtin_extension(StructDecl* ext, const Type* t) {
    StructDecl*& holder = builtin_extensions_[t];
    if (!holder) {
        holder = ast_.make<StructDecl>();
        holder->loc = ext->loc;
        holder->name = type_name(t);
        holder->type = t;
    }
    for (FunctionDecl* m : ext->methods) m->name = holder->name + "." + m->member_name;
    move_extension_members(ext, holder);
}

void Sema::declare_builtin_extensions() {
    for (auto& [type, holder] : builtin_extensions_) {
        for (const FunctionDecl* m : holder->methods)
            if (m->is_init)  // Slang allows it; a constructor of a built-in type is not supported here
                diags_.unsupported(m->loc, "an '__init' in an extension of built-in type " + holder->name);
        declare_members(holder);
    }
}

const StructDecl* Sema::builtin_extension(const Type* t) const {
    if (builtin_extensions_.empty() || t->is_struct()) return nullptr;
    auto it = builtin_extensions_.find(t);
    return it == builtin_extensions_.end() ? nullptr : it->second;
}

const Type* Sema::check_builtin_type_member(Expr* e, bool called) {
    if (builtin_extensions_.empty()) return nullptr;
    Expr* member = called ? e->operands[0] : e;
    const Expr* base = member->operands[0];
    if (base->kind != ExprKind::Name || lookup_local(base->name) || module_.globals.count(base->name)) return nullptr;
    const Type* t = resolve_named_type(base->name, base->loc, false);
    const StructDecl* holder = t ? builtin_extension(t) : nullptr;
    if (!holder) return nullptr;
    const std::string& n = member->name;
    if (!called) {  // `float.K`: the node becomes a reference to the static constant
        VarDecl* c = find_static_const(holder, n);
        if (!c) return nullptr;
        e->kind = ExprKind::Name;
        e->operands.clear();
        e->ref = RefKind::Global;
        e->var_ref = c;
        return c->type ? c->type : types_.error_type();
    }
    std::vector<FunctionDecl*> statics;
    bool instance = false;
    for (FunctionDecl* m : find_methods(holder, n)) {
        if (m->is_static) statics.push_back(m);
        else instance = true;
    }
    if (statics.empty()) {
        if (!instance) return nullptr;  // `float.getPi()` and the rest: sema_scalar_members.cpp
        diags_.error(member->loc, "'" + n + "' of type " + holder->name + " is not static: call it on a value", 30100);
        return types_.error_type();
    }
    for (size_t k = 1; k < e->operands.size(); ++k)
        if (e->operands[k]->kind != ExprKind::InitList && check_expr(e->operands[k])->is_error())
            return types_.error_type();
    return check_static_method_call(e, member->loc, statics);
}

}  // namespace sg::lang
