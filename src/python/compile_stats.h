// src/python/compile_stats.h — binds `_core._compile_stats()` (compile_stats.cpp).
#pragma once

#include <nanobind/nanobind.h>

namespace sg::py {

void bind_compile_stats(nanobind::module_& m);

}  // namespace sg::py
