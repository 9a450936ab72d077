// tests/cpp/test_global_glue.cpp — module parameters bound by the call layer (global_bindings.h):
// the glue of a call whose function uses global buffers and uniform globals, directly or through
// callees, assigns each global before the call; its forward and backward CUDA compile with NVRTC
// (the CPU backend runs the same glue in tests/python/test_global_bindings.py). The binding's
// errors name the function and the global; a global's value is part of the key only through its
// kind, dtype and rank.
#include <gtest/gtest.h>

#include "../support/bound_calls.h"
#include "../support/cuda_compile_check.h"
#include "call/call_key.h"
#include "call/call_plan.h"
#include "call/compile_kernel.h"
#include "call/errors.h"
#include "call/global_bindings.h"
#include "call/glue.h"

namespace sg::test {
namespace {

const char* const kModule = R"(
RWStructuredBuffer<float> g_table;
Tensor<float, 2> g_weights;
float g_scale;
uniform float3 g_color;
struct Light { float3 dir; float power; }
Light g_light;
float lookup(int i) { return g_table[i]; }
[Differentiable]
float shade(float3 n, int i) { return g_light.power * dot(n, g_light.dir) * g_scale + no_diff(lookup(i)); }
[Differentiable]
float3 tinted(float3 c, int r) { return g_color * c * g_weights[r, 0]; }
float plain(float x) { return x; }
)";

/// Binds `fn` with `args` (positional) followed by the globals' values `globals` (keywords "@name").
Call bind_with_globals(const call::UserModule& m, const std::string& fn, std::vector<ArgInfo> args,
                       const std::vector<std::pair<std::string, ArgInfo>>& globals, DeviceType device,
                       std::vector<std::string>& keywords) {
    const size_t positional = args.size();
    keywords.clear();
    for (const auto& [name, value] : globals) {
        keywords.push_back(std::string(1, call::kGlobalMarker).append(name));
        args.push_back(value);
    }
    Call c{std::move(args), {}};
    c.binding = call::bind_call(m, fn, c.args.data(), positional, c.args.size(), keywords, true, device);
    return c;
}

void expect_cuda(const call::UserModule& m, const Call& c, bool backward, const std::string& contains) {
    codegen::CodegenOptions base;
    base.call_rank = c.binding.call_rank;
    call::Glue glue = backward ? call::make_backward_glue(c.binding) : call::make_forward_glue(c.binding);
    EXPECT_NE(glue.source.find(contains), std::string::npos) << glue.source;
    call::CompiledKernel k = call::generate(m, glue, DeviceType::CUDA, call::kernel_options(base, glue));
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << k.generated.source.substr(k.generated.body_begin);
}

TEST(GlobalGlue, BuffersAndUniformsCompileForCudaForwardAndBackward) {
    call::UserModule m("global_glue", kModule);
    std::vector<std::string> keywords;
    // A struct uniform given field by field (a dict), a scalar uniform and a buffer used by a callee.
    ArgInfo light;
    light.kind = call::ArgKind::Dict;
    light.first_child = 5;
    light.child_count = 2;
    Call c{};
    {
        std::vector<ArgInfo> args = {cuda_tensor_arg({8, 3}, DType::Float32, true),
                                     cuda_tensor_arg({8}, DType::Int32, false)};
        const size_t positional = args.size();
        keywords = {"@g_light", "@g_scale", "@g_table"};
        args.push_back(light);
        args.push_back(float_arg(2.0));
        args.push_back(cuda_tensor_arg({16}, DType::Float32, false));
        ArgInfo dir = cuda_tensor_arg({3}, DType::Float32, false);
        dir.name = "dir";
        dir.name_size = 3;
        ArgInfo power = float_arg(0.5);
        power.name = "power";
        power.name_size = 5;
        args.push_back(dir);
        args.push_back(power);
        c.args = std::move(args);
        c.binding = call::bind_call(m, "shade", c.args.data(), positional, 5, keywords, true, DeviceType::CUDA);
    }
    ASSERT_TRUE(c.binding.autograd);
    for (const call::ParamBinding& p : c.binding.params) {
        if (p.param < 2) continue;
        EXPECT_FALSE(p.requires_grad || p.differentiable) << p.name;  // no gradient to a global
    }
    expect_cuda(m, c, false, "g_light = ");
    expect_cuda(m, c, true, "g_table = ");

    Call t = bind_with_globals(m, "tinted", {cuda_tensor_arg({4, 3}, DType::Float32, true), int_arg(1)},
                               {{"g_color", cuda_tensor_arg({3}, DType::Float32, false)},
                                {"g_weights", cuda_tensor_arg({5, 1}, DType::Float32, false)}},
                               DeviceType::CUDA, keywords);
    expect_cuda(m, t, false, "g_color = ");
    expect_cuda(m, t, true, "g_weights = ");
}

TEST(GlobalGlue, ErrorsNameTheFunctionAndTheGlobal) {
    call::UserModule m("global_glue", kModule);
    std::vector<std::string> keywords;
    auto message = [&](const std::string& fn, std::vector<ArgInfo> args,
                       const std::vector<std::pair<std::string, ArgInfo>>& globals) -> std::string {
        try {
            bind_with_globals(m, fn, std::move(args), globals, DeviceType::CPU, keywords);
        } catch (const call::CallError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(message("lookup", {int_arg(0)}, {}).find("lookup(): it uses global buffer 'g_table' "
                                                       "(RWStructuredBuffer<float>, line 2), which the call does not bind"),
              std::string::npos);
    EXPECT_NE(message("lookup", {int_arg(0)}, {{"g_table", tensor_arg(tensor_info({4}, nullptr, DType::Float64, false))}})
                  .find("lookup(): global 'g_table' of type RWStructuredBuffer<float> needs a float32 tensor"),
              std::string::npos);
    EXPECT_NE(message("tinted", {tensor_arg(tensor_info({4, 3}, nullptr, DType::Float32, false)), int_arg(0)},
                      {{"g_color", tensor_arg(tensor_info({4, 3}, nullptr, DType::Float32, false))},
                       {"g_weights", tensor_arg(tensor_info({5, 1}, nullptr, DType::Float32, false))}})
                  .find("tinted(): global 'g_color' of type float3 takes one value per call"),
              std::string::npos);
    // A value for a global the function does not use is ignored.
    EXPECT_EQ(message("plain", {float_arg(1.0)}, {{"g_scale", float_arg(2.0)}}), "");
}

TEST(GlobalGlue, KeyCarriesKindDtypeAndRankNotTheTensor) {
    auto key = [](std::vector<int64_t> shape, DType dtype) {
        std::vector<ArgInfo> args = {int_arg(0), tensor_arg(tensor_info(std::move(shape), nullptr, dtype, false))};
        call::CallKey k;
        call::build_call_key(k, 1, args.data(), 2, 2, {"@g_table"}, false, 0);
        return k.bytes;
    };
    EXPECT_EQ(key({100}, DType::Float32), key({200}, DType::Float32));
    EXPECT_NE(key({100}, DType::Float32), key({100}, DType::Float64));
    EXPECT_NE(key({100}, DType::Float32), key({100, 2}, DType::Float32));
}

}  // namespace
}  // namespace sg::test
