// src/lang/sema_wave.cpp — checks of the wave intrinsics (lang/wave.h): argument count and
// types, as Slang's overloads take them (a wrong count or type is its 39999 "no overload", a
// predicate that is no bool its 30019; an argument that converts implicitly, int to bool or
// float to a lane index, warns with 30081).
// Where they may be used (a [CUDAKernel] function or a call group) is checked after lowering,
// with the other cooperative constructs (driver.cpp).
#include "lang/sema_internal.h"
#include "lang/wave.h"

namespace sg::lang {

namespace {

/// Whether `t` is a value the arithmetic wave operations combine: a scalar or vector of 32- or
/// 64-bit integers or floats. (Slang also takes half, 8- and 16-bit integers and matrices.)
bool is_wave_arithmetic(const Type* t) {
    if (!t->is_scalar() && !t->is_vector()) return false;
    switch (t->scalar) {
    case ScalarKind::Int32:
    case ScalarKind::UInt32:
    case ScalarKind::Int64:
    case ScalarKind::UInt64:
    case ScalarKind::Float:
    case ScalarKind::Double: return true;
    default: return false;
    }
}

std::string arg_types(const std::vector<Expr*>& args) {
    std::string s = "(";
    for (size_t k = 0; k < args.size(); ++k) s += (k ? ", " : "") + type_name(args[k]->type);
    return s + ")";
}

}  // namespace

const Type* Sema::check_wave_call(Expr* e) {
    WaveOp op;
    find_wave_op(e->builtin->name, op);
    const std::string name = e->builtin->name;
    std::vector<Expr*> args(e->operands.begin() + 1, e->operands.end());
    for (Expr* a : args)
        if (a->type && a->type->is_error()) return a->type;
    auto no_overload = [&]() -> const Type* {
        diags_.error(e->loc, "no overload for '" + name + "' applicable to arguments of type " + arg_types(args), 39999);
        return types_.error_type();
    };
    auto to_bool = [&](Expr* a) -> bool {
        if (!a->type->is_scalar() || !implicitly_convertible(a->type, types_.boolean())) return false;
        warn_implicit_conversion(a, types_.boolean());
        return true;
    };
    switch (op) {
    case WaveOp::LaneIndex:
    case WaveOp::LaneCount:
    case WaveOp::IsFirstLane:
        if (!args.empty()) return no_overload();
        return op == WaveOp::IsFirstLane ? types_.boolean() : types_.uint32();
    case WaveOp::AllTrue:
    case WaveOp::AnyTrue:
    case WaveOp::Ballot:
    case WaveOp::CountBits:
        if (args.size() != 1) return no_overload();
        if (!to_bool(args[0])) {  // one overload, (bool): Slang reports the argument
            diags_.error(args[0]->loc, "type mismatch in expression: " + name + " takes a bool, got " +
                                           type_name(args[0]->type), 30019);
            return types_.error_type();
        }
        if (op == WaveOp::Ballot) return types_.vector(ScalarKind::UInt32, 4);
        return op == WaveOp::CountBits ? types_.uint32() : types_.boolean();
    case WaveOp::ReadLaneAt:
    case WaveOp::ReadLaneFirst: {
        if (args.size() != (op == WaveOp::ReadLaneAt ? 2u : 1u)) return no_overload();
        const Type* t = args[0]->type;
        if (!is_wave_arithmetic(t) && !(t->is_bool() || (t->is_vector() && t->scalar == ScalarKind::Bool))) {
            if (!t->is_numeric()) return no_overload();
            diags_.unsupported(args[0]->loc, name + " of " + type_name(t));
            return types_.error_type();
        }
        if (op == WaveOp::ReadLaneAt) {
            Expr* lane = args[1];
            if (!lane->type->is_scalar() || lane->type->is_bool() || !implicitly_convertible(lane->type, types_.uint32()))
                return no_overload();
            if (is_floating(lane->type->scalar)) warn_implicit_conversion(lane, types_.int32());
        }
        return t;
    }
    default: {  // ActiveSum, ActiveProduct, ActiveMin, ActiveMax, PrefixSum
        if (args.size() != 1) return no_overload();
        const Type* t = args[0]->type;
        if (!is_wave_arithmetic(t)) {
            if (!t->is_numeric()) return no_overload();
            diags_.unsupported(args[0]->loc, name + " of " + type_name(t));
            return types_.error_type();
        }
        return t;
    }
    }
}

}  // namespace sg::lang
