// src/python/torch_ops.cpp — loading the native torch bridge (version-checked) and the Python
// fallback, behind one TorchOps interface.
#include "python/torch_ops.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace sg::py {

namespace {

constexpr size_t kErrSize = 1024;

[[noreturn]] void bridge_error(const char* what, const char* err) {
    throw std::runtime_error(std::string("shadegrad torch bridge: ") + what + ": " + err);
}

class NativeOps final : public TorchOps {
public:
    explicit NativeOps(const SgBridgeApi* api) : api_(api) {}
    bool is_tensor(PyObject* obj) override { return api_->is_tensor(obj) != 0; }
    void describe(PyObject* obj, TensorInfo& out) override {
        char err[kErrSize];
        if (api_->describe(obj, &out, err, sizeof(err)) != 0) [[unlikely]]
            bridge_error("describe", err);
    }
    nb::object empty(const int64_t* shape, int ndim, DType dtype, DeviceType device, int device_index, bool zero,
                     TensorInfo& out) override {
        char err[kErrSize];
        PyObject* t = api_->empty(shape, ndim, dtype, device, device_index, zero ? 1 : 0, &out, err, sizeof(err));
        if (!t) [[unlikely]]
            bridge_error("allocation", err);
        return nb::steal(t);
    }
    bool grad_enabled() override { return api_->grad_enabled() != 0; }
    void* current_stream(DeviceType device, int device_index) override {
        return device == DeviceType::CUDA ? api_->current_stream(device, device_index) : nullptr;
    }
    nb::object apply_autograd(const SgAutogradSpec& spec) override {
        char err[kErrSize];
        if (api_->apply_autograd(&spec, err, sizeof(err)) != 0) throw std::runtime_error(err);
        return nb::none();
    }
    const char* name() const override { return "native"; }

private:
    const SgBridgeApi* api_;
};

/// The handle the Python fallback's autograd.Function calls back into.
struct AutogradHandle {
    SgAutogradSpec spec;
    bool released = false;
    ~AutogradHandle() { release(); }
    void release() {
        if (!released && spec.release) spec.release(spec.ctx);
        released = true;
    }
};

class FallbackOps final : public TorchOps {
public:
    explicit FallbackOps(nb::object module)
        : module_(module),
          torch_tensor_(nb::module_::import_("torch").attr("Tensor")),
          describe_(module.attr("describe")),
          empty_(module.attr("empty")),
          grad_enabled_(module.attr("grad_enabled")),
          current_stream_(module.attr("current_stream")),
          apply_autograd_(module.attr("apply_autograd")) {}

    bool is_tensor(PyObject* obj) override { return PyObject_IsInstance(obj, torch_tensor_.ptr()) == 1; }
    void describe(PyObject* obj, TensorInfo& out) override {
        nb::tuple f = nb::cast<nb::tuple>(describe_(nb::handle(obj)));
        fill(f, out);
    }
    static void fill(nb::tuple f, TensorInfo& out) {
        std::memset(&out, 0, sizeof(out));
        out.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(f[0]));
        nb::tuple shape = nb::cast<nb::tuple>(f[1]);
        nb::tuple strides = nb::cast<nb::tuple>(f[2]);
        out.ndim = nb::cast<int32_t>(f[3]);
        if (out.ndim < 0 || out.ndim > kMaxTensorRank) throw std::runtime_error("tensor rank out of range");
        for (int d = 0; d < out.ndim; ++d) {
            out.shape[d] = nb::cast<int64_t>(shape[size_t(d)]);
            out.strides[d] = nb::cast<int64_t>(strides[size_t(d)]);
        }
        out.dtype = DType(nb::cast<int32_t>(f[4]));
        out.device_type = DeviceType(nb::cast<int32_t>(f[5]));
        out.device_index = nb::cast<int32_t>(f[6]);
        out.requires_grad = nb::cast<bool>(f[7]) ? 1 : 0;
        out.is_leaf = nb::cast<bool>(f[8]) ? 1 : 0;
        out.numel = nb::cast<int64_t>(f[9]);
        out.version = nb::cast<uint64_t>(f[10]);
    }
    nb::object empty(const int64_t* shape, int ndim, DType dtype, DeviceType device, int device_index, bool zero,
                     TensorInfo& out) override {
        nb::list s;
        for (int d = 0; d < ndim; ++d) s.append(shape[d]);
        nb::object t = empty_(s, int(dtype), int(device), device_index, zero);
        describe(t.ptr(), out);
        return t;
    }
    bool grad_enabled() override { return nb::cast<bool>(grad_enabled_()); }
    void* current_stream(DeviceType device, int device_index) override {
        if (device != DeviceType::CUDA) return nullptr;
        return reinterpret_cast<void*>(nb::cast<uintptr_t>(current_stream_(int(device), device_index)));
    }
    nb::object apply_autograd(const SgAutogradSpec& spec) override {
        nb::list inputs, outputs, dirty, takes_grad;
        for (int i = 0; i < spec.n_inputs; ++i) {
            inputs.append(nb::handle(spec.inputs[i]));
            takes_grad.append(nb::bool_(!spec.input_takes_grad || spec.input_takes_grad[i]));
        }
        for (int i = 0; i < spec.n_outputs; ++i) {
            outputs.append(nb::handle(spec.outputs[i]));
            dirty.append(int(spec.output_is_input_dirty[i]));
        }
        auto* handle = new AutogradHandle{spec};
        nb::object h = nb::cast(handle, nb::rv_policy::take_ownership);
        return apply_autograd_(inputs, outputs, dirty, h, takes_grad);
    }
    const char* name() const override { return "fallback"; }

private:
    nb::object module_, torch_tensor_, describe_, empty_, grad_enabled_, current_stream_, apply_autograd_;
};

