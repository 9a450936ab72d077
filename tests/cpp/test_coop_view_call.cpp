// tests/cpp/test_coop_view_call.cpp — the glue that runs a function taking views without being a
// [CUDAKernel] function (call/view_call.cpp: SlangPy's calls of such functions): its primal and
// derivative glue compiled for the CPU (run over partial blocks, the function's own bound check
// keeping the extra threads out) and for CUDA with NVRTC; a 2-D grid's coordinate (.x the last
// dimension), per-element tensors read through views (scalars, vectors, beside a grid), and a
// backward through DiffTensorViews in a loop; the derivative of a result (stored through a
// DiffTensorView whose gradient the backward takes) and of a per-element vector read through a
// broadcast DiffTensorView; out and inout parameters written per call, and a matrix result.
#include "call/coop_launch.h"
#include "call/compile_kernel.h"
#include "call/errors.h"
#include "call/user_module.h"
#include "coop_harness.h"

namespace sg::test {
namespace {

/// The declaration of `name` in `source` (the front end run over every function).
struct Declared {
    CoopKernel front;
    const lang::FunctionDecl* decl = nullptr;
    Declared(const std::string& source, const std::string& name) {
        driver::Input input;
        input.roots.push_back({"coop.slang", source, "", nullptr, nullptr});
        driver::Options options;
        options.scope = driver::Scope::Functions;
        options.target = DeviceType::CPU;
        driver::compile({front.sources, front.ast, front.types, front.diags}, input, options, front.result);
        for (const lang::ModuleAst* m : front.result.modules)
            for (const lang::Decl* d : m->decls)
                if (d->function && d->function->name == name) decl = d->function;
    }
};

/// The call's extents (dimension 0 first) as the glue's two uint4 parameters after the others.
std::vector<CoopArg> call_extents(std::vector<uint32_t> shape) {
    shape.resize(8, 1u);
    CoopArg lo, hi;
    lo.bytes.resize(16);
    hi.bytes.resize(16);
    std::memcpy(lo.bytes.data(), shape.data(), 16);
    std::memcpy(hi.bytes.data(), shape.data() + 4, 16);
    return {lo, hi};
}

std::vector<CoopArg> operator+(std::vector<CoopArg> a, const std::vector<CoopArg>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// Launches `k` over `threads` threads in 1-D blocks of `block` (the last one partial: the
/// harness sets no thread count, so the function's own bound check keeps those threads out).
codegen::FaultRecord launch_count(const CoopKernel& k, int64_t threads, int64_t block, std::vector<CoopArg> args) {
    return k.launch({block, 1, 1}, {(threads + block - 1) / block, 1, 1}, args);
}

const char* kCells = R"(
void mark_cell(int2 c, TensorView<int> cells, int scale)
{
    if (c.y < int(cells.size(0)) && c.x < int(cells.size(1)))
        cells[c.y, c.x] = scale * (c.y * 100 + c.x);
}
)";

TEST(CoopViewCall, GridCoordinateGivesXTheLastDimension) {
    Declared d(kCells, "mark_cell");
    ASSERT_NE(d.decl, nullptr);
    call::FunctionState fn;
    fn.name = "mark_cell";
    const call::Glue glue = call::view_call_glue(fn, *d.decl, call::CoopPass::Primal, call::ViewCallForm{1u, 0u, 2});
    EXPECT_NE(glue.source.find("[CUDAKernel]"), std::string::npos) << glue.source;
    auto k = build_coop(std::string(kCells) + glue.source, glue.entry);
    std::vector<int32_t> cells(3 * 5, -1);
    const int32_t extents[2] = {5, 3};  // the int2 parameter holds (last dim, first dim)
    CoopArg grid;
    grid.bytes.resize(8);
    std::memcpy(grid.bytes.data(), extents, 8);
    const auto fault = launch_count(*k, 15, 4,
                                    std::vector<CoopArg>{grid, CoopArg::view(cells, {3, 5}), CoopArg::scalar(int32_t(2))} +
                                        call_extents({3, 5}));
    EXPECT_EQ(fault.code, 0u);
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 5; ++x) EXPECT_EQ(cells[size_t(y * 5 + x)], 2 * (y * 100 + x)) << y << "," << x;
}

const char* kSquare = R"(
[Differentiable]
void squares(DiffTensorView<float> a, DiffTensorView<float> b)
{
    [MaxIters(64)]
    for (uint k = 0; k < b.size(0); ++k)
        b.store(k, a[k] * a.load(k));
}
)";

