// src/lang/tier3_functions.h — functions a module declares with texture and sampler types
// (SlangPy modules often have one beside plain functions): set aside before checking, so that the
// rest of the module loads; a struct's methods likewise, so that the struct and its other methods
// load. Each is checked lazily: calling it (from Python, or from another function of the module)
// is an error naming the construct.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "syntax/ast.h"

namespace sg::lang {

/// A function set aside: where it is declared and why ("parameter 'sampler' has type
/// SamplerState").
struct SetAsideFunction {
    SourceLoc loc;
    std::string reason;
};

/// Removes from `modules` every free function and struct method whose result or parameter types
/// name a texture or sampler type (Texture2D, SamplerState, ...), and returns them by name (a
/// method as "Struct.method"); the struct keeps its other members.
std::map<std::string, SetAsideFunction> set_aside_tier3_functions(const std::vector<ModuleAst*>& modules);

/// The sentence for a set-aside function: "f() cannot be used: its parameter 'sampler' has type
/// SamplerState (textures and samplers are not supported yet)".
std::string set_aside_message(const std::string& name, const SetAsideFunction& f);

}  // namespace sg::lang
