// src/python/module_files.h — where Module.load_from_file finds its file, and which device
// DeviceType.automatic is, as SlangPy does both.
#pragma once

#include <string>
#include <vector>

#include "base/device_type.h"

namespace sg::py {

/// DeviceType.automatic's value in the Python enum (no device of its own: create_device resolves
/// it with automatic_device_type).
inline constexpr DeviceType kAutomaticDevice = DeviceType(-1);

/// CUDA when device `index` can run shadegrad kernels in this process, otherwise the CPU.
DeviceType automatic_device_type(int index);

/// The file Module.load_from_file(device, path) loads: `path` itself when it names a file
/// (absolute, or relative to the working directory), otherwise the first include path of the
/// device holding it. A ValueError naming every place tried when none does.
std::string find_module_file(const std::string& path, const std::vector<std::string>& include_paths);

}  // namespace sg::py
