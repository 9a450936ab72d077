// src/bridge/torch_bridge.cpp — the native torch bridge: the exported table, tensor description,
// output allocation with torch's allocator, the current stream and grad mode.
//
// Built against the installed torch (src/bridge/CMakeLists.txt) and dlopened by the core after
// `import torch`. Every entry point is noexcept: failures come back as codes and messages, never
// as exceptions across the C ABI (bridge_abi.h).
#include <Python.h>

#include <cstring>
#include <limits>

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/api/include/torch/version.h>
#include <torch/csrc/autograd/python_variable.h>

#include "bridge/bridge_internal.h"

#ifndef SG_BRIDGE_TORCH_CUDA
#define SG_BRIDGE_TORCH_CUDA 0
#endif

namespace sg::bridge {

void write_error(char* err, std::size_t err_size, std::string_view msg) noexcept {
    if (err == nullptr || err_size == 0) return;
    const std::size_t n = msg.size() < err_size - 1 ? msg.size() : err_size - 1;
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
}

void take_python_error(char* err, std::size_t err_size, const char* fallback) noexcept {
    if (!PyErr_Occurred()) {
        write_error(err, err_size, fallback != nullptr && *fallback ? fallback
                                                                    : "unknown Python error");
        return;
    }
#if PY_VERSION_HEX >= 0x030C0000
    PyObject* exc = PyErr_GetRaisedException();
    PyObject* type = exc != nullptr ? reinterpret_cast<PyObject*>(Py_TYPE(exc)) : nullptr;
    Py_XINCREF(type);
    PyObject* value = exc;
#else
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    Py_XDECREF(traceback);
#endif
    std::string msg = type != nullptr ? reinterpret_cast<PyTypeObject*>(type)->tp_name : "Error";
    if (PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr) {
        if (const char* utf8 = PyUnicode_AsUTF8(text)) {
            msg += ": ";
            msg += utf8;
        }
        Py_DECREF(text);
    }
    PyErr_Clear();  // a failing str() must not leave a second error behind
    Py_XDECREF(type);
    Py_XDECREF(value);
    write_error(err, err_size, msg);
}

namespace {

// Numbering of sg::DType is the ABI's (tensor_info.h); anything torch has beyond it (complex,
// float8, quantized, bits) is Unknown, which the core reports per argument.
DType to_sg_dtype(c10::ScalarType t) noexcept {
    switch (t) {
        case c10::ScalarType::Bool: return DType::Bool;
        case c10::ScalarType::Byte: return DType::UInt8;
        case c10::ScalarType::Char: return DType::Int8;
        case c10::ScalarType::Short: return DType::Int16;
        case c10::ScalarType::Int: return DType::Int32;
        case c10::ScalarType::Long: return DType::Int64;
        case c10::ScalarType::Half: return DType::Float16;
        case c10::ScalarType::BFloat16: return DType::BFloat16;
        case c10::ScalarType::Float: return DType::Float32;
        case c10::ScalarType::Double: return DType::Float64;
        case c10::ScalarType::UInt16: return DType::UInt16;
        case c10::ScalarType::UInt32: return DType::UInt32;
        case c10::ScalarType::UInt64: return DType::UInt64;
        default: return DType::Unknown;
    }
}

}  // namespace

bool to_scalar_type(DType dtype, c10::ScalarType* out) noexcept {
    switch (dtype) {
        case DType::Bool: *out = c10::ScalarType::Bool; return true;
        case DType::UInt8: *out = c10::ScalarType::Byte; return true;
        case DType::Int8: *out = c10::ScalarType::Char; return true;
        case DType::Int16: *out = c10::ScalarType::Short; return true;
        case DType::Int32: *out = c10::ScalarType::Int; return true;
        case DType::Int64: *out = c10::ScalarType::Long; return true;
        case DType::Float16: *out = c10::ScalarType::Half; return true;
        case DType::BFloat16: *out = c10::ScalarType::BFloat16; return true;
        case DType::Float32: *out = c10::ScalarType::Float; return true;
        case DType::Float64: *out = c10::ScalarType::Double; return true;
        case DType::UInt16: *out = c10::ScalarType::UInt16; return true;
        case DType::UInt32: *out = c10::ScalarType::UInt32; return true;
        case DType::UInt64: *out = c10::ScalarType::UInt64; return true;
        case DType::Unknown: break;
    }
    return false;
}

void describe_tensor(const at::Tensor& t, TensorInfo* out) {
    // Zero everything first: the call key is built from these bytes, so padding-free and
    // deterministic contents matter as much as the fields themselves.
    std::memset(out, 0, sizeof(TensorInfo));
    if (!t.defined()) return;
    if (C10_UNLIKELY(t.layout() != c10::kStrided)) {
        throw BridgeError("shadegrad: only strided (dense) tensors are supported, got layout " +
                          c10::str(t.layout()));
    }
    const int64_t ndim = t.dim();
    if (C10_UNLIKELY(ndim > kMaxTensorRank)) {
        throw BridgeError("shadegrad: tensors of rank " + std::to_string(ndim) +
                          " are not supported (at most " + std::to_string(kMaxTensorRank) + ")");
    }
    // data_ptr() is storage + offset, the same call Python's Tensor.data_ptr() makes (it
    // materializes a lazily cloned storage, which a kernel writing the tensor needs anyway).
    out->data = t.data_ptr();
    const c10::IntArrayRef sizes = t.sizes();
    const c10::IntArrayRef strides = t.strides();
    for (int64_t d = 0; d < ndim; ++d) {
        out->shape[d] = sizes[d];
        out->strides[d] = strides[d];
    }
    out->ndim = static_cast<int32_t>(ndim);
    out->dtype = to_sg_dtype(t.scalar_type());
    const c10::Device device = t.device();
    if (device.is_cpu()) {
        out->device_type = DeviceType::CPU;
        out->device_index = -1;
    } else {
        out->device_type = device.is_cuda() ? DeviceType::CUDA : DeviceType::Other;
        out->device_index = device.index();
    }
    out->requires_grad = t.requires_grad() ? 1 : 0;
    out->is_leaf = t.is_leaf() ? 1 : 0;
    out->numel = t.numel();
    // Inference tensors have no version counter (reading it throws); they can never be saved for
    // backward, so 0 is as good as any value. The Python fallback does the same.
    out->version = t.is_inference() ? 0 : static_cast<uint64_t>(t._version());
}

void* current_stream_of(DeviceType device_type, int device_index) noexcept {
#if SG_BRIDGE_TORCH_CUDA
    if (device_type != DeviceType::CUDA) return nullptr;
    try {
        // The device-generic guard interface returns the same cudaStream_t that
        // c10::cuda::getCurrentCUDAStream(i).stream() does, without the CUDA toolkit headers or a
        // link against c10_cuda. The implementation is registered by libc10_cuda, which
        // `import torch` has loaded before the core dlopens this library.
        const c10::impl::DeviceGuardImplInterface* impl =
            c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
        const c10::Device device =
            device_index >= 0
                ? c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(device_index))
                : impl->getDevice();
        return impl->getStream(device).native_handle();
    } catch (...) {
        return nullptr;
    }
#else
    (void)device_type;
    (void)device_index;
    return nullptr;
#endif
}

