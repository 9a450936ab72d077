// src/runtime/cuda_mapped_memory.cpp — mapped pinned host memory and device synchronization
// (see cuda_mapped_memory.h).
#include "runtime/cuda_mapped_memory.h"

#include <cstring>

namespace sg::runtime {

MappedHostMemory cuda_alloc_mapped(int device, size_t bytes) {
    const CudaDriver& d = cuda_driver();
    CudaContextGuard guard(cuda_primary_context(device));
    MappedHostMemory out;
    // PORTABLE: the block is pinned for every context, so any device's kernel could reach it;
    // each device still gets its own record so that faults are told apart by device.
    check_cuda(d.cuMemHostAlloc(&out.host, bytes, kCuMemHostAllocPortable | kCuMemHostAllocDeviceMap),
               "cuMemHostAlloc of a fault record");
    std::memset(out.host, 0, bytes);
    check_cuda(d.cuMemHostGetDevicePointer(&out.device, out.host, 0), "cuMemHostGetDevicePointer");
    return out;
}

void cuda_synchronize_device(int device) {
    const CudaDriver& d = cuda_driver();
    CudaContextGuard guard(cuda_primary_context(device));
    check_cuda(d.cuCtxSynchronize(), "cuCtxSynchronize");
}

void cuda_synchronize_stream(int device, void* stream) {
    const CudaDriver& d = cuda_driver();
    CudaContextGuard guard(cuda_primary_context(device));
    check_cuda(d.cuStreamSynchronize(static_cast<CuStream>(stream)), "cuStreamSynchronize");
}

}  // namespace sg::runtime
