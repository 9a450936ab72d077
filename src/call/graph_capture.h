// src/call/graph_capture.h — calls while a CUDA stream captures a graph (torch.cuda.graph,
// torch.compile's mode="reduce-overhead").
//
// A cached call is capturable as it is: its kernels are enqueued on torch's current stream, its
// outputs and gradient buffers come from torch's allocator (the capture's memory pool), its
// gradient buffers are cleared with asynchronous memsets, and nothing waits for the device. What
// a capture cannot contain is the first call's work: compiling and loading a kernel, and creating
// per-device state (the zero-gradient buffer; the fault record is made with a device's first
// kernel). Those slow paths ask here first and refuse with an error that says to warm the call up
// before capturing.
#pragma once

#include <string>

#include "call/tensor_info.h"

namespace sg::call {

/// Throws CallError (RuntimeError) when `stream` of the CUDA device is capturing a graph:
/// `function`'s `what` ("forward kernel", "backward kernel", ...) would have to be compiled or
/// created inside the capture. Does nothing for CPU calls or a stream that is not capturing.
void refuse_during_capture(const std::string& function, const char* what, DeviceType device, int device_index,
                           void* stream);

/// Whether `stream` of the CUDA device is capturing a graph (false for CPU).
bool capturing(DeviceType device, int device_index, void* stream);

}  // namespace sg::call
