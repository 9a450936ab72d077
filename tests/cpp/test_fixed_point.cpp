// tests/cpp/test_fixed_point.cpp — deterministic CUDA gradients summed in fixed point
// (prelude_fixed.inc) where ordered tables cannot be: tables past shared memory, adds in loops,
// batches of tables, matrix elements. Without a GPU: which gradients the call layer makes fixed
// point, the scratch it sizes for them, and the generated CUDA of both variants (scan and
// accumulate) compiled by NVRTC. tests/python/test_deterministic.py checks the values on a GPU.
#include <cstdio>
#include <cstdlib>
#include <utility>

#include <gtest/gtest.h>

#include "../support/bound_calls.h"
#include "../support/cuda_compile_check.h"
#include "call/call_key.h"
#include "call/call_plan.h"
#include "call/launch.h"
#include "call/compile_kernel.h"
#include "call/glue.h"

namespace sg::test {
namespace {

const std::string kModule = std::string(kGradientKernels) + R"([Differentiable]
double dmscale(double x, double2x2 m) { return (m[0][0] + m[1][1]) * x + m[0][1] * x * x; }
)";

/// The kernel parameter of `c`'s backward glue that carries the gradient of binding `name`.
int gradient_param(const Call& c, const call::Glue& glue, const std::string& name) {
    for (size_t k = 0; k < glue.params.size(); ++k) {
        const call::GlueParam& g = glue.params[k];
        const bool grad = g.source == call::ParamSource::ArgGrad || (g.source == call::ParamSource::ArgTensor && g.grad_view);
        if (grad && g.binding >= 0 && c.binding.params[size_t(g.binding)].name == name) return int(k);
    }
    return -1;
}

/// The generated CUDA of a deterministic backward whose gradient of `table` is summed in fixed
/// point, both variants (scan and accumulate; also with debug checks and 64-bit indexing):
/// compiled by NVRTC, without a float atomic on any gradient. Returns {scan, accumulate}.
std::pair<std::string, std::string> expect_fixed_cuda(const call::UserModule& m, const Call& c, const std::string& table,
                                                      bool force = true) {
    std::pair<std::string, std::string> out;
    for (int variant = 0; variant < 3; ++variant) {
        codegen::CodegenOptions base;
        base.call_rank = c.binding.call_rank;
        base.deterministic = true;
        base.debug_checks = variant == 1;
        base.index_64bit = variant == 2;
        call::Glue glue = call::make_backward_glue(c.binding, variant == 2);
        codegen::CodegenOptions options = call::kernel_options(base, glue);
        const int param = gradient_param(c, glue, table);
        EXPECT_GE(param, 0) << table;
        if (force) options.fixed_params = uint64_t(1) << param;
        for (auto phase : {codegen::CodegenOptions::FixedPhase::Scan, codegen::CodegenOptions::FixedPhase::Accumulate}) {
            options.fixed_phase = phase;
            call::CompiledKernel k = call::generate(m, glue, DeviceType::CUDA, options);
            bool skipped = false;
            const std::string code = k.generated.source.substr(k.generated.body_begin);
            EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped)) << code;
            EXPECT_EQ(code.find("sg_grad_add("), std::string::npos) << code;
            EXPECT_EQ(code.find("sg_tensor_atomic_add("), std::string::npos) << code;
            EXPECT_EQ(code.find("sg_reduce_flush("), std::string::npos) << code;
            EXPECT_EQ(k.generated.fixed.size(), 1u) << code;
            if (!k.generated.fixed.empty()) EXPECT_EQ(k.generated.fixed[0].param, param);
            const bool scan = phase == codegen::CodegenOptions::FixedPhase::Scan;
            EXPECT_EQ(k.generated.fixed_entry.empty(), scan);
            EXPECT_NE(code.find(scan ? "sg_fixed_scan(sg_fx_" : "sg_fixed_add<"), std::string::npos) << code;
            if (scan) {  // every other gradient write is dropped
                EXPECT_EQ(code.find("sg_ordered_record("), std::string::npos) << code;
                EXPECT_EQ(code.find("sg_reduce_partial("), std::string::npos) << code;
                EXPECT_EQ(code.find("sg_grad_store("), std::string::npos) << code;
                EXPECT_EQ(code.find("sg_tensor_store("), std::string::npos) << code;
                EXPECT_NE(code.find("fixed-point scan (gradient writes dropped)"), std::string::npos) << code;
            } else {
                EXPECT_NE(code.find("_fixed(const __grid_constant__"), std::string::npos) << code;
                EXPECT_NE(code.find("sg_fixed_final<"), std::string::npos) << code;
            }
            if (variant == 0) (scan ? out.first : out.second) = code;
        }
    }
    if (std::getenv("SG_DUMP_STRATEGY_CODE")) std::fprintf(stderr, "%s\n%s\n", out.first.c_str(), out.second.c_str());
    return out;
}