TEST(CoopViewCall, BackwardOfAFunctionThatTakesDiffTensorViews) {
    Declared d(kSquare, "squares");
    ASSERT_NE(d.decl, nullptr);
    call::FunctionState fn;
    fn.name = "squares";
    for (call::CoopPass pass : {call::CoopPass::Primal, call::CoopPass::Backward, call::CoopPass::Forward}) {
        const call::Glue glue = call::view_call_glue(fn, *d.decl, pass, call::ViewCallForm{});
        auto k = build_coop(std::string(kSquare) + glue.source, glue.entry);
        // backward: gy is the output's gradient; forward: gx is the input's tangent
        std::vector<float> x = {1.0f, -2.0f, 3.0f, 0.5f}, gx(4, pass == call::CoopPass::Forward ? 1.5f : 0.0f),
                           y(4, 0.0f), gy = {1.0f, 2.0f, 3.0f, 4.0f};
        const auto fault = k->launch({1, 1, 1}, {1, 1, 1},
                                     {CoopArg::diff_view(x, &gx, {4}), CoopArg::diff_view(y, &gy, {4})});
        EXPECT_EQ(fault.code, 0u);
        for (size_t i = 0; i < 4; ++i) {
            const float g = i + 1.0f;
            if (pass == call::CoopPass::Primal) EXPECT_EQ(y[i], x[i] * x[i]) << i;
            if (pass == call::CoopPass::Backward) EXPECT_FLOAT_EQ(gx[i], 2.0f * x[i] * g) << i;
            if (pass == call::CoopPass::Forward) EXPECT_FLOAT_EQ(gy[i], 2.0f * x[i] * 1.5f) << i;
        }
    }
}

const char* kValued = R"(
void mark_valued(int value, int2 c, TensorView<int> cells, float3 unused)
{
    cells[c.y, c.x] = value;
}
void put_scaled(uint i, float3 v, TensorView<float3> out)
{
    out[i] = v * 2.0;
}
)";

TEST(CoopViewCall, PerElementTensorsBesideAGrid) {
    Declared d(kValued, "mark_valued");
    ASSERT_NE(d.decl, nullptr);
    call::FunctionState fn;
    fn.name = "mark_valued";
    // `value` from a 2-D tensor, `c` from a 2-D grid of the same shape
    const call::Glue glue = call::view_call_glue(fn, *d.decl, call::CoopPass::Primal, call::ViewCallForm{2u, 1u, 2});
    auto k = build_coop(std::string(kValued) + glue.source, glue.entry);
    std::vector<int32_t> values(2 * 3), cells(2 * 3, -1);
    for (int i = 0; i < 6; ++i) values[size_t(i)] = 7 * i;
    const int32_t extents[2] = {3, 2};
    CoopArg grid;
    grid.bytes.resize(8);
    std::memcpy(grid.bytes.data(), extents, 8);
    CoopArg unused;
    unused.bytes.resize(12);
    EXPECT_EQ(k->launch({6, 1, 1}, {1, 1, 1},
                        std::vector<CoopArg>{CoopArg::view(values, {2, 3}), grid, CoopArg::view(cells, {2, 3}), unused} +
                            call_extents({2, 3}))
                  .code,
              0u);
    EXPECT_EQ(cells, values);
}

