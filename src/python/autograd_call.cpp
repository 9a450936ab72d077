// src/python/autograd_call.cpp — the autograd side of a call: what the node keeps, and the
// forward / backward / release callbacks the torch bridge runs.
#include "python/autograd_call.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "call/graph_capture.h"

namespace sg::py {

using call::ArgInfo;

namespace {

/// A gradient of zero for outputs torch passes no gradient for: every stride 0 over a static
/// zero buffer large enough for any element type (4x4 doubles).
alignas(64) const unsigned char kZeros[256] = {};

TensorInfo zero_view(const TensorInfo& like, void* zeros) {
    TensorInfo z = like;
    z.data = zeros;
    for (int d = 0; d < kMaxTensorRank; ++d) z.strides[d] = 0;
    return z;
}

void copy_error(const std::exception& e, char* err, size_t size) {
    std::snprintf(err, size, "%s", e.what());
}

/// Zero-fills the gradient buffers the bridge allocated (contiguous, contents unspecified: see
/// bridge_abi.h) on `stream`, one fill per run of adjacent buffers (the native bridge carves them
/// from one allocation). Buffers with `written[i]` set are skipped: the backward kernel stores
/// every element of them (GradStrategy::Store).
void zero_gradient_buffers(const AutogradCtx& c, const TensorInfo* buffers, int n, void* stream,
                           const std::vector<bool>& written) {
    struct Range {
        char* data;
        size_t bytes;
    };
    std::vector<Range> ranges;
    for (int i = 0; i < n; ++i)
        if (buffers[i].data && buffers[i].numel > 0 && !(size_t(i) < written.size() && written[size_t(i)]))
            ranges.push_back({static_cast<char*>(buffers[i].data),
                              size_t(buffers[i].numel) * size_t(dtype_size(buffers[i].dtype))});
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.data < b.data; });
    for (size_t i = 0; i < ranges.size();) {
        char* begin = ranges[i].data;
        char* end = begin + ranges[i].bytes;
        for (++i; i < ranges.size() && ranges[i].data <= end; ++i)
            end = std::max(end, ranges[i].data + ranges[i].bytes);
        // The forward kernel names the device (and its context) the buffers live on.
        call::CallPlan::zero(c.plan->forward(), begin, size_t(end - begin), stream);
    }
}

/// The scratch memory of one backward launch (CallPlan::scratch_bytes), allocated through torch
/// (the GIL is taken: torch's autograd engine calls backward without it), its first `zeroed`
/// bytes zeroed on the launch's stream.
struct ScratchBuffer {
    void* data = nullptr;
    nb::object tensor;

    ScratchBuffer(const call::CompiledKernel& kernel, size_t bytes, size_t zeroed, void* stream) {
        if (bytes == 0) return;
        nb::gil_scoped_acquire gil;
        TensorInfo info{};
        int64_t n = int64_t(bytes);
        tensor = torch_ops().empty(&n, 1, DType::UInt8, DeviceType::CUDA, kernel.loaded->device_index(), false, info);
        data = info.data;
        call::CallPlan::zero(kernel, data, zeroed, stream);
    }
    ~ScratchBuffer() {
        if (!tensor.is_valid()) return;
        nb::gil_scoped_acquire gil;
        tensor.reset();
    }
    ScratchBuffer(const ScratchBuffer&) = delete;
    ScratchBuffer& operator=(const ScratchBuffer&) = delete;
};

}  // namespace

int autograd_forward(void* p, char* err, size_t size) {
    try {
        auto* c = static_cast<AutogradCtx*>(p);
        call::CallPlan::launch(c->plan->forward(), c->forward_block, c->stream, c->plan->binding().function);
        return 0;
    } catch (const std::exception& e) {
        copy_error(e, err, size);
        return 1;
    }
}

