// src/call/global_bindings.h — module parameters in a call from Python: global buffers
// (`RWStructuredBuffer<float> g_buf;` at module scope) and uniform globals (`float g_scale;`,
// `uniform float3 g_color;`, a struct), bound with SlangPy's `fn.set(g_buf=tensor, ...)`.
//
// The Python layer passes each value given for a global of the module as a keyword argument
// after the others, named with kGlobalMarker before the global's name ("@g_scale"), so that it
// is described like any argument and its kind, dtype and rank are in the call key (its values
// and a tensor's data are not). The binder binds the globals the called declaration uses
// (directly or through its callees: FunctionDecl::static_globals) as extra parameter slots after
// its parameters (ParamSlot::global); the glue assigns each to its global before the call, and
// every function that reads it takes it as a hidden parameter. A global takes one value per
// call: a leaf with call dimensions is a TypeError. A global holds no gradient. A value given for
// a global the declaration does not use is ignored; a global it uses that has no value is a
// TypeError naming the function and the global.
#pragma once

#include <string>
#include <vector>

#include "call/arg_info.h"
#include "lang/sema.h"

namespace sg::call {

struct Binding;

/// The first character of a global's keyword name ("@g_scale"): no parameter is named so.
inline constexpr char kGlobalMarker = '@';
inline bool is_global_keyword(const std::string& name) { return !name.empty() && name[0] == kGlobalMarker; }

/// `keyword_names` without the globals' (which follow the parameters' keywords).
std::vector<std::string> parameter_keywords(const std::vector<std::string>& keyword_names);

/// A global the declaration uses and the argument node holding its value.
struct GlobalValue {
    const lang::VarDecl* global = nullptr;
    int arg = -1;
};

/// The module parameters `fn` uses, each with its value among the keyword arguments (argument
/// index `positional + k` for keyword k). Throws a TypeError naming `function` and the global
/// when one has no value.
std::vector<GlobalValue> match_globals(const lang::FunctionDecl& fn, const std::string& function, size_t positional,
                                       const std::vector<std::string>& keyword_names);

/// After binding: every leaf of a global (slots from `first_global` on) holds one value per
/// call (no call dimensions); throws a TypeError naming the function and the global otherwise.
void check_global_values(const Binding& b, const ArgInfo* args, size_t first_global);

}  // namespace sg::call