TEST(FixedPoint, DeterministicCudaSumsInFixedPointWhatOrderedTablesCannotTake) {
    call::UserModule m("strategies", kModule);
    const DType f = DType::Float32;
    auto t = cuda_tensor_arg;
    // A 1M-entry table (past the ordered tables' shared memory: the call layer picks it per launch)
    // in float, half and double3 (128-bit accumulators).
    Call l = bind(m, "lut", {t({1 << 20}, DType::Int32, false), t({1 << 20}, f, true)}, true, DeviceType::CUDA);
    const auto [scan, acc] = expect_fixed_cuda(m, l, "table");
    EXPECT_NE(acc.find("sg_fixed_final<1>("), std::string::npos) << acc;
    // No add in a loop: an entry's adds are bounded by the call (scalar adds x threads), nothing counts
    // them; the scan makes its atomicMax only where the recorded exponent is lower.
    for (const std::string* code : {&scan, &acc})
        EXPECT_NE(code->find("if (j == 0) return sg_fixed_table(at, sg_fixed_extent(P."), std::string::npos) << *code;
    EXPECT_NE(acc.find(", sg_fixed_bound_bits(2, P.header.total));"), std::string::npos) << acc;  // table[i] * table[i]: two sites
    EXPECT_NE(scan.find(", sg_fixed_bound_bits(2, P.header.total));"), std::string::npos) << scan;
    Call lh = bind(m, "luth", {t({4096}, DType::Int32, false), t({1 << 20}, DType::Float16, true)}, true, DeviceType::CUDA);
    expect_fixed_cuda(m, lh, "table");
    Call lv = bind(m, "lut3", {t({4096}, DType::Int32, false), t({1 << 20, 3}, DType::Float64, true)}, true,
                   DeviceType::CUDA);
    const std::string wide = expect_fixed_cuda(m, lv, "table").second;
    EXPECT_NE(wide.find("sg_fixed_add<2>("), std::string::npos) << wide;
    // One add site of a double3: three scalar adds, which may land on one entry (inner stride 0).
    EXPECT_NE(wide.find(", sg_fixed_bound_bits(3, P.header.total));"), std::string::npos) << wide;
    // A table read in a loop: fixed point is the only scheme (the call layer retries with it).
    Call ls = bind(m, "lutsum", {t({4096}, DType::Int32, false), t({256}, f, true)}, true, DeviceType::CUDA);
    const auto [loop_scan, loop_acc] = expect_fixed_cuda(m, ls, "table");
    for (const std::string* code : {&loop_scan, &loop_acc}) {  // adds in a loop: each entry counts its own
        EXPECT_NE(code->find("), -1);\n"), std::string::npos) << *code;
        EXPECT_EQ(code->find("sg_fixed_bound_bits("), std::string::npos) << *code;
    }
    // A batch of tables: each call element adds to its own slice, rebased to the whole buffer.
    Call lb = bind(m, "lut", {t({8, 64}, DType::Int32, false), t({64, 256}, f, true)}, true, DeviceType::CUDA);
    EXPECT_NE(expect_fixed_cuda(m, lb, "table").second.find("sg_fixed_rebase("), std::string::npos);
    // Matrix elements (a partial broadcast): fixed point without being asked, beside an ordered one.
    Call mt = bind(m, "mscale", {t({64, 8}, f, false), t({1, 8, 2, 2}, f, true)}, true, DeviceType::CUDA);
    expect_fixed_cuda(m, mt, "m", /*force=*/false);
    Call md = bind(m, "dmscale", {t({64, 8}, DType::Float64, false), t({8, 2, 2}, DType::Float64, true)}, true,
                   DeviceType::CUDA);
    EXPECT_NE(expect_fixed_cuda(m, md, "m", /*force=*/false).second.find("sg_fixed_final<2>("), std::string::npos);
    // A fixed table beside reductions and an ordered table: the accumulate variant keeps them.
    Call q = bind(m, "quad", {t({64, 64}, f, true), t({1}, f, true), t({1, 64}, f, true), t({64, 1}, f, true)}, true,
                  DeviceType::CUDA);
    const std::string mixed = expect_fixed_cuda(m, q, "c").second;
    EXPECT_NE(mixed.find("sg_ordered_record(sg_or_"), std::string::npos) << mixed;
    EXPECT_NE(mixed.find("sg_reduce_partial(params.header"), std::string::npos) << mixed;
}

