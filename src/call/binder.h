// src/call/binder.h — the vectorization rules (CALLS.md): matches call arguments to a
// function's parameters, decides how each argument is read per thread, the call rank, which
// inputs take part in autograd, and where gradients need atomics.
//
// In: a module, a function name, the described arguments (positional, then keywords by name)
// and the grad mode. Out: a Binding — everything about the call that the key determines; it is
// computed once per call plan. Per-call extents are checked by compute_call_shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "call/arg_info.h"
#include "call/user_module.h"

namespace sg::call {

enum class BindingKind : uint8_t {
    Uniform,      ///< a Python scalar passed as a kernel uniform
    Grid,         ///< sg.grid(shape): the thread's call index
    Elementwise,  ///< a tensor whose leading dims are call dims and trailing dims the element
    WholeTensor,  ///< a tensor passed whole to a tensor parameter
};

struct ParamBinding {
    int param = -1;                 ///< parameter index in the function
    int arg = -1;                   ///< index into the argument array
    std::string name;               ///< parameter name
    BindingKind kind = BindingKind::Uniform;
    const lang::Type* type = nullptr;  ///< declared parameter type
    lang::ParamDir dir = lang::ParamDir::In;
    int call_dims = 0;              ///< call dimensions this argument spans (right-aligned)
    int elem_dims = 0;              ///< trailing tensor dims that form one element
    bool differentiable = false;    ///< the parameter takes part in differentiation
    bool requires_grad = false;     ///< ...and its tensor requires grad (autograd input in the mask)
    bool is_output = false;         ///< a tensor the function writes (write-access tensor parameter)
    bool grad_atomic = false;       ///< gradient writes can collide (broadcast): atomics
    std::vector<bool> broadcast;    ///< per call dim of this argument (first call's shapes)
};

struct Binding {
    std::string function;
    lang::FunctionDecl* decl = nullptr;
    std::vector<ParamBinding> params;   ///< one per function parameter, in order
    int call_rank = 0;
    const lang::Type* result_type = nullptr;  ///< return type (void: no result tensor)
    int result_elem_dims = 0;
    bool autograd = false;              ///< grad mode on and some differentiable input requires grad
    DeviceType device = DeviceType::CPU;
    int device_index = -1;
};

/// Element shape of a value type as tensor trailing dims (float: {}, float3: {3},
/// float2x3: {2, 3}, float[5]: {5}); false when the type cannot be read from a tensor.
bool element_shape(const lang::Type* t, std::vector<int64_t>& shape, lang::ScalarKind& scalar);

/// Binds a call. Throws CallError naming the function and parameter on any mismatch.
/// `device` is the module's device: every tensor must live there.
Binding bind_call(const UserModule& module, const std::string& function, const ArgInfo* args, size_t positional,
                  size_t count, const std::vector<std::string>& keyword_names, bool grad_mode, DeviceType device);

/// Computes this call's shape (right-aligned broadcast of the arguments' call dims) into
/// `shape`; throws CallError when extents neither match nor broadcast.
void compute_call_shape(const Binding& binding, const ArgInfo* args, int64_t* shape);

}  // namespace sg::call
