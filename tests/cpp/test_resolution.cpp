// tests/cpp/test_resolution.cpp — overload and generic resolution at the call (call/resolve.h)
// on described arguments, without Python: which declaration a call binds to, the generic
// arguments inferred, the messages for no fit and ties, explicit arguments in lookup names, and
// the element extents a plan records for the key.
#include <gtest/gtest.h>

#include "../support/cuda_compile_check.h"
#include "call/compile_kernel.h"
#include "call/errors.h"
#include "call/glue.h"
#include "call/resolve.h"

namespace sg::test {
namespace {

const char* kModule = R"(
float f(float3 v) { return v.x; }
float f(float4 v) { return v.w; }
float h(int x) { return 1.0; }
float h(float x) { return 2.0; }
float amb(float x, double y) { return 1.0; }
float amb(double x, float y) { return 2.0; }
float mix(float x) { return 1.0; }
float mix<T : IFloat>(T x) { return 2.0; }
float wsq<let N : int>(float[N] x, float[N] w) { return x[0] * w[0]; }
T cubic<T : IFloat>(T x, T a, T b) { return a * x * x * x + b * x; }
float msum<let R : int, let C : int>(matrix<float, R, C> m) { return m[0][0]; }
)";

call::ArgInfo tensor(std::vector<int64_t> shape, DType dtype = DType::Float32) {
    call::ArgInfo a;
    a.kind = call::ArgKind::Tensor;
    a.tensor.ndim = int(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) a.tensor.shape[d] = shape[d];
    a.tensor.dtype = dtype;
    a.tensor.device_type = DeviceType::CPU;
    a.tensor.device_index = -1;
    return a;
}

call::ArgInfo number(call::ArgKind kind, double v) {
    call::ArgInfo a;
    a.kind = kind;
    a.number = v;
    a.integer = int64_t(v);
    return a;
}

call::Binding bind_args(const call::UserModule& m, const std::string& fn, std::vector<call::ArgInfo> args,
                        size_t top = 0) {
    if (top == 0) top = args.size();
    return call::bind_call(m, fn, args.data(), top, top, {}, false, DeviceType::CPU);
}

std::string error_of(const call::UserModule& m, const std::string& fn, std::vector<call::ArgInfo> args,
                     size_t top = 0) {
    try {
        bind_args(m, fn, std::move(args), top);
    } catch (const call::CallError& e) {
        return e.what();
    }
    return "(bound)";
}

TEST(Resolution, OverloadsByWidthAndScalarKind) {
    call::UserModule m("res", kModule);
    EXPECT_EQ(bind_args(m, "f", {tensor({8, 3})}).decl->params[0]->type->rows, 3);
    EXPECT_EQ(bind_args(m, "f", {tensor({8, 4})}).decl->params[0]->type->rows, 4);
    EXPECT_EQ(bind_args(m, "h", {number(call::ArgKind::Int, 3)}).decl->params[0]->type->scalar,
              lang::ScalarKind::Int32);
    EXPECT_EQ(bind_args(m, "h", {number(call::ArgKind::Float, 3)}).decl->params[0]->type->scalar,
              lang::ScalarKind::Float);
    // A non-generic exact match beats the generic; only the generic takes a double tensor.
    EXPECT_EQ(bind_args(m, "mix", {number(call::ArgKind::Float, 1)}).decl->name, "mix");
    EXPECT_EQ(bind_args(m, "mix", {tensor({2}, DType::Float64)}).decl->name, "mix<double>");
}

TEST(Resolution, NoFitAndAmbiguityListTheCandidates) {
    call::UserModule m("res", kModule);
    EXPECT_EQ(
        error_of(m, "f", {tensor({2, 5})}),
        "f(): no overload fits the arguments (a float32 tensor of shape (2, 5) on cpu); the candidates:\n"
        "  float f(float3 v): parameter 'v' of type float3 needs a tensor whose last dims are (3,), got a float32 "
        "tensor of shape (2, 5) on cpu\n"
        "  float f(float4 v): parameter 'v' of type float4 needs a tensor whose last dims are (4,), got a float32 "
        "tensor of shape (2, 5) on cpu");
    EXPECT_EQ(
        error_of(m, "amb", {number(call::ArgKind::Float, 1), number(call::ArgKind::Float, 2)}),
        "amb(): the call is ambiguous: 2 overloads fit the arguments (a Python float, a Python float) equally well:\n"
        "  float amb(float x, double y)\n"
        "  float amb(double x, float y)");
}

TEST(Resolution, InfersGenericArguments) {
    call::UserModule m("res", kModule);
    // Lists: children follow the top-level arguments.
    std::vector<call::ArgInfo> args = {call::ArgInfo{}, call::ArgInfo{}};
    for (int k = 0; k < 2; ++k) {
        args[size_t(k)].kind = call::ArgKind::List;
        args[size_t(k)].first_child = 2 + 3 * k;
        args[size_t(k)].child_count = 3;
    }
    for (int i = 0; i < 6; ++i) args.push_back(number(call::ArgKind::Float, i));
    EXPECT_EQ(bind_args(m, "wsq", args, 2).decl->name, "wsq<3>");
    call::Binding b = bind_args(m, "wsq", {tensor({4, 7}), tensor({1, 7})});
    EXPECT_EQ(b.decl->name, "wsq<7>");
    // 7 is above the key's extent classes: the plan records both arguments' element extent.
    ASSERT_EQ(b.extent_checks.size(), 2u);
    EXPECT_EQ(b.extent_checks[0].arg, 0);
    EXPECT_EQ(b.extent_checks[0].dim, 1);
    EXPECT_EQ(b.extent_checks[0].extent, 7);
    EXPECT_TRUE(bind_args(m, "wsq", {tensor({4, 3}), tensor({4, 3})}).extent_checks.empty());
    EXPECT_EQ(bind_args(m, "msum", {tensor({4, 2, 3})}).decl->name, "msum<2, 3>");
    EXPECT_EQ(
        bind_args(m, "cubic", {tensor({2}, DType::Float16), tensor({2}, DType::Float16), tensor({2}, DType::Float16)})
            .decl->name,
        "cubic<half>");
    EXPECT_EQ(
        bind_args(m, "cubic",
                  {number(call::ArgKind::Int, 2), number(call::ArgKind::Float, 0.5), number(call::ArgKind::Int, 1)})
            .decl->name,
        "cubic<float>");
    EXPECT_EQ(error_of(m, "wsq", {tensor({4, 3}), tensor({4, 2})}),
              "wsq(): generic parameter 'N' is 3 from parameter 'x' but 2 from parameter 'w'");
    EXPECT_EQ(error_of(m, "cubic", {tensor({2}, DType::Int32), tensor({2}, DType::Int32), tensor({2}, DType::Int32)}),
              "cubic(): type argument int does not conform to 'IFloat' (generic parameter 'T') in 'cubic<int>'");
}

TEST(Resolution, ExplicitArgumentsInLookupNames) {
    call::UserModule m("res", kModule);
    call::Callee c;
    ASSERT_TRUE(call::parse_callee(m, " wsq < 3 > ", c));
    EXPECT_TRUE(c.explicit_args);
    EXPECT_EQ(c.text(), "wsq<3>");
    ASSERT_TRUE(call::parse_callee(m, "cubic<double>", c));
    EXPECT_EQ(c.text(), "cubic<double>");
    ASSERT_TRUE(call::parse_callee(m, "f", c));
    EXPECT_FALSE(c.explicit_args);
    EXPECT_FALSE(call::parse_callee(m, "nosuch<3>", c));
    auto message = [&](const std::string& text) -> std::string {
        try {
            call::parse_callee(m, text, c);
        } catch (const call::CallError& e) {
            EXPECT_EQ(e.kind, call::ErrorKind::Value);
            return e.what();
        }
        return "(parsed)";
    };
    EXPECT_EQ(message("wsq<float>"),
              "'wsq<float>': function 'wsq' cannot take the generic arguments wsq<float>:\n"
              "  float wsq<let N : int>(float[N] x, float[N] w): it takes <let N : int>");
    EXPECT_NE(message("cubic<int>").find("int does not conform to 'IFloat'"), std::string::npos);
    EXPECT_EQ(message("f<3>"), "'f<3>': function 'f' of module 'res' is not generic");
    EXPECT_NE(message("wsq<>").find("expected generic arguments"), std::string::npos);
    EXPECT_NE(message("wsq<N>").find("generic argument 'N' is neither an integer nor a type"), std::string::npos);
    ASSERT_TRUE(call::parse_callee(m, "wsq<3>", c));
    std::vector<lang::FunctionDecl*> decls = call::candidate_declarations(m, c);
    ASSERT_EQ(decls.size(), 1u);
    EXPECT_EQ(decls[0]->name, "wsq<3>");
}

TEST(Resolution, GenericAndOverloadedPlansCompileForCuda) {
    // The glue calls an instantiation by its name with explicit arguments ("cubic<double>(...)",
    // "bwd_diff(cubic<double>)(...)"): the generated CUDA of both kernels must compile.
    call::UserModule m("res", R"(
[Differentiable] T cubic<T : IFloat>(T x, T a, T b) { return a * x * x * x + b * x; }
[Differentiable] float wsq<let N : int>(float[N] x, float[N] w) { return x[N - 1] * w[0]; }
[Differentiable] float f(float3 v) { return v.x; }
[Differentiable] float f(float4 v) { return v.w; }
)");
    auto requires_grad = [](call::ArgInfo a) {
        a.tensor.requires_grad = true;
        return a;
    };
    std::vector<std::pair<std::string, std::vector<call::ArgInfo>>> calls = {
        {"cubic",
         {requires_grad(tensor({8}, DType::Float64)), tensor({8}, DType::Float64), tensor({8}, DType::Float64)}},
        {"wsq", {requires_grad(tensor({8, 6})), tensor({8, 6})}},
        {"f", {requires_grad(tensor({8, 4}))}},
    };
    for (auto& [fn, args] : calls) {
        call::Binding b = call::bind_call(m, fn, args.data(), args.size(), args.size(), {}, true, DeviceType::CPU);
        ASSERT_TRUE(b.autograd) << fn;
        for (const call::Glue& glue : {call::make_forward_glue(b), call::make_backward_glue(b)}) {
            call::CompiledKernel k = call::generate(m, glue, DeviceType::CUDA, {});
            bool skipped = false;
            EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << b.function << "\n" << glue.source;
        }
    }
}

}  // namespace
}  // namespace sg::test
