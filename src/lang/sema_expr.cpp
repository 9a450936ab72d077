// src/lang/sema_expr.cpp — type checking of expressions: names, operators, calls, overloads,
// constructors, intrinsics, tensors, swizzles and the autodiff built-ins.
#include <array>

#include "lang/coop.h"
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

constexpr int kMaxExprDepth = 2000;  // the parser already limits nesting; this guards sema's own recursion

const Builtin kBwdDiff{BuiltinKind::BwdDiff, IntrinsicId::Count, "bwd_diff"};
const Builtin kFwdDiff{BuiltinKind::FwdDiff, IntrinsicId::Count, "fwd_diff"};
const Builtin kDiffPair{BuiltinKind::DiffPair, IntrinsicId::Count, "diffPair"};
const Builtin kDetach{BuiltinKind::Detach, IntrinsicId::Count, "detach"};
const Builtin kUnused{BuiltinKind::Unused, IntrinsicId::Count, "unused"};
const Builtin kCallIndex{BuiltinKind::CallIndex, IntrinsicId::Count, "__sg_call_index"};
// The 64-bit form, for calls with 2^31 or more threads.
const Builtin kCallIndex64{BuiltinKind::CallIndex, IntrinsicId::Count, "__sg_call_index64"};
// A batch of tensors passed to a tensor parameter: each thread's slice (glue only).
const Builtin kTensorSlice{BuiltinKind::TensorSlice, IntrinsicId::Count, "__sg_slice"};

const Builtin* intrinsic_builtin(IntrinsicId id) {
    static std::array<Builtin, size_t(IntrinsicId::Count)> table = [] {
        std::array<Builtin, size_t(IntrinsicId::Count)> t{};
        for (size_t k = 0; k < t.size(); ++k)
            t[k] = Builtin{BuiltinKind::Intrinsic, IntrinsicId(k), intrinsic_info(IntrinsicId(k)).name};
        return t;
    }();
    return &table[size_t(id)];
}

const Builtin* find_builtin(const std::string& name, bool allow_internal) {
    if (const IntrinsicInfo* info = find_intrinsic(name)) return intrinsic_builtin(info->id);
    if (name == "bwd_diff" || name == "__bwd_diff") return &kBwdDiff;
    if (name == "fwd_diff" || name == "__fwd_diff") return &kFwdDiff;
    if (name == "diffPair" || name == "makePair") return &kDiffPair;
    if (name == "detach") return &kDetach;
    if (name == "unused") return &kUnused;
    if (allow_internal && name == "__sg_call_index") return &kCallIndex;
    if (allow_internal && name == "__sg_call_index64") return &kCallIndex64;
    if (allow_internal && name == "__sg_slice") return &kTensorSlice;
    return find_coop_builtin(name);
}

std::string describe_args(const std::vector<Expr*>& args, size_t first) {
    std::string s = "(";
    for (size_t k = first; k < args.size(); ++k) s += (k > first ? ", " : "") + type_name(args[k]->type);
    return s + ")";
}

bool is_swizzle_char(char c, const char* set) {
    for (const char* p = set; *p; ++p)
        if (*p == c) return true;
    return false;
}

}  // namespace

void Sema::require_lvalue(Expr* e, const char* what, int code) {
    if (e->is_lvalue || e->type->is_error()) return;
    // Through `this` of a non-mutating method: Slang's 30011, with the reason.
    const Expr* root = e;
    while (root->kind == ExprKind::Member || root->kind == ExprKind::Index) root = root->operands[0];
    if (root->kind == ExprKind::Name && root->var_ref && root->var_ref->name == "this" && root->var_ref->is_param &&
        root->var_ref->is_const) {
        diags_.error(e->loc, std::string("cannot ") + what + ": 'this' is read-only in a method that is not [mutating]",
                     30011);
        return;
    }
    // Slang's 30011 ("left of '=' is not an l-value").
    if (e->kind == ExprKind::Member && e->ref == RefKind::Swizzle && e->operands[0]->is_lvalue)
        diags_.error(e->loc, std::string("cannot ") + what + ": swizzle '" + e->name +
                                 "' names a component twice, so it is not an assignable location", code);
    else diags_.error(e->loc, std::string("cannot ") + what + ": the expression is not an assignable location", code);
}

