// src/syntax/slangpy_module.h — the text of the `slangpy` module that `import slangpy;` (or
// `import "slangpy";`) loads: SlangPy's CallShapeInfo, the call ids of a function called per
// element in call groups (fn.call_group_shape), written in the kernel language over the
// internal built-ins `__slangpy_call_id(d)` ... (lang/coop.h). SlangPy's tensor types need no
// library source: they are compiler built-ins.
#pragma once

#include "syntax/diagnostics.h"

namespace sg::lang {

/// The name the module's text is loaded under (diagnostics in it name this file).
inline constexpr const char* kSlangpyModuleName = "<slangpy>";
const char* slangpy_module_source();
/// Whether `loc` lies in the built-in slangpy module (its declarations are not the user's: a
/// module's lists of functions and structs leave them out).
bool in_slangpy_module(SourceLoc loc);

}  // namespace sg::lang
