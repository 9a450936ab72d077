// src/call/graph_capture.cpp — refusing first-call work inside a CUDA graph capture (see
// graph_capture.h).
#include "call/graph_capture.h"

#include "call/errors.h"
#include "runtime/backend.h"

namespace sg::call {

bool capturing(DeviceType device, int device_index, void* stream) {
    return runtime::backend(device).capturing(device_index, stream);
}

void refuse_during_capture(const std::string& function, const char* what, DeviceType device, int device_index,
                           void* stream) {
    if (!capturing(device, device_index, stream)) return;
    throw CallError(ErrorKind::Runtime,
                    function + "(): its " + what +
                        " would have to be compiled while the CUDA stream is capturing a graph (torch.cuda.graph or "
                        "torch.compile(mode=\"reduce-overhead\")), and a capture cannot contain that; warm it up "
                        "before capturing: run the same step once (same argument types, ranks and gradient "
                        "requirements, forward and backward) outside the capture");
}

}  // namespace sg::call
