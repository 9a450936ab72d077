// src/lang/sema_types.cpp — type resolution, constant evaluation, conversion and signature rules.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// Largest array (elements) a kernel may declare; larger ones get a diagnostic instead of an
/// allocation attempt (kernels keep arrays in registers or local memory).
constexpr int64_t kMaxArrayElements = 1 << 20;

struct ScalarName {
    const char* name;
    ScalarKind kind;
};
const ScalarName kScalarNames[] = {
    {"bool", ScalarKind::Bool},        {"int", ScalarKind::Int32},       {"uint", ScalarKind::UInt32},
    {"float", ScalarKind::Float},      {"double", ScalarKind::Double},   {"half", ScalarKind::Half},
    {"int8_t", ScalarKind::Int8},      {"int16_t", ScalarKind::Int16},   {"int32_t", ScalarKind::Int32},
    {"int64_t", ScalarKind::Int64},    {"uint8_t", ScalarKind::UInt8},   {"uint16_t", ScalarKind::UInt16},
    {"uint32_t", ScalarKind::UInt32},  {"uint64_t", ScalarKind::UInt64}, {"float32_t", ScalarKind::Float},
    {"float64_t", ScalarKind::Double}, {"float16_t", ScalarKind::Half},
};

const ScalarName* find_scalar(std::string_view name) {
    for (const auto& s : kScalarNames)
        if (name == s.name) return &s;
    return nullptr;
}

struct TensorName {
    const char* name;
    TensorKind kind;
};
// The 18 tensor built-ins of docs/language.md (plus their concrete primal-only kinds).
const TensorName kTensorNames[] = {
    {"ITensor", {TensorAccess::Read, false, true, false, false}},
    {"Tensor", {TensorAccess::Read, false, false, false, false}},
    {"IWTensor", {TensorAccess::Write, false, true, false, false}},
    {"WTensor", {TensorAccess::Write, false, false, false, false}},
    {"IRWTensor", {TensorAccess::ReadWrite, false, true, false, false}},
    {"RWTensor", {TensorAccess::ReadWrite, false, false, false, false}},
    {"AtomicTensor", {TensorAccess::ReadWrite, false, false, false, true}},
    {"IDiffTensor", {TensorAccess::Read, true, true, false, false}},
    {"DiffTensor", {TensorAccess::Read, true, false, true, false}},
    {"PrimalTensor", {TensorAccess::Read, true, false, false, false}},
    {"IWDiffTensor", {TensorAccess::Write, true, true, false, false}},
    {"WDiffTensor", {TensorAccess::Write, true, false, true, false}},
    {"WPrimalTensor", {TensorAccess::Write, true, false, false, false}},
    {"IRWDiffTensor", {TensorAccess::ReadWrite, true, true, false, false}},
    {"RWDiffTensor", {TensorAccess::ReadWrite, true, false, true, false}},
    {"RWPrimalTensor", {TensorAccess::ReadWrite, true, false, false, false}},
};

/// Scalars in a value of type t (saturating just past kMaxArrayElements: only compared to it).
int64_t scalar_count(const Type* t) {
    const int64_t cap = kMaxArrayElements + 1;
    switch (t->kind) {
    case TypeKind::Vector:
    case TypeKind::Matrix: return t->components();
    case TypeKind::Array: return std::min(cap, t->count * scalar_count(t->element));
    case TypeKind::Struct: {
        int64_t n = 0;
        if (t->decl)
            for (const VarDecl* f : t->decl->fields)
                if (f->type) n = std::min(cap, n + scalar_count(f->type));
        return std::max<int64_t>(n, 1);
    }
    default: return 1;
    }
}

int scalar_rank(ScalarKind k) {
    switch (k) {
    case ScalarKind::Bool: return 0;
    case ScalarKind::Int8: return 1;
    case ScalarKind::UInt8: return 2;
    case ScalarKind::Int16: return 3;
    case ScalarKind::UInt16: return 4;
    case ScalarKind::Int32: return 5;
    case ScalarKind::UInt32: return 6;
    case ScalarKind::Int64: return 7;
    case ScalarKind::UInt64: return 8;
    case ScalarKind::Half: return 9;
    case ScalarKind::Float: return 10;
    case ScalarKind::Double: return 11;
    }
    return 0;
}

