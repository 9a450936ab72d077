// tests/cpp/test_invoke.cpp — the call layer's entries (call::invoke, call::invoke_backward)
// driven from C++ alone, through a host over plain memory: plan caching by key, result
// allocation, the autograd node's callbacks, and the backward entry agreeing with them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "call/errors.h"
#include "call/invoke.h"
#include "../support/bound_calls.h"

namespace sg {
namespace {

using call::ArgInfo;
using test::tensor_arg;
using test::tensor_info;

/// A host whose tensors are malloc'd blocks and whose autograd node is the spec itself.
class MemoryHost final : public call::Host {
public:
    bool grad = false;
    int empties = 0;
    int clones = 0;
    std::vector<call::AutogradSpec> nodes;  ///< its arrays are valid only during the attach
    std::vector<std::vector<void*>> node_outputs;
    std::vector<std::vector<uint8_t>> node_takes_grad;  ///< per node, per input (spec.input_takes_grad)
    std::vector<std::string> warnings;                 ///< warn_not_differentiable messages
    std::map<void*, TensorInfo> infos;

    ~MemoryHost() override {
        for (call::AutogradSpec& s : nodes) s.release(s.ctx);
        for (auto& [object, info] : infos) std::free(info.data);
    }
    void* empty(const int64_t* shape, int ndim, DType dtype, DeviceType device, int, bool zero,
                TensorInfo& out) override {
        ++empties;
        std::vector<int64_t> s(shape, shape + ndim);
        int64_t n = 1;
        for (int64_t e : s) n *= e;
        void* data = zero ? std::calloc(size_t(n ? n : 1), size_t(dtype_size(dtype)))
                          : std::malloc(size_t(n ? n : 1) * size_t(dtype_size(dtype)));
        out = tensor_info(s, data, dtype, false, device);
        for (int d = 0; d < ndim; ++d) out.strides[d] = 1;
        int64_t stride = 1;
        for (int d = ndim - 1; d >= 0; --d) {
            out.strides[d] = stride;
            stride *= shape[d];
        }
        out.is_leaf = 1;
        void* object = data;  // the data pointer stands for the object
        infos[object] = out;
        return object;
    }
    void* empty_unlocked(const int64_t* shape, int ndim, DType dtype, DeviceType device, int index,
                         TensorInfo& out) override {
        return empty(shape, ndim, dtype, device, index, false, out);
    }
    void describe(void* tensor, TensorInfo& out) override { out = infos.at(tensor); }
    void* clone(void* tensor) override {
        ++clones;
        return tensor;
    }
    void release(void*) override {}  // freed with the host
    void* current_stream(DeviceType, int) override { return nullptr; }
    bool grad_enabled() override { return grad; }
    void attach_autograd(const call::AutogradSpec& spec, std::vector<void*>&) override {
        char err[256] = {};
        if (spec.forward(spec.ctx, err, sizeof(err)) != 0) {
            spec.release(spec.ctx);
            throw std::runtime_error(err);
        }
        nodes.push_back(spec);
        node_outputs.emplace_back(spec.outputs, spec.outputs + spec.n_outputs);
        node_takes_grad.emplace_back(spec.input_takes_grad, spec.input_takes_grad + spec.n_inputs);
    }
    void warn_not_differentiable(const std::string& message) override { warnings.push_back(message); }
};

constexpr const char* kSource = R"(
[Differentiable]
float mul(float a, float b) { return a * b * 2.0; }
float plain(float a, no_diff float b) { return a + b; }
)";

struct Fixture {
    std::shared_ptr<call::UserModule> module = std::make_shared<call::UserModule>("invoke", kSource);
    std::shared_ptr<call::FunctionState> fn;
    MemoryHost host;
    std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8};
    std::vector<std::string> keywords;

