// src/call/binder.cpp — argument-to-parameter binding and call-shape rules.
#include "call/binder.h"

#include <algorithm>

#include "call/errors.h"

namespace sg::call {

using lang::ScalarKind;
using lang::Type;

namespace {

DType dtype_of(ScalarKind k) {
    switch (k) {
    case ScalarKind::Bool: return DType::Bool;
    case ScalarKind::Int8: return DType::Int8;
    case ScalarKind::Int16: return DType::Int16;
    case ScalarKind::Int32: return DType::Int32;
    case ScalarKind::Int64: return DType::Int64;
    case ScalarKind::UInt8: return DType::UInt8;
    case ScalarKind::UInt16: return DType::UInt16;
    case ScalarKind::UInt32: return DType::UInt32;
    case ScalarKind::UInt64: return DType::UInt64;
    case ScalarKind::Half: return DType::Float16;
    case ScalarKind::Float: return DType::Float32;
    case ScalarKind::Double: return DType::Float64;
    }
    return DType::Unknown;
}

std::string shape_text(const int64_t* shape, int ndim) {
    std::string s = "(";
    for (int d = 0; d < ndim; ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
    if (ndim == 1) s += ",";
    return s + ")";
}

std::string describe(const ArgInfo& a) {
    switch (a.kind) {
    case ArgKind::Tensor:
        return std::string("a ") + dtype_name(a.tensor.dtype) + " tensor of shape " + shape_text(a.tensor.shape, a.tensor.ndim) +
               (a.tensor.device_type == DeviceType::CUDA ? " on cuda:" + std::to_string(a.tensor.device_index) : " on cpu");
    case ArgKind::Grid: return "grid(" + shape_text(a.tensor.shape, a.tensor.ndim) + ")";
    case ArgKind::None: return std::string("a Python ") + (a.type_name ? a.type_name : "object");
    default: return std::string("a Python ") + arg_kind_name(a.kind);
    }
}

const char* device_name(DeviceType d) { return d == DeviceType::CUDA ? "cuda" : d == DeviceType::CPU ? "cpu" : "other"; }

}  // namespace

bool element_shape(const Type* t, std::vector<int64_t>& shape, ScalarKind& scalar) {
    switch (t->kind) {
    case lang::TypeKind::Scalar: scalar = t->scalar; return true;
    case lang::TypeKind::Vector:
        shape.push_back(t->rows);
        scalar = t->scalar;
        return true;
    case lang::TypeKind::Matrix:
        shape.push_back(t->rows);
        shape.push_back(t->cols);
        scalar = t->scalar;
        return true;
    case lang::TypeKind::Array:
        shape.push_back(t->count);
        return element_shape(t->element, shape, scalar);
    default: return false;
    }
}

Binding bind_call(const UserModule& module, const std::string& function, const ArgInfo* args, size_t positional,
                  size_t count, const std::vector<std::string>& keyword_names, bool grad_mode, DeviceType device) {
    std::vector<lang::FunctionDecl*> overloads = module.functions(function);
    if (overloads.empty()) throw_value_error("module '" + module.name() + "' has no function '" + function + "'");
    if (overloads.size() > 1)
        throw_type_error(function + ": calling an overloaded function from Python is not supported yet");
    lang::FunctionDecl* fn = overloads[0];
    Binding b;
    b.function = function;
    b.decl = fn;
    b.device = device;
    const size_t nparams = fn->params.size();
    // Match positional and keyword arguments to parameters.
    std::vector<int> arg_of(nparams, -1);
    if (positional > nparams)
        throw_type_error(function + "() takes " + std::to_string(nparams) + " argument" + (nparams == 1 ? "" : "s") + " but " +
                         std::to_string(positional) + " were given");
    for (size_t i = 0; i < positional; ++i) arg_of[i] = int(i);
    for (size_t k = 0; k < keyword_names.size(); ++k) {
        const std::string& kw = keyword_names[k];
        auto it = std::find_if(fn->params.begin(), fn->params.end(), [&](lang::VarDecl* p) { return p->name == kw; });
        if (it == fn->params.end()) throw_type_error(function + "() got an unexpected keyword argument '" + kw + "'");
        size_t p = size_t(it - fn->params.begin());
        if (arg_of[p] >= 0) throw_type_error(function + "() got multiple values for argument '" + kw + "'");
        arg_of[p] = int(positional + k);
    }
    for (size_t p = 0; p < nparams; ++p)
        if (arg_of[p] < 0) throw_type_error(function + "() missing required argument '" + fn->params[p]->name + "'");
    (void)count;

    int device_index = -2;
    for (size_t p = 0; p < nparams; ++p) {
        lang::VarDecl* param = fn->params[p];
        const ArgInfo& a = args[arg_of[p]];
        ParamBinding pb;
        pb.param = int(p);
        pb.arg = arg_of[p];
        pb.name = param->name;
        pb.type = param->type;
        pb.dir = param->dir;
        // Differentiable tensors carry their gradient in a buffer; other values in pairs.
        pb.differentiable = fn->is_differentiable && !param->is_no_diff &&
                            (lang::param_is_differentiable(module.types(), *param) ||
                             (param->type->is_tensor() && param->type->tensor.differentiable));
        const Type* t = param->type;
        std::string where = function + "(): parameter '" + param->name + "' of type " + lang::type_name(t);
        if (param->dir != lang::ParamDir::In && a.kind != ArgKind::Tensor)
            throw_type_error(where + " is an out/inout parameter and needs a tensor, got " + describe(a));
        switch (a.kind) {
        case ArgKind::Float:
        case ArgKind::Int:
        case ArgKind::Bool:
            if (!t->is_scalar())
                throw_type_error(where + " cannot take " + describe(a) + " (pass a tensor for non-scalar parameters)");
            if (a.kind == ArgKind::Float && !lang::is_floating(t->scalar))
                throw_type_error(where + " cannot take a Python float (the parameter is an integer)");
            pb.kind = BindingKind::Uniform;
            break;
        case ArgKind::Grid:
        case ArgKind::CallId: {
            int rank = a.tensor.ndim;
            bool ok = (t->is_scalar() && rank == 1) || (t->is_vector() && t->rows == rank) ||
                      (t->is_array() && t->count == rank && t->element->is_scalar());
            ScalarKind k = t->is_array() ? t->element->scalar : t->scalar;
            if (!ok || !(k == ScalarKind::Int32 || k == ScalarKind::UInt32))
                throw_type_error(where + " cannot take " + describe(a) + ": a grid of rank " + std::to_string(rank) +
                                 " binds to int" + (rank > 1 ? std::to_string(rank) : "") + " or int[" + std::to_string(rank) + "]");
            pb.kind = BindingKind::Grid;
            pb.call_dims = rank;
            break;
        }
        case ArgKind::Tensor: {
            const TensorInfo& ti = a.tensor;
            if (ti.device_type != device)
                throw_value_error(where + " got a tensor on " + device_name(ti.device_type) +
                                  ", but the module's device is " + device_name(device));
            if (device_index == -2) device_index = ti.device_index;
            else if (ti.device_index != device_index)
                throw_value_error(where + " got a tensor on cuda:" + std::to_string(ti.device_index) +
                                  ", but other tensors of the call are on cuda:" + std::to_string(device_index) +
                                  "; every tensor of one call must be on the same device");
            if (ti.dtype == DType::Unknown) throw_type_error(where + " got a tensor of an unsupported dtype");
            std::vector<int64_t> elem;
            ScalarKind scalar = ScalarKind::Float;
            const Type* value_type = t->is_tensor() ? t->element : t;
            if (!element_shape(value_type, elem, scalar))
                throw_type_error(where + " cannot be read from a tensor");
            if (dtype_of(scalar) != ti.dtype)
                throw_type_error(where + " needs a " + dtype_name(dtype_of(scalar)) + " tensor, got " + describe(a));
            int e = int(elem.size());
            if (t->is_tensor()) {
                if (ti.ndim != t->rank + e) {
                    if (ti.ndim > t->rank + e)
                        throw_type_error(where + " got " + describe(a) +
                                         ": passing a batch of tensors (extra leading dims) is not supported yet");
                    throw_type_error(where + " needs a tensor of rank " + std::to_string(t->rank + e) + ", got " + describe(a));
                }
                pb.kind = BindingKind::WholeTensor;
                pb.is_output = t->tensor.access != lang::TensorAccess::Read;
                pb.call_dims = 0;
            } else {
                if (ti.ndim < e) throw_type_error(where + " needs a tensor whose last dims are " + shape_text(elem.data(), e) +
                                                  ", got " + describe(a));
                for (int d = 0; d < e; ++d)
                    if (ti.shape[ti.ndim - e + d] != elem[size_t(d)])
                        throw_type_error(where + " needs a tensor whose last dims are " + shape_text(elem.data(), e) +
                                         ", got " + describe(a));
                pb.kind = BindingKind::Elementwise;
                pb.call_dims = ti.ndim - e;
                pb.is_output = param->dir != lang::ParamDir::In;
            }
            pb.elem_dims = e;
            pb.requires_grad = pb.differentiable && grad_mode && ti.requires_grad && !pb.is_output;
            break;
        }
        case ArgKind::None: throw_type_error(where + " cannot take " + describe(a));
        }
        if (pb.call_dims > 8) throw_value_error(where + ": more than 8 call dimensions");
        b.call_rank = std::max(b.call_rank, pb.call_dims);
        b.autograd |= pb.requires_grad;
        b.params.push_back(pb);
    }
    b.device_index = device_index == -2 ? (device == DeviceType::CPU ? -1 : 0) : device_index;
    b.result_type = fn->result_type;
    if (!b.result_type->is_void()) {
        std::vector<int64_t> elem;
        ScalarKind scalar;
        if (!element_shape(b.result_type, elem, scalar))
            throw_type_error(function + "(): returning " + lang::type_name(b.result_type) + " to Python is not supported yet");
        b.result_elem_dims = int(elem.size());
    }
    // Broadcast flags from this call's shapes (the key fixes which extents are 1).
    int64_t shape[8];
    compute_call_shape(b, args, shape);
    for (ParamBinding& pb : b.params) {
        const ArgInfo& a = args[pb.arg];
        pb.broadcast.assign(size_t(pb.call_dims), false);
        if (pb.kind != BindingKind::Elementwise) continue;
        for (int d = 0; d < pb.call_dims; ++d) {
            int call_dim = b.call_rank - pb.call_dims + d;
            pb.broadcast[size_t(d)] = a.tensor.shape[d] == 1 && shape[call_dim] != 1;
        }
        // Rank padding or an extent-1 dim makes several threads share an element.
        bool shared = pb.call_dims < b.call_rank;
        for (bool x : pb.broadcast) shared |= x;
        pb.grad_atomic = shared;
        if (pb.is_output && shared)
            throw_value_error(function + "(): out parameter '" + pb.name + "' is broadcast; every thread would write the same element");
    }
    b.autograd = b.autograd && fn->is_differentiable;
    return b;
}

void compute_call_shape(const Binding& b, const ArgInfo* args, int64_t* shape) {
    const int rank = b.call_rank;
    for (int d = 0; d < rank; ++d) shape[d] = 1;
    for (const ParamBinding& pb : b.params) {
        if (pb.call_dims == 0) continue;
        const ArgInfo& a = args[pb.arg];
        for (int d = 0; d < pb.call_dims; ++d) {
            int call_dim = rank - pb.call_dims + d;
            int64_t e = a.tensor.shape[d];
            if (e == shape[call_dim] || e == 1) continue;
            if (shape[call_dim] == 1) {
                shape[call_dim] = e;
                continue;
            }
            // Find who set the extent, for the message.
            std::string other;
            for (const ParamBinding& q : b.params) {
                if (&q == &pb || q.call_dims == 0) continue;
                int qd = call_dim - (rank - q.call_dims);
                if (qd >= 0 && qd < q.call_dims && args[q.arg].tensor.shape[qd] == shape[call_dim]) {
                    other = "'" + q.name + "' of shape " + shape_text(args[q.arg].tensor.shape, args[q.arg].tensor.ndim);
                    break;
                }
            }
            throw_value_error(b.function + "(): parameter '" + pb.name + "' of shape " +
                              shape_text(a.tensor.shape, a.tensor.ndim) + " does not broadcast with " + other +
                              " (call dimension " + std::to_string(call_dim) + ": " + std::to_string(e) + " vs " +
                              std::to_string(shape[call_dim]) + ")");
        }
    }
}

}  // namespace sg::call