ScalarKind wider(ScalarKind a, ScalarKind b) { return scalar_rank(a) >= scalar_rank(b) ? a : b; }

}  // namespace

const Type* Sema::resolve_named_type(const std::string& name, SourceLoc loc, bool report) {
    if (name == "void") return types_.void_type();
    if (subst_) {
        auto it = subst_->types.find(name);
        if (it != subst_->types.end()) return it->second;
    }
    // A struct's own `typealias V = float;`, in its fields and methods (resolved on first use).
    // A nested struct also sees the member types of the structs it is declared in.
    if (const StructDecl* owner = resolving_struct_ ? resolving_struct_ : current_fn_ ? current_fn_->owner : nullptr)
        if (const Type* t = member_alias_type(owner, name)) return t;  // sema_assoc_types.cpp
    if (const ScalarName* s = find_scalar(name)) return types_.scalar(s->kind);
    // Vector and matrix shorthands: float3, int2, double4, float3x3, bool2.
    for (const auto& s : kScalarNames) {
        size_t n = std::strlen(s.name);
        if (name.size() <= n || name.compare(0, n, s.name) != 0) continue;
        std::string rest = name.substr(n);
        if (rest.size() == 1 && rest[0] >= '1' && rest[0] <= '4') return types_.vector(s.kind, rest[0] - '0');
        if (rest.size() == 3 && rest[1] == 'x' && rest[0] >= '1' && rest[0] <= '4' && rest[2] >= '1' && rest[2] <= '4') {
            // A matrix of one row or one column (float1x3, float2x1) would have rows or
            // components of one element, which are scalars here (float1 is float); the IR and
            // the generated code do not model them yet. As matrix<T, R, C> says: sizes 2..4.
            if (rest[0] == '1' || rest[2] == '1') {
                if (!report) return nullptr;
                diags_.error(loc, "'" + name + "': a matrix of one row or one column is not supported yet "
                                  "(use a vector; matrix sizes are 2..4)");
                return types_.error_type();
            }
            return types_.matrix(s.kind, rest[0] - '0', rest[2] - '0');
        }
    }
    if (TypeAliasDecl* a = scopes_.lookup_alias(name)) return resolve_alias(a);
    if (auto a = module_.aliases.find(name); a != module_.aliases.end()) return resolve_alias(a->second);
    if (EnumDecl* e = lookup_enum(name)) {
        declare_enum(e);
        return e->type;
    }
    auto it = module_.structs.find(name);
    if (it != module_.structs.end()) return it->second->type;
    if (!report) return nullptr;
    if (module_.interfaces.count(name) || module_.generic_interfaces.count(name) || is_builtin_interface(name)) {
        // Static dispatch only: an interface constrains a generic, it is no type of values.
        diags_.unsupported(loc, "a value of interface type '" + name + "' (dynamic dispatch; use a generic " +
                                    "parameter constrained by it)");
        return types_.error_type();
    }
    if (module_.generic_structs.count(name)) {
        diags_.error(loc, "generic struct '" + name + "' needs its generic arguments: " + name + "<...>");
        return types_.error_type();
    }
    diags_.error(loc, "unknown type '" + name + "'", 30015);  // Slang: undefined identifier
    return nullptr;
}

