// src/call/glue.h — generation of the per-call kernel entry points as kernel-language source.
//
// The glue loads each argument for the current thread, calls the user function and stores the
// result; the backward glue calls `bwd_diff(fn)` and writes the gradients of exactly the inputs
// in the grad mask. It is compiled by the same front end as the user module and can be printed
// for any call (fn.debug_code). Alongside the source, it records where each kernel parameter's
// data comes from, which the launcher uses to pack the parameter block.
#pragma once

#include <string>
#include <vector>

#include "call/binder.h"

namespace sg::call {

enum class ParamSource : uint8_t {
    ArgTensor,   ///< the argument tensor of binding `binding` (view over its call or all dims)
    ArgGrad,     ///< the gradient buffer of binding `binding` (elementwise inputs), or the
                 ///< incoming gradient of an out parameter
    Uniform,     ///< a number of binding `binding`'s argument (which one: `component`)
    Result,      ///< result tensor `binding` (one per Binding::result_leaves entry)
    ResultGrad,  ///< the incoming gradient of the result
    ArgOutGrad,  ///< the incoming gradient of an inout parameter's written value (binding `binding`)
    CallExtent,  ///< the call shape's extent of dimension `component` (thread_id, hashes)
};

/// Which number of an argument a Uniform parameter holds.
enum UniformComponent : int {
    kUniformValue = 0,        ///< the scalar; RandFloat: min
    kUniformMax = 1,          ///< RandFloat: max
    kUniformSeed = 2,         ///< WangHash / RandFloat: the seed
    kUniformWarmup = 3,       ///< WangHash / RandFloat: the warm-up rounds of the hash
    kUniformGridStride = 8,   ///< + d: a grid's stride of dimension d
    kUniformGridOffset = 16,  ///< + d: a grid's offset of dimension d
};

struct GlueParam {
    std::string name;
    ParamSource source;
    int binding = -1;          ///< index into Binding::params (result leaf for Result)
    bool whole = false;        ///< view over all of the tensor's dims (WholeTensor) vs call dims
    bool grad_view = false;    ///< the kernel type also carries a gradient view
    int component = 0;         ///< Uniform: UniformComponent; CallExtent: the dimension
    const lang::Type* type = nullptr;  ///< Uniform: the type it is packed as (nullptr: the leaf's); a
                                       ///< whole tensor with a gradient: its parameter type
    /// ArgGrad of an input: how the backward writes it (binder.h). Reduce makes the kernel sum
    /// the thread's share in registers and add once per block (CodegenOptions::reduced_params).
    GradStrategy grad = GradStrategy::None;
};

struct Glue {
    std::string source;        ///< kernel-language text
    std::string entry;         ///< name of the [__sg_kernel] function
    std::vector<GlueParam> params;
};

/// `index_64bit`: the call has 2^31 threads or more, so the call index is an int64_t.
Glue make_forward_glue(const Binding& b, bool index_64bit = false);
/// The backward entry for the binding's grad mask (Binding::params[i].requires_grad).
Glue make_backward_glue(const Binding& b, bool index_64bit = false);

}  // namespace sg::call
