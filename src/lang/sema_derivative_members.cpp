// src/lang/sema_derivative_members.cpp — `[DerivativeMember(D.f)]` on the fields of a
// differentiable struct whose Differential is another struct D:
//
//     struct VD : IDifferentiable { float dx; float dy; typedef VD Differential; };
//     struct V : IDifferentiable { typedef VD Differential;
//         [DerivativeMember(VD.dx)] float x; [DerivativeMember(VD.dy)] float y; };
//
// Each differentiable field names the field of D that holds its derivative (of the field's
// Differential type). The names are kept in the struct's field table (FieldInfo), which is all
// that autodiff reads when it converts between a struct's derivative and its Differential
// (autodiff/differentials.cpp); fields of D that no field names stay zero. As in Slang: a
// differentiable field without one is 30121, a name that is not a field of D 30027, a field of
// another type 30019. On a struct that names no other Differential, the attribute may only name
// the field itself (the synthesized Differential's field of the same name).
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// The written `D.f` (or `D::f`): the type name and the field name; false when it is not one.
bool split_target(const Expr* e, std::string& type, std::string& field) {
    if (!e || e->kind != ExprKind::Member || e->operands.size() != 1 || e->operands[0]->kind != ExprKind::Name)
        return false;
    type = e->operands[0]->name;
    field = e->name;
    return true;
}

}  // namespace

const Type* Sema::declared_member_differential(StructDecl* s, std::vector<FieldInfo>& fields) {
    const VarDecl* alias = nullptr;
    for (const VarDecl* a : s->type_aliases)
        if (a->name == "Differential") alias = a;
    const Type* d = alias ? (alias->type ? alias->type : resolve_type(alias->type_expr)) : nullptr;
    if (!d || d->is_error() || d == s->type) {
        // The synthesized Differential: an attribute may only name the field itself.
        for (const VarDecl* f : s->fields) {
            std::string type, field;
            if (!f->derivative_member) continue;
            if (!split_target(f->derivative_member, type, field) || type != s->name || field != f->name)
                diags_.unsupported(f->derivative_member->loc,
                                   "[DerivativeMember] naming another field than the field itself in struct " + s->name +
                                       " without a declared Differential (add `typedef D Differential;`)");
        }
        return nullptr;
    }
    static const std::vector<FieldInfo> kNone;  // a Differential that is no struct has no fields to name
    const std::vector<FieldInfo>& targets = d->is_struct() ? types_.fields(d) : kNone;
    bool ok = true;
    std::set<std::string> taken;
    for (size_t k = 0; k < s->fields.size() && k < fields.size(); ++k) {
        const VarDecl* f = s->fields[k];
        bool differentiable = !f->is_no_diff && f->type && types_.is_differentiable(f->type);
        if (!f->derivative_member) {
            if (differentiable) {
                diags_.error(f->loc,
                             "field '" + f->name + "' of " + s->name + " has no counterpart in its declared Differential " +
                                 type_name(d) + " (name it: [DerivativeMember(" + type_name(d) + ".<field>)])",
                             30121);  // Slang: missing field in differential type
                ok = false;
            }
            continue;
        }
        std::string type, field;
        const Expr* at = f->derivative_member;
        if (!split_target(at, type, field) || resolve_named_type(type, at->loc, false) != d) {
            diags_.error(at->loc,
                         "[DerivativeMember] of field '" + f->name + "' must name a field of " + s->name +
                             "'s Differential " + type_name(d) + " (" + type_name(d) + ".<field>)",
                         31130);  // Slang: invalid DerivativeMember target
            ok = false;
            continue;
        }
        const FieldInfo* target = nullptr;
        for (const FieldInfo& t : targets)
            if (t.name == field) target = &t;
        if (!target) {
            diags_.error(at->loc, "'" + field + "' is not a field of " + type_name(d), 30027);  // member not found
            ok = false;
            continue;
        }
        if (!differentiable) {
            diags_.error(at->loc, "field '" + f->name + "' of " + s->name +
                                      " carries no derivative (not differentiable or no_diff): it has no [DerivativeMember]");
            ok = false;
            continue;
        }
        const Type* want = types_.differential(f->type);
        if (target->type != want) {
            diags_.error(at->loc,
                         "[DerivativeMember(" + type + "." + field + ")] of field '" + f->name + "': " + type_name(d) + "." +
                             field + " is " + type_name(target->type) + ", the derivative of " + type_name(f->type) +
                             " is " + type_name(want),
                         30019);  // Slang: type mismatch
            ok = false;
            continue;
        }
        if (!taken.insert(field).second) {
            diags_.unsupported(at->loc, "two fields of " + s->name + " with the same [DerivativeMember] (" + type + "." +
                                            field + ")");
            ok = false;
            continue;
        }
        fields[k].differential_name = field;
    }
    return ok ? d : nullptr;
}

void Sema::check_derivative_members_unused(StructDecl* s) {
    for (const VarDecl* f : s->fields)
        if (f->derivative_member)
            diags_.error(f->derivative_member->loc, "[DerivativeMember] on field '" + f->name + "' of " + s->name +
                                                        ", which is not differentiable (declare it `: IDifferentiable`)");
}

}  // namespace sg::lang
