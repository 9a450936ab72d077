// src/runtime/cuda_capture.cpp — stream capture status (see cuda_capture.h).
#include "runtime/cuda_capture.h"

#include "runtime/cuda_driver.h"

namespace sg::runtime {

bool cuda_stream_capturing(int device, void* stream) {
    const CudaDriver& d = cuda_driver();
    CudaContextGuard guard(cuda_primary_context(device));
    int status = kCuStreamCaptureNone;
    check_cuda(d.cuStreamIsCapturing(static_cast<CuStream>(stream), &status), "cuStreamIsCapturing");
    return status != kCuStreamCaptureNone;
}

}  // namespace sg::runtime
