// src/call/autograd_node.h — the backward half of a call, private to the call layer: what an
// autograd node keeps of its call (the plan, the arguments as described at forward, the call
// shape, which tensors are the node's inputs and outputs), the callbacks the host's autograd
// engine runs (forward, backward, release), and the one backward launch sequence they share with
// invoke_backward.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "call/call_plan.h"
#include "call/host.h"

namespace sg::call {

struct AutogradCtx {
    Host* host = nullptr;
    std::shared_ptr<CallPlan> plan;
    std::vector<ArgInfo> args;         ///< every argument node (composites' children included)
    int64_t call_shape[8] = {};
    std::vector<TensorInfo> results;   ///< one per Binding::result_leaves entry
    std::vector<int> input_bindings;   ///< binding index of each autograd input
    std::vector<int> output_bindings;  ///< -1 - k for result leaf k, else the binding index
    std::vector<uint8_t> forward_block;
    void* stream = nullptr;            ///< the forward's CUDA stream (backward runs there too)
    void* zeros = nullptr;             ///< a zero-filled buffer on the call's device
};

int autograd_forward(void* ctx, char* err, size_t size);
int autograd_backward(void* ctx, const TensorInfo* saved, int n_inputs, const TensorInfo* grad_outputs, int n_outputs,
                      TensorInfo* grad_inputs, void* stream, char* err, size_t size);
void autograd_release(void* ctx);

/// A zero-filled buffer on a device (undefined incoming gradients read it with stride 0), made
/// by the first call that needs one on the device (`function` on `stream`; refused inside a CUDA
/// graph capture, graph_capture.h) and kept for the process.
void* device_zeros(Host& host, DeviceType device, int index, void* stream, const std::string& function);

/// A zero gradient shaped as `like`: every stride 0 over `zeros`.
TensorInfo zero_view(const TensorInfo& like, void* zeros);

/// One backward launch of `plan` for grad mask `mask` (non-zero).
struct BackwardLaunch {
    const ArgInfo* args = nullptr;          ///< the call's argument nodes (tensors as saved)
    const int64_t* call_shape = nullptr;
    const TensorInfo* result_grads = nullptr;               ///< per result leaf
    const TensorInfo* const* binding_grads = nullptr;       ///< LaunchData::binding_grads
    const TensorInfo* const* binding_out_grads = nullptr;   ///< LaunchData::binding_out_grads
    uint64_t mask = 0;
    void* stream = nullptr;
    /// The backward kernel for `mask` when the caller found it already (backward_for), else null.
    CallPlan::Backward* backward = nullptr;
};

/// The backward kernel of `plan` for grad mask `mask`, compiled on first use (never inside a
/// CUDA graph capture on `stream`: refused).
CallPlan::Backward& backward_for(CallPlan& plan, uint64_t mask, void* stream);

/// Whether the backward kernel `bw` stores every entry of `buffer`, the gradient buffer of
/// binding `binding` (a table, GradStrategy::Collide): the kernel stores each call element's own
/// entry of it (codegen::StoredGrad) and the buffer has the call's extents there. It then needs
/// no zero fill.
bool stores_every_entry(const CallPlan::Backward& bw, int binding, const TensorInfo& buffer, const int64_t* call_shape);

/// Zero fills of gradient buffers this process has issued (one per run of adjacent buffers):
/// `_core._compile_stats()["gradient_fills"]`, which tests read.
uint64_t gradient_fills();

/// Finds (or compiles: never inside a CUDA graph capture) the backward kernel for `l.mask`,
/// packs it, allocates its scratch through `host` and launches it on `l.stream`. The gradient
/// buffers must be zero-filled already where the kernel accumulates.
void run_backward(Host& host, CallPlan& plan, const BackwardLaunch& l);

/// Zero-fills the gradient buffers `buffers[0..n)` on `stream` (with `plan`'s backend), one fill
/// per run of adjacent buffers; those with `written[i]` set are skipped (the backward kernel
/// stores every element of them).
void zero_gradient_buffers(const CallPlan& plan, const TensorInfo* buffers, int n, void* stream,
                           const std::vector<bool>& written);

}  // namespace sg::call
