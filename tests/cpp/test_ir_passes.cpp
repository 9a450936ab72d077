// tests/cpp/test_ir_passes.cpp — the optimizing IR passes (cse, pair_sincos): what they merge and what they
// must leave alone, on IR built with the Builder and on lowered kernel-language functions (the
// backward of a chain of elementwise operations), with the generated code still computing the
// same values (test_programs runs every program through the same pipeline).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "autodiff/autodiff.h"
#include "codegen_harness.h"
#include "ir/lower.h"
#include "syntax/module_loader.h"
#include "lang/sema.h"

namespace sg::test {
namespace {

/// Instructions of `fn` (regions included) for which `pred` holds.
int count_insts(const ir::Block& b, const std::function<bool(const ir::Inst&)>& pred) {
    int n = 0;
    for (const auto& inst : b.insts) {
        n += pred(*inst) ? 1 : 0;
        for (const auto& region : inst->regions) n += count_insts(*region, pred);
    }
    return n;
}
int count_op(const ir::Function& fn, OpKind op) {
    return count_insts(*fn.body, [&](const ir::Inst& i) { return i.op == op; });
}
int count_intrinsic(const ir::Function& fn, IntrinsicId id) {
    return count_insts(*fn.body, [&](const ir::Inst& i) { return i.op == OpKind::Intrinsic && i.intrinsic() == id; });
}

TEST(Cse, MergesRepeatedPureInstructionsOfABlock) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f32 = T.float32();
    auto* fn = tp.add_function("f", {{"a", f32}, {"b", f32}}, f32, {f32}, false);
    ir::Builder b(*fn, T);
    b.set_insert(fn->body.get());
    Value *a = arg(fn, 0), *x = arg(fn, 1);
    std::vector<Value*> terms = {
        b.binary(OpKind::Mul, a, x), b.binary(OpKind::Mul, x, a),          // commutative: one mul
        b.binary(OpKind::Sub, a, x), b.binary(OpKind::Sub, x, a),          // not commutative: two
        b.const_float(f32, 1.0), b.const_float(f32, 1.0),                  // one constant 1
        b.const_float(f32, 0.0), b.const_float(f32, -0.0),                 // two different zeros
        b.intrinsic(IntrinsicId::Sin, f32, {a}), b.intrinsic(IntrinsicId::Sin, f32, {a}),
        b.intrinsic(IntrinsicId::Cos, f32, {a}),                           // another intrinsic
        b.intrinsic(IntrinsicId::Max, f32, {a, x}), b.intrinsic(IntrinsicId::Max, f32, {x, a}),  // fmax: not swapped
    };
    // The duplicates' uses collapse too: sin(a) * sin(a') becomes one mul of one sin.
    Value* sq1 = b.binary(OpKind::Mul, terms[8], terms[8]);
    Value* sq2 = b.binary(OpKind::Mul, terms[9], terms[9]);
    Value* sum = b.binary(OpKind::Add, sq1, sq2);
    for (Value* t : terms) sum = b.binary(OpKind::Add, sum, t);
    b.ret({sum});

