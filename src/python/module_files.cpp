// src/python/module_files.cpp — Module.load_from_file's search and DeviceType.automatic
// (module_files.h).
#include "python/module_files.h"

#include <nanobind/nanobind.h>

#include <filesystem>
#include <system_error>

#include "python/device_check.h"

namespace nb = nanobind;

namespace sg::py {

DeviceType automatic_device_type(int index) {
    return cuda_device_problems("create_device", index).empty() ? DeviceType::CUDA : DeviceType::CPU;
}

std::string find_module_file(const std::string& path, const std::vector<std::string>& include_paths) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path p(path);
    if (fs::is_regular_file(p, ec)) return path;
    std::string tried = "'" + path + "'";
    if (!p.is_absolute()) {
        for (const std::string& dir : include_paths) {
            fs::path candidate = fs::path(dir) / p;
            if (fs::is_regular_file(candidate, ec)) return candidate.string();
            tried += ", '" + candidate.string() + "'";
        }
    }
    const bool none = p.is_absolute() || include_paths.empty();
    throw nb::value_error(("cannot read kernel file '" + path + "': not found (tried " + tried + ")" +
                           (none && !p.is_absolute() ? "; create_device(include_paths=[...]) names folders to search"
                                                     : ""))
                              .c_str());
}

}  // namespace sg::py
