// tests/cpp/test_codegen.cpp — codegen tests: IR built with ir::Builder, CPU code compiled with
// the system compiler, loaded and run on parameter blocks packed from compute_param_layout;
// CUDA code compiled with nvcc (and NVRTC where available). One feature per test.
#include <cmath>
#include <limits>
#include <thread>

#include "codegen/emitter.h"
#include "codegen_harness.h"
#include "syntax/ast.h"

namespace sg::test {
namespace {

using codegen::CodegenOptions;

TEST(ParamLayout, OffsetsSizesAndStaticAsserts) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f3 = T.vector(ScalarKind::Float, 3);
    lang::StructDecl decl;
    decl.name = "Particle";
    const Type* particle = T.structure(&decl);
    T.set_fields(&decl, {{"pos", f3, false}, {"alive", T.boolean(), false}, {"mass", T.float32(), false}}, false, nullptr);
    EXPECT_EQ(codegen::value_size(f3, T), 12u);
    EXPECT_EQ(codegen::value_align(f3, T), 4u);
    EXPECT_EQ(codegen::value_size(T.boolean(), T), 1u);
    EXPECT_EQ(codegen::value_size(T.matrix(ScalarKind::Double, 2, 3), T), 48u);
    EXPECT_EQ(codegen::value_size(particle, T), 20u);
    EXPECT_EQ(codegen::value_size(T.array(f3, 5), T), 60u);