    const int adds_before = count_op(*fn, OpKind::Add);
    ir::cse(*fn);
    ir::verify_function(*fn, "test");
    EXPECT_EQ(count_op(*fn, OpKind::Mul), 2) << ir::print_function(*fn);  // a*b, sin*sin
    EXPECT_EQ(count_op(*fn, OpKind::Sub), 2);
    EXPECT_EQ(count_op(*fn, OpKind::ConstFloat), 3);
    EXPECT_EQ(count_intrinsic(*fn, IntrinsicId::Sin), 1);
    EXPECT_EQ(count_intrinsic(*fn, IntrinsicId::Cos), 1);
    EXPECT_EQ(count_intrinsic(*fn, IntrinsicId::Max), 2);
    EXPECT_EQ(count_op(*fn, OpKind::Add), adds_before);  // the sum chain has no duplicates
}

// A value is reused only where its definition dominates: the outer block's values inside the
// regions of later instructions, never one region's values in a sibling region or after it.
TEST(Cse, RespectsStructuredControlFlow) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f32 = T.float32();
    auto* k = tp.add_kernel("k", {{"t", tp.tensor(f32, 1, lang::TensorAccess::ReadWrite)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* x = b.tensor_load(arg(k, 0), {i});
    Value* one = b.const_float(f32, 1.0);
    Value* outer = b.binary(OpKind::Add, x, one);
    ir::Inst* branch = b.if_(b.binary(OpKind::Gt, x, b.const_float(f32, 0.0)), {f32});
    b.set_insert(branch->regions[0].get());
    Value* then_sq = b.binary(OpKind::Mul, x, x);
    Value* then_add = b.binary(OpKind::Add, x, b.const_float(f32, 1.0));  // repeats `outer`
    b.yield({b.binary(OpKind::Add, then_sq, then_add)});
    b.set_insert(branch->regions[1].get());
    b.yield({b.binary(OpKind::Mul, x, x)});  // the then-region's x*x does not dominate this
    b.set_insert(k->body.get());
    Value* after = b.binary(OpKind::Mul, x, x);  // nor this
    ir::Inst* loop = b.loop({b.const_int(T.int32(), 0)}, 4);
    b.set_insert(loop->regions[0].get());
    Value* in_loop = b.binary(OpKind::Add, x, b.const_float(f32, 1.0));  // repeats `outer`
    Value* next = b.binary(OpKind::Add, loop->regions[0]->params[0], b.const_int(T.int32(), 1));
    b.tensor_store(arg(k, 0), {i}, in_loop);
    b.yield({b.binary(OpKind::Lt, next, b.const_int(T.int32(), 4)), next});
    b.set_insert(k->body.get());
    b.tensor_store(arg(k, 0), {i}, b.binary(OpKind::Add, b.binary(OpKind::Add, branch->results[0], after), outer));
    b.ret({});

    ir::cse(*k);
    ir::verify_function(*k, "test");
    EXPECT_EQ(count_op(*k, OpKind::Mul), 3) << ir::print_function(*k);
    // outer, the then-region's sum, the loop counter and the two sums after the If: the
    // then-region's and the loop's x + 1 reuse `outer`.
    EXPECT_EQ(count_op(*k, OpKind::Add), 5) << ir::print_function(*k);
    const ir::Inst* then_yield = branch->regions[0]->terminator();
    ASSERT_EQ(then_yield->operands.size(), 1u);
    EXPECT_EQ(then_yield->operands[0]->def->operands[1], outer);
    // The loop's store stores `outer` itself.
    const ir::Inst* loop_store = nullptr;
    for (const auto& inst : loop->regions[0]->insts)
        if (inst->op == OpKind::TensorStore) loop_store = inst.get();
    ASSERT_NE(loop_store, nullptr);
    EXPECT_EQ(loop_store->operands.back(), outer);

    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    std::vector<float> data = {2.0f, -3.0f};
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({2});
    pb.set_tensor(0, data.data(), {2}, {1});
    c.cpu->run(pb.data(), 0, 2);
    EXPECT_FLOAT_EQ(data[0], (4.0f + 3.0f) + 4.0f + 3.0f);  // x = 2: then-branch
    EXPECT_FLOAT_EQ(data[1], 9.0f + 9.0f - 2.0f);           // x = -3: else-branch
    expect_cuda_compiles(tp.program, *k);
}

// Loads may see a store in between; local storage and Undef are never merged either.
TEST(Cse, NeverMergesLoadsLocalStorageOrUndef) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f32 = T.float32();
    auto* k = tp.add_kernel("k", {{"t", tp.tensor(f32, 1, lang::TensorAccess::ReadWrite)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* first = b.tensor_load(arg(k, 0), {i});
    b.tensor_store(arg(k, 0), {i}, b.binary(OpKind::Add, first, first));
    Value* second = b.tensor_load(arg(k, 0), {i});
    Value* slot = b.local_alloc(f32, 1);
    Value* zero = b.const_int(T.int32(), 0);
    b.local_store(slot, zero, second);
    Value* l1 = b.local_load(slot, zero);
    b.local_store(slot, zero, b.binary(OpKind::Add, l1, l1));
    Value* l2 = b.local_load(slot, zero);
    Value* u1 = b.undef(f32);
    Value* u2 = b.undef(f32);
    b.tensor_store(arg(k, 0), {i}, b.binary(OpKind::Add, b.binary(OpKind::Add, l2, u1), u2));
    b.ret({});

    ir::cse(*k);
    ir::verify_function(*k, "test");
    EXPECT_EQ(count_op(*k, OpKind::TensorLoad), 2) << ir::print_function(*k);
    EXPECT_EQ(count_op(*k, OpKind::LocalLoad), 2);
    EXPECT_EQ(count_op(*k, OpKind::Undef), 2);

    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    std::vector<float> data = {1.5f};
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({1});
    pb.set_tensor(0, data.data(), {1}, {1});
    c.cpu->run(pb.data(), 0, 1);
    EXPECT_FLOAT_EQ(data[0], 6.0f);  // ((1.5 + 1.5) + 3) + 0 + 0
}

/// Lowers `source` and returns the backward derivative of `name` after the compile pipeline
/// (inline, strip_detach, dead_code, cse; pair_sincos when `pair`), as the call layer compiles it.
struct Lowered {
    lang::SourceManager sources;
    lang::AstContext ast;
    lang::TypeContext types;
    ir::Program program;
    ir::Function* bwd = nullptr;
};
std::unique_ptr<Lowered> lower_backward(const std::string& source, const std::string& name, bool pair = false) {
    auto out = std::make_unique<Lowered>();
    lang::Diagnostics diags;
    lang::SourceFile* root = out->sources.add("test.slang", source);
    lang::SourceLoader loader;
    std::vector<lang::ModuleAst*> modules = lang::load_modules(root, out->sources, loader, out->ast, diags);
    diags.throw_if_errors();
    lang::SemaResult sema = lang::analyze(modules, out->ast, out->types, diags);
    diags.throw_if_errors();
    out->program.types = &out->types;
    ir::Lowering lowering(out->program, diags);
    for (lang::FunctionDecl* f : sema.functions) {
        if (f->name != name) continue;
        ir::Function* fn = lowering.instantiate(f);
        out->bwd = lowering.derivative(fn, ir::DerivativeKind::Backward);
    }
    diags.throw_if_errors();
    autodiff::generate_derivatives(out->program, lowering.derivative_requests());
    EXPECT_NE(out->bwd, nullptr);
    if (!out->bwd) return out;
    ir::inline_calls(*out->bwd);
    autodiff::strip_detach(*out->bwd);
    ir::dead_code(*out->bwd);
    ir::cse(*out->bwd);
    if (pair) ir::pair_sincos(*out->bwd);
    ir::verify_function(*out->bwd, "test");
    return out;
}

constexpr const char* kChain10 = R"(
[Differentiable]
float chain10(float x)
{
    float y = x * 1.5 + 0.25;
    y = sin(y);
    y = y * y;
    y = exp(-y);
    y = y + x;
    y = tanh(y);
    y = y * 0.5 + 1.0;
    y = sqrt(y);
    return y * x;
}
)";

// The backward recomputes the primal; the derivative of y * y multiplies the same product twice.
TEST(Cse, BackwardOfAnElementwiseChainHasNoRepeatedWork) {
    auto l = lower_backward(kChain10, "chain10");
    ASSERT_NE(l->bwd, nullptr);
    const ir::Function& fn = *l->bwd;
    // Every pure instruction is distinct: no two have the same op, type, operands and immediates.
    std::vector<const ir::Inst*> pure;
    std::function<void(const ir::Block&)> collect = [&](const ir::Block& b) {
        for (const auto& inst : b.insts) {
            if (inst->op == OpKind::Intrinsic || inst->op == OpKind::Mul || inst->op == OpKind::Add ||
                inst->op == OpKind::ConstFloat)
                pure.push_back(inst.get());
            for (const auto& r : inst->regions) collect(*r);
        }
    };
    collect(*fn.body);
    for (size_t p = 0; p < pure.size(); ++p)
        for (size_t q = p + 1; q < pure.size(); ++q) {
            const ir::Inst &a = *pure[p], &c = *pure[q];
            if (a.op != c.op || a.imm_int != c.imm_int || a.result()->type != c.result()->type) continue;
            if (a.op == OpKind::ConstFloat) {
                EXPECT_NE(a.imm_float, c.imm_float) << ir::print_function(fn);
                continue;
            }
            auto ops = [](const ir::Inst& i) {
                std::vector<const Value*> v(i.operands.begin(), i.operands.end());
                if (i.op != OpKind::Intrinsic) std::sort(v.begin(), v.end());
                return v;
            };
            EXPECT_NE(ops(a), ops(c)) << "repeated " << ir::op_name(a.op) << "\n" << ir::print_function(fn);
        }
    EXPECT_EQ(count_intrinsic(fn, IntrinsicId::Sin), 1) << ir::print_function(fn);
    EXPECT_EQ(count_intrinsic(fn, IntrinsicId::Exp), 1);
    EXPECT_EQ(count_intrinsic(fn, IntrinsicId::Tanh), 1);
    // The sqrt rule's sqrt(max(y, 1e-7)) is y >= 1e-7 ? sqrt(y) : sqrt(1e-7): the primal's sqrt.
    EXPECT_EQ(count_intrinsic(fn, IntrinsicId::Sqrt), 1);
    EXPECT_EQ(count_intrinsic(fn, IntrinsicId::Max), 0);
}

TEST(PairSinCos, TheBackwardOfSinComputesSinAndCosOnce) {
    auto l = lower_backward(kChain10, "chain10", /*pair=*/true);
    ASSERT_NE(l->bwd, nullptr);
    EXPECT_EQ(count_op(*l->bwd, OpKind::SinCos), 1) << ir::print_function(*l->bwd);
    EXPECT_EQ(count_intrinsic(*l->bwd, IntrinsicId::Sin), 0);
    EXPECT_EQ(count_intrinsic(*l->bwd, IntrinsicId::Cos), 0);
}

// Paired where one dominates the other; a sin inside a region and a cos after it stay apart;
// vectors stay elementwise. The kernel's values are sin and cos.
TEST(PairSinCos, PairsOnlyDominatingScalarsAndKeepsTheValues) {
    TestProgram tp;
    auto& T = tp.types;
    const Type* f32 = T.float32();
    const Type* f2 = T.vector(lang::ScalarKind::Float, 2);
    auto* k = tp.add_kernel("k", {{"t", tp.tensor(f32, 1, lang::TensorAccess::ReadWrite)}});
    ir::Builder b(*k, T);
    b.set_insert(k->body.get());
    Value* i = b.call_index(0);
    Value* x = b.tensor_load(arg(k, 0), {i});
    Value* y = b.binary(OpKind::Mul, x, b.const_float(f32, 3.0));
    Value* s = b.intrinsic(IntrinsicId::Sin, f32, {x});  // outer sin, cos inside the If: paired
    ir::Inst* branch = b.if_(b.binary(OpKind::Gt, x, b.const_float(f32, 0.0)), {f32});
    b.set_insert(branch->regions[0].get());
    Value* inner_cos = b.intrinsic(IntrinsicId::Cos, f32, {x});
    Value* inner_sin_y = b.intrinsic(IntrinsicId::Sin, f32, {y});  // its cos after the If: apart
    b.yield({b.binary(OpKind::Add, inner_cos, inner_sin_y)});
    b.set_insert(branch->regions[1].get());
    b.yield({b.const_float(f32, 0.0)});
    b.set_insert(k->body.get());
    Value* cos_y = b.intrinsic(IntrinsicId::Cos, f32, {y});
    Value* v = b.splat(x, f2);
    Value* vs = b.intrinsic(IntrinsicId::Sin, f2, {v});
    Value* vc = b.intrinsic(IntrinsicId::Cos, f2, {v});
    Value* vsum = b.binary(OpKind::Add, b.extract(vs, 0), b.extract(vc, 1));
    Value* total = b.binary(OpKind::Add, b.binary(OpKind::Add, s, branch->results[0]), cos_y);
    b.tensor_store(arg(k, 0), {i}, b.binary(OpKind::Add, total, vsum));
    b.ret({});

    ir::pair_sincos(*k);
    ir::verify_function(*k, "test");
    EXPECT_EQ(count_op(*k, OpKind::SinCos), 1) << ir::print_function(*k);
    EXPECT_EQ(count_intrinsic(*k, IntrinsicId::Sin), 2);  // sin(y) in the region, the vector's
    EXPECT_EQ(count_intrinsic(*k, IntrinsicId::Cos), 2);  // cos(y) after it, the vector's

    auto c = compile_cpu(tp, k);
    ASSERT_COMPILED(c);
    std::vector<float> data = {0.7f, -1.3f};
    const std::vector<float> in = data;
    ParamBlock pb(c.gen.layout);
    pb.set_call_shape({2});
    pb.set_tensor(0, data.data(), {2}, {1});
    c.cpu->run(pb.data(), 0, 2);
    for (size_t t = 0; t < in.size(); ++t) {
        const float xv = in[t], yv = xv * 3.0f;
        const float branch_v = xv > 0 ? std::cos(xv) + std::sin(yv) : 0.0f;
        const float want = ((std::sin(xv) + branch_v) + std::cos(yv)) + (std::sin(xv) + std::cos(xv));
        EXPECT_FLOAT_EQ(data[t], want) << "x=" << xv;
    }
    expect_cuda_compiles(tp.program, *k);
}

}  // namespace
}  // namespace sg::test
