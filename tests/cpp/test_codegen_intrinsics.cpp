// tests/cpp/test_codegen_intrinsics.cpp — codegen tests of the intrinsics (lang/intrinsics.def):
// values of the float forms against <cmath>, and every shape the prelude must accept (vectors,
// matrices, ints, doubles, bools, bit casts) compiled for both targets; fast math (CUDA only).
#include <cmath>
#include <cstring>

#include "codegen_harness.h"

namespace sg::test {
namespace {

// Every float-valued intrinsic on float scalars, against <cmath> in double precision.
TEST(Intrinsics, ScalarValuesMatchReference) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    const double V[] = {0.3, 0.7, 1.9, -0.45, 2.5};
    struct Case {
        IntrinsicId id;
        std::vector<int> args;  // indices into V
        double expected;
    };
    const std::vector<Case> cases = {
        {IntrinsicId::Abs, {3}, 0.45}, {IntrinsicId::Min, {0, 1}, 0.3}, {IntrinsicId::Max, {0, 1}, 0.7},
        {IntrinsicId::Clamp, {2, 0, 1}, 0.7}, {IntrinsicId::Saturate, {2}, 1.0}, {IntrinsicId::Lerp, {0, 1, 4}, 1.3},
        {IntrinsicId::Sqrt, {2}, std::sqrt(1.9)}, {IntrinsicId::Rsqrt, {2}, 1 / std::sqrt(1.9)},
        {IntrinsicId::Rcp, {2}, 1 / 1.9}, {IntrinsicId::Exp, {0}, std::exp(0.3)}, {IntrinsicId::Exp2, {0}, std::exp2(0.3)},
        {IntrinsicId::Log, {2}, std::log(1.9)}, {IntrinsicId::Log2, {2}, std::log2(1.9)},
        {IntrinsicId::Log10, {2}, std::log10(1.9)}, {IntrinsicId::Pow, {2, 4}, std::pow(1.9, 2.5)},
        {IntrinsicId::Sin, {0}, std::sin(0.3)}, {IntrinsicId::Cos, {0}, std::cos(0.3)}, {IntrinsicId::Tan, {0}, std::tan(0.3)},
        {IntrinsicId::Tanh, {0}, std::tanh(0.3)}, {IntrinsicId::Asin, {0}, std::asin(0.3)},
        {IntrinsicId::Acos, {0}, std::acos(0.3)}, {IntrinsicId::Atan, {2}, std::atan(1.9)},
        {IntrinsicId::Atan2, {0, 3}, std::atan2(0.3, -0.45)}, {IntrinsicId::Sinh, {0}, std::sinh(0.3)},
        {IntrinsicId::Cosh, {0}, std::cosh(0.3)}, {IntrinsicId::Dot, {0, 1}, 0.21}, {IntrinsicId::Length, {3}, 0.45},
        {IntrinsicId::Distance, {0, 1}, 0.4}, {IntrinsicId::Normalize, {3}, -1.0}, {IntrinsicId::MatMul, {0, 1}, 0.21},
        {IntrinsicId::Frac, {3}, 0.55}, {IntrinsicId::Fmod, {4, 1}, std::fmod(2.5, 0.7)},
        {IntrinsicId::Smoothstep, {0, 2, 1}, 0.15625}, {IntrinsicId::Reflect, {0, 1}, 0.3 - 2 * 0.7 * 0.3 * 0.7},
        {IntrinsicId::Fma, {0, 1, 2}, 2.11}, {IntrinsicId::Mad, {0, 1, 2}, 2.11}, {IntrinsicId::Floor, {3}, -1.0},
        {IntrinsicId::Ceil, {3}, 0.0}, {IntrinsicId::Round, {4}, 3.0}, {IntrinsicId::Trunc, {3}, 0.0},
        {IntrinsicId::Sign, {3}, -1.0}, {IntrinsicId::Step, {0, 1}, 1.0}, {IntrinsicId::Step, {1, 0}, 0.0},
    };
    auto* k = tp.add_kernel("intrinsics", {{"v", tp.tensor(f, 1, kRead)}, {"out", tp.tensor(f, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    std::vector<Value*> vals;
    for (int n = 0; n < 5; ++n) vals.push_back(b.tensor_load(arg(k, 0), {b.const_int(T.int32(), n)}));
    for (size_t c = 0; c < cases.size(); ++c) {
        std::vector<Value*> args;
        for (int a : cases[c].args) args.push_back(vals[size_t(a)]);
        b.tensor_store(arg(k, 1), {b.const_int(T.int32(), int64_t(c))}, b.intrinsic(cases[c].id, f, args));
    }
    b.ret({});
    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    float v[5];
    for (int n = 0; n < 5; ++n) v[n] = float(V[n]);
    std::vector<float> out(cases.size(), -99.0f);
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({1});
    pb.set_tensor(0, v, {5}, {1});
    pb.set_tensor(1, out.data(), {int64_t(out.size())}, {1});
    c.cpu->run(pb.data(), 0, 1);
    for (size_t n = 0; n < cases.size(); ++n)
        EXPECT_NEAR(out[n], cases[n].expected, 2e-6 * std::max(1.0, std::fabs(cases[n].expected)))
            << lang::intrinsic_info(cases[n].id).name;
    expect_cuda_compiles(tp.program, *k);
}

// Every intrinsic on every shape it accepts (vectors, matrices, ints, doubles, bools, bit casts):
// the prelude has the overloads the emitter calls, on both targets.
TEST(Intrinsics, EveryShapeCompiles) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f3 = T.vector(ScalarKind::Float, 3);
    const Type* d3 = T.vector(ScalarKind::Double, 3);
    const Type* i3 = T.vector(ScalarKind::Int32, 3);
    const Type* u3 = T.vector(ScalarKind::UInt32, 3);
    const Type* m22 = T.matrix(ScalarKind::Float, 2, 2);
    auto* k = tp.add_kernel("shapes", {{"f3", f3}, {"d3", d3}, {"i3", i3}, {"u3", u3}, {"m", m22},
                                       {"d", T.scalar(ScalarKind::Double)}, {"i", T.int32()},
                                       {"i64", T.scalar(ScalarKind::Int64)}, {"u8", T.scalar(ScalarKind::UInt8)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    auto all = [&](Value* x, bool elementwise_only) {
        for (int id = 0; id < int(IntrinsicId::Count); ++id) {
            const auto& info = lang::intrinsic_info(IntrinsicId(id));
            const bool same = info.rule == lang::IntrinsicRule::Same || info.rule == lang::IntrinsicRule::SameAny;
            if (!same || (elementwise_only && (info.id == IntrinsicId::Normalize || info.id == IntrinsicId::Reflect)))
                continue;
            if (!lang::is_floating(x->type->scalar) && info.rule != lang::IntrinsicRule::SameAny) continue;
            b.intrinsic(info.id, x->type, std::vector<Value*>(size_t(info.arity), x));
        }
    };
    for (size_t p : {0, 1, 2, 5, 6, 7, 8}) all(arg(k, p), false);
    all(arg(k, 4), true);  // matrices: elementwise forms
    Value* fv = arg(k, 0);
    const Type* f = T.float32();
    const Type* b3 = T.vector(ScalarKind::Bool, 3);
    b.intrinsic(IntrinsicId::Dot, f, {fv, fv});
    b.intrinsic(IntrinsicId::Length, f, {fv});
    b.intrinsic(IntrinsicId::Distance, T.scalar(ScalarKind::Double), {arg(k, 1), arg(k, 1)});
    b.intrinsic(IntrinsicId::Cross, f3, {fv, fv});
    Value* m23 = b.const_splat(T.matrix(ScalarKind::Float, 2, 3), 1.0);
    Value* m34 = b.const_splat(T.matrix(ScalarKind::Float, 3, 4), 2.0);
    b.intrinsic(IntrinsicId::MatMul, T.vector(ScalarKind::Float, 2), {m23, fv});
    b.intrinsic(IntrinsicId::MatMul, T.vector(ScalarKind::Float, 4), {fv, m34});
    b.intrinsic(IntrinsicId::MatMul, T.matrix(ScalarKind::Float, 2, 4), {m23, m34});
    b.intrinsic(IntrinsicId::MatMul, f, {fv, fv});
    b.intrinsic(IntrinsicId::Transpose, T.matrix(ScalarKind::Float, 3, 2), {m23});
    Value* cond = b.binary(OpKind::Lt, fv, fv);
    b.intrinsic(IntrinsicId::SelectFn, f3, {cond, fv, fv});
    b.intrinsic(IntrinsicId::SelectFn, f3, {b.const_bool(true), fv, b.const_float(f, 1.0)});  // broadcast
    for (Value* x : {cond, fv, arg(k, 2)}) {
        b.intrinsic(IntrinsicId::Any, T.boolean(), {x});
        b.intrinsic(IntrinsicId::All, T.boolean(), {x});
    }
    b.intrinsic(IntrinsicId::IsNan, b3, {fv});
    b.intrinsic(IntrinsicId::IsInf, T.boolean(), {arg(k, 5)});
    b.intrinsic(IntrinsicId::AsInt, i3, {fv});
    b.intrinsic(IntrinsicId::AsUint, u3, {arg(k, 2)});
    b.intrinsic(IntrinsicId::AsFloat, f3, {arg(k, 3)});
    b.intrinsic(IntrinsicId::AsFloat, f, {arg(k, 6)});
    // Ops on vectors, matrices and small ints.
    for (OpKind op : {OpKind::Div, OpKind::Rem, OpKind::Shl, OpKind::Shr, OpKind::BitXor})
        for (size_t p : {2, 3, 7, 8}) b.binary(op, arg(k, p), arg(k, p));
    b.unary(OpKind::BitNot, cond);
    b.binary(OpKind::LogicAnd, cond, b.unary(OpKind::LogicNot, cond));
    b.binary(OpKind::Rem, arg(k, 4), arg(k, 4));
    b.convert(arg(k, 2), f3);
    b.convert(fv, b3);
    b.convert(arg(k, 8), T.boolean());
    b.extract_dyn(arg(k, 4), arg(k, 6));
    b.insert_dyn(arg(k, 4), arg(k, 6), b.const_splat(T.vector(ScalarKind::Float, 2), 0.0));
    b.insert(fv, 1, b.const_float(f, 3.0));
    b.undef(T.array(m22, 2));
    b.ret({});
    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    expect_cuda_compiles(tp.program, *k);
}

// Fast math: the CUDA source defines SG_FAST_MATH (the prelude's approximate intrinsics and
// tanh.approx.f32) and compiles with NVRTC for sm_90; the precise source does not define it. On
// the CPU fast math changes nothing: both kernels give bitwise the same values.
TEST(Intrinsics, FastMathCompilesForCudaAndLeavesTheCpuUnchanged) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f = T.float32();
    const Type* f3 = T.vector(ScalarKind::Float, 3);
    auto* k = tp.add_kernel("fast", {{"v", tp.tensor(f, 1, kRead)}, {"out", tp.tensor(f, 1, kRW)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* x = b.tensor_load(arg(k, 0), {i});
    Value* y = b.binary(OpKind::Add, x, b.const_float(f, 1.25));
    Value* sum = b.binary(OpKind::Div, x, y);
    for (IntrinsicId id : {IntrinsicId::Sin, IntrinsicId::Cos, IntrinsicId::Tan, IntrinsicId::Tanh, IntrinsicId::Exp,
                           IntrinsicId::Log, IntrinsicId::Log2, IntrinsicId::Log10, IntrinsicId::Sqrt, IntrinsicId::Rcp}) {
        Value* operand = id == IntrinsicId::Sin || id == IntrinsicId::Cos ? x : y;
        sum = b.binary(OpKind::Add, sum, b.intrinsic(id, f, {operand}));
    }
    sum = b.binary(OpKind::Add, sum, b.intrinsic(IntrinsicId::Pow, f, {y, x}));
    Value* v3 = b.intrinsic(IntrinsicId::Sin, f3, {b.splat(x, f3)});
    sum = b.binary(OpKind::Add, sum, b.extract(v3, 2));
    Value* h = b.convert(x, T.scalar(ScalarKind::Half));
    sum = b.binary(OpKind::Add, sum, b.convert(b.intrinsic(IntrinsicId::Exp, h->type, {h}), f));
    Value* d = b.convert(x, T.scalar(ScalarKind::Double));
    sum = b.binary(OpKind::Add, sum, b.convert(b.intrinsic(IntrinsicId::Sin, d->type, {d}), f));
    b.tensor_store(arg(k, 1), {i}, sum);
    b.ret({});
    ir::pair_sincos(*k);  // the float sin(x) and cos(x): one SinCos (sg_sincos)
    ASSERT_NE(ir::print_function(*k).find("sincos"), std::string::npos);

    codegen::CodegenOptions fast;
    fast.fast_math = true;
    const auto precise_cuda = codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, {});
    const auto fast_cuda = codegen::generate_kernel(tp.program, *k, DeviceType::CUDA, fast);
    EXPECT_EQ(precise_cuda.source.find("#define SG_FAST_MATH"), std::string::npos);
    EXPECT_NE(fast_cuda.source.find("#define SG_FAST_MATH 1"), std::string::npos);
    EXPECT_NE(fast_cuda.source.find(", fast math ===="), std::string::npos);  // the banner debug_code shows
    expect_cuda_compiles(tp.program, *k, fast);
    expect_cuda_compiles(tp.program, *k);

    auto precise_cpu = compile_cpu(tp, k);
    auto fast_cpu = compile_cpu(tp, k, fast);
    ASSERT_COMPILED(precise_cpu);
    ASSERT_COMPILED(fast_cpu);
    std::vector<float> in = {0.1f, 0.5f, 1.3f, 2.9f, 7.0f};
    auto run = [&](const Compiled& c) {
        std::vector<float> out(in.size(), -99.0f);
        ParamBlock pb(c.gen.layout);
        pb.set_call_shape({int64_t(in.size())});
        pb.set_tensor(0, in.data(), {int64_t(in.size())}, {1});
        pb.set_tensor(1, out.data(), {int64_t(out.size())}, {1});
        c.cpu->run(pb.data(), 0, int64_t(in.size()));
        return out;
    };
    const std::vector<float> a = run(precise_cpu), bvals = run(fast_cpu);
    for (size_t n = 0; n < in.size(); ++n) {
        EXPECT_EQ(std::memcmp(&a[n], &bvals[n], sizeof(float)), 0) << "x=" << in[n];
        EXPECT_TRUE(std::isfinite(a[n])) << "x=" << in[n];
    }
}

}  // namespace
}  // namespace sg::test