TEST(FixedPoint, DeterministicCudaPicksFixedPointForWhatCodegenCannotOrder) {
    call::UserModule m("strategies", kModule);
    auto t = cuda_tensor_arg;
    codegen::CodegenOptions base;
    base.call_rank = 1;
    base.deterministic = true;
    // A loop and a batch of tables: the table becomes fixed point; a plain table stays ordered.
    Call ls = bind(m, "lutsum", {t({4096}, DType::Int32, false), t({256}, DType::Float32, true)}, true, DeviceType::CUDA);
    call::Glue gs = call::make_backward_glue(ls.binding);
    EXPECT_EQ(call::fixed_point_params(m, gs, call::kernel_options(base, gs), 0), uint64_t(1) << gradient_param(ls, gs, "table"));
    Call lb = bind(m, "lut", {t({64}, DType::Int32, false), t({64, 256}, DType::Float32, true)}, true, DeviceType::CUDA);
    call::Glue gb = call::make_backward_glue(lb.binding);
    EXPECT_EQ(call::fixed_point_params(m, gb, call::kernel_options(base, gb), 0), uint64_t(1) << gradient_param(lb, gb, "table"));
    Call l = bind(m, "lut", {t({4096}, DType::Int32, false), t({256}, DType::Float32, true)}, true, DeviceType::CUDA);
    call::Glue gl = call::make_backward_glue(l.binding);
    EXPECT_EQ(call::fixed_point_params(m, gl, call::kernel_options(base, gl), 0), 0u);
}

TEST(FixedPoint, FixedPointScratchHoldsEveryTablesRecordsBelowTheHeader) {
    call::UserModule m("strategies", kModule);
    auto t = cuda_tensor_arg;
    struct Case {
        const char* fn;
        std::vector<int64_t> table;
        DType dtype;
        int64_t extent;
        int wide;
    };
    for (const Case& c : {Case{"lut", {1 << 20}, DType::Float32, 1 << 20, 1},
                          Case{"lut3", {1 << 16, 3}, DType::Float64, 3 << 16, 2}}) {
        Call call = bind(m, c.fn, {t({4096}, DType::Int32, false), t(c.table, c.dtype, true)}, true, DeviceType::CUDA);
        codegen::CodegenOptions base;
        base.call_rank = 1;
        base.deterministic = true;
        call::Glue glue = call::make_backward_glue(call.binding);
        codegen::CodegenOptions options = call::kernel_options(base, glue);
        options.fixed_params = uint64_t(1) << gradient_param(call, glue, "table");
        call::CompiledKernel k = call::generate(m, glue, DeviceType::CUDA, options);
        k.device_type = DeviceType::CUDA;
        std::vector<TensorInfo> grads(call.binding.params.size());
        std::vector<const TensorInfo*> grad_ptrs(call.binding.params.size(), nullptr);
        for (size_t i = 0; i < call.binding.params.size(); ++i)
            if (call.binding.params[i].requires_grad) {
                grads[i] = call.args[size_t(call.binding.params[i].arg)].tensor;
                grad_ptrs[i] = &grads[i];
            }
        std::vector<int64_t> shape{4096};
        TensorInfo rg = tensor_info(shape, nullptr, c.dtype, false, DeviceType::CUDA);
        call::LaunchData data;
        data.args = call.args.data();
        data.call_shape = shape.data();
        data.result_grad = &rg;
        data.binding_grads = grad_ptrs.data();
        std::vector<uint8_t> block;
        call::launch::pack(k, glue, call.binding, data, block);
        const int param = k.generated.fixed.at(0).param;
        EXPECT_EQ(call::launch::ordered_extent(k, block, param), c.extent) << c.fn;
        EXPECT_EQ(k.generated.fixed[0].wide, c.wide) << c.fn;
        const size_t prefix = call::launch::scratch_prefix(k, block);
        EXPECT_EQ(prefix, codegen::fixed_table_bytes(c.extent, c.wide)) << c.fn;
        EXPECT_EQ(call::launch::scratch_bytes(k, glue, call.binding, block), prefix + 16) << c.fn;
    }
}

TEST(FixedPoint, FixedPointTableBytesMatchTheDevice) {
    // The call layer's size of a table's records is the prelude's (exponents, counts, flags, sums).
    EXPECT_EQ(codegen::fixed_table_bytes(0, 1), 0u);
    EXPECT_EQ(codegen::fixed_table_bytes(1, 1), 16u + 16u + 16u + 16u);
    EXPECT_EQ(codegen::fixed_table_bytes(1 << 20, 1), size_t(1 << 20) * 24);
    EXPECT_EQ(codegen::fixed_table_bytes(1 << 20, 2), size_t(1 << 20) * 32);
    EXPECT_NE(std::string(codegen::device_prelude()).find("sg_fixed_round(e * 4u) + sg_fixed_round(e * 8u) + "
                                                          "sg_fixed_round(e * 4u) + sg_fixed_round(e * 8u * (size_t)wide)"),
              std::string::npos);
}

}  // namespace
}  // namespace sg::test
