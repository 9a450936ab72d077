// src/codegen/call_header.h — the fixed header at offset 0 of every parameter block: the call
// shape, the launch site, the fault record and the scratch pointer. Part of the kernel ABI
// between the call layer (which packs the block), the runtime backends (which point it at their
// fault record when they launch) and the generated code; dependency-free so that the runtime can
// use it without the rest of codegen.
#pragma once

#include <cstdint>

#include "codegen/fault_record.h"

namespace sg::codegen {

/// The fixed header at offset 0 of every parameter block.
struct CallHeader {
    int64_t shape[8];        ///< call shape (entries past rank are 1)
    int64_t total;           ///< product of the call shape = number of threads
    int32_t rank;            ///< call rank (0..8)
    int32_t site;            ///< the launch site, copied into a fault record (call layer's id)
    FaultRecord* fault;      ///< debug checks record the first fault here (nullable)
    /// Kernels with reduced parameters. CUDA: per-block sums and the count of finished blocks
    /// (reduce_scratch_bytes; zero-filled before the launch). CPU: the backend's per-chunk sums
    /// (chunk size, chunk count, then reduced_slots doubles per chunk). Else unused.
    void* scratch;
};
static_assert(sizeof(CallHeader) == 96, "CallHeader is part of the kernel ABI");

}  // namespace sg::codegen