    explicit Fixture(const char* function = "mul") {
        call::Callee callee;
        EXPECT_TRUE(call::parse_callee(*module, function, callee));
        fn = call::FunctionState::make(module, callee, DeviceType::CPU, -1, {});
    }
    std::vector<ArgInfo> args(bool grad_a, bool grad_b) {
        std::vector<ArgInfo> out{tensor_arg(tensor_info({4}, a.data(), DType::Float32, grad_a)),
                                 tensor_arg(tensor_info({4}, b.data(), DType::Float32, grad_b))};
        out[0].object = a.data();
        out[1].object = b.data();
        out[0].tensor.is_leaf = out[1].tensor.is_leaf = 1;
        return out;
    }
    call::CallArgs call_args(const std::vector<ArgInfo>& args) {
        call::CallArgs c;
        c.args = args.data();
        c.count = c.total = c.positional = args.size();
        c.keywords = &keywords;
        return c;
    }
};

const float* data_of(const MemoryHost& host, void* object) {
    return static_cast<const float*>(host.infos.at(object).data);
}

TEST(Invoke, ForwardAllocatesTheResultAndCachesThePlan) {
    Fixture f;
    std::vector<ArgInfo> args = f.args(false, false);
    call::CallOutcome out;
    call::invoke(f.host, *f.fn, {}, f.call_args(args), false, out);
    ASSERT_EQ(out.results.size(), 1u);
    EXPECT_FALSE(out.autograd);
    const float* r = data_of(f.host, out.results[0].get());
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r[i], f.a[size_t(i)] * f.b[size_t(i)] * 2.0f);
    call::invoke(f.host, *f.fn, {}, f.call_args(args), false, out);
    EXPECT_EQ(f.fn->plans.size(), 1u);  // the same key: the cached plan
    call::Modifiers deterministic;
    call::CallModifiers m;
    m.deterministic = true;
    deterministic.set(m);
    EXPECT_FALSE(deterministic.empty());
    call::invoke(f.host, *f.fn, deterministic, f.call_args(args), false, out);
    EXPECT_EQ(f.fn->plans.size(), 2u);  // a modifier that changes the kernel: a key of its own
}

TEST(Invoke, AutogradNodeAndBackwardEntryAgree) {
    Fixture f;
    f.host.grad = true;
    std::vector<ArgInfo> args = f.args(true, false);  // only `a` requires grad
    call::CallOutcome out;
    call::invoke(f.host, *f.fn, {}, f.call_args(args), true, out);
    EXPECT_TRUE(out.autograd);
    ASSERT_EQ(f.host.nodes.size(), 1u);
    const call::AutogradSpec& node = f.host.nodes[0];
    ASSERT_EQ(node.n_inputs, 2);   // both tensors are read
    ASSERT_EQ(node.n_outputs, 1);  // the result
    EXPECT_EQ(f.host.node_outputs[0][0], out.results[0].get());
    // `b` is read (saved) but takes no gradient: the host gives it no edge and no buffer.
    EXPECT_EQ(f.host.node_takes_grad[0], (std::vector<uint8_t>{1, 0}));

    // The node's backward: the gradient of the result is 1, 2, 3, 4; only `a` asks for one.
    std::vector<float> grad_result{1, 2, 3, 4}, grad_a(4, -1.0f);
    TensorInfo saved[2] = {args[0].tensor, args[1].tensor};
    TensorInfo grad_out = tensor_info({4}, grad_result.data(), DType::Float32, false);
    TensorInfo grad_in[2] = {tensor_info({4}, grad_a.data(), DType::Float32, false), TensorInfo{}};
    char err[256] = {};
    ASSERT_EQ(node.backward(node.ctx, saved, 2, &grad_out, 1, grad_in, nullptr, err, sizeof(err)), 0) << err;
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(grad_a[size_t(i)], grad_result[size_t(i)] * f.b[size_t(i)] * 2.0f);

    // The backward entry, without a forward: the same gradient, a new tensor for `a` only.
    const size_t empties = size_t(f.host.empties);
    call::BackwardOutcome back;
    call::invoke_backward(f.host, *f.fn, {}, f.call_args(args), &grad_out, 1, nullptr, back);
    EXPECT_TRUE(back.differentiated);
    ASSERT_EQ(back.grads.size(), 1u);
    EXPECT_EQ(back.grads[0].first, 0);
    EXPECT_EQ(size_t(f.host.empties), empties + 1);
    const float* g = data_of(f.host, back.grads[0].second.get());
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(g[i], grad_a[size_t(i)]);
    EXPECT_EQ(f.fn->plans.size(), 1u);  // the forward's plan serves its backward
}

