// src/runtime/cuda_capture.h — whether a stream is capturing a CUDA graph (torch.cuda.graph,
// torch.compile's mode="reduce-overhead").
//
// Work enqueued on a capturing stream is recorded, not run, and the driver refuses (or records
// wrongly) anything that waits for the device or allocates outside the capture. The call layer
// asks this (through Backend::capturing, backend.h) on its slow paths only — before compiling a
// kernel or creating per-device state — and a debug-mode launch before it waits; never on the
// cached launch path otherwise, so a capture costs the hot path nothing.
#pragma once

namespace sg::runtime {

/// True when `stream` (a CUstream of `device`, or null for the legacy default stream) is
/// capturing a graph, or was and the capture was invalidated. Throws BackendError when the
/// driver cannot tell.
bool cuda_stream_capturing(int device, void* stream);

}  // namespace sg::runtime
