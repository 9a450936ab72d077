// src/python/torch_host.cpp — call::Host implemented over TorchOps (native bridge or fallback).
#include "python/torch_host.h"

#include <nanobind/nanobind.h>

#include "python/torch_ops.h"

namespace sg::py {

namespace nb = nanobind;

namespace {

class TorchHost final : public call::Host {
public:
    void* empty(const int64_t* shape, int ndim, DType dtype, DeviceType device, int device_index, bool zero,
                TensorInfo& out) override {
        return torch_ops().empty(shape, ndim, dtype, device, device_index, zero, out).release().ptr();
    }
    void* empty_unlocked(const int64_t* shape, int ndim, DType dtype, DeviceType device, int device_index,
                         TensorInfo& out) override {
        nb::gil_scoped_acquire gil;
        return empty(shape, ndim, dtype, device, device_index, false, out);
    }
    void describe(void* tensor, TensorInfo& out) override { torch_ops().describe(static_cast<PyObject*>(tensor), out); }
    void* clone(void* tensor) override { return nb::handle(static_cast<PyObject*>(tensor)).attr("clone")().release().ptr(); }
    void release(void* object) override {
        nb::gil_scoped_acquire gil;
        Py_DECREF(static_cast<PyObject*>(object));
    }
    void* current_stream(DeviceType device, int device_index) override {
        return torch_ops().current_stream(device, device_index);
    }
    bool grad_enabled() override { return torch_ops().grad_enabled(); }
    void attach_autograd(const call::AutogradSpec& spec, std::vector<void*>& replaced) override {
        static_assert(sizeof(void*) == sizeof(PyObject*));
        SgAutogradSpec s{};
        s.inputs = reinterpret_cast<PyObject* const*>(spec.inputs);
        s.n_inputs = spec.n_inputs;
        s.outputs = reinterpret_cast<PyObject* const*>(spec.outputs);
        s.n_outputs = spec.n_outputs;
        s.output_is_input_dirty = spec.output_is_input_dirty;
        s.forward = spec.forward;
        s.backward = spec.backward;
        s.release = spec.release;
        s.ctx = spec.ctx;
        s.input_takes_grad = spec.input_takes_grad;
        nb::object outs = torch_ops().apply_autograd(s);
        if (outs.is_none()) return;
        for (nb::handle o : nb::tuple(outs)) replaced.push_back(nb::borrow(o).release().ptr());
    }
    void warn_not_differentiable(const std::string& message) override {
        // Kept for the process (never released: no destructor runs after the interpreter ends).
        static PyObject* category =
            nb::object(nb::module_::import_("shadegrad._warnings").attr("NotDifferentiableWarning")).release().ptr();
        if (PyErr_WarnEx(category, message.c_str(), 1) != 0) throw nb::python_error();
    }
    void* unlock() override { return PyEval_SaveThread(); }
    void relock(void* state) override { PyEval_RestoreThread(static_cast<PyThreadState*>(state)); }
};

}  // namespace

call::Host& torch_host() {
    static TorchHost* host = new TorchHost();  // never destroyed: autograd nodes may outlive exit
    return *host;
}

}  // namespace sg::py