TEST(CoopViewCall, PerElementVectors) {
    Declared d(kValued, "put_scaled");
    ASSERT_NE(d.decl, nullptr);
    call::FunctionState fn;
    fn.name = "put_scaled";
    const call::Glue glue = call::view_call_glue(fn, *d.decl, call::CoopPass::Primal, call::ViewCallForm{0u, 3u, 1});
    auto k = build_coop(std::string(kValued) + glue.source, glue.entry);
    std::vector<uint32_t> at = {2, 0, 1};
    std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8, 9}, out(9, 0.0f);
    EXPECT_EQ(k->launch({3, 1, 1}, {1, 1, 1},
                        std::vector<CoopArg>{CoopArg::view(at, {3}), CoopArg::view(v, {3}, 3), CoopArg::view(out, {3}, 3)} +
                            call_extents({3}))
                  .code,
              0u);
    const std::vector<float> want = {8, 10, 12, 14, 16, 18, 2, 4, 6};  // out[at[t]] = 2 v[t]
    EXPECT_EQ(out, want);
}

TEST(CoopViewCall, ResultsOnePerCall) {
    const char* src = "float2 pick(TensorView<float> v, int i) { return float2(v[i], -v[i]); }\n";
    Declared d(src, "pick");
    ASSERT_NE(d.decl, nullptr);
    call::FunctionState fn;
    fn.name = "pick";
    const call::Glue glue = call::view_call_glue(fn, *d.decl, call::CoopPass::Primal, call::ViewCallForm{0u, 2u, 1, {}});
    auto k = build_coop(std::string(src) + glue.source, glue.entry);
    std::vector<float> v = {1.5f, 2.5f, 3.5f}, out(8, 0.0f);
    std::vector<int32_t> at = {2, 0, 0, 1};
    EXPECT_EQ(k->launch({4, 1, 1}, {1, 1, 1},
                        std::vector<CoopArg>{CoopArg::view(v, {3}), CoopArg::view(at, {4}), CoopArg::view(out, {4}, 2)} +
                            call_extents({4}))
                  .code,
              0u);
    const std::vector<float> want = {3.5f, -3.5f, 1.5f, -1.5f, 1.5f, -1.5f, 2.5f, -2.5f};
    EXPECT_EQ(out, want);
}

const char* kDiffResult = R"(
[Differentiable]
float sq(DiffTensorView<float> x, int i) { return x[i] * x[i]; }
[Differentiable]
float2 weigh(float3 v, DiffTensorView<float> w) { float d = dot(v, float3(w[0], w[1], w[2])); return float2(d, d * d); }
)";

TEST(CoopViewCall, DerivativeOfAResult) {
    Declared d(kDiffResult, "sq");
    ASSERT_NE(d.decl, nullptr);
    call::FunctionState fn;
    fn.name = "sq";
    EXPECT_TRUE(call::view_result_is_differentiable(*d.decl));
    EXPECT_FALSE(call::view_element_is_differentiable(*d.decl, 1));  // an int index
    for (call::CoopPass pass : {call::CoopPass::Primal, call::CoopPass::Backward}) {
        const call::Glue glue = call::view_call_glue(fn, *d.decl, pass, call::ViewCallForm{0u, 2u, 1, {}});
        EXPECT_NE(glue.source.find("DiffTensorView<float> __sg_result"), std::string::npos) << glue.source;
        auto k = build_coop(std::string(kDiffResult) + glue.source, glue.entry);
        std::vector<float> x = {1.5f, -2.0f, 3.0f}, gx(3, 0.0f), out(4, 0.0f), gout = {1.0f, 2.0f, 3.0f, 4.0f};
        std::vector<int32_t> at = {2, 0, 2, 1};  // element 2 read by two calls: its gradients add
        EXPECT_EQ(k->launch({4, 1, 1}, {1, 1, 1},
                            std::vector<CoopArg>{CoopArg::diff_view(x, &gx, {3}), CoopArg::view(at, {4}),
                                                 CoopArg::diff_view(out, &gout, {4})} +
                                call_extents({4}))
                      .code,
                  0u);
        if (pass == call::CoopPass::Primal) {
            EXPECT_EQ(out, (std::vector<float>{9.0f, 2.25f, 9.0f, 4.0f}));
        } else {
            EXPECT_FLOAT_EQ(gx[0], 2 * 1.5f * 2.0f);
            EXPECT_FLOAT_EQ(gx[1], 2 * -2.0f * 4.0f);
            EXPECT_FLOAT_EQ(gx[2], 2 * 3.0f * (1.0f + 3.0f));
            EXPECT_EQ(out, (std::vector<float>(4, 0.0f)));  // the primal is not written again
        }
    }
}

