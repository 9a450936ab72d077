// src/driver/build_id.h — the identity of this build of the compiler: what a cache of generated
// code keys on so that code made by another build of shadegrad is never taken for this one's.
#pragma once

#include <string>

namespace sg::driver {

/// The GNU build ID of the binary this code is linked into (a hash of the linked output that the
/// linker writes with --build-id; the build asks for it), as hex; without one, the binary's path,
/// size and modification time. Computed once per process, without reading the file.
const std::string& compiler_build_id();

}  // namespace sg::driver
