// src/python/autograd_call.h — what an autograd node keeps of a call (the plan, the arguments
// as described at forward, the call shape, which tensors are the node's inputs and outputs) and
// the callbacks the torch bridge runs for it (bridge_abi.h: forward, backward, release).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bridge/bridge_abi.h"
#include "call/call_plan.h"
#include "python/torch_ops.h"

namespace sg::py {

struct AutogradCtx {
    std::shared_ptr<call::CallPlan> plan;
    std::vector<call::ArgInfo> args;   ///< every argument node (composites' children included)
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
/// by the first autograd call on the device (`function` on `stream`; refused inside a CUDA graph
/// capture, graph_capture.h) and kept for the process.
void* device_zeros(TorchOps& ops, DeviceType device, int index, void* stream, const std::string& function);

}  // namespace sg::py