TEST(CoopViewCall, BroadcastPerElementVectorAndItsGradient) {
    Declared d(kDiffResult, "weigh");
    ASSERT_NE(d.decl, nullptr);
    call::FunctionState fn;
    fn.name = "weigh";
    EXPECT_TRUE(call::view_element_is_differentiable(*d.decl, 0));
    // v: 2 vectors broadcast over a (3, 2) call (stride 0 in dimension 0), components last
    const call::Glue glue = call::view_call_glue(fn, *d.decl, call::CoopPass::Backward, call::ViewCallForm{0u, 1u, 2, {}});
    auto k = build_coop(std::string(kDiffResult) + glue.source, glue.entry);
    std::vector<float> v = {1, 2, 3, -1, 0, 2}, gv(6, 0.0f), w = {0.5f, 1.0f, 2.0f}, gw(3, 0.0f);
    std::vector<float> out(12, 0.0f), gout(12, 0.0f);
    for (size_t c = 0; c < 6; ++c) gout[2 * c] = 1.0f;  // the gradient of d only
    CoopArg vv = CoopArg::diff_view(v, &gv, {3, 2, 3});
    vv.strides = {0, 3, 1};
    EXPECT_EQ(k->launch({6, 1, 1}, {1, 1, 1},
                        std::vector<CoopArg>{vv, CoopArg::diff_view(w, &gw, {3}), CoopArg::diff_view(out, &gout, {3, 2, 2})} +
                            call_extents({3, 2}))
                  .code,
              0u);
    // each of the 2 vectors is read by 3 calls: d(d)/dv = w, three times
    for (size_t j = 0; j < 2; ++j)
        for (size_t c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(gv[j * 3 + c], 3.0f * w[c]) << j << "," << c;
    for (size_t c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(gw[c], 3.0f * (v[c] + v[3 + c])) << c;
}

const char* kWritten = R"(
[Differentiable]
float2x2 grow(DiffTensorView<float> x, int i, out float y, inout float2 acc)
{
    float v = x[i];
    y = 3.0 * v;
    acc = acc * v;
    return float2x2(v, 2.0 * v, v * v, 1.0);
}
)";

TEST(CoopViewCall, OutInoutParametersAndAMatrixResult) {
    Declared d(kWritten, "grow");
    ASSERT_NE(d.decl, nullptr);
    call::FunctionState fn;
    fn.name = "grow";
    // i, y and acc per call (bits 1-3), a 1-D call of 2
    for (call::CoopPass pass : {call::CoopPass::Primal, call::CoopPass::Backward}) {
        const call::Glue glue = call::view_call_glue(fn, *d.decl, pass, call::ViewCallForm{0u, 14u, 1, {}});
        auto k = build_coop(std::string(kWritten) + glue.source, glue.entry);
        std::vector<float> x = {2.0f, -1.0f}, gx(2, 0.0f), y(2, 0.0f), gy = {1.0f, 1.0f};
        std::vector<float> acc = {1.0f, 2.0f, 3.0f, 4.0f}, gacc = {1.0f, 0.0f, 0.0f, 1.0f};
        std::vector<float> out(8, 0.0f), gout(8, 0.0f);
        gout[0] = 1.0f;  // d out[0][0][0] = d v of call 0
        std::vector<int32_t> at = {1, 0};
        EXPECT_EQ(k->launch({2, 1, 1}, {1, 1, 1},
                            std::vector<CoopArg>{CoopArg::diff_view(x, &gx, {2}), CoopArg::view(at, {2}),
                                                 CoopArg::diff_view(y, &gy, {2}), CoopArg::diff_view(acc, &gacc, {2, 2}),
                                                 CoopArg::diff_view(out, &gout, {2, 2, 2})} +
                                call_extents({2}))
                      .code,
                  0u);
        if (pass == call::CoopPass::Primal) {
            EXPECT_EQ(y, (std::vector<float>{-3.0f, 6.0f}));
            EXPECT_EQ(acc, (std::vector<float>{-1.0f, -2.0f, 6.0f, 8.0f}));
            EXPECT_EQ(out, (std::vector<float>{-1.0f, -2.0f, 1.0f, 1.0f, 2.0f, 4.0f, 4.0f, 1.0f}));
        } else {
            // call 0 reads x[1] = -1: 3 (y) + 1 * acc.x (1) + 1 (the result); call 1 reads x[0] = 2: 3 + 1 * acc.y (4)
            EXPECT_FLOAT_EQ(gx[1], 3.0f + 1.0f + 1.0f);
            EXPECT_FLOAT_EQ(gx[0], 3.0f + 4.0f);
            // an inout's gradient becomes that of its value before the call: d(acc * v)/d acc = v
            EXPECT_EQ(gacc, (std::vector<float>{-1.0f, 0.0f, 0.0f, 2.0f}));
            EXPECT_EQ(gy, (std::vector<float>{0.0f, 0.0f}));  // an out's gradient is taken
        }
    }
}

const char* kStructParam = R"(
struct Lamp : IDifferentiable { float3 dir; float power; };
[Differentiable]
float shine(DiffTensorView<float> w, Lamp l, int i) { return w[i] * l.power * l.dir.z; }
)";

