// src/runtime/cuda_mapped_memory.h — pinned host memory mapped into a device's address space:
// the device writes it with plain stores, the host reads it with plain loads, without a
// synchronization or a copy (kernel fault records live there: cuda_backend.cpp).
//
// In: a device index (its primary context, the one torch uses). Out: a zero-filled block that is
// never freed (it lives as long as the process, like the primary context), its host address and
// the address kernels use. Reads on the host see device writes made visible by
// __threadfence_system(); nothing else orders them.
#pragma once

#include <cstddef>

#include "runtime/cuda_driver.h"

namespace sg::runtime {

struct MappedHostMemory {
    void* host = nullptr;    ///< the block's host address
    CuDevicePtr device = 0;  ///< the address kernels on the device use
};

/// Gives `bytes` of mapped pinned host memory for `device`, in the device's primary context:
/// pages of the process's own pinned with cuMemHostRegister (DEVICEMAP), else cuMemHostAlloc.
/// Throws BackendError when the driver refuses both.
MappedHostMemory cuda_alloc_mapped(int device, size_t bytes);

/// Waits for all work on `device` (cuCtxSynchronize in its primary context). Throws BackendError
/// naming the error of a kernel that failed (e.g. an illegal address).
void cuda_synchronize_device(int device);

/// Waits for the work on `stream` of `device`. Throws BackendError like cuda_synchronize_device.
void cuda_synchronize_stream(int device, void* stream);

}  // namespace sg::runtime
