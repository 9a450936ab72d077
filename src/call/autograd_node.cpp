// src/call/autograd_node.cpp — the autograd side of a call: the forward / backward / release
// callbacks the host's autograd engine runs, and the backward launch sequence.
#include "call/launch.h"
#include "call/autograd_node.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "call/graph_capture.h"

namespace sg::call {

namespace {

/// A gradient of zero for outputs torch passes no gradient for: every stride 0 over a static
/// zero buffer large enough for any element type (4x4 doubles).
alignas(64) const unsigned char kZeros[256] = {};

void copy_error(const std::exception& e, char* err, size_t size) { std::snprintf(err, size, "%s", e.what()); }

/// Zero fills of gradient buffers issued so far (gradient_fills()).
std::atomic<uint64_t> g_gradient_fills{0};

/// A T kept per thread and lent to one backward at a time, so that a backward after warm-up
/// allocates none of its host-side arrays (torch runs CPU backwards on the calling thread, CUDA
/// ones on one engine thread per device). A backward reached while the thread's T is lent (it
/// never is today: nothing in a backward calls back into one) gets a T of its own.
template <class T> class Lease {
public:
    Lease() : value_(slot().busy ? own_.emplace() : slot().value) {
        if (&value_ == &slot().value) slot().busy = true;
    }
    ~Lease() {
        if (&value_ == &slot().value) slot().busy = false;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    T& operator*() { return value_; }

private:
    struct Slot {
        T value;
        bool busy = false;
    };
    static Slot& slot() {
        thread_local Slot s;
        return s;
    }
    std::optional<T> own_;
    T& value_;
};

/// The arrays of autograd_backward.
struct BackwardArrays {
    std::vector<ArgInfo> args;
    std::vector<const TensorInfo*> grads, out_grads;
    std::vector<TensorInfo> outs, result_grads;
    std::vector<bool> written;
};
/// The parameter block of run_backward.
struct BlockBytes {
    std::vector<uint8_t> bytes;
};

/// The scratch memory of one backward launch (launch::scratch_bytes), allocated through the
/// host from any thread (torch's autograd engine calls backward without the GIL), its first
/// `zeroed` bytes zeroed on the launch's stream.
struct ScratchBuffer {
    void* data = nullptr;
    HostRef tensor;

    ScratchBuffer(Host& host, const CompiledKernel& kernel, size_t bytes, size_t zeroed, void* stream) {
        if (bytes == 0) return;
        TensorInfo info{};
        int64_t n = int64_t(bytes);
        tensor = HostRef(host, host.empty_unlocked(&n, 1, DType::UInt8, DeviceType::CUDA, kernel.loaded->device_index(), info));
        data = info.data;
        launch::zero(kernel, data, zeroed, stream);
    }
};

}  // namespace

TensorInfo zero_view(const TensorInfo& like, void* zeros) {
    TensorInfo z = like;
    z.data = zeros;
    for (int d = 0; d < kMaxTensorRank; ++d) z.strides[d] = 0;
    return z;
}

void zero_gradient_buffers(const CallPlan& plan, const TensorInfo* buffers, int n, void* stream,
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
        for (++i; i < ranges.size() && ranges[i].data <= end; ++i) end = std::max(end, ranges[i].data + ranges[i].bytes);
        // The forward kernel names the device (and its context) the buffers live on.
        launch::zero(plan.forward(), begin, size_t(end - begin), stream);
        g_gradient_fills.fetch_add(1, std::memory_order_relaxed);
    }
}

CallPlan::Backward& backward_for(CallPlan& plan, uint64_t mask, void* stream) {
    CallPlan::Backward* found = plan.find_backward(mask);
    if (!found) [[unlikely]] {
        const Binding& b = plan.binding();
        refuse_during_capture(b.function, "backward kernel", b.device, b.device_index, stream);
        found = &plan.backward(mask);
    }
    return *found;
}

bool stores_every_entry(const CallPlan::Backward& bw, int binding, const TensorInfo& buffer, const int64_t* call_shape) {
    for (const codegen::StoredGrad& s : bw.kernel.generated.stored_grads) {
        if (size_t(s.param) >= bw.glue.params.size()) continue;
        const GlueParam& g = bw.glue.params[size_t(s.param)];
        if (g.source != ParamSource::ArgTensor || g.binding != binding) continue;
        if (buffer.ndim != s.rank) return false;
        for (int d = 0; d < s.rank; ++d)
            if (buffer.shape[d] != call_shape[s.dims[d]]) return false;
        return true;
    }
    return false;
}

void run_backward(Host& host, CallPlan& plan, const BackwardLaunch& l) {
    const Binding& b = plan.binding();
    CallPlan::Backward& bw = l.backward ? *l.backward : backward_for(plan, l.mask, l.stream);
    LaunchData data;
    data.args = l.args;
    data.call_shape = l.call_shape;
    data.result_grad = l.result_grads;
    data.binding_grads = l.binding_grads;
    data.binding_out_grads = l.binding_out_grads;
    Lease<BlockBytes> lease;
    std::vector<uint8_t>& block = (*lease).bytes;
    launch::pack(bw.kernel, bw.glue, bw.binding, data, block);
    // Deterministic CUDA reductions and ordered tables: per-block sums in scratch memory from the
    // host's allocator (stream-ordered, so it may be released as soon as the launch is enqueued).
    // Fixed-point tables' records come first (zeroed too); the header scratch points past them.
    const CompiledKernel& kernel = plan.backward_kernel(bw, block, l.stream);
    const size_t prefix = launch::scratch_prefix(kernel, block);
    ScratchBuffer scratch(host, kernel, launch::scratch_bytes(kernel, bw.glue, bw.binding, block), prefix + 16,
                          l.stream);
    launch::set_scratch(block, scratch.data ? static_cast<char*>(scratch.data) + prefix : nullptr);
    launch::run(kernel, block, l.stream, b.function);
}

int autograd_forward(void* p, char* err, size_t size) {
    try {
        auto* c = static_cast<AutogradCtx*>(p);
        launch::run(c->plan->forward(), c->forward_block, c->stream, c->plan->binding().function);
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
        // Torch runs a node's backward on its forward's stream; the native bridge passes it.
        void* const launch_stream = stream ? stream : c->stream;
        const Binding& b = c->plan->binding();
        Lease<BackwardArrays> lease;
        BackwardArrays& a = *lease;
        std::vector<ArgInfo>& args = a.args;
        args.assign(c->args.begin(), c->args.end());
        std::vector<const TensorInfo*>& grads = a.grads;
        grads.assign(b.params.size(), nullptr);
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
            zero_gradient_buffers(*c->plan, grad_inputs, n_inputs, launch_stream, {});
            return 0;
        }
        std::vector<TensorInfo>& outs = a.outs;
        outs.assign(static_cast<size_t>(n_outputs), TensorInfo{});
        std::vector<TensorInfo>& result_grads = a.result_grads;
        result_grads.assign(c->results.size(), TensorInfo{});
        // An inout binding is an input (its old value) and an output (its written value): the
        // incoming gradient of the latter goes beside the buffer of the former.
        std::vector<const TensorInfo*>& out_grads = a.out_grads;
        out_grads.assign(b.params.size(), nullptr);
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
            zero_gradient_buffers(*c->plan, grad_inputs, n_inputs, launch_stream, {});
            return 0;
        }
        // Buffers the kernel stores every element of need no fill: elementwise gradients, and
        // tables read only at the call element's own index, shaped as the call.
        CallPlan::Backward& bw = backward_for(*c->plan, mask, launch_stream);
        std::vector<bool>& written = a.written;
        written.assign(size_t(n_inputs), false);
        for (int i = 0; i < n_inputs; ++i) {
            const int bi = c->input_bindings[size_t(i)];
            const ParamBinding& pb = b.params[size_t(bi)];
            written[size_t(i)] = grads[size_t(bi)] == &grad_inputs[i] &&
                                 (pb.grad_strategy == GradStrategy::Store ||
                                  (pb.grad_strategy == GradStrategy::Collide &&
                                   stores_every_entry(bw, bi, grad_inputs[i], c->call_shape)));
        }
        zero_gradient_buffers(*c->plan, grad_inputs, n_inputs, launch_stream, written);
        BackwardLaunch l;
        l.args = args.data();
        l.call_shape = c->call_shape;
        l.result_grads = result_grads.data();
        l.binding_grads = grads.data();
        l.binding_out_grads = out_grads.data();
        l.mask = mask;
        l.stream = launch_stream;
        l.backward = &bw;
        run_backward(*c->host, *c->plan, l);
        return 0;
    } catch (const std::exception& e) {
        copy_error(e, err, size);
        return 1;
    }
}

uint64_t gradient_fills() { return g_gradient_fills.load(std::memory_order_relaxed); }

void autograd_release(void* p) { delete static_cast<AutogradCtx*>(p); }

void* device_zeros(Host& host, DeviceType device, int index, void* stream, const std::string& function) {
    if (device == DeviceType::CPU) return const_cast<unsigned char*>(kZeros);
    // One buffer per device, kept for the process (never released: the host may be gone at exit).
    static std::vector<void*>* buffers = new std::vector<void*>();
    if (index < 0) index = 0;
    if (size_t(index) >= buffers->size()) buffers->resize(size_t(index) + 1, nullptr);
    void*& data = (*buffers)[size_t(index)];
    if (!data) {
        // Made inside a capture, the buffer would live in the graph's memory pool and its zero
        // fill would only be recorded, not run.
        refuse_during_capture(function, "zero-gradient buffer", device, index, stream);
        TensorInfo info{};
        int64_t n = sizeof(kZeros);
        (void)host.empty(&n, 1, DType::UInt8, device, index, true, info);  // the reference is kept
        data = info.data;
    }
    return data;
}

}  // namespace sg::call