TEST(CoopViewCall, StructParameterFromFields) {
    // Lamp from a dict: dir a number (uniform float3), power a tensor read per call (leaf 1)
    const std::string source = kStructParam;
    call::ViewCallForm form{0u, 4u, 1, {}};
    form.structs.emplace_back(1u, uint64_t(2));
    // the glue of a struct parameter reads the fields from the module's types
    auto module = std::make_shared<call::UserModule>("structs", source);
    call::FunctionState fn;
    fn.name = "shine";
    fn.module = module;
    ASSERT_EQ(module->functions("shine").size(), 1u);
    const lang::FunctionDecl* decl = module->functions("shine")[0];
    for (call::CoopPass pass : {call::CoopPass::Primal, call::CoopPass::Backward}) {
        const call::Glue glue = call::view_call_glue(fn, *decl, pass, form);
        auto k = build_coop(source + glue.source, glue.entry);
        std::vector<float> w = {2.0f, -1.0f}, gw(2, 0.0f), power = {3.0f, 5.0f}, gpower(2, 0.0f);
        std::vector<float> out(2, 0.0f), gout = {1.0f, 10.0f};
        std::vector<int32_t> at = {1, 0};
        const float dir[3] = {0.0f, 0.0f, 0.5f};
        CoopArg uniform;
        uniform.bytes.resize(12);
        std::memcpy(uniform.bytes.data(), dir, 12);
        EXPECT_EQ(k->launch({2, 1, 1}, {1, 1, 1},
                            std::vector<CoopArg>{CoopArg::diff_view(w, &gw, {2}), uniform,
                                                 CoopArg::diff_view(power, &gpower, {2}), CoopArg::view(at, {2}),
                                                 CoopArg::diff_view(out, &gout, {2})} +
                                call_extents({2}))
                      .code,
                  0u);
        if (pass == call::CoopPass::Primal) {
            EXPECT_EQ(out, (std::vector<float>{-1.0f * 3.0f * 0.5f, 2.0f * 5.0f * 0.5f}));
        } else {
            EXPECT_EQ(gw, (std::vector<float>{10.0f * 5.0f * 0.5f, 1.0f * 3.0f * 0.5f}));
            EXPECT_EQ(gpower, (std::vector<float>{-1.0f * 0.5f, 10.0f * 2.0f * 0.5f}));
        }
    }
}

