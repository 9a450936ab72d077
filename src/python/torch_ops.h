// src/python/torch_ops.h — the active torch bridge as seen by the dispatcher: the native bridge
// (a versioned C ABI table loaded with dlopen) or the Python fallback (shadegrad._torch_fallback).
// Both fill the same TensorInfo; errors become C++ exceptions here, in one place.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "bridge/bridge_abi.h"
#include "call/tensor_info.h"

namespace sg::py {

namespace nb = nanobind;

class TorchOps {
public:
    virtual ~TorchOps() = default;
    virtual bool is_tensor(PyObject* obj) = 0;
    /// Fills `out`; throws nb::python_error / std::runtime_error on failure.
    virtual void describe(PyObject* obj, TensorInfo& out) = 0;
    /// A new tensor (owned reference) described into `out`.
    virtual nb::object empty(const int64_t* shape, int ndim, DType dtype, DeviceType device, int device_index, bool zero,
                             TensorInfo& out) = 0;
    virtual bool grad_enabled() = 0;
    /// The current CUDA stream of a device (a CUstream), nullptr for CPU / the default stream.
    virtual void* current_stream(DeviceType device, int device_index) = 0;
    /// Wraps the forward launch in an autograd function; throws on failure. Returns the output
    /// objects when the bridge replaced them (fallback), else None (same objects, native).
    virtual nb::object apply_autograd(const SgAutogradSpec& spec) = 0;
    virtual const char* name() const = 0;
};

/// The bridge in use (native or fallback); throws RuntimeError when torch was never initialized.
TorchOps& torch_ops();

/// Loads the bridge: tries the native library at `native_path` (unless empty or `force_fallback`)
/// and otherwise uses `fallback` (the shadegrad._torch_fallback module). Returns the status text.
void init_torch(const std::string& native_path, nb::object fallback, bool force_fallback);
/// {"active": "native"|"fallback"|"none", "reason": ..., "native_path": ...}
nb::dict torch_bridge_status();
/// Why a bridge table would be refused ("" when it would be accepted).
std::string bridge_refusal_reason(uint32_t api_version, uint32_t tensor_info_size);

/// Registers the handle class the fallback's autograd.Function calls back into.
void bind_autograd_handle(nb::module_& m);

/// Describe a tensor through each bridge (tests compare the bytes).
nb::bytes describe_native(nb::handle tensor);
nb::bytes describe_fallback(nb::handle tensor);

}  // namespace sg::py