int autograd_backward(void* p, const TensorInfo* saved, int n_inputs, const TensorInfo* grad_outputs, int n_outputs,
                      TensorInfo* grad_inputs, void* stream, char* err, size_t size) {
    try {
        auto* c = static_cast<AutogradCtx*>(p);
        void* const launch_stream = stream ? stream : c->stream;
        const call::Binding& b = c->plan->binding();
        std::vector<ArgInfo> args = c->args;
        std::vector<const TensorInfo*> grads(b.params.size(), nullptr);
        uint64_t mask = 0;
        for (int i = 0; i < n_inputs; ++i) {
            int bi = c->input_bindings[size_t(i)];
            args[size_t(b.params[size_t(bi)].arg)].tensor = saved[i];
            if (grad_inputs[i].data && b.params[size_t(bi)].requires_grad) {
                grads[size_t(bi)] = &grad_inputs[i];
                mask |= uint64_t(1) << bi;
            }
        }
        if (mask == 0) {  // no gradient asked for: the buffers are zero
            zero_gradient_buffers(*c, grad_inputs, n_inputs, launch_stream, {});
            return 0;
        }
        std::vector<TensorInfo> outs(static_cast<size_t>(n_outputs));
        std::vector<TensorInfo> result_grads(c->results.size());
        // An inout binding is an input (its old value) and an output (its written value): the
        // incoming gradient of the latter goes beside the buffer of the former.
        std::vector<const TensorInfo*> out_grads(b.params.size(), nullptr);
        bool any = false;
        for (int j = 0; j < n_outputs; ++j) {
            int bi = c->output_bindings[size_t(j)];
            const TensorInfo& like = bi < 0 ? c->results[size_t(-1 - bi)] : args[size_t(b.params[size_t(bi)].arg)].tensor;
            any |= grad_outputs[j].data != nullptr;
            outs[size_t(j)] = grad_outputs[j].data ? grad_outputs[j] : zero_view(like, c->zeros);
            if (bi < 0) result_grads[size_t(-1 - bi)] = outs[size_t(j)];
            else if (b.params[size_t(bi)].dir == lang::ParamDir::InOut) out_grads[size_t(bi)] = &outs[size_t(j)];
            else grads[size_t(bi)] = &outs[size_t(j)];
        }
        if (!any) {  // every incoming gradient is zero
            zero_gradient_buffers(*c, grad_inputs, n_inputs, launch_stream, {});
            return 0;
        }
        // Buffers the kernel stores every element of need no fill.
        std::vector<bool> written(size_t(n_inputs), false);
        for (int i = 0; i < n_inputs; ++i) {
            const call::ParamBinding& pb = b.params[size_t(c->input_bindings[size_t(i)])];
            written[size_t(i)] = grads[size_t(c->input_bindings[size_t(i)])] == &grad_inputs[i] &&
                                 pb.grad_strategy == call::GradStrategy::Store;
        }
        zero_gradient_buffers(*c, grad_inputs, n_inputs, launch_stream, written);
        call::CallPlan::Backward* found = c->plan->find_backward(mask);
        if (!found) [[unlikely]] {
            call::refuse_during_capture(b.function, "backward kernel", b.device, b.device_index, launch_stream);
            found = &c->plan->backward(mask);
        }
        call::CallPlan::Backward& bw = *found;
        call::LaunchData data;
        data.args = args.data();
        data.call_shape = c->call_shape;
        data.result_grad = result_grads.data();
        data.binding_grads = grads.data();
        data.binding_out_grads = out_grads.data();
        std::vector<uint8_t> block;
        call::CallPlan::pack(bw.kernel, bw.glue, bw.binding, data, block);
        // Deterministic CUDA reductions and ordered tables: per-block sums in scratch memory from
        // torch's allocator (stream-ordered, so it may be released as soon as the launch is enqueued).
        // Fixed-point tables' records come first (zeroed too); the header scratch points past them.
        const call::CompiledKernel& kernel = c->plan->backward_kernel(bw, block, launch_stream);
        const size_t prefix = call::CallPlan::scratch_prefix(kernel, block);
        ScratchBuffer scratch(kernel, call::CallPlan::scratch_bytes(kernel, bw.glue, bw.binding, block), prefix + 16,
                              launch_stream);
        call::CallPlan::set_scratch(block, scratch.data ? static_cast<char*>(scratch.data) + prefix : nullptr);
        // Torch runs a node's backward on its forward's stream; the native bridge passes it.
        call::CallPlan::launch(kernel, block, launch_stream, b.function);
        return 0;
    } catch (const std::exception& e) {
        copy_error(e, err, size);
        return 1;
    }
}

void autograd_release(void* p) { delete static_cast<AutogradCtx*>(p); }

/// A zero-filled buffer on a device, allocated once per device through torch and kept for the
/// process (undefined incoming gradients read it with stride 0).
void* device_zeros(TorchOps& ops, DeviceType device, int index, void* stream, const std::string& function) {
    if (device == DeviceType::CPU) return const_cast<unsigned char*>(kZeros);
    static std::vector<nb::object>* buffers = new std::vector<nb::object>();
    if (index < 0) index = 0;
    if (size_t(index) >= buffers->size()) buffers->resize(size_t(index) + 1);
    nb::object& buf = (*buffers)[size_t(index)];
    TensorInfo info{};
    int64_t n = sizeof(kZeros);
    if (!buf.is_valid() || buf.is_none()) {
        // Made inside a capture, the buffer would live in the graph's memory pool and its zero
        // fill would only be recorded, not run.
        call::refuse_during_capture(function, "zero-gradient buffer", device, index, stream);
        buf = ops.empty(&n, 1, DType::UInt8, device, index, true, info);
    } else {
        ops.describe(buf.ptr(), info);
    }
    return info.data;
}

}  // namespace sg::py