namespace {

int is_tensor(PyObject* obj) noexcept {
    if (obj == nullptr) return 0;
    try {
        return THPVariable_Check(obj) ? 1 : 0;
    } catch (...) {
        // Only an isinstance() failure (a broken __class__ property) gets here.
        PyErr_Clear();
        return 0;
    }
}

int describe(PyObject* obj, TensorInfo* out, char* err, std::size_t err_size) noexcept {
    if (C10_UNLIKELY(out == nullptr)) {
        write_error(err, err_size, "shadegrad torch bridge: describe() got a null TensorInfo");
        return 1;
    }
    return guarded(err, err_size, [&] {
        if (C10_UNLIKELY(obj == nullptr || !THPVariable_Check(obj))) {
            std::memset(out, 0, sizeof(TensorInfo));
            throw BridgeError(std::string("shadegrad: expected a torch.Tensor, got ") +
                              (obj != nullptr ? Py_TYPE(obj)->tp_name : "NULL"));
        }
        describe_tensor(THPVariable_Unpack(obj), out);
    });
}

at::Tensor allocate(c10::IntArrayRef sizes, const at::TensorOptions& options, bool zero) {
    return zero ? at::zeros(sizes, options) : at::empty(sizes, options);
}

PyObject* empty(const int64_t* shape, int ndim, DType dtype, DeviceType device_type,
                int device_index, int zero, TensorInfo* out, char* err,
                std::size_t err_size) noexcept {
    PyObject* result = nullptr;
    guarded(err, err_size, [&] {
        if (ndim < 0 || ndim > kMaxTensorRank || (ndim > 0 && shape == nullptr)) {
            throw BridgeError("shadegrad: cannot allocate a tensor of rank " +
                              std::to_string(ndim));
        }
        for (int d = 0; d < ndim; ++d) {
            if (shape[d] < 0) {
                throw BridgeError("shadegrad: cannot allocate a tensor with negative extent " +
                                  std::to_string(shape[d]) + " in dimension " +
                                  std::to_string(d));
            }
        }
        c10::ScalarType scalar_type{};
        if (!to_scalar_type(dtype, &scalar_type)) {
            throw BridgeError("shadegrad: cannot allocate a tensor of dtype code " +
                              std::to_string(static_cast<int>(dtype)));
        }
        c10::Device device(c10::DeviceType::CPU);
        if (device_type == DeviceType::CUDA) {
            if (device_index < -1 || device_index > std::numeric_limits<c10::DeviceIndex>::max()) {
                throw BridgeError("shadegrad: invalid CUDA device index " +
                                  std::to_string(device_index));
            }
            device = c10::Device(c10::DeviceType::CUDA,
                                 static_cast<c10::DeviceIndex>(device_index));
        } else if (device_type != DeviceType::CPU) {
            throw BridgeError("shadegrad: can only allocate on CPU or CUDA devices");
        }
        const at::TensorOptions options = at::TensorOptions().dtype(scalar_type).device(device);
        const c10::IntArrayRef sizes(shape, static_cast<std::size_t>(ndim));
        at::Tensor tensor;
        if (device.is_cuda()) {
            // The guard makes the CUDA caching allocator and any lazy context creation target the
            // requested device, whatever the calling thread's current device is. On a torch
            // build without CUDA it throws a c10::Error that says so.
            const c10::DeviceGuard guard(device);
            tensor = allocate(sizes, options, zero != 0);
        } else {
            tensor = allocate(sizes, options, zero != 0);
        }
        // Describe before wrapping: a failure then leaves no Python object to clean up.
        if (out != nullptr) describe_tensor(tensor, out);
        result = THPVariable_Wrap(std::move(tensor));
        if (result == nullptr) throw python_error();
    });
    return result;
}

void* current_stream(DeviceType device_type, int device_index) noexcept {
    return current_stream_of(device_type, device_index);
}

int grad_enabled() noexcept {
    // Inference mode disables grad mode too; the second test documents the rule rather than
    // relying on that implementation detail.
    return c10::GradMode::is_enabled() && !c10::InferenceMode::is_enabled() ? 1 : 0;
}

const SgBridgeApi kApi = {
    SG_BRIDGE_API_VERSION,
    static_cast<uint32_t>(sizeof(TensorInfo)),
    TORCH_VERSION,
    &is_tensor,
    &describe,
    &empty,
    &current_stream,
    &grad_enabled,
    &apply_autograd,
};

}  // namespace
}  // namespace sg::bridge

extern "C" __attribute__((visibility("default"))) const SgBridgeApi* shadegrad_torch_bridge(void) {
    return &sg::bridge::kApi;
}
