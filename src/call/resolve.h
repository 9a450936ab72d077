// src/call/resolve.h — overload and generic resolution at the call (docs/calling.md, "Overloads and generics").
//
// A Python function object names a function (`m.f`) or a generic function with explicit
// arguments (`m["wsq<3>"]`). At bind time every declaration of that name is a candidate: a
// generic one gets its arguments inferred from the call's arguments (call/generic_inference.h)
// and is instantiated; each candidate is then bound (call/binder.h). Of those that bind, the
// best is chosen by rank: fewer conversions of Python scalars and value types, then fewer call
// dimensions (the element type takes more of each tensor), then a non-generic declaration over
// a generic one. Equal ranks are an ambiguity (a TypeError listing the tied candidates); no fit
// is a TypeError listing every candidate with the reason it was rejected.
#pragma once

#include <string>
#include <vector>

#include "call/binder.h"

namespace sg::call {

/// What a function object calls: a name, and its explicit generic arguments when it has them.
struct Callee {
    std::string name;                            ///< the declared name ("wsq", "Spring.energy")
    bool explicit_args = false;                  ///< looked up as "wsq<3>"
    std::vector<lang::GenericArg> generic_args;  ///< ...and these are its arguments
    /// "wsq<3>" or "wsq": how messages name it.
    std::string text() const;
};

/// Reads a lookup name: "f", or "f<8, 5>" / "f<float>" (whitespace-insensitive; integers are
/// value arguments, other names types of the module). Returns false when the module has no
/// function of that name; throws a ValueError naming the function when the generic arguments
/// are malformed, of the wrong number or kind, or do not instantiate.
bool parse_callee(const UserModule& module, const std::string& text, Callee& out);

/// The declaration text of a candidate for messages: "float wsq<let N : int>(float[N] x, float[N] w)".
std::string signature_text(const lang::FunctionDecl* fn);

/// The declarations `callee` may bind to, in the order they are tried: the module's functions
/// of that name, then its generic declarations (or, with explicit arguments, the instantiations
/// that those arguments make).
std::vector<lang::FunctionDecl*> candidate_declarations(const UserModule& module, const Callee& callee);

/// A parameter's type as declared ("float3", or "float[N]" in a generic declaration).
std::string param_type_text(const lang::VarDecl* p);

/// Resolves a call of `callee` and binds it to the chosen declaration. Throws CallError: with
/// one candidate, that candidate's own error; with several, a TypeError as described above.
Binding resolve_call(const UserModule& module, const Callee& callee, const ArgInfo* args, size_t positional,
                     const std::vector<std::string>& keyword_names, bool grad_mode, DeviceType device,
                     const CallModifiers& modifiers = {}, int result_arg = -1);

// bind_call (a call by plain name) is declared in call/binder.h and defined in resolve.cpp.

}  // namespace sg::call
