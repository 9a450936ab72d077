// src/python/device_check.h — what create_device checks before it hands out a CUDA device: a
// CUDA build of torch, a usable driver that sees the device, and NVRTC. A problem found here is
// a RuntimeError at device creation (with the reason and the fix), not a failure at the first
// call.
#pragma once

#include <string>

namespace sg::py {

/// Every reason a CUDA device `index` cannot run shadegrad kernels in this process, one per
/// line with its fix; "" when it can. `caller` names the Python function for the message.
std::string cuda_device_problems(const std::string& caller, int index);

}  // namespace sg::py