std::optional<int64_t> Sema::eval_const_int(Expr* e) {
    if (!e) return std::nullopt;
    switch (e->kind) {
    case ExprKind::IntLit:
        if (e->int_value > uint64_t(INT64_MAX)) return std::nullopt;
        return int64_t(e->int_value);
    case ExprKind::Name: {
        if (e->var_ref && e->var_ref->is_global && e->var_ref->is_const && e->var_ref->init)
            return const_depth_ < 64 ? eval_global(e->var_ref) : std::nullopt;
        if (lookup_local(e->name)) return std::nullopt;
        if (auto v = generic_value(e->name)) return v;
        if (const StructDecl* owner = resolving_struct_ ? resolving_struct_
                                      : current_fn_     ? current_fn_->owner
                                                        : nullptr)
            if (VarDecl* c = find_static_const(owner, e->name); c && c->init) return eval_global(c);
        auto it = module_.globals.find(e->name);
        if (it != module_.globals.end() && it->second->is_const && it->second->init) return eval_global(it->second);
        return enum_member_value(e);  // a bare enumerator inside its own enum's values
    }
    case ExprKind::Member: {
        // `S.N` / `S::N`: a static constant of a struct.
        Expr* base = e->operands[0];
        if (base->kind != ExprKind::Name || lookup_local(base->name)) return std::nullopt;
        auto it = module_.structs.find(base->name);
        if (it == module_.structs.end()) return enum_member_value(e);  // `Mode.A`
        VarDecl* c = find_static_const(it->second, e->name);
        return c && c->init ? eval_global(c) : std::nullopt;
    }
    case ExprKind::Cast: return eval_const_int(e->operands[0]);  // `(int)Mode.B`
    case ExprKind::Unary: {
        auto v = eval_const_int(e->operands[0]);
        if (!v) return v;
        if (e->op == Op::Neg) return -*v;
        if (e->op == Op::Plus) return *v;
        return std::nullopt;
    }
    case ExprKind::Binary: {
        auto a = eval_const_int(e->operands[0]);
        auto b = eval_const_int(e->operands[1]);
        if (!a || !b) return std::nullopt;
        // Guard against overflow: constant folding only serves sizes and bounds.
        if (*a > (int64_t(1) << 40) || *b > (int64_t(1) << 40) || *a < -(int64_t(1) << 40) || *b < -(int64_t(1) << 40))
            return std::nullopt;
        switch (e->op) {
        case Op::Add: return *a + *b;
        case Op::Sub: return *a - *b;
        case Op::Mul: return *a * *b;
        case Op::Div: return *b ? std::optional<int64_t>(*a / *b) : std::nullopt;
        case Op::Rem: return *b ? std::optional<int64_t>(*a % *b) : std::nullopt;
        case Op::Shl: return (*b >= 0 && *b < 40) ? std::optional<int64_t>(*a << *b) : std::nullopt;
        default: return std::nullopt;
        }
    }
    default: return std::nullopt;
    }
}

std::optional<int64_t> Sema::eval_global(VarDecl* g) {
    // Bounded: `static const int A = B; static const int B = A;` must not recurse forever.
    if (const_depth_ >= 64) return std::nullopt;
    ++const_depth_;
    auto v = eval_const_int(g->init);
    --const_depth_;
    return v;
}

