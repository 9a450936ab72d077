// src/call/host.h — what the call layer needs from the program that calls it: tensors allocated
// with the host's allocator, the current stream, grad mode, and an autograd node around a
// forward launch. The Python layer implements it over the active torch bridge
// (src/python/torch_host.cpp); the call layer never sees a Python object, only opaque
// references it hands back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "call/tensor_info.h"

namespace sg::call {

/// The callbacks of an autograd node (the signatures of the torch bridge's C ABI,
/// bridge/bridge_abi.h, which the host passes them to unchanged).
using AutogradForwardFn = int (*)(void* ctx, char* err, size_t err_size);
using AutogradBackwardFn = int (*)(void* ctx, const TensorInfo* saved_inputs, int n_inputs,
                                   const TensorInfo* grad_outputs, int n_outputs, TensorInfo* grad_inputs,
                                   void* stream, char* err, size_t err_size);
using AutogradReleaseFn = void (*)(void* ctx);

/// An autograd node for one call (the host's bridge builds it): `forward` runs inside it,
/// `backward` is called by the host's autograd engine, `release` when the node goes.
struct AutogradSpec {
    void* const* inputs = nullptr;   ///< host tensors the node differentiates (borrowed)
    int n_inputs = 0;
    void* const* outputs = nullptr;  ///< host tensors the forward writes (borrowed)
    int n_outputs = 0;
    /// Per output: 0 a fresh result, 1 a user tensor written in place, 2 a leaf that requires
    /// grad written whole (it becomes a fresh output of the node); bridge_abi.h.
    const uint8_t* output_is_input_dirty = nullptr;
    /// Per input: 1 when the call differentiates it, 0 when it takes no gradient (a `no_diff` or
    /// read-only tensor parameter: saved for the backward kernel, but its gradient stays None
    /// and no buffer is allocated for it). nullptr: every input takes one.
    const uint8_t* input_takes_grad = nullptr;
    AutogradForwardFn forward = nullptr;
    AutogradBackwardFn backward = nullptr;
    AutogradReleaseFn release = nullptr;
    void* ctx = nullptr;  ///< owned by the node from the attach on (released on failure too)
};

class Host {
public:
    virtual ~Host() = default;
    /// A new tensor (an owned reference) on the device, described into `out`; zero-filled when
    /// `zero`. Called with the host's lock held (the Python layer: the GIL).
    virtual void* empty(const int64_t* shape, int ndim, DType dtype, DeviceType device, int device_index, bool zero,
                        TensorInfo& out) = 0;
    /// As empty(), from any thread (an autograd engine's): takes the host's lock itself.
    virtual void* empty_unlocked(const int64_t* shape, int ndim, DType dtype, DeviceType device, int device_index,
                                 TensorInfo& out) = 0;
    /// Describes a host tensor the call layer holds a reference to.
    virtual void describe(void* tensor, TensorInfo& out) = 0;
    /// A copy of a host tensor (an owned reference) that takes part in autograd as a copy does.
    virtual void* clone(void* tensor) = 0;
    /// Releases an owned reference from any thread (takes the host's lock itself).
    virtual void release(void* object) = 0;
    /// The current stream of a CUDA device (a CUstream), nullptr for the CPU or the default stream.
    virtual void* current_stream(DeviceType device, int device_index) = 0;
    virtual bool grad_enabled() = 0;
    /// Runs spec.forward inside an autograd node whose outputs are spec.outputs. When the host
    /// hands back new output objects in their place, `replaced` receives them (owned references,
    /// in the order of spec.outputs); otherwise it stays empty. Throws on failure.
    virtual void attach_autograd(const AutogradSpec& spec, std::vector<void*>& replaced) = 0;
    /// Tells the user that a call of a function without [Differentiable] got a tensor that
    /// requires grad (the call layer says it once per function). Python: a
    /// shadegrad.NotDifferentiableWarning; throws when the warnings filter turns it into an error.
    virtual void warn_not_differentiable(const std::string& message) {}
    /// Lets the host's other threads run during a long launch that touches no host object
    /// (Python: releases the GIL); relock() takes it back with what unlock() returned.
    virtual void* unlock() { return nullptr; }
    virtual void relock(void* state) {}

    /// unlock() for a scope.
    class Unlocked {
    public:
        explicit Unlocked(Host& host) : host_(host), state_(host.unlock()) {}
        ~Unlocked() { host_.relock(state_); }
        Unlocked(const Unlocked&) = delete;
        Unlocked& operator=(const Unlocked&) = delete;

    private:
        Host& host_;
        void* state_;
    };
};

/// An owned host reference, released through its host when it goes.
class HostRef {
public:
    HostRef() = default;
    HostRef(Host& host, void* object) : host_(&host), object_(object) {}
    HostRef(HostRef&& o) noexcept : host_(o.host_), object_(std::exchange(o.object_, nullptr)) {}
    HostRef& operator=(HostRef&& o) noexcept {
        if (this != &o) {
            reset();
            host_ = o.host_;
            object_ = std::exchange(o.object_, nullptr);
        }
        return *this;
    }
    HostRef(const HostRef&) = delete;
    HostRef& operator=(const HostRef&) = delete;
    ~HostRef() { reset(); }

    void* get() const { return object_; }
    /// Gives the reference up (the caller now owns it).
    void* release() { return std::exchange(object_, nullptr); }
    void reset() {
        if (object_) host_->release(std::exchange(object_, nullptr));
    }

private:
    Host* host_ = nullptr;
    void* object_ = nullptr;
};

}  // namespace sg::call
