// tests/cpp/test_instance_glue.cpp — the glue of SlangPy's instance calls: a struct constructor
// called through its function object (`Particle.__init`, called by the struct's name), and a
// [mutating] method whose `this` is given field by field (a dict of tensors: an inout struct
// whose tensor fields are written back after the call). The binding of each, the glue text, the
// refusal of gradients through a field-by-field inout struct, and the generated CUDA compiled by
// NVRTC (the Python tests run the same calls on the CPU backend: test_instances.py).
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/bound_calls.h"
#include "../support/cuda_compile_check.h"
#include "call/binder.h"
#include "call/call_plan.h"
#include "call/compile_kernel.h"
#include "call/errors.h"
#include "call/glue.h"
#include "call/user_module.h"

namespace sg::test {
namespace {

const char* kModule = R"(
struct Particle
{
    float3 position;
    float3 velocity;
    __init(float3 p, float3 v) { position = p; velocity = v; }
    __init(float3 p) { position = p; velocity = float3(0); }
    [mutating] void update(float dt) { position += velocity * dt; }
    float speed() { return length(velocity); }
};
struct Body : IDifferentiable
{
    float x;
    float v;
    [Differentiable] [mutating] void step(float dt) { x = x + v * dt; }
};
float3 position_of(Particle p) { return p.position; }
[Differentiable] float energy(Body b, float k) { return b.x * b.x * k + b.v; }
)";

/// Arguments: `this` as a dict {position, velocity} of (N, 3) CUDA tensors (children after the
/// top-level arguments), then `rest`.
std::vector<ArgInfo> this_dict(std::vector<const char*> fields, std::vector<std::vector<int64_t>> shapes,
                               std::vector<ArgInfo> rest, bool requires_grad = false) {
    std::vector<ArgInfo> args;
    ArgInfo d;
    d.kind = call::ArgKind::Dict;
    d.first_child = int(1 + rest.size());
    d.child_count = int(fields.size());
    args.push_back(d);
    for (ArgInfo& a : rest) args.push_back(a);
    for (size_t k = 0; k < fields.size(); ++k) {
        ArgInfo c = cuda_tensor_arg(shapes[k], DType::Float32, requires_grad);
        c.name = fields[k];
        c.name_size = uint32_t(std::strlen(fields[k]));
        args.push_back(c);
    }
    return args;
}

ArgInfo number(double v) {
    ArgInfo a;
    a.kind = call::ArgKind::Float;
    a.number = v;
    return a;
}

call::Binding bind_top(const call::UserModule& m, const std::string& fn, std::vector<ArgInfo>& args, size_t top) {
    return call::bind_call(m, fn, args.data(), top, top, {}, true, DeviceType::CUDA, {});
}

void expect_cuda(const call::UserModule& m, const call::Binding& b, const call::Glue& glue) {
    codegen::CodegenOptions base;
    base.call_rank = b.call_rank;
    call::CompiledKernel k = call::generate(m, glue, DeviceType::CUDA, call::kernel_options(base, glue));
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << k.generated.source.substr(k.generated.body_begin);
}

TEST(InstanceGlue, ConstructorIsCalledByTheStructsName) {
    call::UserModule m("instances", kModule);
    std::vector<ArgInfo> args = {cuda_tensor_arg({16, 3}, DType::Float32, false),
                                 cuda_tensor_arg({16, 3}, DType::Float32, false)};
    call::Binding b = bind_top(m, "Particle.__init", args, 2);
    EXPECT_EQ(b.call_rank, 1);
    ASSERT_EQ(b.result_leaves.size(), 2u);  // the struct's two fields
    call::Glue g = call::make_forward_glue(b);
    EXPECT_NE(g.source.find("return Particle(__sg_a0, __sg_a1);"), std::string::npos) << g.source;
    EXPECT_EQ(g.source.find("__sg_self"), std::string::npos) << g.source;
    expect_cuda(m, b, g);
    // The one-argument overload, by the arguments.
    std::vector<ArgInfo> one = {cuda_tensor_arg({16, 3}, DType::Float32, false)};
    call::Binding b1 = bind_top(m, "Particle.__init", one, 1);
    expect_cuda(m, b1, call::make_forward_glue(b1));
}

TEST(InstanceGlue, MutatingMethodWritesTheFieldsOfADictBack) {
    call::UserModule m("instances", kModule);
    std::vector<ArgInfo> args = this_dict({"position", "velocity"}, {{16, 3}, {16, 3}}, {number(0.1)});
    call::Binding b = bind_top(m, "Particle.update", args, 2);
    EXPECT_EQ(b.call_rank, 1);
    int outputs = 0;
    for (const call::ParamBinding& p : b.params) outputs += p.is_output;
    EXPECT_EQ(outputs, 2);  // both fields of the inout `this`
    call::Glue g = call::make_forward_glue(b);
    EXPECT_NE(g.source.find("RWTensor<float3, 1>"), std::string::npos) << g.source;
    EXPECT_NE(g.source.find("_p_this_0[_c0] = _v_this.position;"), std::string::npos) << g.source;
    EXPECT_NE(g.source.find("_p_this_1[_c0] = _v_this.velocity;"), std::string::npos) << g.source;
    expect_cuda(m, b, g);
    // A non-mutating method reads the same dict.
    std::vector<ArgInfo> read = this_dict({"position", "velocity"}, {{16, 3}, {16, 3}}, {});
    call::Binding r = bind_top(m, "Particle.speed", read, 1);
    expect_cuda(m, r, call::make_forward_glue(r));
}

TEST(InstanceGlue, GradientsThroughAFieldByFieldInoutStructAreRefused) {
    call::UserModule m("instances", kModule);
    std::vector<ArgInfo> args = this_dict({"x", "v"}, {{8}, {8}}, {number(0.5)}, true);
    call::Binding b = bind_top(m, "Body.step", args, 2);
    expect_cuda(m, b, call::make_forward_glue(b));
    try {
        call::make_backward_glue(b);
        FAIL() << "expected an error";
    } catch (const call::CallError& e) {
        EXPECT_NE(std::string(e.what()).find("parameter 'this' is an out/inout struct given field by field"),
                  std::string::npos)
            << e.what();
    }
}

TEST(InstanceGlue, StructElementsFromOneTensor) {
    // A struct Tensor (or an (N, C) torch tensor) binds to a struct value parameter: each call
    // element reads its components from the last dim, and a [mutating] method writes them back.
    call::UserModule m("instances", kModule);
    std::vector<ArgInfo> read = {cuda_tensor_arg({16, 6}, DType::Float32, false)};
    call::Binding r = bind_top(m, "position_of", read, 1);
    EXPECT_EQ(r.call_rank, 1);
    EXPECT_EQ(r.params[0].kind, call::BindingKind::Elementwise);
    EXPECT_EQ(r.params[0].elem_dims, 1);
    expect_cuda(m, r, call::make_forward_glue(r));
    std::vector<ArgInfo> update = {cuda_tensor_arg({16, 6}, DType::Float32, false), number(0.5)};
    call::Binding u = bind_top(m, "Particle.update", update, 2);
    EXPECT_TRUE(u.params[0].is_output);
    expect_cuda(m, u, call::make_forward_glue(u));
    // Differentiable: the gradient of a struct element, and of an inout one.
    std::vector<ArgInfo> e = {cuda_tensor_arg({8, 2}, DType::Float32, true), cuda_tensor_arg({8}, DType::Float32, true)};
    call::Binding eb = bind_top(m, "energy", e, 2);
    EXPECT_TRUE(eb.params[0].requires_grad);
    expect_cuda(m, eb, call::make_forward_glue(eb));
    expect_cuda(m, eb, call::make_backward_glue(eb));
    std::vector<ArgInfo> s = {cuda_tensor_arg({8, 2}, DType::Float32, true), number(0.5)};
    call::Binding sb = bind_top(m, "Body.step", s, 2);
    expect_cuda(m, sb, call::make_forward_glue(sb));
    expect_cuda(m, sb, call::make_backward_glue(sb));
}

}  // namespace
}  // namespace sg::test