const Type* Sema::resolve_type(TypeExpr* te) {
    if (!te) return types_.error_type();
    const Type* base = nullptr;
    const std::string& n = te->name;
    auto generic_type = [&](size_t k) -> const Type* {
        if (k >= te->arg_is_value.size() || te->arg_is_value[k]) return nullptr;
        size_t type_index = 0;
        for (size_t j = 0; j < k; ++j) type_index += !te->arg_is_value[j];
        return resolve_type(te->type_args[type_index]);
    };
    auto generic_int = [&](size_t k) -> std::optional<int64_t> {
        if (k >= te->arg_is_value.size()) return std::nullopt;
        if (!te->arg_is_value[k]) {
            // `vector<float, N>` where N parsed as a type name: a static const int.
            size_t type_index = 0;
            for (size_t j = 0; j < k; ++j) type_index += !te->arg_is_value[j];
            const std::string& arg = te->type_args[type_index]->name;
            if (auto v = generic_value(arg)) return v;
            auto it = module_.globals.find(arg);
            if (it != module_.globals.end() && it->second->init) return eval_global(it->second);
            return std::nullopt;
        }
        size_t value_index = 0;
        for (size_t j = 0; j < k; ++j) value_index += te->arg_is_value[j];
        return eval_const_int(te->value_args[value_index]);
    };
    size_t nargs = te->arg_is_value.size();
    if (n == "StructuredBuffer" || n == "RWStructuredBuffer") return te->resolved = resolve_buffer_type(te);
    if (n == "TensorView" || n == "DiffTensorView") return te->resolved = resolve_view_type(te);
    bool is_tensor = false;
    for (const auto& t : kTensorNames) {
        if (n != t.name) continue;
        is_tensor = true;
        const Type* elem = generic_type(0);
        auto rank = generic_int(1);
        if (elem && standins_.is_standin(elem)) standins_.set_unmodelled(true);
        if (nargs != 2 || !elem || !rank) {
            diags_.error(te->loc, n + " takes an element type and a rank: " + n + "<float, 2>");
            return te->resolved = types_.error_type();
        }
        if (*rank < 1 || *rank > 8) {
            // Rank 0 is reserved for the generated glue's scalar results.
            if (!(allow_internal_ && *rank == 0)) {
                diags_.error(te->loc, "tensor rank must be between 1 and 8, got " + std::to_string(*rank));
                return te->resolved = types_.error_type();
            }
        }
        if (!(elem->is_scalar() || elem->is_vector() || elem->is_matrix() || elem->is_struct())) {
            diags_.error(te->loc, "tensor element type " + type_name(elem) + " is not supported");
            return te->resolved = types_.error_type();
        }
        if (t.kind.differentiable && !types_.is_differentiable(elem)) {
            diags_.error(te->loc, n + " needs a differentiable element type, got " + type_name(elem), 38029);
            return te->resolved = types_.error_type();
        }
        if (t.kind.differentiable && elem->is_struct() && types_.differential(elem) != elem) {
            // As in SlangPy, the element must be its own Differential (the gradient buffer has the
            // primal's layout): every field differentiable, none no_diff.
            diags_.error(te->loc, n + " needs an element that is its own Differential, got " + type_name(elem) +
                                      " (a field is no_diff or not differentiable)", 38029);
            return te->resolved = types_.error_type();
        }
        base = types_.tensor(elem, int(*rank), t.kind);
    }
    if (is_tensor) {
    } else if (n == "vector") {
        const Type* elem = generic_type(0);
        auto count = generic_int(1);
        if (elem && standins_.is_standin(elem)) standins_.set_unmodelled(true);
        if (nargs != 2 || !elem || !elem->is_scalar() || !count || *count < 1 || *count > 4) {
            diags_.error(te->loc, "vector takes a scalar type and a size 1..4: vector<float, 3>");
            return te->resolved = types_.error_type();
        }
        base = types_.vector(elem->scalar, int(*count));
    } else if (n == "matrix") {
        const Type* elem = generic_type(0);
        auto r = generic_int(1), c = generic_int(2);
        if (elem && standins_.is_standin(elem)) standins_.set_unmodelled(true);
        if (nargs != 3 || !elem || !elem->is_scalar() || !r || !c || *r < 2 || *r > 4 || *c < 2 || *c > 4) {
            diags_.error(te->loc, "matrix takes a scalar type and sizes 2..4: matrix<float, 3, 3>");
            return te->resolved = types_.error_type();
        }
        base = types_.matrix(elem->scalar, int(*r), int(*c));
    } else if (n == "DifferentialPair") {
        const Type* elem = generic_type(0);
        if (nargs != 1 || !elem) {
            diags_.error(te->loc, "DifferentialPair takes one type argument");
            return te->resolved = types_.error_type();
        }
        if (!types_.is_differentiable(elem)) {
            diags_.error(te->loc, "DifferentialPair<" + type_name(elem) + ">: the type is not differentiable", 38029);
            return te->resolved = types_.error_type();
        }
        base = types_.pair(elem);
    } else if (nargs != 0) {
        auto g = module_.generic_structs.find(n);
        if (g == module_.generic_structs.end() && module_.generic_interfaces.count(n)) {
            resolve_named_type(n, te->loc, true);  // a value of interface type: reported
            return te->resolved = types_.error_type();
        }
        if (g == module_.generic_structs.end()) {
            diags_.error(te->loc, "'" + n + "' is not a generic type");
            return te->resolved = types_.error_type();
        }
        std::vector<GenericArg> args;
        if (!explicit_generic_args(te, g->second->generic_params, n, args, false))
            return te->resolved = types_.error_type();
        for (size_t k = 0; k < args.size(); ++k)
            if (!satisfies(g->second->generic_params[k], args[k])) {
                diags_.error(te->loc, describe_constraint_failure(g->second->generic_params[k], args[k]) + " in '" +
                                          instance_name(n, args) + "'",
                             38029);
                return te->resolved = types_.error_type();
            }
        StructDecl* s = instantiate_struct(g->second, args, te->loc);
        if (!s) return te->resolved = types_.error_type();
        base = s->type;
    } else {
        base = resolve_named_type(n, te->loc, true);
        if (!base) return te->resolved = types_.error_type();
        if (base->is_struct() && !declared_structs_.count(base->decl) && !declaring_structs_.count(base->decl))
            declare_struct(const_cast<StructDecl*>(base->decl));
    }
    // `T.Value`, `T::Value.Differential`: member types and Differentials (sema_assoc_types.cpp).
    if (!te->member.empty()) {
        base = resolve_member_type_path(te, base);
        if (base->is_error()) return te->resolved = base;
    }
    return resolve_array_dims(te, base);
}