struct BridgeState {
    std::unique_ptr<TorchOps> ops;
    std::unique_ptr<NativeOps> native;   ///< kept when loaded, for describe_native in tests
    std::unique_ptr<FallbackOps> fallback;
    std::string reason;
    std::string native_path;
};

BridgeState& state() {
    static BridgeState* s = new BridgeState();  // never destroyed: Python objects inside
    return *s;
}

std::vector<TensorInfo> describe_list(TorchOps& ops, nb::handle list) {
    std::vector<TensorInfo> out;
    for (nb::handle item : list) {
        TensorInfo ti{};
        if (!item.is_none()) ops.describe(item.ptr(), ti);
        out.push_back(ti);
    }
    return out;
}

}  // namespace

std::string bridge_refusal_reason(uint32_t api_version, uint32_t tensor_info_size) {
    if (api_version != SG_BRIDGE_API_VERSION)
        return "native bridge reports api_version " + std::to_string(api_version) + ", the core needs " +
               std::to_string(SG_BRIDGE_API_VERSION);
    if (tensor_info_size != sizeof(TensorInfo))
        return "native bridge reports sizeof(TensorInfo) = " + std::to_string(tensor_info_size) + ", the core's is " +
               std::to_string(sizeof(TensorInfo));
    return "";
}

TorchOps& torch_ops() {
    BridgeState& s = state();
    if (!s.ops) [[unlikely]]
        throw std::runtime_error("shadegrad: torch is not initialized (import shadegrad first)");
    return *s.ops;
}

void init_torch(const std::string& native_path, nb::object fallback, bool force_fallback) {
    BridgeState& s = state();
    s.native_path = native_path;
    s.fallback = std::make_unique<FallbackOps>(fallback);
    std::string reason;
    const SgBridgeApi* api = nullptr;
    if (force_fallback) {
        reason = "forced by SHADEGRAD_TORCH_BRIDGE=fallback";
    } else if (native_path.empty()) {
        reason = "native bridge was not built (torch was not found at build time)";
    } else {
        void* lib = dlopen(native_path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            reason = std::string("cannot load native bridge: ") + dlerror();
        } else if (auto entry = reinterpret_cast<SgBridgeEntryFn>(dlsym(lib, SG_BRIDGE_ENTRY_SYMBOL)); !entry) {
            reason = "native bridge has no symbol " SG_BRIDGE_ENTRY_SYMBOL;
        } else {
            api = entry();
            uint32_t version = api->api_version;
            // Test hook: pretend the bridge reported another ABI version.
            if (const char* fake = std::getenv("SHADEGRAD_TEST_BRIDGE_API_VERSION")) version = uint32_t(std::atoi(fake));
            reason = bridge_refusal_reason(version, api->tensor_info_size);
            // The bridge is built against one torch's C++ ABI: another torch must not use it.
            std::string torch_version = nb::cast<std::string>(nb::module_::import_("torch").attr("__version__"));
            torch_version = torch_version.substr(0, torch_version.find('+'));
            if (reason.empty() && torch_version != api->torch_version)
                reason = std::string("native bridge was built against torch ") + api->torch_version +
                         ", but torch " + torch_version + " is loaded";
            if (!reason.empty()) api = nullptr;
        }
    }
    if (api) {
        s.native = std::make_unique<NativeOps>(api);
        s.ops = std::make_unique<NativeOps>(api);
        s.reason = std::string("native bridge loaded (built against torch ") + api->torch_version + ")";
    } else {
        s.ops = std::make_unique<FallbackOps>(fallback);
        s.reason = reason;
    }
}

nb::dict torch_bridge_status() {
    BridgeState& s = state();
    nb::dict d;
    d["active"] = s.ops ? s.ops->name() : "none";
    d["reason"] = s.reason;
    d["native_path"] = s.native_path;
    return d;
}

nb::bytes describe_native(nb::handle tensor) {
    BridgeState& s = state();
    if (!s.native) throw std::runtime_error("the native bridge is not loaded: " + s.reason);
    TensorInfo ti{};
    s.native->describe(tensor.ptr(), ti);
    return nb::bytes(reinterpret_cast<const char*>(&ti), sizeof(ti));
}

nb::bytes describe_fallback(nb::handle tensor) {
    BridgeState& s = state();
    if (!s.fallback) throw std::runtime_error("torch is not initialized");
    TensorInfo ti{};
    s.fallback->describe(tensor.ptr(), ti);
    return nb::bytes(reinterpret_cast<const char*>(&ti), sizeof(ti));
}

void bind_autograd_handle(nb::module_& m) {
    nb::class_<AutogradHandle>(m, "_AutogradHandle")
        .def("forward",
             [](AutogradHandle& h) {
                 char err[kErrSize] = {0};
                 if (h.spec.forward(h.spec.ctx, err, sizeof(err)) != 0) throw std::runtime_error(err);
             })
        .def("backward", [](AutogradHandle& h, nb::handle saved, nb::handle grad_outputs, nb::handle grad_inputs) {
            TorchOps& ops = *state().fallback;
            std::vector<TensorInfo> s = describe_list(ops, saved);
            std::vector<TensorInfo> go = describe_list(ops, grad_outputs);
            std::vector<TensorInfo> gi = describe_list(ops, grad_inputs);
            char err[kErrSize] = {0};
            int rc;
            {
                nb::gil_scoped_release release;
                rc = h.spec.backward(h.spec.ctx, s.data(), int(s.size()), go.data(), int(go.size()), gi.data(), nullptr,
                                     err, sizeof(err));
            }
            if (rc != 0) throw std::runtime_error(err);
        });
}

}  // namespace sg::py
