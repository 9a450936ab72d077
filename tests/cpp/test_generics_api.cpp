// tests/cpp/test_generics_api.cpp — the lang service for generics that the call layer uses
// (lang/analysis.h through call::UserModule): listing a module's functions, methods and generic
// declarations with their generic parameters; instantiating a generic function with given
// arguments (concrete FunctionDecl or diagnostics); and calling every non-generic function of
// a module that also holds generics and interfaces.
#include <cstring>

#include <gtest/gtest.h>

#include "call/launch.h"
#include "call/resolve.h"
#include "call/call_key.h"
#include "call/call_plan.h"
#include "call/user_module.h"

namespace sg::test {
namespace {

const char* kModule = R"(
interface IActivation : IDifferentiable
{
    [Differentiable] float apply(float x);
};
struct Square : IActivation
{
    [Differentiable] float apply(float x) { return x * x; }
};
struct Spring : IDifferentiable
{
    float k;
    float rest;
    [Differentiable] float energy(float x) { float d = x - rest; return 0.5 * k * d * d; }
    static float unit() { return 1.0; }
};
[Differentiable] T cubic<T : IFloat>(T x, T a, T b) { return a * x * x * x + b * x; }
[Differentiable] float wsq<let N : int>(float[N] x, float[N] w)
{
    float s = 0.0;
    [ForceUnroll]
    for (int i = 0; i < N; i++)
        s += w[i] * x[i] * x[i];
    return s;
}
float apply2<A : IActivation>(A act, float x) { return act.apply(x) + act.apply(2.0 * x); }
struct Poly<let N : int> { float c[N]; };
[Differentiable] float twice(float x) { return 2.0 * x; }
float use_square(float x) { Square s; return apply2(s, x); }
float three(float a, float b, float c) { return cubic(a, b, c) + wsq<2>({a, b}, {1.0, 1.0}); }
)";

const lang::FunctionInfo* find(const std::vector<lang::FunctionInfo>& infos, const std::string& name) {
    for (const auto& f : infos)
        if (f.name == name) return &f;
    return nullptr;
}

TEST(GenericsApi, ListsFunctionsMethodsAndGenerics) {
    call::UserModule m("api", kModule);
    auto infos = m.catalog();
    const lang::FunctionInfo* cubic = find(infos, "cubic");
    ASSERT_NE(cubic, nullptr);
    EXPECT_TRUE(cubic->is_generic);
    ASSERT_EQ(cubic->generic_params.size(), 1u);
    EXPECT_EQ(cubic->generic_params[0].name, "T");
    EXPECT_FALSE(cubic->generic_params[0].is_value);
    EXPECT_EQ(cubic->generic_params[0].constraint, "IFloat");

    const lang::FunctionInfo* wsq = find(infos, "wsq");
    ASSERT_NE(wsq, nullptr);
    ASSERT_EQ(wsq->generic_params.size(), 1u);
    EXPECT_EQ(wsq->generic_params[0].name, "N");
    EXPECT_TRUE(wsq->generic_params[0].is_value);

    const lang::FunctionInfo* apply2 = find(infos, "apply2");
    ASSERT_NE(apply2, nullptr);
    EXPECT_EQ(apply2->generic_params[0].constraint, "IActivation");

    // Methods: `this` first (unless static), the struct named.
    const lang::FunctionInfo* energy = find(infos, "Spring.energy");
    ASSERT_NE(energy, nullptr);
    EXPECT_FALSE(energy->is_generic);
    ASSERT_NE(energy->owner, nullptr);
    EXPECT_EQ(energy->owner->name, "Spring");
    ASSERT_EQ(energy->decl->params.size(), 2u);
    EXPECT_EQ(energy->decl->params[0]->name, "this");
    const lang::FunctionInfo* unit = find(infos, "Spring.unit");
    ASSERT_NE(unit, nullptr);
    EXPECT_TRUE(unit->decl->params.empty());
    EXPECT_NE(find(infos, "Square.apply"), nullptr);
    // Plain functions, and no instantiation made while checking bodies (cubic<float>, wsq<2>).
    EXPECT_NE(find(infos, "twice"), nullptr);
    EXPECT_EQ(find(infos, "cubic<float>"), nullptr);
    EXPECT_EQ(find(infos, "wsq<2>"), nullptr);
    for (const std::string& n : m.function_names()) EXPECT_EQ(n.find('<'), std::string::npos) << n;
}

TEST(GenericsApi, InstantiatesWithTypesAndValues) {
    call::UserModule m("api", kModule);
    lang::TypeContext& types = m.types();
    lang::FunctionDecl* f = m.instantiate("cubic", {{types.scalar(lang::ScalarKind::Double), 0, false}});
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->name, "cubic<double>");
    EXPECT_TRUE(f->is_differentiable);
    ASSERT_EQ(f->params.size(), 3u);
    EXPECT_EQ(f->params[0]->type, types.scalar(lang::ScalarKind::Double));
    EXPECT_EQ(f->result_type, types.scalar(lang::ScalarKind::Double));
    // Cached: the same arguments give the same declaration.
    EXPECT_EQ(m.instantiate("cubic", {{types.scalar(lang::ScalarKind::Double), 0, false}}), f);

