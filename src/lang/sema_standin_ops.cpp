// src/lang/sema_standin_ops.cpp — what a constrained type parameter offers inside its generic.
//
// slangc checks a generic's body as declared: `T f<T : IArithmetic>(T x)` may add and compare
// x but not take sin(x), even when every instantiation is a float. The declared check of
// sema_generic_checks.cpp puts a stand-in struct in T's place; the operators, intrinsics and
// constructors below accept a stand-in exactly where its constraint gives the operation, and
// report 39999 (no overload applies) elsewhere. The table (standins.cpp) was read from slangc
// 0.43.1 (one program per constraint and operation, tests/lang/generics/constraint_*):
//
//   operation                      IArithmetic IFloat IInteger IComparable ILogical  BF  BI  BA
//   + - * / % and unary - +             y         y       y                           y   y   y
//   < <= > >= == != min max             y         y       y         y          y      y   y   y
//   & | ^ ~                                               y                    y          y
//   << >>                                                                                 y
//   += -= ... ++ --                                                                   y   y   y
//   abs clamp                                                                         y   y
//   sin sqrt pow lerp floor ...                                                       y
//   countbits firstbit* reversebits                                                       y
//   T(int)  (T)int                      y         y       y                    y      y   y   y
//   T(float)  (T)float                  y         y                            y      y       y
//   T(x) with x : T                     y         y       y         y                 y   y   y
//
// (BF, BI, BA: __BuiltinFloatingPointType, __BuiltinIntegerType, __BuiltinArithmeticType.)
// Both operands of a binary operator are the same T: `x + 1` is 39999 too (no conversion to T);
// a shift of a __BuiltinIntegerType takes any integer count. `&&`, `||` and `!` take no T
// (30019: T does not convert to bool). A T constrained by a user interface offers its required
// methods and nothing else (a member of a conforming struct outside the interface is 30027).
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

std::string arg_types(const std::vector<Expr*>& ops, size_t first) {
    std::string s = "(";
    for (size_t k = first; k < ops.size(); ++k) s += (k > first ? ", " : "") + type_name(ops[k]->type);
    return s + ")";
}

bool is_comparison(Op op) {
    return op == Op::Lt || op == Op::Gt || op == Op::Le || op == Op::Ge || op == Op::Eq || op == Op::Ne;
}

}  // namespace

bool Sema::standin_models(const std::string& constraint) const {
    return Standins::models_builtin(constraint) || models_user_interface(constraint);
}

bool Sema::models_user_interface(const std::string& name, int depth) const {
    auto it = module_.interfaces.find(name);
    if (it == module_.interfaces.end() || depth > 32 || !it->second->associated_types.empty()) return false;
    if (it->second->generic_origin) return false;  // an instance of a generic interface: not modelled
    for (const std::string& b : it->second->bases)
        if (b != "IDifferentiable" && !models_user_interface(b, depth + 1)) return false;
    return true;
}

bool Sema::standin_implies(const std::string& have, const std::string& want) const {
    auto iface = module_.interfaces.find(have);
    if (iface != module_.interfaces.end()) return interface_extends(iface->second, want);
    return Standins::builtin_implies(have, want);
}

const Type* Sema::check_standin_unary(Expr* e, const Type* a) {
    if (!standins_.constraint_of(a)) return nullptr;
    bool ok = false;
    switch (e->op) {
    case Op::Neg:
    case Op::Plus: ok = standins_.can(a, StandinOp::Arithmetic); break;
    case Op::BitNot: ok = standins_.can(a, StandinOp::Bitwise); break;
    case Op::PreInc:
    case Op::PreDec:
    case Op::Inc:
    case Op::Dec:
        ok = standins_.can(a, StandinOp::Mutate);
        if (ok) require_lvalue(e->operands[0], "increment or decrement", 30047);
        break;
    default: break;
    }
    if (ok) return a;
    if (e->op == Op::Not) {  // slangc: T does not convert to bool (30019)
        diags_.error(e->loc, "cannot convert " + type_name(a) + " to bool (operator '!')", 30019);
        return types_.error_type();
    }
    diags_.error(e->loc, std::string("no overload of operator '") + op_spelling(e->op) + "' applies to " +
                             type_name(a) + ": its constraint '" + *standins_.constraint_of(a) + "' does not give it",
                 39999);
    return types_.error_type();
}

const Type* Sema::check_standin_binary(Expr* e, Op op, const Type* a, const Type* b, bool compound) {
    const Type* s = standins_.constraint_of(a) ? a : standins_.constraint_of(b) ? b : nullptr;
    if (!s) return nullptr;
    if (op == Op::LogAnd || op == Op::LogOr) {  // slangc: T does not convert to bool (30019)
        diags_.error(e->loc, "cannot convert " + type_name(s) + " to bool (operator '" + op_spelling(op) + "')", 30019);
        return types_.error_type();
    }
    bool shift = op == Op::Shl || op == Op::Shr;
    bool same = a == b || (shift && a == s && b->is_scalar() && is_integer(b->scalar));
    bool ok = false;
    if (same) {
        if (op == Op::Mul || op == Op::Div || op == Op::Rem || op == Op::Add || op == Op::Sub)
            ok = standins_.can(s, StandinOp::Arithmetic);
        else if (is_comparison(op)) ok = !compound && standins_.can(s, StandinOp::Compare);
        else if (op == Op::BitAnd || op == Op::BitOr || op == Op::BitXor) ok = standins_.can(s, StandinOp::Bitwise);
        else if (shift) ok = standins_.can(s, StandinOp::Shift);
        if (compound) ok = ok && standins_.can(s, StandinOp::Mutate);
    }
    if (ok) return is_comparison(op) ? types_.boolean() : s;
    std::string spelled = op_spelling(op);
    if (compound) spelled += "=";
    diags_.error(e->loc,
                 "no overload of operator '" + spelled + "' applies to " + type_name(a) + " and " + type_name(b) +
                     (same ? ": constraint '" + *standins_.constraint_of(s) + "' does not give it"
                           : " (a generic's type parameter converts to nothing, and nothing converts to it)"),
                 39999);
    return types_.error_type();
}