void Sema::check_convertible(Expr* e, const Type* to, const char* what) {
    if (e->kind == ExprKind::InitList) {
        check_init_list(e, to);
        return;
    }
    const Type* from = check_expr(e);
    if (!implicitly_convertible(from, to))
        diags_.error(e->loc, std::string("cannot convert ") + type_name(from) + " to " + type_name(to) + " in " + what,
                     30019);  // Slang: type mismatch
    else warn_implicit_conversion(e, to);
}

void Sema::check_init_list(Expr* e, const Type* target) {
    if (e->kind != ExprKind::InitList) {
        check_convertible(e, target, "initializer list element");
        return;
    }
    e->type = target;
    auto elements = [&](const Type* elem, size_t count) {
        if (e->operands.size() > count)
            diags_.error(e->loc, "too many elements in initializer list for " + type_name(target) + ": " +
                                     std::to_string(e->operands.size()) + " given, " + std::to_string(count) +
                                     " expected",
                         30523);  // Slang: too many initializers in initializer list
        for (Expr* o : e->operands) check_init_list(o, elem);
    };
    switch (target->kind) {
    case TypeKind::Array: elements(target->element, size_t(target->count)); break;
    case TypeKind::Vector: elements(types_.scalar_of(target), size_t(target->rows)); break;
    case TypeKind::Matrix:
        // Either rows or flat scalars.
        if (!e->operands.empty() && e->operands[0]->kind == ExprKind::InitList)
            elements(types_.vector(target->scalar, target->cols), size_t(target->rows));
        else elements(types_.scalar_of(target), size_t(target->rows * target->cols));
        break;
    case TypeKind::Struct: {
        const auto& fields = types_.fields(target);
        if (target->decl) check_init_list_visibility(e, target);
        if (e->operands.size() > fields.size())
            diags_.error(e->loc, "too many elements in initializer list for struct " + type_name(target), 30523);
        for (size_t k = 0; k < e->operands.size() && k < fields.size(); ++k)
            check_init_list(e->operands[k], fields[k].type);
        break;
    }
    case TypeKind::Scalar:
        if (e->operands.size() != 1) diags_.error(e->loc, "initializer list for a scalar must have one element");
        for (Expr* o : e->operands) check_init_list(o, target);
        break;
    case TypeKind::Error:
        for (Expr* o : e->operands)
            if (o->kind != ExprKind::InitList) check_expr(o);
        break;
    default: diags_.error(e->loc, "cannot initialize " + type_name(target) + " with an initializer list");
    }
}