TEST(CoopViewCall, StructPerCallFromATensor) {
    // Ray's fields' components in a tensor's last dimension; id is no_diff (detached)
    const std::string source = R"(
struct Ray : IDifferentiable { float2 origin; float t; no_diff float id; };
[Differentiable]
float march(DiffTensorView<float> scale, inout Ray r) { float v = (r.origin.x + r.origin.y * r.t) * scale[0] + r.id; r.t = r.t * 2.0; return v; }
)";
    auto module = std::make_shared<call::UserModule>("ray", source);
    call::FunctionState fn;
    fn.name = "march";
    fn.module = module;
    const lang::FunctionDecl* decl = module->functions("march")[0];
    for (call::CoopPass pass : {call::CoopPass::Primal, call::CoopPass::Backward}) {
        const call::Glue glue = call::view_call_glue(fn, *decl, pass, call::ViewCallForm{0u, 2u, 1, {}});
        auto k = build_coop(source + glue.source, glue.entry);
        std::vector<float> scale = {2.0f}, gscale(1, 0.0f), rays = {1.0f, 2.0f, 3.0f, 10.0f}, grays(4, 0.0f);
        std::vector<float> out(1, 0.0f), gout = {1.0f};
        if (pass == call::CoopPass::Backward) grays[2] = 0.5f;  // the gradient of t after the call
        EXPECT_EQ(k->launch({1, 1, 1}, {1, 1, 1},
                            std::vector<CoopArg>{CoopArg::diff_view(scale, &gscale, {1}),
                                                 CoopArg::diff_view(rays, &grays, {1, 4}),
                                                 CoopArg::diff_view(out, &gout, {1})} +
                                call_extents({1}))
                      .code,
                  0u);
        if (pass == call::CoopPass::Primal) {
            EXPECT_EQ(out[0], (1.0f + 2.0f * 3.0f) * 2.0f + 10.0f);
            EXPECT_EQ(rays[2], 6.0f);  // t written back
        } else {
            EXPECT_FLOAT_EQ(gscale[0], 7.0f);
            // origin.x: scale; origin.y: t * scale; t: origin.y * scale + 2 * 0.5; id: none
            EXPECT_EQ(grays, (std::vector<float>{2.0f, 6.0f, 4.0f + 1.0f, 0.0f}));
        }
    }
}

TEST(CoopViewCall, CallGroupsGlueCompilesForCuda) {
    // In call groups the glue reads SlangPy's call ids and runs as the blocks of the groups (the
    // call-group entry); its CUDA compiles with NVRTC (the CPU runs: test_view_function_forms.py).
    const std::string source = R"(
import slangpy;
groupshared float tile[4];
[Differentiable]
float rotate(int i, DiffTensorView<float> x)
{
    int t = CallShapeInfo::get_call_group_thread_id().shape[0];
    tile[t] = detach(x[i]);
    GroupMemoryBarrierWithGroupSync();
    return tile[(t + 1) % 4] * x[i];
}
)";
    auto module = std::make_shared<call::UserModule>("groups", source);
    call::FunctionState fn;
    fn.name = "rotate";
    fn.module = module;
    const lang::FunctionDecl* decl = module->functions("rotate")[0];
    call::ViewCallForm form{1u, 0u, 1, {8}};
    form.call_group = {4};
    codegen::CodegenOptions options;
    options.call_group_rank = 1;
    options.call_group[0] = 4;
    for (call::CoopPass pass : {call::CoopPass::Primal, call::CoopPass::Backward}) {
        const call::Glue glue = call::view_call_glue(fn, *decl, pass, form);
        EXPECT_NE(glue.source.find("__slangpy_call_id(0)"), std::string::npos) << glue.source;
        for (DeviceType target : {DeviceType::CPU, DeviceType::CUDA}) {
            call::CompiledKernel k = call::generate(*module, glue, target, options);
            EXPECT_EQ(k.generated.call_group_block, 4);
            if (target == DeviceType::CPU) continue;
            bool skipped = false;
            EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << k.generated.source;
        }
    }
}

