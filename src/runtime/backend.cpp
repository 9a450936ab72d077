// src/runtime/backend.cpp — the choice of backend by device type (see backend.h).
#include "runtime/backend.h"

namespace sg::runtime {

// Defined with their backends (cpu_backend.cpp, cuda_backend.cpp).
const Backend& cpu_backend() noexcept;
const Backend& cuda_backend() noexcept;

const Backend& backend(DeviceType type) noexcept {
    return type == DeviceType::CUDA ? cuda_backend() : cpu_backend();
}

std::span<const Backend* const> backends() noexcept {
    static const Backend* const all[] = {&cpu_backend(), &cuda_backend()};
    return all;
}

}  // namespace sg::runtime
