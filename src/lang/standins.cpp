// src/lang/standins.cpp — the stand-ins of type parameters, and what each constraint offers
// (standins.h; the rules themselves are described in sema_standin_ops.cpp).
#include "lang/standins.h"

#include <initializer_list>

namespace sg::lang {

namespace {

struct ConstraintRow {
    const char* name;
    std::initializer_list<StandinOp> ops;
};

const ConstraintRow kRows[] = {
    {"IArithmetic",
     {StandinOp::Arithmetic, StandinOp::Compare, StandinOp::FromInt, StandinOp::FromFloat, StandinOp::Copy}},
    {"IFloat", {StandinOp::Arithmetic, StandinOp::Compare, StandinOp::FromInt, StandinOp::FromFloat, StandinOp::Copy}},
    {"IInteger", {StandinOp::Arithmetic, StandinOp::Compare, StandinOp::Bitwise, StandinOp::FromInt, StandinOp::Copy}},
    {"IComparable", {StandinOp::Compare, StandinOp::Copy}},
    {"ILogical", {StandinOp::Compare, StandinOp::Bitwise, StandinOp::FromInt, StandinOp::FromFloat}},
    {"__BuiltinFloatingPointType",
     {StandinOp::Arithmetic, StandinOp::Compare, StandinOp::Mutate, StandinOp::AbsClamp, StandinOp::FloatMath,
      StandinOp::FromInt, StandinOp::FromFloat, StandinOp::Copy}},
    {"__BuiltinIntegerType",
     {StandinOp::Arithmetic, StandinOp::Compare, StandinOp::Bitwise, StandinOp::Shift, StandinOp::Mutate,
      StandinOp::AbsClamp, StandinOp::IntegerBits, StandinOp::FromInt, StandinOp::Copy}},
    {"__BuiltinArithmeticType",
     {StandinOp::Arithmetic, StandinOp::Compare, StandinOp::Mutate, StandinOp::FromInt, StandinOp::FromFloat,
      StandinOp::Copy}},
};

const ConstraintRow* row_of(const std::string& constraint) {
    for (const ConstraintRow& r : kRows)
        if (constraint == r.name) return &r;
    return nullptr;
}

/// The interfaces each modelled constraint extends in Slang's core module (itself included).
bool implies_in_core(const std::string& have, const std::string& want) {
    if (have == want) return true;
    static const std::map<std::string, std::set<std::string>> kBases = {
        {"IArithmetic", {"IComparable"}},
        {"IFloat", {"IArithmetic", "IComparable", "IDifferentiable"}},
        {"IInteger", {"IArithmetic", "IComparable", "ILogical"}},
        {"ILogical", {"IComparable"}},
        {"__BuiltinFloatingPointType",
         {"IFloat", "IArithmetic", "IComparable", "IDifferentiable", "__BuiltinArithmeticType", "__BuiltinType",
          "__BuiltinRealType", "__BuiltinSignedArithmeticType"}},
        {"__BuiltinIntegerType",
         {"IInteger", "IArithmetic", "IComparable", "ILogical", "__BuiltinArithmeticType", "__BuiltinType"}},
        {"__BuiltinArithmeticType", {"IArithmetic", "IComparable", "__BuiltinType"}},
    };
    auto it = kBases.find(have);
    return it != kBases.end() && it->second.count(want) != 0;
}

}  // namespace

const Type* Standins::find(const std::string& name, const std::string& constraint) const {
    auto it = made_.find(name + ":" + constraint);
    return it != made_.end() ? it->second : nullptr;
}

void Standins::add_unconstrained(const std::string& name, const Type* t) {
    made_[name + ":"] = t;
    unconstrained_.insert(t);
}

void Standins::add_constrained(const std::string& name, const std::string& constraint, const Type* t) {
    made_[name + ":" + constraint] = t;
    constraints_[t] = constraint;
}

const std::string* Standins::constraint_of(const Type* t) const {
    auto it = constraints_.find(t);
    return it == constraints_.end() ? nullptr : &it->second;
}

bool Standins::can(const Type* t, StandinOp op) const {
    const std::string* c = constraint_of(t);
    const ConstraintRow* r = c ? row_of(*c) : nullptr;
    if (!r) return false;
    for (StandinOp o : r->ops)
        if (o == op) return true;
    return false;
}

bool Standins::models_builtin(const std::string& constraint) { return row_of(constraint) != nullptr; }

bool Standins::builtin_implies(const std::string& have, const std::string& want) { return implies_in_core(have, want); }

}  // namespace sg::lang
