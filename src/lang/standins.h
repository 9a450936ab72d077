// src/lang/standins.h — the stand-ins of type parameters, and what each constraint offers.
//
// A generic is checked once as declared (sema_generic_checks.cpp): each type parameter is replaced
// by a stand-in, an empty struct named after it, that supports exactly what its constraint gives.
// This table remembers the stand-ins made (one per parameter name and constraint) and answers what
// a built-in constraint offers (the table in standins.cpp, read from slangc). Making a stand-in
// (declaring its struct) is Sema's; user interfaces' rules (what they extend) are Sema's too.
#pragma once

#include <map>
#include <set>
#include <string>

#include "lang/types.h"

namespace sg::lang {

/// An operation a constrained stand-in may offer.
enum class StandinOp {
    Arithmetic,
    Compare,
    Bitwise,
    Shift,
    Mutate,
    AbsClamp,
    FloatMath,
    IntegerBits,
    FromInt,
    FromFloat,
    Copy
};

class Standins {
public:
    /// The stand-in made for parameter `name` with `constraint` ("" for none), or nullptr.
    const Type* find(const std::string& name, const std::string& constraint) const;
    /// Records `t` as the stand-in for `name`, unconstrained.
    void add_unconstrained(const std::string& name, const Type* t);
    /// Records `t` as the stand-in for `name` constrained by `constraint`.
    void add_constrained(const std::string& name, const std::string& constraint, const Type* t);

    /// The constraint of a constrained stand-in, or nullptr for any other type.
    const std::string* constraint_of(const Type* t) const;
    /// Whether `t` is a stand-in, constrained or not.
    bool is_standin(const Type* t) const { return constraint_of(t) || unconstrained_.count(t); }
    /// Whether stand-in `t`'s constraint (a built-in one) offers `op`.
    bool can(const Type* t, StandinOp op) const;

    /// Whether built-in `constraint` is one whose operations the table models.
    static bool models_builtin(const std::string& constraint);
    /// Whether built-in constraint `have` extends `want` in Slang's core module (or is it).
    static bool builtin_implies(const std::string& have, const std::string& want);

    /// Set when a stand-in is used where it is not modelled (as a vector's element, `vector<T, N>`):
    /// the check with stand-ins then keeps nothing.
    bool unmodelled() const { return unmodelled_; }
    void set_unmodelled(bool on) { unmodelled_ = on; }

private:
    std::map<std::string, const Type*> made_;         ///< by "name:constraint"
    std::map<const Type*, std::string> constraints_;  ///< constrained stand-in -> its constraint
    std::set<const Type*> unconstrained_;
    bool unmodelled_ = false;
};

}  // namespace sg::lang
