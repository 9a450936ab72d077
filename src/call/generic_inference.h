// src/call/generic_inference.h — generic arguments of a function from a Python call's arguments
// (docs/calling.md, "Overloads and generics"): `float[N]` from a list's length or a tensor's trailing extent,
// `vector<T, N>` / `matrix<T, R, C>` from trailing extents or a value type (sg.float3), `T` from a
// tensor's dtype, a Python scalar, a value type or a dict's `_type`, `Tensor<T, D>` from a whole
// tensor. Constraints are not checked here: the instantiation checks them.
#pragma once

#include <string>
#include <vector>

#include "call/arg_info.h"
#include "call/user_module.h"

namespace sg::call {

/// Infers every generic argument of generic declaration `g` from the arguments `args`, where
/// `arg_of[p]` is the argument of parameter p (call/binder.h, match_arguments). Returns false
/// and says why in `why` ("generic parameter 'N' ...") when one cannot be inferred or two
/// arguments disagree. `mapped` (per parameter, may be null): the type fn.map() reads that
/// parameter's argument as, which decides its generic arguments instead of the argument.
bool infer_generic_args(const UserModule& module, const lang::FunctionDecl* g, const ArgInfo* args,
                        const std::vector<int>& arg_of, std::vector<lang::GenericArg>& out, std::string& why,
                        const std::vector<const lang::Type*>* mapped = nullptr);

/// A generic argument as written in a name: "3", "float", "Spring".
std::string generic_arg_text(const lang::GenericArg& a);

}  // namespace sg::call