TEST(Invoke, AFunctionWithoutDifferentiableWarnsOncePerFunction) {
    Fixture f("plain");
    f.host.grad = true;
    call::CallOutcome out;
    std::vector<ArgInfo> no_grad = f.args(false, true);  // only the no_diff parameter requires grad
    call::invoke(f.host, *f.fn, {}, f.call_args(no_grad), true, out);
    std::vector<ArgInfo> grad_off = f.args(true, false);
    call::invoke(f.host, *f.fn, {}, f.call_args(grad_off), false, out);  // grad mode off
    EXPECT_TRUE(f.host.warnings.empty());
    std::vector<ArgInfo> args = f.args(true, false);
    for (int k = 0; k < 3; ++k) {
        call::invoke(f.host, *f.fn, {}, f.call_args(args), true, out);
        EXPECT_FALSE(out.autograd);
        EXPECT_FLOAT_EQ(data_of(f.host, out.results[0].get())[1], 8.0f);
    }
    ASSERT_EQ(f.host.warnings.size(), 1u);
    EXPECT_NE(f.host.warnings[0].find("plain() is not [Differentiable]"), std::string::npos) << f.host.warnings[0];
    EXPECT_NE(f.host.warnings[0].find("parameter 'a'"), std::string::npos) << f.host.warnings[0];
    EXPECT_EQ(f.fn->plans.size(), 3u);  // the decision is the plan's: calls after the first look nothing up
}

TEST(Invoke, BackwardEntryBroadcastsTheResultGradient) {
    Fixture f;
    std::vector<ArgInfo> args = f.args(true, true);
    float one = 3.0f;
    TensorInfo grad_out = tensor_info({1}, &one, DType::Float32, false);
    call::BackwardOutcome back;
    call::invoke_backward(f.host, *f.fn, {}, f.call_args(args), &grad_out, 1, nullptr, back);
    ASSERT_EQ(back.grads.size(), 2u);
    const float* ga = data_of(f.host, back.grads[0].second.get());
    const float* gb = data_of(f.host, back.grads[1].second.get());
    for (int i = 0; i < 4; ++i) {
        EXPECT_FLOAT_EQ(ga[i], 3.0f * f.b[size_t(i)] * 2.0f);
        EXPECT_FLOAT_EQ(gb[i], 3.0f * f.a[size_t(i)] * 2.0f);
    }
}

TEST(Invoke, BackwardEntryRejectsAMismatchedResultGradient) {
    Fixture f;
    std::vector<ArgInfo> args = f.args(true, false);
    std::vector<float> wrong(3, 1.0f);
    TensorInfo grad_out = tensor_info({3}, wrong.data(), DType::Float32, false);
    call::BackwardOutcome back;
    try {
        call::invoke_backward(f.host, *f.fn, {}, f.call_args(args), &grad_out, 1, nullptr, back);
        FAIL() << "expected an error";
    } catch (const call::CallError& e) {
        EXPECT_NE(std::string(e.what()).find("mul(): the gradient of the result has extent 3 in dimension 0 where the "
                                             "result has 4"),
                  std::string::npos)
            << e.what();
    }
    std::vector<double> doubles(4, 1.0);
    grad_out = tensor_info({4}, doubles.data(), DType::Float64, false);
    EXPECT_THROW(call::invoke_backward(f.host, *f.fn, {}, f.call_args(args), &grad_out, 1, nullptr, back),
                 call::CallError);
}

TEST(Invoke, BackwardEntryWithoutGradientsDoesNothing) {
    Fixture f;
    std::vector<ArgInfo> args = f.args(false, false);
    call::BackwardOutcome back;
    call::invoke_backward(f.host, *f.fn, {}, f.call_args(args), nullptr, 0, nullptr, back);
    EXPECT_FALSE(back.differentiated);
    EXPECT_TRUE(back.grads.empty());
}

}  // namespace
}  // namespace sg