const Type* Sema::resolve_array_dims(TypeExpr* te, const Type* base) {
    // Array dimensions as written: `float[5][3]` is an array of 5 arrays of 3.
    // Count scalars, not elements: an array of structs that hold arrays is as large as all of them.
    int64_t total = te->array_dims.empty() ? 1 : scalar_count(base);
    for (auto it = te->array_dims.rbegin(); it != te->array_dims.rend(); ++it) {
        auto count = eval_const_int(*it);
        if (!count) {
            diags_.error((*it) ? (*it)->loc : te->loc, "array size must be a constant integer expression");
            return te->resolved = types_.error_type();
        }
        if (*count < 0 || (*count == 0 && !allow_empty_array_)) {
            diags_.error((*it)->loc, std::string(*count == 0 ? "only a local array may be empty: " : "") +
                                         "array size must be positive, got " + std::to_string(*count),
                         *count < 0 ? 30025 : 0);  // Slang: array size must be non-negative
            return te->resolved = types_.error_type();
        }
        total = (*count > kMaxArrayElements) ? kMaxArrayElements + 1 : total * *count;
        if (total > kMaxArrayElements) {
            diags_.error((*it)->loc, "array of more than " + std::to_string(kMaxArrayElements) +
                                         " elements is too large for a kernel");
            return te->resolved = types_.error_type();
        }
        base = types_.array(base, *count);
    }
    return te->resolved = base;
}

