// src/call/launch.h — the launch sequence of a call plan's kernels, private to the call layer
// (call::invoke and the autograd node sequence it; the tests of the call layer use it too):
// pack a parameter block, size and place the scratch memory of deterministic CUDA kernels, run
// the kernel through its backend, zero-fill gradient buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "call/call_plan.h"

namespace sg::call::launch {

/// Packs the parameter block of `kernel` (whose glue is `glue`) into `block`.
void pack(const CompiledKernel& kernel, const Glue& glue, const Binding& binding, const LaunchData& data,
          std::vector<uint8_t>& block);
/// Runs a kernel over the call shape through its backend (runtime/backend.h): on the thread
/// pool (CPU) or enqueued on `stream` (CUDA: torch's current stream of the device; nothing
/// waits for it).
/// Kernels check tensor indices, integer divisors and [MaxIters] bounds (kernel_faults.h):
/// a CPU fault raises CallError after this launch; a CUDA fault raises at the next launch on
/// the device (this one first raises an earlier kernel's), or here in debug mode. The
/// messages name the function from the kernel's launch site (`function` is kept for callers).
void run(const CompiledKernel& kernel, std::vector<uint8_t>& block, void* stream, const std::string& function);
/// Scratch memory the launch of `kernel` packed in `block` (from `glue` and `b`) needs
/// (LaunchData::scratch): 0 unless it is a deterministic CUDA kernel with reduced gradients
/// or ordered gradient tables. Of that, the first 16 bytes must be zero at the launch. Throws
/// ValueError naming the parameter when an ordered table is larger than its shared memory.
size_t scratch_bytes(const CompiledKernel& kernel, const Glue& glue, const Binding& b,
                            const std::vector<uint8_t>& block);
/// Of scratch_bytes, the leading bytes that hold the fixed-point tables' records
/// (GeneratedKernel::fixed): they must be zero at the launch, and CallHeader::scratch points
/// just past them (set_scratch(block, scratch + this)), at the 16 bytes that must be zero too.
size_t scratch_prefix(const CompiledKernel& kernel, const std::vector<uint8_t>& block);
/// Sets CallHeader::scratch of a packed block.
void set_scratch(std::vector<uint8_t>& block, void* scratch);
/// The grid of a kernel with ordered gradient tables over `total` call elements (bounded:
/// codegen::ordered_grid_blocks).
int64_t ordered_blocks(const CompiledKernel& kernel, int64_t total);
/// Scalar elements an ordered or fixed-point table's buffer spans in `block` (as
/// sg_ordered_extent and sg_fixed_extent on the device; -1 when a stride is negative).
int64_t ordered_extent(const CompiledKernel& kernel, const std::vector<uint8_t>& block, int param);
/// Zero-fills `bytes` bytes at `data` on `kernel`'s device through its backend: an
/// asynchronous memset on `stream` (CUDA, in the kernel's context) or a memset (CPU).
void zero(const CompiledKernel& kernel, void* data, size_t bytes, void* stream);

}  // namespace sg::call::launch