TEST(CoopViewCall, PerElementMatrixAndItsGradient) {
    const char* src = R"(
[Differentiable]
float trace_scaled(DiffTensorView<float> s, float2x2 m) { return (m[0][0] + m[1][1] * m[0][1]) * s[0]; }
)";
    Declared d(src, "trace_scaled");
    ASSERT_NE(d.decl, nullptr);
    call::FunctionState fn;
    fn.name = "trace_scaled";
    EXPECT_TRUE(call::view_element_is_differentiable(*d.decl, 1));
    const call::Glue glue = call::view_call_glue(fn, *d.decl, call::CoopPass::Backward, call::ViewCallForm{0u, 2u, 1, {}});
    auto k = build_coop(std::string(src) + glue.source, glue.entry);
    std::vector<float> s = {2.0f}, gs(1, 0.0f), m = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f}, gm(8, 0.0f);
    std::vector<float> out(2, 0.0f), gout = {1.0f, 10.0f};
    EXPECT_EQ(k->launch({2, 1, 1}, {1, 1, 1},
                        std::vector<CoopArg>{CoopArg::diff_view(s, &gs, {1}), CoopArg::diff_view(m, &gm, {2, 2, 2}),
                                             CoopArg::diff_view(out, &gout, {2})} +
                            call_extents({2}))
                  .code,
              0u);
    // d/dm00 = s, d/dm11 = m01 s, d/dm01 = m11 s; per call times its result's gradient
    EXPECT_EQ(gm, (std::vector<float>{2.0f, 4.0f * 2.0f, 0.0f, 2.0f * 2.0f, 20.0f, 8.0f * 20.0f, 0.0f, 6.0f * 20.0f}));
    EXPECT_FLOAT_EQ(gs[0], (1.0f + 4.0f * 2.0f) + 10.0f * (5.0f + 8.0f * 6.0f));
}

TEST(CoopViewCall, MatrixFieldsOfStructsCompileForCuda) {
    // A struct with a matrix field from a dict (the matrix per call from a tensor, or one value)
    // and from a tensor of its fields, each pass's CUDA compiled with NVRTC (values and gradients:
    // test_view_function_forms.py).
    const std::string source = R"(
struct Xform : IDifferentiable { float2x2 m; float2 t; };
[Differentiable]
float2 place(DiffTensorView<float> s, inout Xform x, float2 p) { float2 r = (mul(x.m, p) + x.t) * s[0]; x.m = x.m * 2.0; return r; }
)";
    auto module = std::make_shared<call::UserModule>("xforms", source);
    call::FunctionState fn;
    fn.name = "place";
    fn.module = module;
    const lang::FunctionDecl* decl = module->functions("place")[0];
    call::ViewCallForm from_tensor{0u, 2u, 1, {3}};
    call::ViewCallForm from_dict{0u, 0u, 1, {3}};
    from_dict.structs.emplace_back(1u, uint64_t(3));  // both fields tensors (an inout struct's are)
    for (const call::ViewCallForm* form : {&from_tensor, &from_dict})
        for (call::CoopPass pass : {call::CoopPass::Primal, call::CoopPass::Backward}) {
            const call::Glue glue = call::view_call_glue(fn, *decl, pass, *form);
            call::CompiledKernel k = call::generate(*module, glue, DeviceType::CUDA, codegen::CodegenOptions{});
            bool skipped = false;
            EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << glue.source;
        }
}

TEST(CoopViewCall, OutParametersAndDerivativesOfResultsAreRefused) {
    const char* src = "float value(TensorView<float> v) { return v[0]; }\nvoid out_param(TensorView<float> v, out float r) { r = v[0]; }\n";
    call::FunctionState fn;
    fn.name = "value";
    Declared a(src, "value"), b(src, "out_param");
    ASSERT_NE(a.decl, nullptr);
    ASSERT_NE(b.decl, nullptr);
    EXPECT_THROW(call::view_call_glue(fn, *a.decl, call::CoopPass::Backward, call::ViewCallForm{}), call::CallError);
    EXPECT_THROW(call::view_call_glue(fn, *b.decl, call::CoopPass::Primal, call::ViewCallForm{}), call::CallError);
    EXPECT_THROW(call::view_call_glue(fn, *b.decl, call::CoopPass::Backward, call::ViewCallForm{}), call::CallError);  // not differentiable
}

}  // namespace
}  // namespace sg::test
