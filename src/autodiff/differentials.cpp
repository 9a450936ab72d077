// src/autodiff/differentials.cpp — Differential ⇄ internal derivative form (differentials.h).
#include "autodiff/differentials.h"

namespace sg::autodiff {

namespace {

/// Index of the field named `name` in `fields`, or -1.
int field_index(const std::vector<lang::FieldInfo>& fields, const std::string& name) {
    for (size_t k = 0; k < fields.size(); ++k)
        if (fields[k].name == name) return int(k);
    return -1;
}

/// The name of the Differential's field that holds `f`'s derivative ([DerivativeMember]).
const std::string& differential_name(const lang::FieldInfo& f) {
    return f.differential_name.empty() ? f.name : f.differential_name;
}

/// Index of the primal field whose derivative the Differential's field `name` holds, or -1.
int primal_index(const std::vector<lang::FieldInfo>& fields, const std::string& name) {
    for (size_t k = 0; k < fields.size(); ++k)
        if (differential_name(fields[k]) == name) return int(k);
    return -1;
}

bool has_declared_members(const std::vector<lang::FieldInfo>& fields) {
    for (const auto& f : fields)
        if (!f.differential_name.empty()) return true;
    return false;
}

}  // namespace

ir::Value* to_differential(ir::Builder& b, ir::Value* derivative, const ir::Type* primal) {
    lang::TypeContext& types = b.types();
    const ir::Type* d = types.differential(primal);
    SG_INTERNAL_ASSERT(d != nullptr, "to_differential of non-differentiable " + lang::type_name(primal));
    SG_INTERNAL_ASSERT(
        derivative->type == primal,
        "to_differential: derivative of " + lang::type_name(derivative->type) + " for " + lang::type_name(primal));
    if (d == primal) return derivative;
    if (primal->is_pair()) {  // componentwise: the primal's and the tangent's derivatives
        const ir::Type* tangent = types.differential(primal->element);
        return b.construct(d, {to_differential(b, b.extract(derivative, 0), primal->element),
                               to_differential(b, b.extract(derivative, 1), tangent)});
    }
    if (primal->is_array()) {  // elementwise
        std::vector<ir::Value*> members;
        for (int64_t k = 0; k < primal->count; ++k)
            members.push_back(to_differential(b, b.extract(derivative, int(k)), primal->element));
        return b.construct(d, members);
    }
    // A struct whose Differential keeps a subset of its fields, matched by name (or by their
    // [DerivativeMember]; a declared Differential's field no primal field names stays zero).
    const auto& from = types.fields(primal);
    const bool declared = has_declared_members(from);
    std::vector<ir::Value*> members;
    for (const auto& f : types.fields(d)) {
        int k = primal_index(from, f.name);
        SG_INTERNAL_ASSERT(k >= 0 || declared, "Differential field " + f.name + " missing in " + lang::type_name(primal));
        members.push_back(k < 0 ? b.zero(f.type) : to_differential(b, b.extract(derivative, k), from[size_t(k)].type));
    }
    return b.construct(d, members);
}

ir::Value* from_differential(ir::Builder& b, ir::Value* d, const ir::Type* primal) {
    lang::TypeContext& types = b.types();
    SG_INTERNAL_ASSERT(
        d->type == types.differential(primal),
        "from_differential: " + lang::type_name(d->type) + " is not the Differential of " + lang::type_name(primal));
    if (d->type == primal) return d;
    if (primal->is_pair()) {  // componentwise
        const ir::Type* tangent = types.differential(primal->element);
        return b.construct(primal, {from_differential(b, b.extract(d, 0), primal->element),
                                    from_differential(b, b.extract(d, 1), tangent)});
    }
    if (primal->is_array()) {  // elementwise
        std::vector<ir::Value*> members;
        for (int64_t k = 0; k < primal->count; ++k)
            members.push_back(from_differential(b, b.extract(d, int(k)), primal->element));
        return b.construct(primal, members);
    }
    const auto& have = types.fields(d->type);
    std::vector<ir::Value*> members;
    for (const auto& f : types.fields(primal)) {
        int k = field_index(have, differential_name(f));
        members.push_back(k < 0 ? b.zero(f.type) : from_differential(b, b.extract(d, k), f.type));
    }
    return b.construct(primal, members);
}

}  // namespace sg::autodiff
