// src/bridge/bridge_abi.h — the versioned C ABI between the core and the native torch bridge.
//
// The bridge is a shared library built against the installed torch (src/bridge/torch_bridge.cpp).
// The core dlopens it after `import torch` and calls `shadegrad_torch_bridge()`, which returns a
// table of function pointers. The core refuses the table when `api_version` or
// `tensor_info_size` differ from its own (and the Python fallback takes over, the reason shown by
// shadegrad.torch_bridge_status()). No C++ types cross this boundary; errors are returned as
// codes with a message written into a caller-provided buffer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "call/tensor_info.h"

extern "C" {

typedef struct _object PyObject;

#define SG_BRIDGE_API_VERSION 3

/// Called by the bridge's autograd node during backward. `grad_outputs[i]` is the incoming
/// gradient of output i (data == nullptr when torch passes none: treat as zero);
/// `saved_inputs` are the differentiable inputs as saved at forward (version-checked by the
/// bridge); `grad_inputs[i]` is a contiguous buffer for input i when its grad is needed,
/// data == nullptr otherwise: its contents are unspecified, the core zero-fills it (so that a
/// CUDA backward costs one asynchronous fill per run of adjacent buffers, not a fill kernel per
/// tensor; since API version 2). `stream` is the current stream of the device (CUDA) or
/// nullptr. Returns 0, or non-zero with a message in `err` (capacity `err_size`).
typedef int (*SgBackwardFn)(void* ctx, const sg::TensorInfo* saved_inputs, int n_inputs,
                            const sg::TensorInfo* grad_outputs, int n_outputs,
                            sg::TensorInfo* grad_inputs, void* stream, char* err, size_t err_size);
/// Releases `ctx` when the autograd node is destroyed.
typedef void (*SgReleaseFn)(void* ctx);
/// Runs the forward kernel: outputs already allocated (or user-provided) and described.
typedef int (*SgForwardFn)(void* ctx, char* err, size_t err_size);

struct SgAutogradSpec {
    PyObject* const* inputs;    ///< differentiable input tensors (borrowed), n_inputs
    int n_inputs;
    PyObject* const* outputs;   ///< output tensors (borrowed), n_outputs; written by forward
    int n_outputs;
    const uint8_t* output_is_input_dirty;  ///< per output: 1 when it is a user tensor modified
                                           ///< in place (mark_dirty), 0 for a fresh result, 2
                                           ///< for a user tensor the call overwrote that becomes
                                           ///< a fresh output (a leaf that requires grad: its
                                           ///< version is bumped, its history replaced)
    SgForwardFn forward;        ///< runs the forward kernel inside the autograd function
    void* ctx;                  ///< passed to forward/backward; owned by the node afterwards
    SgBackwardFn backward;
    SgReleaseFn release;
    /// Per input (n_inputs): 1 when the input takes a gradient, 0 when the call does not
    /// differentiate it (a no_diff or read-only parameter): it is saved like the others but
    /// gets no edge in the graph, so torch allocates no gradient for it and leaves its .grad
    /// None. nullptr: every input takes one. Since API version 3.
    const uint8_t* input_takes_grad;
};

struct SgBridgeApi {
    uint32_t api_version;       ///< SG_BRIDGE_API_VERSION of the bridge's build
    uint32_t tensor_info_size;  ///< sizeof(sg::TensorInfo) of the bridge's build
    const char* torch_version;  ///< torch version the bridge was built against

    /// 1 if obj is a torch.Tensor (or subclass), else 0. Never raises.
    int (*is_tensor)(PyObject* obj);
    /// Fills `out` from a torch tensor. 0 on success; non-zero with a message otherwise.
    int (*describe)(PyObject* obj, sg::TensorInfo* out, char* err, size_t err_size);
    /// Allocates a tensor with torch's allocator on the given device (zero-filled when zero=1)
    /// and describes it. Returns a new reference, or nullptr with a message in err.
    PyObject* (*empty)(const int64_t* shape, int ndim, sg::DType dtype, sg::DeviceType device_type,
                       int device_index, int zero, sg::TensorInfo* out, char* err, size_t err_size);
    /// Current stream of a CUDA device as a CUstream (nullptr for the default stream or CPU).
    void* (*current_stream)(sg::DeviceType device_type, int device_index);
    /// 1 when grad mode is enabled (and not in inference mode).
    int (*grad_enabled)(void);
    /// Runs spec.forward inside a torch autograd function whose backward calls spec.backward
    /// with the grad mask; outputs get the node as grad_fn. On failure (including a forward
    /// failure) returns non-zero with a message in err; ctx is then released by the bridge.
    int (*apply_autograd)(const SgAutogradSpec* spec, char* err, size_t err_size);
};

/// The bridge's single exported symbol.
typedef const SgBridgeApi* (*SgBridgeEntryFn)(void);
#define SG_BRIDGE_ENTRY_SYMBOL "shadegrad_torch_bridge"

}  // extern "C"
