// tests/cpp/test_driver.cpp — the compiler driver (src/driver): one IR pass pipeline with every
// pass, run by each of its callers — the call layer's kernel compiles, shadegradc (run as a
// process: --print-passes) and the test pipeline the fuzzer and the limits tests use — and the
// shared concrete parameter types.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/frontend_pipeline.h"
#include "call/binder.h"
#include "call/compile_kernel.h"
#include "call/glue.h"
#include "driver/driver.h"
#include "driver/pipeline.h"
#include "runtime/host_compiler.h"

namespace sg::test {
namespace {

const std::vector<std::string> kPasses = {"inline_calls", "strip_detach", "dead_code", "cse", "pair_sincos"};

constexpr const char* kSinModule = "[Differentiable]\nfloat wave(float x) { return sin(x) * x; }\n";

TEST(Driver, ThePipelineHasEveryPassInOrder) {
    const driver::Pipeline& p = driver::pipeline();
    EXPECT_EQ(&p, &driver::pipeline());  // one process-wide object
    EXPECT_EQ(p.names(), kPasses);
    for (const driver::Pass& pass : p.passes()) EXPECT_NE(pass.run, nullptr) << pass.name;
}

TEST(Driver, ShadegradcPrintsThePipelineItRuns) {
    runtime::ProcessResult r = runtime::run_process({SG_SHADEGRADC, "--print-passes"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::string expected;
    for (const std::string& name : driver::pipeline().names()) expected += name + "\n";
    EXPECT_EQ(r.output, expected);
}

TEST(Driver, TheTestPipelineRunsThePipeline) {
    FrontendOptions options;
    options.differentiate_all = true;
    options.verify = true;
    uint64_t before = driver::pipeline().functions_run();
    FrontendResult r = run_frontend("wave.slang", kSinModule, options);
    ASSERT_TRUE(r.ok) << r.diagnostics;
    EXPECT_EQ(r.pipeline, &driver::pipeline());
    EXPECT_EQ(r.ir_functions, 3u);  // wave, fwd_wave, bwd_wave
    EXPECT_EQ(driver::pipeline().functions_run() - before, r.ir_functions);
}

TEST(Driver, TheCallLayerRunsThePipeline) {
    call::UserModule m("wave", kSinModule);
    call::ArgInfo x;
    x.kind = call::ArgKind::Tensor;
    x.tensor.ndim = 1;
    x.tensor.shape[0] = 8;
    x.tensor.dtype = DType::Float32;
    x.tensor.device_type = DeviceType::CPU;
    x.tensor.device_index = -1;
    x.tensor.requires_grad = true;
    call::Binding b = call::bind_call(m, "wave", &x, 1, 1, {}, true, DeviceType::CPU);
    uint64_t before = driver::pipeline().functions_run();
    call::CompiledKernel k = call::generate(m, call::make_backward_glue(b), DeviceType::CPU, {});
    EXPECT_EQ(driver::pipeline().functions_run() - before, 1u);  // the kernel; its callees are inlined
    // The backward of sin needs sin(x) (recomputed) and cos(x): cse and pair_sincos ran.
    EXPECT_NE(k.ir_text.find("sincos"), std::string::npos) << k.ir_text;
}

TEST(Driver, PassHooksRunAfterEveryPassInOrder) {
    lang::SourceManager sources;
    lang::AstContext ast;
    lang::TypeContext types;
    lang::Diagnostics diags;
    driver::Input input;
    input.roots.push_back({"wave.slang", kSinModule, "", nullptr, nullptr});
    driver::Options options;
    options.emit_ir = options.emit_code = false;
    driver::Result r;
    driver::compile({sources, ast, types, diags}, input, options, r);
    ASSERT_EQ(r.entries.size(), 1u);
    std::vector<std::string> ran;
    driver::PassHooks hooks;
    hooks.verify = true;
    hooks.after_each = [&](const driver::Pass& pass, const ir::Function& fn) {
        EXPECT_EQ(&fn, r.entries[0]);
        ran.push_back(pass.name);
    };
    driver::pipeline().run(*r.entries[0], hooks);
    EXPECT_EQ(ran, kPasses);
}

// IDiffTensor<float, 1> → a DiffTensor with its gradient buffer: what shadegradc and the fuzzer
// compile an interface tensor function with (the test pipeline skips it unless asked).
TEST(Driver, ConcreteParamsBindEveryBuffer) {
    const char* source = "float lut(int i, IDiffTensor<float, 1> table) { return table[i]; }\n";
    lang::SourceManager sources;
    lang::AstContext ast;
    lang::TypeContext types;
    lang::Diagnostics diags;
    driver::Input input;
    input.roots.push_back({"lut.slang", source, "", nullptr, nullptr});
    driver::Options options;
    options.emit_ir = options.emit_code = false;
    driver::Result r;
    driver::compile({sources, ast, types, diags}, input, options, r);
    ASSERT_EQ(r.entries.size(), 1u);
    const lang::Type* table = r.entries[0]->params[1].type;
    ASSERT_TRUE(table->is_tensor());
    EXPECT_FALSE(table->tensor.interface);
    EXPECT_TRUE(table->tensor.has_grad);

    FrontendOptions skip;
    EXPECT_EQ(run_frontend("lut.slang", source, skip).ir_functions, 0u);
    FrontendOptions concrete;
    concrete.concrete_tensors = true;
    EXPECT_EQ(run_frontend("lut.slang", source, concrete).ir_functions, 1u);
}

TEST(Driver, EveryDerivativeModeUsesCustomDerivativesAsWritten) {
    // The fuzzer's mode (both derivatives of every differentiable function) takes a custom
    // backward as written, as a call does: the body it replaces, here a loop without [MaxIters],
    // is not differentiated (it stopped with "differentiable loop without MaxIters").
    const char* source = R"(
[BackwardDerivative(power_bwd)]
float power(float x, uint n)
{
    float r = 1.0;
    for (uint j = 0; j < n; j++) r *= x;
    return r;
}
void power_bwd(inout DifferentialPair<float> x, uint n, float dOut)
{
    x = diffPair(x.p, dOut * float(n) * pow(x.p, float(n) - 1.0));
}
[Differentiable]
float twice(float x, uint n) { return power(x, n) * 2.0; }
)";
    FrontendOptions options;
    options.concrete_tensors = true;
    options.differentiate_all = true;
    options.verify = true;
    options.print_ir = true;
    FrontendResult r = run_frontend("custom_bwd_loop.slang", source, options);
    EXPECT_TRUE(r.ok) << r.diagnostics;
    EXPECT_GE(r.ir_functions, 3u);  // power, power_bwd, twice and twice's derivatives
}

}  // namespace
}  // namespace sg::test