void Sema::declare_struct(StructDecl* s) {
    // Structs are declared on first use (resolve_type), whatever the source order: a field of
    // struct type is declared before its container, so whether it is differentiable, and its
    // Differential, is known here.
    if (declared_structs_.count(s) || !declaring_structs_.insert(s).second) return;
    if (!s->generic_origin) check_member_visibility(s);
    const Substitution* saved_subst = subst_;
    const StructDecl* saved_struct = resolving_struct_;
    subst_ = substitution_of_struct(s);
    resolving_struct_ = s;  // field types may use the struct's static constants
    resolve_generic_bases(s);  // `S : IGet<float>` (sema_generic_interfaces.cpp)
    bool differentiable = false;
    for (const auto& b : s->bases) {
        auto iface = module_.interfaces.find(b);
        if (b == "IDifferentiable") differentiable = true;
        else if (iface != module_.interfaces.end()) differentiable |= interface_extends(iface->second, "IDifferentiable");
    }
    std::vector<FieldInfo> fields;
    std::vector<FieldInfo> diff_fields;
    bool differential_is_self = true;
    for (size_t k = 0; k < s->fields.size(); ++k) {
        VarDecl* f = s->fields[k];
        f->type = resolve_type(f->type_expr);
        f->index = int(k);
        const Type* inner = f->type;
        while (inner->is_array()) inner = inner->element;
        if (inner->is_struct() && declaring_structs_.count(inner->decl)) {
            diags_.error(f->loc, "struct " + s->name + " contains itself (through field '" + f->name + "')");
            f->type = types_.error_type();
        }
        if (f->type->is_tensor() && !(f->type->tensor.buffer && !f->type->tensor.differentiable))
            diags_.unsupported(f->loc, "a tensor as a struct field");
        for (const auto& prev : fields)
            if (prev.name == f->name) diags_.error(f->loc, "duplicate field '" + f->name + "' in struct " + s->name);
        const Type* element = f->type;
        while (element->is_array()) element = element->element;
        fields.push_back({f->name, f->type, f->is_no_diff, {}, f->column_major.valid() && element->is_matrix()});
        if (!f->is_no_diff && types_.is_differentiable(f->type)) {
            const Type* d = types_.differential(f->type);
            diff_fields.push_back({f->name, d, false});
            differential_is_self &= d == f->type;
        } else {
            differential_is_self = false;
        }
    }
    const Type* differential = nullptr;
    if (differentiable && declares_own_differential(s)) {
        differential = s->type;  // `typedef S Differential;` (sema_differential_alias.cpp)
    } else if (differentiable && (differential = declared_member_differential(s, fields))) {
        // `typedef D Differential;` with [DerivativeMember(D.f)] fields (sema_derivative_members.cpp)
    } else if (differentiable) {
        if (differential_is_self) {
            differential = s->type;
        } else {
            // The synthesized Differential holds the Differential of each differentiable field.
            auto* d = ast_.make<StructDecl>();
            d->loc = s->loc;
            d->name = s->name + ".Differential";
            d->bases = {"IDifferentiable"};
            d->type = types_.structure(d);
            types_.set_fields(d, diff_fields, true, d->type);
            differential = d->type;
        }
    }
    if (!differentiable) check_derivative_members_unused(s);
    types_.set_fields(s, std::move(fields), differentiable, differential);
    declaring_structs_.erase(s);
    declared_structs_.insert(s);
    subst_ = saved_subst;
    resolving_struct_ = saved_struct;
}

// ---------------------------------------------------------------- shared rules

const Type* binary_operand_type(TypeContext& types, Op op, const Type* a, const Type* b) {
    if (!a->is_numeric() || !b->is_numeric()) return nullptr;
    ScalarKind k = wider(a->scalar, b->scalar);
    bool arithmetic = op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div || op == Op::Rem;
    // Shifts have the left operand's type (Slang: int << int64_t is int, int8_t << 1 is int8_t).
    if (op == Op::Shl || op == Op::Shr) k = a->scalar == ScalarKind::Bool ? ScalarKind::Int32 : a->scalar;
    if (k == ScalarKind::Bool && arithmetic) k = ScalarKind::Int32;
    if (op == Op::LogAnd || op == Op::LogOr) k = ScalarKind::Bool;
    if (a->is_scalar() && b->is_scalar()) return types.scalar(k);
    if (a->is_scalar()) return types.with_scalar(b, k);
    if (b->is_scalar()) return types.with_scalar(a, k);
    if (a->kind != b->kind || a->rows != b->rows || a->cols != b->cols) return nullptr;
    return types.with_scalar(a, k);
}

bool implicitly_convertible(const Type* from, const Type* to) {
    if (from == to) return true;
    if (from->is_error() || to->is_error()) return true;     // already reported
    // An enum converts to the integer types only; nothing converts to an enum without a cast.
    if (to->is_enum()) return false;
    if (from->is_enum()) return to->is_scalar() && is_integer(to->scalar) && !to->is_enum();
    if (from->is_scalar() && to->is_numeric()) return true;  // conversion or splat
    if ((from->is_vector() || from->is_matrix()) && from->kind == to->kind && from->rows == to->rows &&
        from->cols == to->cols)
        return true;
    return false;
}

