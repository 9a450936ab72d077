// src/python/set_values.h — SlangPy's `fn.set(...)`: values a function object gives every call.
// A name that is a global of the module (a global buffer or a uniform global: what SlangPy's
// set() writes) binds that global (call/global_bindings.h); any other name is a value for a
// parameter the call does not pass (shadegrad's older use of set(), kept).
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "call/user_module.h"

namespace sg::py {

namespace nb = nanobind;

/// What fn.set(*args, **kwargs) adds to `previous` (None or the list of earlier set() values):
/// a dict (keywords, or one positional dict) or a callback (one positional callable, called per
/// call with the function object `self` when it takes an argument, as SlangPy's hooks are).
/// Returns the new list; throws TypeError naming `function` for any other form.
nb::object add_set_values(const std::string& function, nb::object previous, nb::args args, nb::kwargs kwargs,
                          nb::handle self);

/// The keyword arguments of one call of a function object with set() values `values`: the
/// call's own keywords, then the set() values for parameters the call does not pass, then the
/// values for globals of `module`, named "@name" (global_bindings.h), last. `params` are the
/// function's parameter names; a name that is neither a parameter nor a global of the module is
/// a TypeError naming both the function and the name.
nb::dict merge_set_values(const call::UserModule& module, const std::string& function,
                          const std::vector<std::string>& params, nb::handle values, const nb::args& args,
                          const nb::kwargs& kwargs);

}  // namespace sg::py