    auto* k = tp.add_kernel("layout", {{"flag", T.boolean()}, {"a", tp.tensor(T.float32(), 2, kRead, true)},
                                       {"v", f3}, {"p", particle}, {"d", T.scalar(ScalarKind::Double)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    b.ret({});
    auto layout = codegen::compute_param_layout(*k, T);
    ASSERT_EQ(layout.fields.size(), 5u);
    EXPECT_EQ(layout.fields[0].offset, 96u);  // header (88) rounded up to 16
    EXPECT_EQ(layout.fields[1].offset, 104u);
    EXPECT_EQ(layout.fields[1].size, 96u);    // view 56 + grad view 40
    const auto& t = layout.fields[1].tensor;
    EXPECT_EQ(t.data, 104u);
    EXPECT_EQ(t.shape, 112u);
    EXPECT_EQ(t.strides, 128u);
    EXPECT_EQ(t.inner, 144u);
    EXPECT_EQ(t.grad_data, 160u);
    EXPECT_EQ(t.grad_strides, 168u);
    EXPECT_EQ(t.grad_inner, 184u);
    EXPECT_EQ(layout.fields[2].offset, 200u);
    EXPECT_EQ(layout.fields[3].offset, 212u);
    EXPECT_EQ(layout.fields[4].offset, 232u);
    EXPECT_EQ(layout.size, 240u);
    EXPECT_THROW(codegen::compute_param_layout(*k), lang::InternalError);  // structs need the context

    // The generated struct static_asserts every offset: compiling it checks the agreement.
    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    EXPECT_NE(c.code().find("SG_ASSERT_OFFSET(sg_params_layout, a.grad_strides, 168);"), std::string::npos);
    expect_cuda_compiles(tp.program, *k);
}

TEST(Literals, RoundTripAndSpecialValues) {
    using codegen::detail::float_literal;
    using codegen::detail::int_literal;
    EXPECT_EQ(float_literal(0.1f, ScalarKind::Float), "0.1f");
    EXPECT_EQ(float_literal(2.0, ScalarKind::Float), "2.0f");
    EXPECT_EQ(float_literal(-1.5, ScalarKind::Float), "(-1.5f)");
    EXPECT_EQ(float_literal(1e30, ScalarKind::Float), "1e+30f");
    EXPECT_EQ(float_literal(0.1, ScalarKind::Double), "0.1");
    EXPECT_EQ(float_literal(std::numeric_limits<double>::infinity(), ScalarKind::Float), "SG_INF_F");
    EXPECT_EQ(float_literal(-std::numeric_limits<double>::infinity(), ScalarKind::Double), "(-SG_INF)");
    EXPECT_EQ(float_literal(std::nan(""), ScalarKind::Float), "SG_NAN_F");
    EXPECT_EQ(int_literal(-5, ScalarKind::Int32), "(-5)");
    EXPECT_EQ(int_literal(INT32_MIN, ScalarKind::Int32), "(-2147483647 - 1)");
    EXPECT_EQ(int_literal(7, ScalarKind::UInt32), "7u");
    EXPECT_EQ(int_literal(-3, ScalarKind::Int64), "(int64_t)(-3LL)");
    EXPECT_EQ(int_literal(1, ScalarKind::Bool), "true");
    EXPECT_EQ(codegen::detail::sanitize_identifier("float"), "u_float");
    EXPECT_EQ(codegen::detail::sanitize_identifier("NAN"), "u_NAN");
    EXPECT_EQ(codegen::detail::sanitize_identifier("my.name"), "my_name");
}

// A kernel carries the prelude parts its code names, and what those parts need in turn.
TEST(Prelude, AKernelCarriesOnlyThePartsItsCodeNames) {
    const std::string whole = codegen::device_prelude();
    const std::string plain = codegen::device_prelude_for("float f(float x) { return x; }");
    EXPECT_NE(plain.find("==== calls, faults, tensors ===="), std::string::npos);
    for (const char* part : {"==== half ====", "==== atomics ====", "==== tensor atomics ====", "==== intrinsics ====",
                             "==== cooperative kernels ====", "==== wave intrinsics ====",
                             "==== gradient reductions ====", "==== ordered gradient tables ====",
                             "==== fixed-point gradient tables ===="})
        EXPECT_EQ(plain.find(part), std::string::npos) << part;
    // The half type comes with a kernel that spells it, and with every part that does.
    for (const char* code : {"half f(half x) { return x; }", "void f(sg_vec<half, 3> v) {}",
                             "float f(float x) { return sg_sin(x); }"})
        EXPECT_NE(codegen::device_prelude_for(code).find("==== half ===="), std::string::npos) << code;
    EXPECT_EQ(codegen::device_prelude_for("float f(float x) { return x; } // half").find("==== half ===="),
              std::string::npos);
    // Adding into a tensor brings the tensor atomics, and they the scalar atomics (and half, which
    // they handle): the element accessors' own call of sg_atomic_add brings nothing.
    for (const char* code : {"void k(sg_tensor<float, 1> t) { sg_tensor_atomic_add(t, 0, 1.0f); }",
                             "void k(sg_diff_tensor<float, 1> t) { sg_grad_add(t, 0, 1.0f); }"}) {
        const std::string adds = codegen::device_prelude_for(code);
        for (const char* part : {"==== atomics ====", "==== tensor atomics ====", "==== half ===="})
            EXPECT_NE(adds.find(part), std::string::npos) << code << ": " << part;
        EXPECT_LT(adds.find("==== atomics ===="), adds.find("==== calls, faults, tensors ===="));
    }
    const std::string scalar_add = codegen::device_prelude_for("void k(float* p) { sg_atomic_add(p, 1.0f); }");
    EXPECT_NE(scalar_add.find("==== atomics ===="), std::string::npos);
    EXPECT_EQ(scalar_add.find("==== tensor atomics ===="), std::string::npos);
    // The math intrinsics come with a kernel that calls one of them.
    const std::string math = codegen::device_prelude_for("float f(float x) { return sg_sqrt(x); }");
    EXPECT_NE(math.find("==== intrinsics ===="), std::string::npos);
    EXPECT_EQ(math.find("==== cooperative kernels ===="), std::string::npos);
    EXPECT_LT(plain.size() * 3, whole.size() * 2);
    // A name a part defines brings that part (comments do not count).
    const std::string coop = codegen::device_prelude_for("void k(sg_view<float> v) { sg_coop_barrier(); }");
    EXPECT_NE(coop.find("==== cooperative kernels ===="), std::string::npos);
    EXPECT_EQ(coop.find("==== gradient reductions ===="), std::string::npos);
    // The CPU's block scheduler (ids, barriers) completes the cooperative part's declarations.
    EXPECT_NE(coop.find("struct sg_coop_ids"), std::string::npos);
    EXPECT_EQ(plain.find("struct sg_coop_ids"), std::string::npos);
    EXPECT_EQ(codegen::device_prelude_for("// sg_view<float> in a comment").find("==== cooperative kernels ===="),
              std::string::npos);
    // Text naming everything the prelude defines gets the whole prelude, in order.
    EXPECT_EQ(codegen::device_prelude_for(whole), whole);
    // The core alone compiles on both targets, and with the math part, a kernel that uses
    // tensors and math.
    auto cpu = write_source(plain + "int main() { return 0; }\n", ".cpp");
    auto [status, output] = run_command("g++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror " + cpu.string());
    EXPECT_EQ(status, 0) << output;
    EXPECT_TRUE(nvrtc_compiles("#define SG_TARGET_CUDA 1\n" + plain + "extern \"C\" __global__ void probe() {}\n"));
    // A kernel that adds into a tensor gets what it needs on both targets.
    const std::string add_code = "void k(sg_diff_tensor<half, 1> h, sg_tensor<sg_float3, 1> t, int i) {\n"
                                 "    sg_grad_add(h, i, half(1.0f));\n"
                                 "    sg_tensor_atomic_add(t, i, sg_tensor_load(t, i));\n}\n";
    const std::string adds = codegen::device_prelude_for(add_code);
    auto cpu_adds = write_source(adds + add_code + "int main() { return 0; }\n", ".cpp");
    auto [astatus, aoutput] = run_command("g++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror " + cpu_adds.string());
    EXPECT_EQ(astatus, 0) << aoutput;
    EXPECT_TRUE(nvrtc_compiles("#define SG_TARGET_CUDA 1\n" + adds + "extern \"C\" __global__ " + add_code));
    EXPECT_TRUE(nvrtc_compiles("#define SG_TARGET_CUDA 1\n" + math +
                               "extern \"C\" __global__ void probe(float* o, sg_tensor<sg_float3, 1> t) {\n"
                               "    sg_float3 v = sg_tensor_load(t, (int)threadIdx.x);\n"
                               "    *o = sg_dot(v, v) + sg_sin(v.x);\n}\n"));
}

TEST(Prelude, CompilesAloneOnBothTargetsWithoutSystemHeadersOnCuda) {
    const std::string prelude = codegen::device_prelude();
    auto cpu = write_source(prelude + "int main() { return 0; }\n", ".cpp");
    auto [status, output] = run_command("g++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror " + cpu.string());
    EXPECT_EQ(status, 0) << output;
    // The CUDA path includes nothing: preprocessing it without any include directory succeeds.
    auto pre = write_source("#define SG_TARGET_CUDA 1\n" + prelude, ".cpp");
    auto [pstatus, poutput] = run_command("g++ -E -nostdinc -x c++ -o /dev/null " + pre.string());
    EXPECT_EQ(pstatus, 0) << poutput;
    const std::string cuda = "#define SG_TARGET_CUDA 1\n" + prelude +
                             "extern \"C\" __global__ void probe(float* o, sg_tensor<sg_float3, 1> t) {\n"
                             "    sg_float3 v = sg_tensor_load(t, (int)threadIdx.x);\n"
                             "    sg_tensor_atomic_add(t, 0, sg_normalize(v));\n"
                             "    *o = sg_dot(v, sg_mul(sg_float3x3{}, v)) + sg_smoothstep(0.0f, 1.0f, v.x);\n}\n";
    EXPECT_TRUE(nvcc_compiles(cuda));
    EXPECT_TRUE(nvrtc_compiles(cuda));
}

// out[i, j] = sin(a[i, j]) * 2, with `a` transposed in memory (strides {1, 3}).
TEST(Kernel, ElementwiseSinOnStridedTensors) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    auto* k = tp.add_kernel("scale_sin", {{"a", tp.tensor(f, 2, kRead)}, {"out", tp.tensor(f, 2, kRW)}});
    lang::SourceFile file("m.slang", "float scale_sin(float a) { return sin(a) * 2; }\n");
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    b.set_loc({&file, 0});
    Value* i = b.call_index(0);
    Value* j = b.call_index(1);
    Value* x = b.tensor_load(arg(k, 0), {i, j});
    x->hint = "x";
    Value* y = b.binary(OpKind::Mul, b.intrinsic(IntrinsicId::Sin, f, {x}), b.const_float(f, 2.0));
    b.tensor_store(arg(k, 1), {i, j}, y);
    b.ret({});
    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    EXPECT_NE(c.code().find("// m.slang:1: float scale_sin"), std::string::npos) << c.code();
    EXPECT_NE(c.code().find("_x = sg_tensor_load("), std::string::npos) << c.code();
    EXPECT_NE(c.code().find("* 2.0f"), std::string::npos) << c.code();

    float a[12], out[12] = {};
    for (int n = 0; n < 12; ++n) a[n] = 0.25f * float(n) - 1.0f;
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({3, 4});
    pb.set_tensor(0, a, {3, 4}, {1, 3});
    pb.set_tensor(1, out, {3, 4}, {4, 1});
    c.cpu->run(pb.data(), 0, 12);
    for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 4; ++s) EXPECT_FLOAT_EQ(out[r * 4 + s], sinf(a[s * 3 + r]) * 2.0f) << r << "," << s;
    expect_cuda_compiles(tp.program, *k);
}

// CUDA code generation choices: read-only loads only for tensors the kernel never writes (and
// only when the caller allows them); several call elements per thread for small straight-line
// kernels, one for kernels with loops, always one on the CPU.
TEST(Kernel, ReadOnlyLoadsAndElementsPerThread) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    auto* k = tp.add_kernel("axpy", {{"x", tp.tensor(f, 1, kRead)}, {"y", tp.tensor(f, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* sum = b.binary(OpKind::Add, b.tensor_load(arg(k, 0), {i}), b.tensor_load(arg(k, 1), {i}));
    b.tensor_store(arg(k, 1), {i}, sum);
    b.ret({});

    CodegenOptions readonly;
    readonly.readonly_loads = true;
    readonly.call_rank = 1;  // known rank: straight-line index decomposition
    auto cuda = codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, readonly);
    const std::string body = cuda.source.substr(cuda.body_begin);
    EXPECT_EQ(cuda.elements_per_thread, 4);
    EXPECT_NE(body.find("sg_tensor_load_ro(P.x, "), std::string::npos) << body;  // x: read only
    EXPECT_NE(body.find("sg_tensor_load(P.y, "), std::string::npos) << body;     // y: written too
    EXPECT_EQ(body.find("sg_tensor_load_ro(P.y"), std::string::npos) << body;
    EXPECT_NE(body.find("for (int k = 0; k < 4; ++k)"), std::string::npos) << body;
    EXPECT_NE(body.find("sg_call_index_fixed<1>(params.header, tid, idx);"), std::string::npos) << body;
    EXPECT_TRUE(nvrtc_compiles(cuda.source));
    // The read-only load of x is prefetched: phase 0 of the four elements loads, then phase 1 of
    // each does the work; the partial last block runs both phases per element (phase 2).
    EXPECT_NE(body.find("struct sg_pre_axpy {"), std::string::npos) << body;
    EXPECT_NE(body.find("template <int SG_PHASE>\nSG_FN void sg_thread_axpy("), std::string::npos) << body;
    EXPECT_NE(body.find("if constexpr (SG_PHASE == 0) return;"), std::string::npos) << body;
    EXPECT_NE(body.find("sg_thread_axpy<0>(params, tid, idx[k], sg_pre[k]);"), std::string::npos) << body;
    EXPECT_NE(body.find("sg_thread_axpy<1>(params, first + k * (int64_t)blockDim.x, idx[k], sg_pre[k]);"),
              std::string::npos) << body;
    EXPECT_NE(body.find("sg_thread_axpy<2>(params, tid, idx, sg_pre);"), std::string::npos) << body;
    EXPECT_TRUE(nvcc_compiles(cuda.source));

    auto plain = codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, {});
    EXPECT_EQ(plain.source.find("SG_PHASE"), std::string::npos);  // nothing read-only: one phase
    EXPECT_EQ(plain.source.find("sg_tensor_load_ro(v"), std::string::npos);
    EXPECT_NE(plain.source.find("    sg_call_index(params.header, tid, idx);"), std::string::npos);  // rank unknown
    CodegenOptions one = readonly;
    one.elements_per_thread = 1;
    auto single = codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, one);
    EXPECT_EQ(single.elements_per_thread, 1);
    EXPECT_NE(single.source.find("if (tid >= params.header.total) return;"), std::string::npos);
    EXPECT_TRUE(nvrtc_compiles(single.source));

    EXPECT_EQ(single.source.find("SG_PHASE"), std::string::npos);  // one element a thread: one phase
    auto cpu = codegen::generate_kernel(tp.program, *k, DeviceType::CPU, readonly);
    EXPECT_EQ(cpu.elements_per_thread, 1);
    EXPECT_EQ(cpu.source.find("SG_PHASE"), std::string::npos);
    EXPECT_EQ(cpu.source.find("sg_tensor_load_ro(v"), std::string::npos);
}

/// Options of a call of rank `rank` whose parameters `shaped` are call-shaped, with read-only loads.
CodegenOptions call_shaped_options(int rank, uint64_t shaped) {
    CodegenOptions o;
    o.readonly_loads = true;
    o.call_rank = rank;
    o.call_shaped_params = shaped;
    return o;
}

// Dense launches (emit_dense.cpp): a four-element kernel whose call-index accesses of views of
// the call's rank are all prefetched loads and deferrable stores of vector-sized scalars takes
// `tid` as their offset in the SG_DENSE == 2 instantiation, which the entry picks per launch
// from the kernel's layout test; a view of lower rank keeps its strides and is not part of the
// test. A dense access of vector elements, and one element a thread, leave the kernel as it was.
TEST(Kernel, DenseLaunchesOfCallShapedViewsOfTheCallsRank) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    auto* k = tp.add_kernel("mix", {{"x", tp.tensor(f, 2, kRead)}, {"row", tp.tensor(f, 1, kRead)},
                                    {"y", tp.tensor(f, 2, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* j = b.call_index(1);
    Value* sum = b.binary(OpKind::Mul, b.tensor_load(arg(k, 0), {i, j}), b.tensor_load(arg(k, 1), {j}));
    b.tensor_store(arg(k, 2), {i, j}, sum);
    b.ret({});

    const CodegenOptions o = call_shaped_options(2, 0x7);
    auto cuda = codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, o);
    const std::string body = cuda.source.substr(cuda.body_begin);
    EXPECT_NE(body.find("template <int SG_PHASE, int SG_DENSE>\nSG_FN void sg_thread_mix("), std::string::npos) << body;
    EXPECT_NE(body.find("if constexpr (SG_PHASE == 1 || SG_DENSE == 2) v"), std::string::npos) << body;  // x
    EXPECT_NE(body.find("if constexpr (SG_DENSE == 2) sg_post.s0 = "), std::string::npos) << body;            // y
    EXPECT_NE(body.find("SG_FN int sg_dense_mix(const sg_params_mix& P) {\n    return sg_dense_view<2>("), std::string::npos)
        << body;
    EXPECT_NE(body.find("sg_dense_view<2>(P.header, P.x.strides)"), std::string::npos) << body;
    EXPECT_NE(body.find("sg_dense_view<2>(P.header, P.y.strides)"), std::string::npos) << body;
    EXPECT_EQ(body.find("P.row.strides, "), std::string::npos) << body;  // rank 1 in a rank-2 call: strided
    EXPECT_NE(body.find("    const int sg_layout = sg_user::sg_dense_mix(params);\n    if (sg_layout == 2 && "),
              std::string::npos) << body;
    EXPECT_NE(body.find("sg_thread_mix<0, 0>(params, tid, idx[k], sg_pre[k], sg_post[k]);"), std::string::npos) << body;
    EXPECT_NE(body.find("sg_thread_mix<1, 0>(params, first + k * (int64_t)blockDim.x, idx[k], sg_pre[k], sg_post[k]);"),
              std::string::npos) << body;
    EXPECT_NE(body.find("sg_thread_mix<2, 0>(params, tid, idx, sg_pre, sg_post);"), std::string::npos) << body;
    EXPECT_NE(body.find("            const int64_t tid = base + k;\n            sg_call_index_fixed<2>(params.header, tid, "
                        "idx[k]);\n            sg_user::sg_thread_mix<0, 2>(params, tid, idx[k], sg_pre[k], sg_post[k]);"),
              std::string::npos) << body;
    EXPECT_NE(body.find("sg_thread_mix<1, 2>(params, base + k, idx[k], sg_pre[k], sg_post[k]);"), std::string::npos) << body;
    EXPECT_TRUE(nvrtc_compiles(cuda.source));
    EXPECT_TRUE(nvcc_compiles(cuda.source));

    CodegenOptions one = o;  // one element a thread: no dense launches
    one.elements_per_thread = 1;
    EXPECT_EQ(codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, one).source.find("SG_DENSE"), std::string::npos);
    CodegenOptions unknown = o;  // no call-shaped views known: strides everywhere
    unknown.call_shaped_params = 0;
    EXPECT_EQ(codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, unknown).source.find("SG_DENSE"), std::string::npos);
    auto cpu = codegen::generate_kernel(tp.program, *k, DeviceType::CPU, o);  // one instantiation on the CPU
    EXPECT_EQ(cpu.source.find("SG_DENSE"), std::string::npos);

    // A float3 view at the call index: four consecutive elements a thread would take three
    // scalar loads each, uncoalesced; the kernel keeps one instantiation.
    TestProgram tv;
    const Type* f3 = tv.types.vector(ScalarKind::Float, 3);
    auto* kv = tv.add_kernel("shade", {{"p", tv.tensor(f3, 1, kRead)}, {"y", tv.tensor(tv.types.float32(), 1, kRW)}});
    ir::Builder bv(*kv, tv.types);
    bv.set_insert(kv->body.get());
    Value* c = bv.call_index(0);
    bv.tensor_store(arg(kv, 1), {c}, bv.extract(bv.tensor_load(arg(kv, 0), {c}), 1));
    bv.ret({});
    const std::string vec = codegen::generate_kernel(tv.program, *kv, DeviceType::CUDA, call_shaped_options(1, 0x3)).source;
    EXPECT_NE(vec.find("template <int SG_PHASE>\nSG_FN void sg_thread_shade("), std::string::npos) << vec;
    EXPECT_EQ(vec.find("SG_DENSE"), std::string::npos) << vec;
}

// Vector accesses of a dense launch (emit_dense.cpp, layout 2): where every dense access is a
// prefetched load or a deferrable store of 2-, 4- or 8-byte scalars, a full block's thread takes
// four consecutive elements, loaded and stored four scalars at a time; a store inside a branch
// cannot be deferred, and leaves the kernel without dense launches.
TEST(Kernel, DenseLaunchesTakeVectorAccessesWhereEveryDenseAccessCan) {
    for (const ScalarKind scalar : {ScalarKind::Float, ScalarKind::Half, ScalarKind::Double}) {
        TestProgram tp;
        auto& T = tp.types;
        const Type* f = T.scalar(scalar);
        auto* k = tp.add_kernel("axpy", {{"x", tp.tensor(f, 1, kRead)}, {"g", tp.tensor(f, 1, kRead)},
                                         {"y", tp.tensor(f, 1, kRW)}});
        ir::Builder b(*k, T);
        b.set_insert(k->body.get());
        Value* i = b.call_index(0);
        b.tensor_store(arg(k, 2), {i}, b.binary(OpKind::Mul, b.tensor_load(arg(k, 0), {i}), b.tensor_load(arg(k, 1), {i})));
        b.ret({});
        auto cuda = codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, call_shaped_options(1, 0x7));
        const std::string body = cuda.source.substr(cuda.body_begin);
        // The alignment the vector accesses need: 8 bytes for four halves, 16 for float and double.
        const std::string bytes = scalar == ScalarKind::Half ? "8" : "16";
        EXPECT_NE(body.find("if constexpr (SG_PHASE == 1 || SG_DENSE == 2) v"), std::string::npos) << body;
        EXPECT_NE(body.find("if constexpr (SG_DENSE == 2) sg_post.s0 = "), std::string::npos) << body;
        for (const char* view : {"x", "g", "y"})
            EXPECT_NE(body.find(std::string("sg_aligned(P.") + view + ".data, " + bytes + ")"), std::string::npos) << body;
        EXPECT_NE(body.find("sg_aligned(P.y.data, " + bytes + ") ? 2 : 0;"), std::string::npos) << body;
        EXPECT_NE(body.find("sg_dense_load4((const "), std::string::npos) << body;
        EXPECT_NE(body.find("*)P.y.data + base, v);"), std::string::npos) << body;
        EXPECT_NE(body.find("    if (sg_layout == 2 && blockIdx.x * (int64_t)blockDim.x * 4 + blockDim.x * (int64_t)4 <= "
                            "params.header.total) {\n"),
                  std::string::npos) << body;
        EXPECT_NE(body.find("        sg_user::sg_vload_axpy(params, base, sg_pre);\n"), std::string::npos) << body;
        EXPECT_NE(body.find("sg_thread_axpy<1, 2>(params, base + k, idx[k], sg_pre[k], sg_post[k]);\n"), std::string::npos)
            << body;
        EXPECT_NE(body.find("        sg_user::sg_vstore_axpy(params, base, sg_post);\n"), std::string::npos) << body;
        EXPECT_TRUE(nvrtc_compiles(cuda.source)) << lang::scalar_name(scalar);
        if (scalar == ScalarKind::Float) EXPECT_TRUE(nvcc_compiles(cuda.source));
    }
    // The store inside a branch: it may not run, so it stays in the thread function.
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    auto* k = tp.add_kernel("clip", {{"x", tp.tensor(f, 1, kRead)}, {"y", tp.tensor(f, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* x = b.tensor_load(arg(k, 0), {i});
    ir::Inst* branch = b.if_(b.binary(OpKind::Gt, x, b.const_float(f, 0.0)), {});
    b.set_insert(branch->regions[0].get());
    b.tensor_store(arg(k, 1), {i}, x);
    b.yield({});
    b.set_insert(branch->regions[1].get());
    b.yield({});
    b.set_insert(k->body.get());
    b.ret({});
    const std::string code = codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, call_shaped_options(1, 0x3)).source;
    EXPECT_EQ(code.find("SG_DENSE"), std::string::npos) << code;
    EXPECT_EQ(code.find("sg_post"), std::string::npos) << code;

    // Two stores to one view (the first is touched after), and a store after a trap that may end
    // the thread: neither can wait for the entry, so neither kernel has dense launches.
    for (const bool trap : {false, true}) {
        TestProgram tq;
        const Type* fq = tq.types.float32();
        auto* kq = tq.add_kernel("twice", {{"x", tq.tensor(fq, 1, kRead)}, {"y", tq.tensor(fq, 1, kRW)}});
        ir::Builder bq(*kq, tq.types);
        bq.set_insert(kq->body.get());
        Value* c = bq.call_index(0);
        Value* v = bq.tensor_load(arg(kq, 0), {c});
        if (trap) {
            ir::Inst* check = bq.if_(bq.binary(OpKind::Lt, v, bq.const_float(fq, 0.0)), {});
            bq.set_insert(check->regions[0].get());
            bq.trap(1);
            bq.yield({});
            bq.set_insert(check->regions[1].get());
            bq.yield({});
            bq.set_insert(kq->body.get());
        } else {
            bq.tensor_store(arg(kq, 1), {c}, v);
        }
        bq.tensor_store(arg(kq, 1), {c}, bq.binary(OpKind::Mul, v, v));
        bq.ret({});
        const std::string twice =
            codegen::generate_kernel(tq.program, *kq, DeviceType::CUDA, call_shaped_options(1, 0x3)).source;
        EXPECT_EQ(twice.find("SG_DENSE"), std::string::npos) << twice;
        EXPECT_NE(twice.find("template <int SG_PHASE>\nSG_FN void sg_thread_twice("), std::string::npos) << twice;
        EXPECT_TRUE(nvrtc_compiles(twice));
    }
}

TEST(Kernel, KernelsWithLoopsRunOneElementPerThread) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* i32 = T.int32();
    auto* k = tp.add_kernel("count", {{"out", tp.tensor(i32, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    ir::Inst* loop = b.loop({b.const_int(i32, 0)}, 0);
    b.set_insert(loop->regions[0].get());
    Value* next = b.binary(OpKind::Add, loop->regions[0]->params[0], b.const_int(i32, 1));
    b.yield({b.binary(OpKind::Lt, next, b.const_int(i32, 3)), next});
    b.set_insert(k->body.get());
    b.tensor_store(arg(k, 0), {i}, loop->results[0]);
    b.ret({});
    EXPECT_EQ(codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, {}).elements_per_thread, 1);
}

// sum 1..n through a Loop inside an If (with results); fib(n) through a Loop whose carried
// values swap (parallel assignment).
TEST(Kernel, IfResultsAndLoopCarriedValues) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* i32 = T.int32();
    auto* k = tp.add_kernel("loops", {{"n", tp.tensor(i32, 1, kRead)}, {"sum", tp.tensor(i32, 1, kRW)},
                                      {"fib", tp.tensor(i32, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* n = b.tensor_load(arg(k, 0), {i});
    Value* one = b.const_int(i32, 1);
    ir::Inst* guard = b.if_(b.binary(OpKind::Ge, n, one), {i32});
    b.set_insert(guard->regions[0].get());
    {
        ir::Inst* loop = b.loop({one, b.const_int(i32, 0)}, 0);
        ir::Block* body = loop->regions[0].get();
        b.set_insert(body);
        Value* kk = body->params[0];
        kk->hint = "k";
        Value* s2 = b.binary(OpKind::Add, body->params[1], kk);
        Value* k2 = b.binary(OpKind::Add, kk, one);
        b.yield({b.binary(OpKind::Le, k2, n), k2, s2});
        b.set_insert(guard->regions[0].get());
        b.yield({loop->results[1]});
    }
    b.set_insert(guard->regions[1].get());
    b.yield({b.const_int(i32, 0)});
    b.set_insert(k->body.get());
    ir::Inst* sign = b.if_(b.binary(OpKind::Gt, n, b.const_int(i32, 5)), {i32});
    b.set_insert(sign->regions[0].get());
    b.yield({guard->results[0]});
    b.set_insert(sign->regions[1].get());
    b.yield({b.unary(OpKind::Neg, guard->results[0])});
    b.set_insert(k->body.get());
    b.tensor_store(arg(k, 1), {i}, sign->results[0]);

    ir::Inst* fib = b.loop({b.const_int(i32, 0), one, b.const_int(i32, 0)}, 100);
    ir::Block* body = fib->regions[0].get();
    b.set_insert(body);
    Value* c2 = b.binary(OpKind::Add, body->params[2], one);
    b.yield({b.binary(OpKind::Lt, c2, n), body->params[1], b.binary(OpKind::Add, body->params[0], body->params[1]), c2});
    b.set_insert(k->body.get());
    b.tensor_store(arg(k, 2), {i}, fib->results[0]);
    b.ret({});

    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    std::vector<int> ns = {0, 1, 2, 5, 6, 10}, sums(6), fibs(6);
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({6});
    pb.set_tensor(0, ns.data(), {6}, {1});
    pb.set_tensor(1, sums.data(), {6}, {1});
    pb.set_tensor(2, fibs.data(), {6}, {1});
    c.cpu->run(pb.data(), 0, 6);
    const int expected_fib[] = {1, 1, 1, 5, 8, 55};
    for (size_t t = 0; t < ns.size(); ++t) {
        int s = ns[t] >= 1 ? ns[t] * (ns[t] + 1) / 2 : 0;
        EXPECT_EQ(sums[t], ns[t] > 5 ? s : -s) << "n=" << ns[t];
        EXPECT_EQ(fibs[t], expected_fib[t]) << "n=" << ns[t];
    }
    expect_cuda_compiles(tp.program, *k);
}

// Vectors (SoA layout: components inner[0] apart), swizzles, a struct, an array with dynamic
// indexing, a pair, a matrix product, cross/dot, a broadcast clamp and a componentwise select.
TEST(Kernel, VectorsStructsArraysAndMatrices) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    const Type* f3 = T.vector(ScalarKind::Float, 3);
    lang::StructDecl decl;
    decl.name = "Particle";
    const Type* particle = T.structure(&decl);
    T.set_fields(&decl, {{"pos", f3, false}, {"mass", f, false}}, false, nullptr);
    auto* k = tp.add_kernel("composites", {{"pos", tp.tensor(f3, 1, kRead)}, {"idx", tp.tensor(T.int32(), 1, kRead)},
                                           {"out", tp.tensor(f3, 1, kRW)}, {"out_s", tp.tensor(f, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* q = b.extract(b.construct(particle, {b.tensor_load(arg(k, 0), {i}), b.const_float(f, 2.0)}), 0);
    Value* mass = b.extract(b.construct(particle, {q, b.const_float(f, 2.0)}), 1);
    Value* zyx = b.swizzle(q, {2, 1, 0});
    Value* arr = b.construct(T.array(f, 3), {b.extract(q, 0), b.extract(q, 1), b.swizzle(q, {2})});
    Value* kidx = b.tensor_load(arg(k, 1), {i});
    Value* arr2 = b.insert_dyn(arr, kidx, b.const_float(f, 10.0));
    Value* pair = b.construct(T.pair(f), {b.extract(q, 0), b.const_float(f, 0.5)});
    auto row = [&](double x, double y, double z) {
        return b.construct(f3, {b.const_float(f, x), b.const_float(f, y), b.const_float(f, z)});
    };
    Value* m = b.construct(T.matrix(ScalarKind::Float, 3, 3), {row(1, 0, 0), row(0, 2, 0), row(0, 0, 3)});
    Value* mv = b.intrinsic(IntrinsicId::MatMul, f3, {m, zyx});
    Value* clamped = b.intrinsic(IntrinsicId::Clamp, f3, {mv, b.const_float(f, 0.5), b.const_float(f, 4.0)});
    Value* smaller = b.select(b.binary(OpKind::Lt, q, zyx), q, zyx);
    Value* cross = b.intrinsic(IntrinsicId::Cross, f3, {q, zyx});
    Value* res = b.binary(OpKind::Add, b.binary(OpKind::Mul, clamped, b.splat(mass, f3)), b.binary(OpKind::Add, smaller, cross));
    b.tensor_store(arg(k, 2), {i}, res);
    Value* s = b.binary(OpKind::Add, b.intrinsic(IntrinsicId::Dot, f, {q, q}), b.extract_dyn(arr, kidx));
    s = b.binary(OpKind::Add, s, b.binary(OpKind::Mul, b.extract_dyn(arr2, kidx), b.extract(pair, 1)));
    b.tensor_store(arg(k, 3), {i}, b.binary(OpKind::Add, s, b.extract(arr2, 2)));
    b.ret({});

    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    EXPECT_NE(c.code().find("struct Particle {"), std::string::npos) << c.code();
    const int n = 4;
    float soa[3 * n];  // x of all, then y of all, then z of all: component stride n
    for (int t = 0; t < 3 * n; ++t) soa[t] = 0.3f * float(t) - 1.1f;
    int idx[n] = {0, 1, 2, 7};  // 7: out of range, reads 0 and writes nothing
    float out[3 * n] = {}, out_s[n] = {};
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({n});
    pb.set_tensor(0, soa, {n}, {1}, {n, 0});
    pb.set_tensor(1, idx, {n}, {1});
    pb.set_tensor(2, out, {n}, {3});
    pb.set_tensor(3, out_s, {n}, {1});
    c.cpu->run(pb.data(), 0, n);
    for (int t = 0; t < n; ++t) {
        const float q3[3] = {soa[t], soa[n + t], soa[2 * n + t]};
        const float z[3] = {q3[2], q3[1], q3[0]};
        const float mvv[3] = {z[0], 2 * z[1], 3 * z[2]};
        const float cr[3] = {q3[1] * z[2] - q3[2] * z[1], q3[2] * z[0] - q3[0] * z[2], q3[0] * z[1] - q3[1] * z[0]};
        for (int d = 0; d < 3; ++d) {
            float expected = std::fmin(std::fmax(mvv[d], 0.5f), 4.0f) * 2.0f + std::fmin(q3[d], z[d]) + cr[d];
            EXPECT_NEAR(out[3 * t + d], expected, 1e-5f) << t << "," << d;
        }
        float arr_k = idx[t] < 3 ? q3[idx[t]] : 0.0f;
        float arr2_k = idx[t] < 3 ? 10.0f : 0.0f;
        float arr2_2 = idx[t] == 2 ? 10.0f : q3[2];
        float dot = q3[0] * q3[0] + q3[1] * q3[1] + q3[2] * q3[2];
        EXPECT_NEAR(out_s[t], dot + arr_k + arr2_k * 0.5f + arr2_2, 1e-5f) << t;
    }
    expect_cuda_compiles(tp.program, *k);
}

// Gradient views: many threads accumulate into one gradient element (stride 0), others store.
TEST(Kernel, GradientAddStoreLoad) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    auto* k = tp.add_kernel("grads", {{"x", tp.tensor(f, 1, kRead, true)}, {"y", tp.tensor(f, 1, kRW, true)},
                                      {"out", tp.tensor(f, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* xv = b.tensor_load(arg(k, 0), {i});
    b.tensor_grad_add(arg(k, 0), {i}, b.binary(OpKind::Mul, xv, b.const_float(f, 2.0)));
    b.tensor_grad_store(arg(k, 1), {i}, b.convert(i, f));
    b.tensor_store(arg(k, 2), {i}, b.tensor_grad_load(arg(k, 1), {i}));
    b.ret({});
    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    const int n = 4000;
    std::vector<float> x(n, 0.5f), y(n), ygrad(n), out(n);
    float xgrad = 0;
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({n});
    pb.set_tensor(0, x.data(), {n}, {1});
    pb.set_grad(0, &xgrad, {0});  // broadcast gradient: every thread adds into one element
    pb.set_tensor(1, y.data(), {n}, {1});
    pb.set_grad(1, ygrad.data(), {1});
    pb.set_tensor(2, out.data(), {n}, {1});
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t) pool.emplace_back([&, t] { c.cpu->run(pb.data(), t * n / 4, (t + 1) * n / 4); });
    for (auto& th : pool) th.join();
    EXPECT_FLOAT_EQ(xgrad, float(n));  // exact: sums of 1.0 stay integral
    for (int t = 0; t < n; t += 397) {
        EXPECT_EQ(ygrad[size_t(t)], float(t));
        EXPECT_EQ(out[size_t(t)], float(t));
    }
    expect_cuda_compiles(tp.program, *k);
}

// A batch of tensors: each thread reads and writes its slice (TensorSlice of the primal and the
// gradient view), the way the glue passes a (B, N) tensor to a rank-1 tensor parameter.
TEST(Kernel, TensorSlicesOfPrimalAndGradientViews) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    const Type* batch = tp.tensor(f, 2, kRW, true);
    auto* k = tp.add_kernel("slices", {{"x", batch}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    const Type* row_type = T.tensor(f, 1, batch->tensor);
    Value* row = b.tensor_slice(arg(k, 0), {i}, row_type);
    Value* zero = b.const_int(T.int32(), 0);
    Value* one = b.const_int(T.int32(), 1);
    // row[1] = row[0] + 10 * (extent of the row); grad(row)[0] = grad(row)[1] + 1.
    Value* v = b.binary(OpKind::Add, b.tensor_load(row, {zero}),
                        b.binary(OpKind::Mul, b.convert(b.tensor_shape(row, 0), f), b.const_float(f, 10.0)));
    b.tensor_store(row, {one}, v);
    b.tensor_grad_store(row, {zero}, b.binary(OpKind::Add, b.tensor_grad_load(row, {one}), b.const_float(f, 1.0)));
    b.ret({});
    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    EXPECT_NE(c.code().find("sg_tensor_slice<1>("), std::string::npos) << c.code();
    // Three rows of 2, stored column-major (strides {1, 3}); the gradient row-major.
    float x[6] = {1, 2, 3, 0, 0, 0}, g[6] = {0, 5, 0, 6, 0, 7};
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({3});
    pb.set_tensor(0, x, {3, 2}, {1, 3});
    pb.set_grad(0, g, {2, 1});
    c.cpu->run(pb.data(), 0, 3);
    for (int r = 0; r < 3; ++r) {
        EXPECT_EQ(x[3 + r], x[r] + 20.0f) << r;
        EXPECT_EQ(g[2 * r], g[2 * r + 1] + 1.0f) << r;
    }
    expect_cuda_compiles(tp.program, *k);
}

// A tape (LocalAlloc) written in one loop and read in another; slots past the end are ignored
// (and reported in debug mode).
TEST(Kernel, LocalTapes) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    const Type* i32 = T.int32();
    auto* k = tp.add_kernel("tape", {{"n", tp.tensor(i32, 1, kRead)}, {"out", tp.tensor(f, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* n = b.tensor_load(arg(k, 0), {i});
    Value* one = b.const_int(i32, 1);
    Value* tape = b.local_alloc(f, 8);
    tape->hint = "tape";
    ir::Inst* fill = b.loop({b.const_int(i32, 0)}, 8);
    b.set_insert(fill->regions[0].get());
    Value* kk = fill->regions[0]->params[0];
    b.local_store(tape, kk, b.convert(b.binary(OpKind::Mul, kk, kk), f));
    Value* k2 = b.binary(OpKind::Add, kk, one);
    b.yield({b.binary(OpKind::Lt, k2, n), k2});
    b.set_insert(k->body.get());
    ir::Inst* sum = b.loop({b.const_int(i32, 0), b.const_float(f, 0.0)}, 8);
    ir::Block* body = sum->regions[0].get();
    b.set_insert(body);
    Value* s2 = b.binary(OpKind::Add, body->params[1], b.local_load(tape, body->params[0]));
    Value* j2 = b.binary(OpKind::Add, body->params[0], one);
    b.yield({b.binary(OpKind::Lt, j2, n), j2, s2});
    b.set_insert(k->body.get());
    b.tensor_store(arg(k, 1), {i}, b.binary(OpKind::Add, sum->results[1], b.local_load(tape, b.const_int(i32, 100))));
    b.ret({});

    for (bool debug : {false, true}) {
        CodegenOptions options;
        options.debug_checks = debug;
        auto c = compile_cpu(tp, k, options);
        ASSERT_COMPILED(c);
        std::vector<int> ns = {1, 3, 8, 10};
        std::vector<float> out(4);
        codegen::FaultRecord flag{};
        ParamBlock pb(c.gen.layout);
        pb.set_call_shape({4});
        pb.header().fault = &flag;
        pb.set_tensor(0, ns.data(), {4}, {1});
        pb.set_tensor(1, out.data(), {4}, {1});
        c.cpu->run(pb.data(), 0, 4);
        const float expected[] = {0, 5, 140, 140};
        for (int t = 0; t < 4; ++t) EXPECT_EQ(out[size_t(t)], expected[t]) << "n=" << ns[size_t(t)];
        EXPECT_EQ(flag.code, debug ? codegen::kErrorIndexOutOfBounds : 0u);
        expect_cuda_compiles(tp.program, *k, options);
    }
}

// Integer x / 0 and x % 0 are 0, INT_MIN / -1 wraps, shift counts are masked; float % is fmod.
TEST(Kernel, IntegerArithmeticNeverTraps) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* i32 = T.int32();
    const Type* f = T.float32();
    auto* k = tp.add_kernel("intops", {{"a", tp.tensor(i32, 1, kRead)}, {"b", tp.tensor(i32, 1, kRead)},
                                       {"out", tp.tensor(i32, 2, kRW)}, {"fout", tp.tensor(f, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* a = b.tensor_load(arg(k, 0), {i});
    Value* d = b.tensor_load(arg(k, 1), {i});
    const OpKind ops[] = {OpKind::Div, OpKind::Rem, OpKind::Shl, OpKind::Shr};
    for (int o = 0; o < 4; ++o) b.tensor_store(arg(k, 2), {i, b.const_int(i32, o)}, b.binary(ops[o], a, d));
    b.tensor_store(arg(k, 3), {i}, b.binary(OpKind::Rem, b.convert(a, f), b.const_float(f, 3.0)));
    b.ret({});
    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    std::vector<int> as = {7, INT32_MIN, 7, -8, 7}, bs = {0, -1, 33, 1, 2}, out(20);
    std::vector<float> fout(5);
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({5});
    pb.set_tensor(0, as.data(), {5}, {1});
    pb.set_tensor(1, bs.data(), {5}, {1});
    pb.set_tensor(2, out.data(), {5, 4}, {4, 1});
    pb.set_tensor(3, fout.data(), {5}, {1});
    c.cpu->run(pb.data(), 0, 5);
    const int expected[5][4] = {{0, 0, 7, 7}, {INT32_MIN, 0, 0, -1}, {0, 7, 14, 3}, {-8, 0, -16, -4}, {3, 1, 28, 1}};
    for (int t = 0; t < 5; ++t) {
        for (int o = 0; o < 4; ++o) EXPECT_EQ(out[size_t(t * 4 + o)], expected[t][o]) << t << "," << o;
        EXPECT_EQ(fout[size_t(t)], std::fmod(float(as[size_t(t)]), 3.0f));
    }
    expect_cuda_compiles(tp.program, *k);
}

// Debug checks: out-of-bounds tensor indices report code 1 and skip the access; a Trap
// reports its code and ends the thread.
TEST(Kernel, DebugChecksAndTraps) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    const Type* i32 = T.int32();
    auto* k = tp.add_kernel("checked", {{"a", tp.tensor(f, 1, kRead)}, {"out", tp.tensor(f, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* v = b.tensor_load(arg(k, 0), {b.binary(OpKind::Add, i, b.const_int(i32, 2))});
    ir::Inst* iff = b.if_(b.binary(OpKind::Eq, i, b.const_int(i32, 3)), {});
    b.set_insert(iff->regions[0].get());
    b.trap(7);
    b.yield({});
    b.set_insert(iff->regions[1].get());
    b.yield({});
    b.set_insert(k->body.get());
    b.tensor_store(arg(k, 1), {i}, b.binary(OpKind::Add, v, b.const_float(f, 1.0)));
    b.ret({});
    CodegenOptions options;
    options.debug_checks = true;
    auto c = compile_cpu(tp, k, options);
    ASSERT_COMPILED(c);
    float a[4] = {10, 20, 30, 40}, out[4] = {-1, -1, -1, -1};
    codegen::FaultRecord flag{};
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({4});
    pb.header().fault = &flag;
    pb.header().site = 17;
    pb.set_tensor(0, a, {4}, {1});
    pb.set_tensor(1, out, {4}, {1});
    c.cpu->run(pb.data(), 0, 2);  // in bounds: no fault
    EXPECT_EQ(flag.code, 0u);
    EXPECT_EQ(out[0], 31);
    EXPECT_EQ(out[1], 41);
    c.cpu->run(pb.data(), 2, 3);  // a[4] is out of bounds: skipped, reads 0
    EXPECT_EQ(flag.code, codegen::kErrorIndexOutOfBounds);
    EXPECT_EQ(flag.claim, 1u);
    EXPECT_EQ(flag.site, 17);   // the launch site, from the call header
    EXPECT_EQ(flag.param, 0);   // kernel parameter `a`
    EXPECT_EQ(flag.dim, 0);
    EXPECT_EQ(flag.index, 4);
    EXPECT_EQ(flag.extent, 4);
    EXPECT_EQ(out[2], 1);
    flag = {};
    c.cpu->run(pb.data(), 3, 4);  // out of bounds first (the first fault wins), then the trap
    EXPECT_EQ(flag.code, 1u);
    EXPECT_EQ(flag.index, 5);
    EXPECT_EQ(out[3], -1);  // the trap ended the thread before the store
    pb.header().fault = nullptr;  // a null record is allowed
    c.cpu->run(pb.data(), 0, 4);
    expect_cuda_compiles(tp.program, *k, options);
}

// A function with a return value and an out parameter (a struct of results), calling another.
TEST(Kernel, CallsWithSeveralResults) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    auto* twice = tp.add_function("twice", {{"x", f}}, f, {f}, false);
    {
        ir::Builder b(*twice, T);
        b.set_insert(twice->body.get());
        b.ret({b.binary(OpKind::Add, arg(twice, 0), arg(twice, 0))});
    }
    auto* split = tp.add_function("split", {{"x", f}, {"hi", f, ir::ParamDir::Out}}, f, {f, f}, false);
    {
        ir::Builder b(*split, T);
        b.set_insert(split->body.get());
        // A trap in a function returns zero results (and records its code) instead of ending
        // the thread; never taken here.
        ir::Inst* iff = b.if_(b.binary(OpKind::Gt, arg(split, 0), b.const_float(f, 100.0)), {});
        b.set_insert(iff->regions[0].get());
        b.trap(5);
        b.yield({});
        b.set_insert(iff->regions[1].get());
        b.yield({});
        b.set_insert(split->body.get());
        b.ret({b.call(twice, {arg(split, 0)})[0], b.binary(OpKind::Add, arg(split, 0), b.const_float(f, 1.0))});
    }
    auto* k = tp.add_kernel("caller", {{"a", tp.tensor(f, 1, kRead)}, {"out", tp.tensor(f, 1, kRW)}, {"scale", f}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    auto r = b.call(split, {b.tensor_load(arg(k, 0), {i})});
    Value* v = b.binary(OpKind::Add, r[0], b.binary(OpKind::Mul, r[1], b.const_float(f, 10.0)));
    b.tensor_store(arg(k, 1), {i}, b.binary(OpKind::Mul, v, arg(k, 2)));
    b.ret({});
    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    EXPECT_NE(c.code().find("struct split_results {"), std::string::npos) << c.code();
    EXPECT_NE(c.code().find("return {};"), std::string::npos) << c.code();
    float a[3] = {1, 2, 300}, out[3] = {};
    codegen::FaultRecord flag{};
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({3});
    pb.header().fault = &flag;
    pb.set_tensor(0, a, {3}, {1});
    pb.set_tensor(1, out, {3}, {1});
    pb.set(2, 0.5f);
    c.cpu->run(pb.data(), 0, 3);
    for (int t = 0; t < 2; ++t) EXPECT_FLOAT_EQ(out[t], (2 * a[t] + (a[t] + 1) * 10) * 0.5f);
    EXPECT_EQ(out[2], 0.0f);  // split(300) trapped: zero results
    EXPECT_EQ(flag.code, 5u);
    expect_cuda_compiles(tp.program, *k);

    // generate_functions: every non-kernel function, compilable on both targets.
    const std::string cpu = codegen::generate_functions(tp.program, DeviceType::CPU);
    auto path = write_source(cpu, ".cpp");
    auto [status, output] = run_command("g++ -std=c++17 -fsyntax-only -Wall " + path.string());
    EXPECT_EQ(status, 0) << output;
    const std::string cuda = codegen::generate_functions(tp.program, DeviceType::CUDA);
    EXPECT_TRUE(nvcc_compiles(cuda));
    EXPECT_TRUE(nvrtc_compiles(cuda));
}

// Matrix elements (rows inner[1] apart, columns inner[0] apart) with 64-bit offsets; rank-0
// tensors; transpose.
TEST(Kernel, MatrixElementsAnd64BitIndexing) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    const Type* m22 = T.matrix(ScalarKind::Float, 2, 2);
    auto* k = tp.add_kernel("matrices", {{"m", tp.tensor(m22, 1, kRead)}, {"out", tp.tensor(m22, 1, kRW)},
                                         {"total", tp.tensor(f, 0, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* mv = b.tensor_load(arg(k, 0), {i});
    b.tensor_store(arg(k, 1), {i}, b.intrinsic(IntrinsicId::Transpose, m22, {mv}));
    b.tensor_atomic_add(arg(k, 2), {}, b.extract(b.extract(mv, 0), 1));
    b.ret({});
    CodegenOptions options;
    options.index_64bit = true;
    auto c = compile_cpu(tp, k, options);
    ASSERT_COMPILED(c);
    EXPECT_NE(c.code().find("int64_t off"), std::string::npos);
    // Column-major storage of each 2x2 element: element (r, c) at r * 1 + c * 2.
    float m[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {}, total = 0;
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({2});
    pb.set_tensor(0, m, {2}, {4}, {2, 1});
    pb.set_tensor(1, out, {2}, {4}, {1, 2});  // row-major output
    pb.set_tensor(2, &total, {}, {});
    c.cpu->run(pb.data(), 0, 2);
    // transpose(M) stored row-major equals M stored column-major.
    for (int t = 0; t < 8; ++t) EXPECT_EQ(out[t], m[t]) << t;
    EXPECT_EQ(total, 3 + 7);  // M[0][1] of each element
    expect_cuda_compiles(tp.program, *k, options);
}

}  // namespace
}  // namespace sg::test