const Type* intrinsic_operand_type(TypeContext& types, IntrinsicId id, const std::vector<const Type*>& args) {
    const IntrinsicInfo& info = intrinsic_info(id);
    switch (info.rule) {
    case IntrinsicRule::Same:
    case IntrinsicRule::SameAny:
    case IntrinsicRule::Reduce:
    case IntrinsicRule::Cross: {
        const Type* t = args.empty() ? nullptr : args[0];
        for (size_t k = 1; t && k < args.size(); ++k) t = binary_operand_type(types, Op::Add, t, args[k]);
        if (!t) return nullptr;
        // Integers keep their type where Slang has integer overloads (abs, min, max, clamp, mad,
        // dot, cross: dot(int3, int3) is int); the other intrinsics compute in float.
        const bool integer_overloads = info.rule == IntrinsicRule::SameAny || id == IntrinsicId::Dot ||
                                       id == IntrinsicId::Cross;
        if (!integer_overloads && !is_floating(t->scalar)) t = types.with_scalar(t, ScalarKind::Float);
        if (integer_overloads && t->scalar == ScalarKind::Bool) t = types.with_scalar(t, ScalarKind::Int32);
        return t;
    }
    case IntrinsicRule::Select: {
        if (args.size() != 3) return nullptr;
        return binary_operand_type(types, Op::Add, args[1], args[2]);
    }
    case IntrinsicRule::Sign:  // computed in the operand's own type, converted to int afterwards
        if (args.size() != 1 || !args[0]->is_numeric()) return nullptr;
        return args[0]->scalar == ScalarKind::Bool ? types.with_scalar(args[0], ScalarKind::Int32) : args[0];
    case IntrinsicRule::BitCount:
    case IntrinsicRule::BitSame:  // integers as they are; bools count as uint
        if (args.size() != 1 || !args[0]->is_numeric() || args[0]->is_matrix()) return nullptr;
        if (args[0]->scalar == ScalarKind::Bool) return types.with_scalar(args[0], ScalarKind::UInt32);
        return is_integer(args[0]->scalar) ? args[0] : nullptr;
    case IntrinsicRule::F16ToF32:
    case IntrinsicRule::F32ToF16:
        if (args.size() != 1 || !args[0]->is_numeric() || args[0]->is_matrix()) return nullptr;
        return types.with_scalar(args[0],
                                 info.rule == IntrinsicRule::F16ToF32 ? ScalarKind::UInt32 : ScalarKind::Float);
    default: return args.empty() ? nullptr : args[0];
    }
}

TensorIndexForm tensor_index_form(const std::vector<const Type*>& index_types) {
    if (index_types.size() == 1 && index_types[0]->is_array()) return TensorIndexForm::Array;
    if (index_types.size() == 1 && index_types[0]->is_vector()) return TensorIndexForm::Vector;
    return TensorIndexForm::Scalars;
}

bool param_is_differentiable(const TypeContext& types, const VarDecl& p) {
    return !p.is_no_diff && p.type && types.is_differentiable(p.type);
}

std::vector<DerivedParam> backward_signature(TypeContext& types, const FunctionDecl& f) {
    std::vector<DerivedParam> out;
    for (size_t k = 0; k < f.params.size(); ++k) {
        const VarDecl& p = *f.params[k];
        bool diff = param_is_differentiable(types, p);
        if (diff) {
            if (p.dir == ParamDir::Out) out.push_back({types.differential(p.type), ParamDir::In, int(k)});
            else out.push_back({types.pair(p.type), ParamDir::InOut, int(k)});
        } else {
            if (p.dir == ParamDir::Out) continue;
            out.push_back({p.type, ParamDir::In, int(k)});
        }
    }
    if (f.result_type && !f.result_type->is_void() && !f.return_no_diff && types.is_differentiable(f.result_type))
        out.push_back({types.differential(f.result_type), ParamDir::In, -1});
    return out;
}

std::vector<DerivedParam> forward_signature(TypeContext& types, const FunctionDecl& f) {
    std::vector<DerivedParam> out;
    for (size_t k = 0; k < f.params.size(); ++k) {
        const VarDecl& p = *f.params[k];
        if (param_is_differentiable(types, p)) out.push_back({types.pair(p.type), p.dir, int(k)});
        else out.push_back({p.type, p.dir, int(k)});
    }
    return out;
}

}  // namespace sg::lang
