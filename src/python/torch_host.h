// src/python/torch_host.h — the call layer's host (call/host.h) over the active torch bridge:
// tensors from torch's allocator, torch's current stream and grad mode, autograd nodes built by
// the bridge, and the GIL taken or released where the call layer asks.
#pragma once

#include "call/host.h"

namespace sg::py {

/// The process's host (it forwards to torch_ops(), whichever bridge is active).
call::Host& torch_host();

}  // namespace sg::py
