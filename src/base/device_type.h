// src/base/device_type.h — DeviceType: the kind of device a tensor lives on and a kernel is
// generated for, loaded on and launched on.
//
// The bottom of the layer order: header-only and without dependencies, so that codegen (which
// emits code for a device kind), runtime (one backend per kind), call and the torch bridge all
// name devices with this one enum. The numbers are part of the bridge ABI (bridge_abi.h, through
// TensorInfo::device_type) and Python's shadegrad.DeviceType: never renumber.
#pragma once

#include <cstdint>

namespace sg {

enum class DeviceType : int32_t { CPU = 0, CUDA = 1, Other = 2 };

}  // namespace sg