const Type* Sema::check_expr(Expr* e, const Type* expected) {
    if (!e) return types_.error_type();
    if (++expr_depth_ > kMaxExprDepth) {
        --expr_depth_;
        diags_.error(e->loc, "expression nested too deeply");
        return e->type = types_.error_type();
    }
    const Type* t = types_.error_type();
    switch (e->kind) {
    case ExprKind::IntLit: {
        // Slang's rules (checked against slangc): `ll` makes a 64-bit literal, a single `l` is
        // ignored (1l is int, 1lu uint); an unsuffixed literal that does not fit int is int64_t
        // when decimal, uint when written in hex or binary and it fits 32 bits; one above
        // INT64_MAX is uint64_t, as is a `u` literal above UINT32_MAX.
        const std::string& s = e->suffix;
        const uint64_t v = e->int_value;
        bool is_unsigned = s.find('u') != std::string::npos || s.find('U') != std::string::npos;
        bool is_long_long = s.find("ll") != std::string::npos || s.find("LL") != std::string::npos;
        if (is_long_long) t = types_.scalar(is_unsigned ? ScalarKind::UInt64 : ScalarKind::Int64);
        else if (is_unsigned) t = v > 0xffffffffull ? types_.scalar(ScalarKind::UInt64) : types_.uint32();
        else if (v <= 0x7fffffffull) t = types_.int32();
        else if (!e->decimal && v <= 0xffffffffull) t = types_.uint32();
        else if (v <= uint64_t(INT64_MAX)) t = types_.scalar(ScalarKind::Int64);
        else {
            t = types_.scalar(ScalarKind::UInt64);
            if (e->decimal && !is_unsigned)
                diags_.warning(e->loc,
                               "integer literal is too large to be represented in a signed integer type, "
                               "interpreting as unsigned",
                               40004);
        }
        break;
    }
    case ExprKind::FloatLit:
        t = (e->suffix == "l" || e->suffix == "L")   ? types_.scalar(ScalarKind::Double)
            : (e->suffix == "h" || e->suffix == "H") ? types_.scalar(ScalarKind::Half)
                                                     : types_.float32();
        break;
    case ExprKind::BoolLit: t = types_.boolean(); break;
    case ExprKind::Name:
        t = check_name(e);
        if (e->ref == RefKind::Type || e->ref == RefKind::Function || e->ref == RefKind::Builtin) {
            // Only a callee may name these (check_call checks callees with check_name).
            const char* what = e->ref == RefKind::Type       ? "a type"
                               : e->ref == RefKind::Function ? "a function"
                                                             : "a built-in function";
            diags_.error(e->loc, "'" + e->name + "' is " + what + ", not a value");
            t = types_.error_type();
        }
        break;
    case ExprKind::Unary:
    case ExprKind::Postfix: t = check_unary(e); break;
    case ExprKind::Binary: t = check_binary(e); break;
    case ExprKind::Assign: t = check_assign(e); break;
    case ExprKind::Conditional: t = check_conditional(e); break;
    case ExprKind::Call:
    case ExprKind::TypeCtor: t = check_call(e); break;
    case ExprKind::Index: t = check_index(e); break;
    case ExprKind::Member: t = check_member(e); break;
    case ExprKind::InitList:
        if (expected) {
            check_init_list(e, expected);
            t = expected;
        } else {
            diags_.error(e->loc, "an initializer list is only allowed where its type is known");
            for (Expr* o : e->operands)
                if (o->kind != ExprKind::InitList) check_expr(o);
            t = types_.error_type();  // `sin({1.0})`, `float3({1, 2, 3})`: callers read its type
        }
        break;
    case ExprKind::Comma:
        check_expr(e->operands[0]);
        t = check_expr(e->operands[1]);
        break;
    case ExprKind::NoDiff: {
        // As in Slang: `no_diff` marks a call (of a function, method or intrinsic), inside a
        // differentiable function; `no_diff(x * 2)` or `no_diff float3(x)` is no call.
        const Expr* o = e->operands[0];
        t = check_expr(e->operands[0]);
        bool call = o->kind == ExprKind::Call && !(o->operands.size() && o->operands[0]->ref == RefKind::Type);
        if (!t->is_error() && !call)
            diags_.error(e->loc, "invalid 'no_diff' usage: no_diff applies to a function call", 38031);
        else if (!t->is_error() && current_fn_ && !current_fn_->is_differentiable)
            diags_.error(e->loc, "'no_diff' in non-differentiable function '" + current_fn_->name + "'", 38033);
        break;
    }
    case ExprKind::Cast: t = check_cast(e); break;
    }
    --expr_depth_;
    return e->type = t;
}

const Type* Sema::check_name(Expr* e) {
    if (e->type_expr) {
        // `Poly<3>` names a type; `f<4>` a generic function (only as a callee).
        if (module_.generic_functions.count(e->name)) {
            e->ref = RefKind::Function;
            return types_.void_type();
        }
        if (module_.functions.count(e->name)) {
            // Slang: 39999 expected a generic when using '<...>'
            diags_.error(e->loc, "'" + e->name + "' is not generic: it takes no generic arguments", 39999);
            return types_.error_type();
        }
        if (const Builtin* b = find_builtin(e->name, allow_internal_); b && b->kind == BuiltinKind::Intrinsic &&
                                                                       !lookup_local(e->name)) {
            e->ref = RefKind::Builtin;  // `pow<float>`: check_explicit_intrinsic
            e->builtin = b;
            return types_.void_type();
        }
        const Type* t = resolve_type(e->type_expr);
        if (t->is_error()) return t;
        e->ref = RefKind::Type;
        e->type_ref = t;
        return types_.void_type();
    }
    if (VarDecl* v = lookup_local(e->name)) {
        e->ref = RefKind::Local;
        e->var_ref = v;
        e->is_lvalue = !v->is_const && !(v->is_param && v->type && v->type->is_tensor());
        return v->type ? v->type : types_.error_type();
    }
    if (subst_) {
        auto it = subst_->values.find(e->name);
        if (it != subst_->values.end()) {
            e->ref = RefKind::Global;
            e->var_ref = it->second;
            return it->second->type;
        }
    }
    if (resolve_implicit_member(e)) {
        if (e->kind == ExprKind::Member) return check_member(e);
        return e->var_ref->type ? e->var_ref->type : types_.error_type();
    }
    auto g = module_.globals.find(e->name);
    if (g != module_.globals.end()) {
        e->ref = RefKind::Global;
        e->var_ref = g->second;
        // groupshared: one copy per block, which its threads write; static: one per thread.
        // A global buffer or uniform is bound by the generated entry (glue) only.
        e->is_lvalue = g->second->is_groupshared || is_static_variable(g->second) ||
                       (is_module_parameter(g->second) && current_fn_ && current_fn_->is_glue_entry);
        return g->second->type ? g->second->type : types_.error_type();
    }
    if (module_.functions.count(e->name) || module_.generic_functions.count(e->name)) {
        e->ref = RefKind::Function;
        return types_.void_type();
    }
    if (const Builtin* b = find_builtin(e->name, allow_internal_)) {
        e->ref = RefKind::Builtin;
        e->builtin = b;
        return types_.void_type();
    }
    if (const Type* t = resolve_named_type(e->name, e->loc, false)) {
        e->ref = RefKind::Type;
        e->type_ref = t;
        return types_.void_type();
    }
    if (e->name == "this" && current_fn_ && current_fn_->owner && current_fn_->is_static) {
        diags_.error(e->loc, "static function '" + current_fn_->name + "' has no 'this'", 30120);
        return types_.error_type();
    }
    diags_.error(e->loc, "unknown name '" + e->name + "'", 30015);  // Slang: undefined identifier
    return types_.error_type();
}

