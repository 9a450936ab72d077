// src/ir/lower_sample.cpp — `t.sample(float2 uv)` on a 2-D tensor of floating-point scalars or
// vectors: SlangPy's bilinear read. With (W, H) = (shape[1], shape[0]) and p = uv * (W, H), the
// four texels around p are (x0, y0) = clamp(int(p), 0, (W, H) - 1) and
// (x1, y1) = clamp(int(p) + 1, 0, (W, H) - 1) (SlangPy: min(...), undefined for p <= -1); with
// f = frac(p) the value is
// lerp(lerp(t[y0][x0], t[y0][x1], f.x), lerp(t[y1][x0], t[y1][x1], f.x), f.y). There is no
// half-texel offset: uv = (0, 0) is texel (0, 0), and uv outside [0, 1] clamps.
//
// It is lowered into tensor loads and arithmetic, so a differentiable tensor gets its gradient
// (each texel's bilinear weight times the incoming gradient) and uv its derivative, from the
// ordinary rules of those ops.
#include "ir/lower_internal.h"

namespace sg::ir {

using lang::IntrinsicId;
using lang::ScalarKind;
using Lower = Lowering::FunctionLowering;

Value* Lower::lower_tensor_sample(Expr* e) {
    Value* t = lower_expr(e->operands[0]->operands[0]);
    const Type* f = types_.float32();
    const Type* i32 = types_.int32();
    Value* uv = lower_expr_as(e->operands[1], types_.vector(ScalarKind::Float, 2));
    b_.set_loc(e->loc);
    const Type* elem = t->type->element;
    const Type* scalar = types_.scalar(elem->scalar);
    // Per axis (0: x over dimension 1, 1: y over dimension 0): the two indices and the fraction.
    Value* idx0[2];
    Value* idx1[2];
    Value* frac[2];
    for (int axis = 0; axis < 2; ++axis) {
        Value* extent = b_.convert(b_.tensor_shape(t, 1 - axis), i32);
        Value* p = b_.binary(OpKind::Mul, b_.extract(uv, axis), b_.convert(extent, f));
        Value* texel = b_.convert(b_.detach(p), i32);  // truncation, as int(x) does
        Value* last = b_.binary(OpKind::Sub, extent, b_.const_int(i32, 1));
        Value* zero = b_.const_int(i32, 0);
        idx0[axis] = b_.intrinsic(IntrinsicId::Clamp, i32, {texel, zero, last});
        // SlangPy takes min(texel + 1, last), which reads before the tensor for p <= -1; clamped
        // here at 0 too (the same value wherever SlangPy's is defined).
        idx1[axis] = b_.intrinsic(IntrinsicId::Clamp, i32, {b_.binary(OpKind::Add, texel, b_.const_int(i32, 1)), zero, last});
        frac[axis] = b_.convert(b_.intrinsic(IntrinsicId::Frac, f, {p}), scalar);
    }
    auto load = [&](Value* x, Value* y) { return b_.tensor_load(t, {y, x}); };
    Value* c00 = load(idx0[0], idx0[1]);
    Value* c10 = load(idx1[0], idx0[1]);
    Value* c01 = load(idx0[0], idx1[1]);
    Value* c11 = load(idx1[0], idx1[1]);
    auto weight = [&](Value* s) { return elem->is_vector() ? b_.splat(s, elem) : s; };
    Value* top = b_.intrinsic(IntrinsicId::Lerp, elem, {c00, c10, weight(frac[0])});
    Value* bottom = b_.intrinsic(IntrinsicId::Lerp, elem, {c01, c11, weight(frac[0])});
    return b_.intrinsic(IntrinsicId::Lerp, elem, {top, bottom, weight(frac[1])});
}

}  // namespace sg::ir