const Type* Sema::check_standin_intrinsic(Expr* e, const IntrinsicInfo& info) {
    if (in_standin_intrinsic_) return nullptr;
    const Type* s = nullptr;
    for (size_t k = 1; k < e->operands.size(); ++k)
        if (standins_.constraint_of(e->operands[k]->type)) s = e->operands[k]->type;
    if (!s) return nullptr;
    StandinOp need = StandinOp::FloatMath;
    switch (info.id) {
    case IntrinsicId::Min:
    case IntrinsicId::Max: need = StandinOp::Compare; break;
    case IntrinsicId::Abs:
    case IntrinsicId::Clamp: need = StandinOp::AbsClamp; break;
    case IntrinsicId::CountBits:
    case IntrinsicId::FirstBitHigh:
    case IntrinsicId::FirstBitLow:
    case IntrinsicId::ReverseBits: need = StandinOp::IntegerBits; break;
    default: break;
    }
    bool ok = standins_.can(s, need);
    for (size_t k = 1; k < e->operands.size(); ++k) ok &= e->operands[k]->type == s;
    if (!ok) {
        diags_.error(e->loc,
                     std::string("no overload of ") + info.name + " applies to " + arg_types(e->operands, 1) +
                         ": constraint '" + *standins_.constraint_of(s) + "' of " + type_name(s) + " does not give it",
                     39999);
        return types_.error_type();
    }
    // The operation exists for every type the constraint admits: its result is that of one of
    // them (float or int) with T in that type's place.
    const Type* rep = standins_.can(s, StandinOp::FloatMath) || !standins_.can(s, StandinOp::IntegerBits)
                          ? types_.float32()
                          : types_.int32();
    for (size_t k = 1; k < e->operands.size(); ++k) e->operands[k]->type = rep;
    in_standin_intrinsic_ = true;
    const Type* r = check_intrinsic(e, info);
    in_standin_intrinsic_ = false;
    for (size_t k = 1; k < e->operands.size(); ++k) e->operands[k]->type = s;
    return r == rep ? s : r;
}

const Type* Sema::check_standin_construct(Expr* e, const Type* to, const std::vector<Expr*>& args) {
    const Type* from = args.size() == 1 ? args[0]->type : nullptr;
    if (!standins_.constraint_of(to)) {
        if (!to->is_numeric()) return nullptr;  // a struct's __init may take a T
        for (Expr* a : args)
            if (standins_.constraint_of(a->type)) {
                diags_.error(e->loc, "cannot convert " + type_name(a->type) + " to " + type_name(to) +
                                         ": a generic's type parameter converts to nothing",
                             30019);
                return types_.error_type();
            }
        return nullptr;
    }
    if (const Type* made = check_standin_init(e, to, args)) return made;  // `T(x)`, T : IMake
    bool ok = false;
    if (from == to) ok = standins_.can(to, StandinOp::Copy);
    else if (from && from->is_scalar() && !from->is_enum())
        ok = standins_.can(to, is_floating(from->scalar) ? StandinOp::FromFloat : StandinOp::FromInt);
    if (ok) return to;
    diags_.error(e->loc,
                 "no constructor of " + type_name(to) + " takes " + arg_types(e->operands, e->operands.size() - args.size()) +
                     " (constraint '" + *standins_.constraint_of(to) + "')",
                 39999);
    return types_.error_type();
}

void Sema::construct_through_constraint(Expr* e, const std::string& written, size_t arg) {
    if (!subst_ || !subst_->types.count(written) || arg >= e->operands.size() || !current_fn_) return;
    Expr* x = e->operands[arg];
    if (!x->type->is_scalar() || !is_floating(x->type->scalar)) return;
    const std::vector<GenericParam>* params[2] = {
        current_fn_->generic_origin ? &current_fn_->generic_origin->generic_params : nullptr,
        current_fn_->owner && current_fn_->owner->generic_origin ? &current_fn_->owner->generic_origin->generic_params
                                                                 : nullptr};
    const GenericParam* p = nullptr;
    for (const auto* list : params)
        if (list)
            for (const GenericParam& g : *list)
                if (!g.is_value && g.name == written) p = &g;
    if (!p || (p->constraint != "IArithmetic" && p->constraint != "__BuiltinArithmeticType")) return;
    warn_implicit_conversion(x, types_.int32());
    Expr* cast = ast_.make<Expr>();
    cast->kind = ExprKind::Cast;
    cast->loc = x->loc;
    cast->operands = {x};
    cast->type = types_.int32();
    e->operands[arg] = cast;
}

}  // namespace sg::lang