const Type* Sema::check_unary(Expr* e) {
    const Type* a = check_expr(e->operands[0]);
    if (a->is_error()) return a;
    if (const Type* r = check_standin_unary(e, a)) return r;
    switch (e->op) {
    case Op::Neg:
    case Op::Plus:
        if (!a->is_numeric() || a->scalar == ScalarKind::Bool) break;
        return a;
    case Op::Not:  // Slang: `!` keeps an integer operand's type (the value is 0 or 1)
        if (!a->is_numeric()) break;
        return is_integer(a->scalar) ? a : types_.with_scalar(a, ScalarKind::Bool);
    case Op::BitNot:
        if (!a->is_numeric() || !is_integer(a->scalar)) break;
        return a;
    case Op::PreInc:
    case Op::PreDec:
    case Op::Inc:
    case Op::Dec:
        if (!a->is_numeric() || a->scalar == ScalarKind::Bool) break;
        require_lvalue(e->operands[0], "increment or decrement", 30047);  // Slang: argument must be l-value
        return a;
    default: break;
    }
    diags_.error(e->loc, std::string("operator '") + op_spelling(e->op) + "' cannot be applied to " + type_name(a),
                 a->is_struct() ? 39999 : 0);  // Slang: no overload applicable (a struct's operator- too)
    return types_.error_type();
}

const Type* Sema::check_binary(Expr* e) {
    const Type* a = check_expr(e->operands[0]);
    const Type* b = check_expr(e->operands[1]);
    if (a->is_error() || b->is_error()) return types_.error_type();
    if (const Type* r = check_standin_binary(e, e->op, a, b, false)) return r;
    const Type* t = binary_operand_type(types_, e->op, a, b);
    if (!t)
        if (const Type* r = check_user_operator(e)) return r;  // `V operator+(V a, V b)`
    if (!t) {
        // Slang: 39999, no overload of the operator applies (e.g. to a generic's unconstrained T).
        diags_.error(e->loc,
                     std::string("operator '") + op_spelling(e->op) + "' cannot be applied to " + type_name(a) +
                         " and " + type_name(b),
                     a->is_struct() || b->is_struct() ? 39999 : 0);
        return types_.error_type();
    }
    if (e->op != Op::Shl && e->op != Op::Shr) {  // a shift's count keeps its own type
        warn_implicit_conversion(e->operands[0], types_.with_scalar(a, t->scalar));
        warn_implicit_conversion(e->operands[1], types_.with_scalar(b, t->scalar));
    }
    switch (e->op) {
    case Op::Lt:
    case Op::Gt:
    case Op::Le:
    case Op::Ge:
    case Op::Eq:
    case Op::Ne: return types_.with_scalar(t, ScalarKind::Bool);
    case Op::LogAnd:
    case Op::LogOr: return types_.with_scalar(t, ScalarKind::Bool);
    case Op::Rem: return t;  // on floats: fmod (truncated quotient, the sign of the dividend)
    case Op::Shl:
    case Op::Shr:
    case Op::BitAnd:
    case Op::BitOr:
    case Op::BitXor:
        if (!is_integer(t->scalar) && t->scalar != ScalarKind::Bool) {
            diags_.error(e->loc, std::string("operator '") + op_spelling(e->op) + "' needs integer operands, got " +
                                     type_name(a) + " and " + type_name(b));
            return types_.error_type();
        }
        return t;
    default:
        if (t->is_matrix() && e->op == Op::Mul && a->is_matrix() && b->is_matrix()) return t;  // elementwise (HLSL)
        return t;
    }
}

