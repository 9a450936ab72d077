// src/python/compile_support.h — what torch.compile support (python/shadegrad/_compile.py) needs
// from the core: Function.__call__ as a type slot, with a traceable Python stand-in in the class
// dict that only attribute lookup (Dynamo) sees; finding a live Function by id() when a compiled
// graph runs; and a call's binding computed from argument descriptions alone (shapes, dtypes: no
// data), for the custom operator's fake implementation.
#pragma once

#include <nanobind/nanobind.h>

namespace sg::py {

class Function;

/// The type slots of shadegrad._core.Function: tp_call runs Function::call directly on the
/// argument tuple and keyword dict (its C++ exceptions translated by nanobind, through
/// `_core._rethrow_pending`), and forwards to the bound `_call` method for an object that is not a
/// ready Function. `set_function_call_method` hands it that method (the unbound nanobind
/// function) once the class is defined.
const PyType_Slot* function_type_slots();
void set_function_call_method(nanobind::handle call_method);

/// Every Function object alive in the process, for `_function_by_id` (Function's constructor and
/// destructor keep the set current).
void register_live_function(Function* f);
void unregister_live_function(Function* f);

/// Binds `_core._set_call_attribute` (the traceable stand-in seen as `Function.__call__` on the
/// class while calls keep the C slot), `_core._function_by_id`, `_core._bind_signature` and
/// `_core._rethrow_pending` (tp_call's error route).
void bind_compile_support(nanobind::module_& m);

}  // namespace sg::py