    lang::FunctionDecl* w = m.instantiate("wsq", {{nullptr, 3, true}});
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->name, "wsq<3>");
    EXPECT_EQ(w->params[0]->type, types.array(types.float32(), 3));

    const lang::Type* square = m.named_type("Square");
    ASSERT_NE(square, nullptr);
    lang::FunctionDecl* a = m.instantiate("apply2", {{square, 0, false}});
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->params[0]->type, square);
}

TEST(GenericsApi, ReportsArgumentsThatDoNotFit) {
    call::UserModule m("api", kModule);
    lang::TypeContext& types = m.types();
    auto message_of = [&](const std::string& fn, const std::vector<lang::GenericArg>& args) -> std::string {
        try {
            m.instantiate(fn, args);
        } catch (const lang::CompileError& e) {
            EXPECT_FALSE(e.diagnostics.empty());
            return e.diagnostics.empty() ? "" : e.diagnostics[0].message;
        }
        return "(instantiated)";
    };
    EXPECT_NE(message_of("cubic", {{types.int32(), 0, false}}).find("int does not conform to 'IFloat'"),
              std::string::npos);
    EXPECT_NE(message_of("apply2", {{m.named_type("Spring"), 0, false}}).find("Spring does not conform"),
              std::string::npos);
    EXPECT_NE(message_of("wsq", {{types.float32(), 0, false}}).find("no generic 'wsq' takes"), std::string::npos);
    EXPECT_NE(message_of("cubic", {}).find("no generic 'cubic' takes"), std::string::npos);
    EXPECT_NE(message_of("twice", {{types.float32(), 0, false}}).find("'twice' is not generic"), std::string::npos);
    EXPECT_NE(message_of("nothing", {}).find("no generic function 'nothing'"), std::string::npos);
    // An error inside the body names the instantiation; the module stays usable afterwards.
    EXPECT_NE(message_of("wsq", {{nullptr, 0, true}}).find("in instantiation wsq<0>"), std::string::npos);
    EXPECT_NE(m.instantiate("wsq", {{nullptr, 2, true}}), nullptr);
    EXPECT_TRUE(m.warnings().find("error") == std::string::npos) << m.warnings();
}

// Calls `fn` with Python-float arguments on the CPU backend; returns the 0-d float result.
float call_scalar(const call::UserModule& m, const std::string& fn, const std::vector<double>& values) {
    std::vector<call::ArgInfo> args(values.size());
    for (size_t k = 0; k < values.size(); ++k) {
        args[k].kind = call::ArgKind::Float;
        args[k].number = values[k];
    }
    call::Binding b =
        call::bind_call(m, fn, args.data(), args.size(), args.size(), {}, false, DeviceType::CPU);
    call::CallKey key;
    call::build_call_key(key, 0, args.data(), args.size(), args.size(), {}, false, 0);
    call::CallPlan plan(m, b, key, {});
    float out = -1;
    TensorInfo result;
    std::memset(&result, 0, sizeof(result));
    result.data = &out;
    result.ndim = 0;
    result.dtype = DType::Float32;
    result.device_type = DeviceType::CPU;
    result.device_index = -1;
    result.numel = 1;
    call::LaunchData data;
    data.args = args.data();
    data.result = &result;
    std::vector<uint8_t> block;
    call::launch::pack(plan.forward(), plan.forward_glue(), plan.binding(), data, block);
    call::launch::run(plan.forward(), block, nullptr, fn);
    return out;
}

TEST(GenericsApi, EveryNonGenericFunctionIsCallable) {
    call::UserModule m("api", kModule);
    EXPECT_FLOAT_EQ(call_scalar(m, "twice", {1.5}), 3.0f);
    EXPECT_FLOAT_EQ(call_scalar(m, "use_square", {1.5}), 11.25f);
    // cubic(1, 2, 3) = 2 + 3 = 5; wsq<2>({1, 2}, {1, 1}) = 1 + 4 = 5.
    EXPECT_FLOAT_EQ(call_scalar(m, "three", {1, 2, 3}), 10.0f);
    int plain = 0;
    for (const lang::FunctionInfo& f : m.catalog()) plain += !f.is_generic && !f.owner;
    EXPECT_EQ(plain, 3);  // the three above
}

}  // namespace
}  // namespace sg::test