const Type* Sema::check_assign(Expr* e) {
    if (const Type* t = check_accessor_assign(e)) return t;  // `s.x = v`, `s[i] += v`
    Expr* lhs = e->operands[0];
    const Type* a = check_expr(lhs);
    // Slang: `=` to a non-l-value is 30011, a compound assignment 30047 (its operator's inout argument).
    require_lvalue(lhs, "assign", e->op == Op::Assign ? 30011 : 30047);
    if (e->op == Op::Assign) {
        if (e->operands[1]->kind == ExprKind::InitList) check_init_list(e->operands[1], a);
        else check_convertible(e->operands[1], a, "assignment");
        return a;
    }
    const Type* b = check_expr(e->operands[1]);
    if (a->is_error() || b->is_error()) return types_.error_type();
    static const Op kCompound[] = {Op::Mul, Op::Div, Op::Rem,    Op::Add,    Op::Sub,
                                   Op::Shl, Op::Shr, Op::BitAnd, Op::BitXor, Op::BitOr};
    Op bin = kCompound[int(e->op) - int(Op::MulAssign)];
    if (const Type* r = check_standin_binary(e, bin, a, b, true)) return r->is_error() ? r : a;
    const Type* t = binary_operand_type(types_, bin, a, b);
    if (!t || !implicitly_convertible(t, a)) {
        diags_.error(e->loc,
                     std::string("operator '") + op_spelling(e->op) + "' cannot be applied to " + type_name(a) + " and " +
                         type_name(b),
                     a->is_struct() || b->is_struct() ? 39999 : 0);  // Slang: no overload (operator+ is not +=)
        return types_.error_type();
    }
    bool bitwise = bin == Op::Shl || bin == Op::Shr || bin == Op::BitAnd || bin == Op::BitOr || bin == Op::BitXor;
    if (bitwise && !is_integer(t->scalar) && t->scalar != ScalarKind::Bool) {
        diags_.error(e->loc, std::string("operator '") + op_spelling(e->op) + "' needs integer operands, got " +
                                 type_name(a) + " and " + type_name(b));
        return types_.error_type();
    }
    // slangc converts the right operand to the left one's type (`a += i` warns for int8_t a).
    if (bin != Op::Shl && bin != Op::Shr) warn_implicit_conversion(e->operands[1], types_.with_scalar(b, a->scalar));
    return a;
}

const Type* Sema::check_conditional(Expr* e) {
    const Type* c = check_expr(e->operands[0]);
    const Type* a = check_expr(e->operands[1]);
    const Type* b = check_expr(e->operands[2]);
    if (c->is_error() || a->is_error() || b->is_error()) return types_.error_type();
    if (c->is_vector()) {
        if (current_fn_ && body_is_differentiated(*current_fn_)) {
            diags_.error(e->loc, "a vector condition in '?:' is not differentiable; use select() instead", 30055);
            return types_.error_type();
        }
    } else if (!implicitly_convertible(c, types_.boolean())) {
        diags_.error(e->operands[0]->loc, "condition of '?:' must be bool, got " + type_name(c));
    }
    if (a == b) return a;
    const Type* t = binary_operand_type(types_, Op::Add, a, b);
    if (!t) {
        diags_.error(e->loc, "the branches of '?:' have incompatible types " + type_name(a) + " and " + type_name(b));
        return types_.error_type();
    }
    warn_implicit_conversion(e->operands[1], types_.with_scalar(a, t->scalar));
    warn_implicit_conversion(e->operands[2], types_.with_scalar(b, t->scalar));
    return t;
}

