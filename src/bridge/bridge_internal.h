// src/bridge/bridge_internal.h — what the torch bridge's translation units share (not installed).
//
// The bridge is two files: torch_bridge.cpp (the exported table, tensor description,
// allocation, streams, grad mode) and torch_autograd.cpp (apply_autograd). Both include torch's
// Python-binding headers, so this header may too. Nothing here is visible outside the shared
// library: the version script (torch_bridge.map) exports only `shadegrad_torch_bridge`.
//
// Threading: functions taking a PyObject* require the GIL (the core calls them from a nanobind
// function). describe_tensor, current_stream_of and everything the autograd node runs in
// backward never touch Python and may run on torch's autograd worker threads without the GIL.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <torch/csrc/Exceptions.h>

#include "bridge/bridge_abi.h"

namespace sg::bridge {

/// Capacity of the message buffer the bridge hands to the core's forward/backward callbacks.
inline constexpr std::size_t kErrorCapacity = 1024;

/// A user-facing failure detected by the bridge itself (bad argument, unsupported tensor).
/// Kept distinct from c10::Error so that the message reaches the user without torch's
/// "Exception raised from ..." decoration.
struct BridgeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Copies `msg` into the caller's buffer, truncating and always NUL-terminating. Accepts a null
/// buffer or zero capacity (the message is then dropped).
void write_error(char* err, std::size_t err_size, std::string_view msg) noexcept;

/// Moves the pending Python exception into `err` as "Type: message" and clears it; writes
/// `fallback` when none is pending. Requires the GIL.
void take_python_error(char* err, std::size_t err_size, const char* fallback) noexcept;

/// Fills `out` from `t`. The whole struct is zeroed first, so unused shape/stride entries and the
/// reserved bytes are zero and an undefined tensor yields an all-zero TensorInfo (data ==
/// nullptr). Throws BridgeError / c10::Error for tensors the core cannot address: non-strided
/// layouts, rank above kMaxTensorRank, tensors without storage.
void describe_tensor(const at::Tensor& t, TensorInfo* out);

/// The torch dtype for a bridge dtype code; false for Unknown or an out-of-range code.
bool to_scalar_type(DType dtype, c10::ScalarType* out) noexcept;

/// Current stream of a device (a cudaStream_t for CUDA), nullptr for CPU, for torch builds
/// without CUDA, and on any failure (there is no error channel in the ABI for this call).
void* current_stream_of(DeviceType device_type, int device_index) noexcept;

/// The `apply_autograd` entry of the table (torch_autograd.cpp).
int apply_autograd(const SgAutogradSpec* spec, char* err, std::size_t err_size) noexcept;

/// Runs `body` and converts any exception into a non-zero return with a message in `err`: the
/// single place where C++ errors are translated for the C ABI. A python_error (a Python call
/// inside torch failed) takes the pending Python exception, which requires the GIL; only
/// entry points that hold it can raise one.
template <class Body>
int guarded(char* err, std::size_t err_size, Body&& body) noexcept {
    try {
        body();
        return 0;
    } catch (const BridgeError& e) {
        write_error(err, err_size, e.what());
    } catch (const c10::Error& e) {
        write_error(err, err_size, e.what_without_backtrace());
    } catch (const python_error& e) {
        take_python_error(err, err_size, e.what());
    } catch (const std::exception& e) {
        write_error(err, err_size, e.what());
    } catch (...) {
        write_error(err, err_size, "shadegrad torch bridge: unknown C++ exception");
    }
    return 1;
}

}  // namespace sg::bridge