const Type* Sema::check_index(Expr* e) {
    Expr* base = e->operands[0];
    const Type* bt = check_expr(base);
    if (const Type* t = check_subscript_read(e, bt)) return t;  // `s[i]` of a __subscript
    std::vector<Expr*> index(e->operands.begin() + 1, e->operands.end());
    for (Expr* i : index) check_expr(i);
    if (bt->is_error()) return bt;
    if (bt->is_tensor() && bt->tensor.buffer) return check_buffer_index(e, bt);
    if (bt->is_tensor() && bt->tensor.view) return check_view_index(e, bt, index);
    if (bt->is_tensor()) return check_tensor_index(e, bt, index);
    if (index.size() != 1) {
        diags_.error(e->loc, "only tensors take several indices; " + type_name(bt) + " takes one");
        return types_.error_type();
    }
    if (index[0]->type->is_scalar() && is_floating(index[0]->type->scalar)) {
        // As in Slang, a floating-point index converts to int (truncating), with a warning.
        warn_implicit_conversion(index[0], types_.int32());
        Expr* cast = ast_.make<Expr>();
        cast->kind = ExprKind::Cast;
        cast->loc = index[0]->loc;
        cast->operands = {index[0]};
        cast->type = types_.int32();
        e->operands[1] = index[0] = cast;
    }
    if (!index[0]->type->is_error() && !is_integer_scalar(index[0]->type)) {
        diags_.error(index[0]->loc, "index must be an integer, got " + type_name(index[0]->type), 30019);
        return types_.error_type();
    }
    e->is_lvalue = base->is_lvalue;
    if (bt->is_array() || bt->is_vector() || bt->is_matrix()) {
        // A constant index must be in range (vectors and matrices have no element beyond theirs
        // to address at all); a dynamic one is checked at run time in debug mode.
        int64_t size = bt->is_array() ? bt->count : bt->rows;
        auto k = eval_const_int(index[0]);
        if (k && (*k < 0 || *k >= size)) {
            diags_.error(index[0]->loc, "index " + std::to_string(*k) + " is out of bounds for " + type_name(bt),
                         bt->is_array() ? 30029 : 0);  // Slang: array index out of bounds (when it links)
            return types_.error_type();
        }
    }
    if (bt->is_array()) return bt->element;
    if (bt->is_vector() || bt->is_matrix()) {
        auto k = eval_const_int(index[0]);
        if (k && (*k < 0 || *k >= bt->rows))
            diags_.error(index[0]->loc, "index " + std::to_string(*k) + " is out of bounds for " + type_name(bt));
        return bt->is_vector() ? types_.scalar_of(bt) : types_.vector(bt->scalar, bt->cols);
    }
    diags_.error(e->loc, "cannot index a value of type " + type_name(bt));
    return types_.error_type();
}

const Type* Sema::check_tensor_index(Expr* at, const Type* tensor, const std::vector<Expr*>& index) {
    std::vector<const Type*> types;
    for (Expr* i : index) {
        if (i->type->is_error()) return types_.error_type();
        types.push_back(i->type);
    }
    TensorIndexForm form = tensor_index_form(types);
    int given = 0;
    bool ok = true;
    if (form == TensorIndexForm::Scalars) {
        given = int(index.size());
        for (const Type* t : types) ok &= is_integer_scalar(t);
    } else if (form == TensorIndexForm::Array) {
        given = int(types[0]->count);
        ok = is_integer_scalar(types[0]->element);
    } else {
        given = types[0]->rows;
        ok = is_integer(types[0]->scalar);
    }
    if (!ok) {
        diags_.error(at->loc, "tensor index must be integers, got " + describe_args(index, 0));
        return types_.error_type();
    }
    if (given != tensor->rank) {
        diags_.error(at->loc, type_name(tensor) + " needs " + std::to_string(tensor->rank) + " indices, got " +
                                  std::to_string(given));
        return types_.error_type();
    }
    at->is_lvalue = tensor->tensor.access != TensorAccess::Read;
    return tensor->element;
}

const Type* Sema::check_member(Expr* e) {
    if (const Type* t = check_enum_member(e)) return t;
    if (const Type* t = check_scalar_type_member(e, false)) return t;  // `int.maxValue`
    Expr* base = e->operands[0];
    const std::string& n = e->name;
    if (const Type* st = static_base_type(base)) {
        // `S.N` / `S::N`: the node becomes a reference to the static constant.
        if (st->is_error()) return st;
        if (VarDecl* c = find_static_const(st->decl, n)) {
            check_member_access(e->loc, st->decl, c->visibility, n);
            e->kind = ExprKind::Name;
            e->operands.clear();
            e->ref = RefKind::Global;
            e->var_ref = c;
            return c->type ? c->type : types_.error_type();
        }
        diags_.error(e->loc, "struct " + type_name(st) + " has no static constant '" + n + "'", 30027);
        return types_.error_type();
    }
    const Type* bt = check_expr(base);
    if (bt->is_error()) return bt;
    if (bt->is_struct()) {
        const auto& fields = types_.fields(bt);
        for (size_t k = 0; k < fields.size(); ++k)
            if (fields[k].name == n) {
                if (k < bt->decl->fields.size())
                    check_member_access(e->loc, bt->decl, bt->decl->fields[k]->visibility, n);
                e->ref = RefKind::Field;
                e->field_index = int(k);
                e->is_lvalue = base->is_lvalue;
                return fields[k].type;
            }
        if (!find_methods(bt->decl, n).empty()) {
            diags_.error(e->loc, "member function '" + n + "' of struct " + type_name(bt) + " must be called", 30019);
            return types_.error_type();
        }
        if (VarDecl* c = find_static_const(bt->decl, n)) {
            check_member_access(e->loc, bt->decl, c->visibility, n);
            e->kind = ExprKind::Name;
            e->operands.clear();
            e->ref = RefKind::Global;
            e->var_ref = c;
            return c->type ? c->type : types_.error_type();
        }
        if (const Type* t = check_property_read(e, bt)) return t;  // `s.x` of a property
        diags_.error(e->loc, "struct " + type_name(bt) + " has no member '" + n + "'", 30027);
        return types_.error_type();
    }
    if (bt->is_pair()) {
        e->ref = RefKind::PairMember;
        if (n == "p" || n == "primal") return bt->element;
        if (n == "d" || n == "differential") return types_.differential(bt->element);
        if (n == "getPrimal" || n == "getDifferential") return types_.void_type();  // resolved as a call
        diags_.error(e->loc, type_name(bt) + " has no member '" + n + "' (it has .p and .d)");
        return types_.error_type();
    }
    if (bt->is_tensor() && bt->tensor.buffer) return check_buffer_member(e, bt);
    if (bt->is_tensor()) {
        if (bt->tensor.view) {
            if (const Type* t = check_view_member(e, bt, n)) return t;
            if (!is_view_method_name(n)) {
                diags_.error(e->loc, type_name(bt) + " has no member '" + n + "'", 30027);
                return types_.error_type();
            }
        }
        e->ref = RefKind::TensorMember;
        if (n == "shape") return types_.array(types_.uint32(), bt->rank);
        if (n == "load" || n == "store" || n == "add" || n == "load_once" || n == "load_uniform" || n == "sample")
            return types_.void_type();  // resolved as a call
        diags_.error(e->loc, type_name(bt) + " has no member '" + n + "'");
        return types_.error_type();
    }
    if (bt->is_vector() || bt->is_scalar()) {
        int width = bt->is_scalar() ? 1 : bt->rows;
        // Slang lets one swizzle mix the two sets (`v.xg` is v.xy).
        bool ok = !n.empty() && n.size() <= 4;
        std::vector<int> comps;
        for (char c : n) {
            if (!ok) break;
            const char* set = is_swizzle_char(c, "xyzw") ? "xyzw" : is_swizzle_char(c, "rgba") ? "rgba" : nullptr;
            if (!set) {
                ok = false;
                break;
            }
            int idx = int(std::string(set).find(c));
            if (idx >= width) {
                diags_.error(e->loc, std::string("swizzle component '") + c + "' is out of range for " + type_name(bt),
                             30027);
                return types_.error_type();
            }
            comps.push_back(idx);
        }
        if (ok) {
            e->ref = RefKind::Swizzle;
            e->swizzle = comps;
            // A write swizzle (`v.xz = ...`) names each component at most once.
            bool distinct = true;
            for (size_t i = 0; i < comps.size(); ++i)
                for (size_t j = 0; j < i; ++j) distinct &= comps[i] != comps[j];
            e->is_lvalue = base->is_lvalue && distinct;
            return types_.vector(bt->scalar, int(comps.size()));
        }
        diags_.error(e->loc, "invalid swizzle '" + n + "' on " + type_name(bt), 30027);  // Slang: member not found
        return types_.error_type();
    }
    if (bt->is_matrix())  // `m._12`, `m._m01` (sema_matrix_elements.cpp)
        if (const Type* t = check_matrix_element(e, bt)) return t;
    diags_.error(e->loc, type_name(bt) + " has no member '" + n + "'");
    return types_.error_type();
}

}  // namespace sg::lang
