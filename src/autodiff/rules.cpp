// src/autodiff/rules.cpp — derivative rules of the math intrinsics.
//
// Each reverse rule is written as the adjoint update it performs, in the argument order of the
// intrinsic, with the derivative as a comment above it. Conventions follow docs/language.md exactly
// (they decide gradient parity with slangc).
#include "autodiff/rules.h"

#include <cmath>

namespace sg::autodiff {

using ir::OpKind;
using ir::Value;
using lang::IntrinsicId;

std::pair<Value*, Value*> Arith::unify(Value* a, Value* b) {
    if (a->type == b->type) return {a, b};
    if (a->type->is_scalar() && !b->type->is_scalar()) return {b_.splat(a, b->type), b};
    if (b->type->is_scalar() && !a->type->is_scalar()) return {a, b_.splat(b, a->type)};
    SG_INTERNAL_ASSERT(
        false, "autodiff arithmetic on mismatched types " + lang::type_name(a->type) + ", " + lang::type_name(b->type));
}

Value* Arith::add(Value* a, Value* b) {
    auto [x, y] = unify(a, b);
    return b_.binary(OpKind::Add, x, y);
}
Value* Arith::sub(Value* a, Value* b) {
    auto [x, y] = unify(a, b);
    return b_.binary(OpKind::Sub, x, y);
}
Value* Arith::mul(Value* a, Value* b) {
    auto [x, y] = unify(a, b);
    return b_.binary(OpKind::Mul, x, y);
}
Value* Arith::div(Value* a, Value* b) {
    auto [x, y] = unify(a, b);
    return b_.binary(OpKind::Div, x, y);
}
Value* Arith::cmp(OpKind op, Value* a, Value* b) {
    auto [x, y] = unify(a, b);
    return b_.binary(op, x, y);
}

Value* Arith::call(IntrinsicId id, const std::vector<Value*>& args) {
    const lang::Type* t = args[0]->type;
    lang::TypeContext& types = b_.types();
    switch (id) {
    case IntrinsicId::Dot:
    case IntrinsicId::Length:
    case IntrinsicId::Distance: t = types.scalar_of(t); break;
    case IntrinsicId::Transpose: t = types.matrix(t->scalar, t->cols, t->rows); break;
    case IntrinsicId::MatMul: {
        const lang::Type *a = args[0]->type, *b = args[1]->type;
        if (a->is_matrix() && b->is_vector()) t = types.vector(a->scalar, a->rows);
        else if (a->is_vector() && b->is_matrix()) t = types.vector(a->scalar, b->cols);
        else t = types.matrix(a->scalar, a->rows, b->cols);
        break;
    }
    default: break;
    }
    return b_.intrinsic(id, t, args);
}

Value* Arith::sum(Value* v) {
    if (v->type->is_scalar()) return v;
    Value* s = nullptr;
    int n = v->type->rows;
    for (int k = 0; k < n; ++k) {
        Value* c = sum(b_.extract(v, k));  // matrix rows are vectors: sum recursively
        s = s ? b_.binary(OpKind::Add, s, c) : c;
    }
    return s;
}

Value* Arith::clamped_sqrt(Value* x, double eps) {
    const lang::Type* t = x->type;
    const lang::ScalarKind k = t->scalar;
    // The constant must be what the target computes: sqrt of eps rounded to the type, itself
    // correctly rounded (IEEE sqrt). Half computes in float and rounds again: left as it was.
    if (t->is_matrix() || (k != lang::ScalarKind::Float && k != lang::ScalarKind::Double))
        return call(IntrinsicId::Sqrt, {call(IntrinsicId::Max, {x, cst(t, eps)})});
    const double root = k == lang::ScalarKind::Float ? double(std::sqrt(float(eps))) : std::sqrt(eps);
    return select(cmp(OpKind::Ge, x, cst(t, eps)), call(IntrinsicId::Sqrt, {x}), cst(t, root));
}

Value* Arith::accumulate(Value* a, Value* b) {
    if (!a) return b;
    if (!b) return a;
    SG_INTERNAL_ASSERT(a->type == b->type, "accumulate of mismatched adjoint types");
    const lang::Type* t = a->type;
    if (t->is_numeric()) return b_.binary(OpKind::Add, a, b);
    std::vector<Value*> members;
    if (t->is_array()) {
        for (int64_t k = 0; k < t->count; ++k)
            members.push_back(accumulate(b_.extract(a, int(k)), b_.extract(b, int(k))));
    } else if (t->is_pair()) {  // reverse mode over forward mode: the primal's and the tangent's
        for (int k = 0; k < 2; ++k) members.push_back(accumulate(b_.extract(a, k), b_.extract(b, k)));
    } else if (t->is_struct()) {
        const auto& fields = b_.types().fields(t);
        for (size_t k = 0; k < fields.size(); ++k) {
            Value* x = b_.extract(a, int(k));
            Value* y = b_.extract(b, int(k));
            members.push_back(b_.types().is_differentiable(fields[k].type) && !fields[k].no_diff ? accumulate(x, y)
                                                                                                 : x);
        }
    } else {
        SG_INTERNAL_ASSERT(false, "accumulate of non-differentiable type " + lang::type_name(t));
    }
    return b_.construct(t, members);
}

std::vector<Value*> intrinsic_adjoints(Arith& a, IntrinsicId id, const std::vector<Value*>& x, Value* r, Value* d) {
    const lang::Type* t = x[0]->type;
    auto c = [&](double v) { return a.cst(a.builder().types().scalar_of(r->type), v); };
    auto zero_like = [&](Value* v) { return a.cst(v->type, 0.0); };
    switch (id) {
    // d/dx |x| = sign(x), sign(0) = 0
    case IntrinsicId::Abs: return {a.mul(d, a.call(IntrinsicId::Sign, {x[0]}))};
    // d/dx min(x, y): the smaller argument takes d; a tie gives each 0.5 d
    case IntrinsicId::Min:
    case IntrinsicId::Max: {
        OpKind win = id == IntrinsicId::Min ? OpKind::Lt : OpKind::Gt;
        Value* half = a.mul(d, c(0.5));
        Value* tie = a.cmp(OpKind::Eq, x[0], x[1]);
        Value* z = zero_like(d);
        Value* dx = a.select(a.cmp(win, x[0], x[1]), d, a.select(tie, half, z));
        Value* dy = a.select(a.cmp(win, x[1], x[0]), d, a.select(tie, half, z));
        return {dx, dy};
    }
    // clamp(x, lo, hi): x takes d inside [lo, hi]; lo takes it below, hi above
    case IntrinsicId::Clamp: {
        Value* z = zero_like(d);
        Value* below = a.cmp(OpKind::Lt, x[0], x[1]);
        Value* above = a.cmp(OpKind::Gt, x[0], x[2]);
        Value* dx = a.select(below, z, a.select(above, z, d));
        return {dx, a.select(below, d, z), a.select(above, d, z)};
    }
    // saturate(x): d inside [0, 1]
    case IntrinsicId::Saturate: {
        Value* z = zero_like(d);
        Value* inside =
            a.builder().binary(OpKind::LogicAnd, a.cmp(OpKind::Ge, x[0], c(0)), a.cmp(OpKind::Le, x[0], c(1)));
        return {a.select(inside, d, z)};
    }
    // lerp(p, q, s) = p + (q - p) s: (1 - s), s, (q - p)
    case IntrinsicId::Lerp: return {a.mul(d, a.sub(c(1), x[2])), a.mul(d, x[2]), a.mul(d, a.sub(x[1], x[0]))};
    // sqrt: 0.5 / sqrt(max(1e-7, x))
    case IntrinsicId::Sqrt:
        return {a.mul(d, a.div(c(0.5), a.clamped_sqrt(x[0], 1e-7)))};
    // rsqrt: -0.5 / (x sqrt(x))
    case IntrinsicId::Rsqrt: return {a.mul(d, a.div(c(-0.5), a.mul(x[0], a.call(IntrinsicId::Sqrt, {x[0]}))))};
    // rcp: -1 / max(1e-7, x^2)
    case IntrinsicId::Rcp:
        return {a.mul(d, a.div(c(-1), a.call(IntrinsicId::Max, {a.mul(x[0], x[0]), a.cst(t, 1e-7)})))};
    // exp: e^x; exp2: 2^x ln 2
    case IntrinsicId::Exp: return {a.mul(d, r)};
    case IntrinsicId::Exp2: return {a.mul(d, a.mul(r, c(std::log(2.0))))};
    // log: 1/x; log2: 1/(x ln 2); log10: 1/(x ln 10)
    case IntrinsicId::Log: return {a.div(d, x[0])};
    case IntrinsicId::Log2: return {a.div(d, a.mul(x[0], c(std::log(2.0))))};
    case IntrinsicId::Log10: return {a.div(d, a.mul(x[0], c(std::log(10.0))))};
    // pow(x, y): both 0 when x < 1e-6; else y x^y / x and x^y ln x
    case IntrinsicId::Pow: {
        Value* z = zero_like(d);
        Value* small = a.cmp(OpKind::Lt, x[0], c(1e-6));
        Value* dx = a.mul(d, a.div(a.mul(x[1], r), x[0]));
        Value* dy = a.mul(d, a.mul(r, a.call(IntrinsicId::Log, {x[0]})));
        return {a.select(small, z, dx), a.select(small, z, dy)};
    }
    // sin: cos x; cos: -sin x; tan: 1 + tan^2; tanh: 1 - tanh^2
    case IntrinsicId::Sin: return {a.mul(d, a.call(IntrinsicId::Cos, {x[0]}))};
    case IntrinsicId::Cos: return {a.neg(a.mul(d, a.call(IntrinsicId::Sin, {x[0]})))};
    case IntrinsicId::Tan: return {a.mul(d, a.add(c(1), a.mul(r, r)))};
    case IntrinsicId::Tanh: return {a.mul(d, a.sub(c(1), a.mul(r, r)))};
    // asin: 1/sqrt(1 - x^2); acos: -1/sqrt(1 - x^2); atan: 1/(1 + x^2)
    case IntrinsicId::Asin: return {a.div(d, a.call(IntrinsicId::Sqrt, {a.sub(c(1), a.mul(x[0], x[0]))}))};
    case IntrinsicId::Acos: return {a.neg(a.div(d, a.call(IntrinsicId::Sqrt, {a.sub(c(1), a.mul(x[0], x[0]))})))};
    case IntrinsicId::Atan: return {a.div(d, a.add(c(1), a.mul(x[0], x[0])))};
    // atan2(y, x): x/(x^2 + y^2), -y/(x^2 + y^2)
    case IntrinsicId::Atan2: {
        Value* den = a.add(a.mul(x[0], x[0]), a.mul(x[1], x[1]));
        return {a.div(a.mul(d, x[1]), den), a.neg(a.div(a.mul(d, x[0]), den))};
    }
    // sinh: cosh x; cosh: sinh x
    case IntrinsicId::Sinh: return {a.mul(d, a.call(IntrinsicId::Cosh, {x[0]}))};
    case IntrinsicId::Cosh: return {a.mul(d, a.call(IntrinsicId::Sinh, {x[0]}))};
    // dot(p, q): q, p
    case IntrinsicId::Dot: return {a.mul(x[1], d), a.mul(x[0], d)};
    // cross(p, q): dp = q x d, dq = d x p
    case IntrinsicId::Cross: return {a.call(IntrinsicId::Cross, {x[1], d}), a.call(IntrinsicId::Cross, {d, x[0]})};
    // length(p) as sqrt(sum p_i^2) with the sqrt rule: p / sqrt(max(1e-7, p.p))
    case IntrinsicId::Length: {
        Value* s = a.call(IntrinsicId::Dot, {x[0], x[0]});
        Value* k = a.div(d, a.clamped_sqrt(s, 1e-7));
        return {a.mul(x[0], k)};
    }
    // distance(p, q) = length(q - p)
    case IntrinsicId::Distance: {
        Value* v = a.sub(x[1], x[0]);
        Value* s = a.call(IntrinsicId::Dot, {v, v});
        Value* g = a.mul(v, a.div(d, a.clamped_sqrt(s, 1e-7)));
        return {a.neg(g), g};
    }
    // normalize(p) = p * (1 / length(p))
    case IntrinsicId::Normalize: {
        Value* s = a.call(IntrinsicId::Dot, {x[0], x[0]});
        Value* len = a.call(IntrinsicId::Sqrt, {s});
        Value* inv = a.div(c(1), len);
        Value* d_inv = a.call(IntrinsicId::Dot, {d, x[0]});
        Value* d_len = a.neg(a.div(d_inv, a.mul(len, len)));
        Value* d_s = a.mul(d_len, a.div(c(0.5), a.clamped_sqrt(s, 1e-7)));
        return {a.add(a.mul(d, inv), a.mul(x[0], a.mul(d_s, c(2))))};
    }
    // mul(M, v) = M v: dM = d v^T, dv = M^T d;  mul(v, M) = v^T M: dv = M d, dM = v d^T;
    // mul(A, B): dA = d B^T, dB = A^T d
    case IntrinsicId::MatMul: {
        ir::Builder& b = a.builder();
        auto outer = [&](Value* u, Value* v) {  // u v^T as rows u_i * v
            std::vector<Value*> rows;
            for (int i = 0; i < u->type->rows; ++i) rows.push_back(a.mul(b.extract(u, i), v));
            return b.construct(b.types().matrix(u->type->scalar, u->type->rows, v->type->rows), rows);
        };
        const lang::Type *p = x[0]->type, *q = x[1]->type;
        if (p->is_matrix() && q->is_vector()) return {outer(d, x[1]), a.call(IntrinsicId::MatMul, {d, x[0]})};
        if (p->is_vector() && q->is_matrix()) return {a.call(IntrinsicId::MatMul, {x[1], d}), outer(x[0], d)};
        return {a.call(IntrinsicId::MatMul, {d, a.call(IntrinsicId::Transpose, {x[1]})}),
                a.call(IntrinsicId::MatMul, {a.call(IntrinsicId::Transpose, {x[0]}), d})};
    }
    case IntrinsicId::Transpose: return {a.call(IntrinsicId::Transpose, {d})};
    // frac: 1; fmod(x, y): 1 and 0
    case IntrinsicId::Frac: return {d};
    case IntrinsicId::Fmod: return {d, nullptr};
    // select(c, p, q): p where c, q elsewhere
    case IntrinsicId::SelectFn: {
        Value* z = zero_like(d);
        return {nullptr, a.select(x[0], d, z), a.select(x[0], z, d)};
    }
    // smoothstep(e0, e1, x) as t = saturate((x - e0)/(e1 - e0)); t t (3 - 2 t)
    case IntrinsicId::Smoothstep: {
        ir::Builder& b = a.builder();
        Value* w = a.sub(x[1], x[0]);
        Value* q = a.div(a.sub(x[2], x[0]), w);
        Value* tt = a.call(IntrinsicId::Saturate, {q});
        Value* inside = b.binary(OpKind::LogicAnd, a.cmp(OpKind::Ge, q, c(0)), a.cmp(OpKind::Le, q, c(1)));
        Value* d_t = a.mul(d, a.mul(a.mul(c(6), tt), a.sub(c(1), tt)));
        Value* d_q = a.select(inside, d_t, zero_like(d_t));
        Value* ww = a.mul(w, w);
        return {a.mul(d_q, a.div(a.sub(x[2], x[1]), ww)), a.neg(a.mul(d_q, a.div(a.sub(x[2], x[0]), ww))),
                a.div(d_q, w)};
    }
    // reflect(i, n) = i - 2 (n.i) n
    case IntrinsicId::Reflect: {
        Value* ni = a.call(IntrinsicId::Dot, {x[1], x[0]});
        Value* nd = a.call(IntrinsicId::Dot, {x[1], d});
        Value* di = a.sub(d, a.mul(x[1], a.mul(nd, c(2))));
        Value* dn = a.neg(a.mul(a.add(a.mul(d, ni), a.mul(x[0], nd)), c(2)));
        return {di, dn};
    }
    // fma(p, q, s) = p q + s
    case IntrinsicId::Fma:
    case IntrinsicId::Mad: return {a.mul(d, x[1]), a.mul(d, x[0]), d};
    default: return std::vector<Value*>(x.size(), nullptr);  // not differentiable
    }
}

Value* intrinsic_tangent(Arith& a, IntrinsicId id, const std::vector<Value*>& x, const std::vector<Value*>& t,
                         Value* r) {
    ir::Builder& b = a.builder();
    auto tan_or_zero = [&](size_t k) { return t[k] ? t[k] : a.cst(x[k]->type, 0.0); };
    const lang::IntrinsicInfo& info = lang::intrinsic_info(id);
    if (!info.differentiable) return nullptr;
    switch (id) {
    case IntrinsicId::Cross:
        return a.add(a.call(IntrinsicId::Cross, {tan_or_zero(0), x[1]}),
                     a.call(IntrinsicId::Cross, {x[0], tan_or_zero(1)}));
    case IntrinsicId::MatMul:
        return a.add(a.call(IntrinsicId::MatMul, {tan_or_zero(0), x[1]}),
                     a.call(IntrinsicId::MatMul, {x[0], tan_or_zero(1)}));
    case IntrinsicId::Transpose: return a.call(IntrinsicId::Transpose, {tan_or_zero(0)});
    case IntrinsicId::Normalize: {
        // d(p / L) = t / L + p d(1/L), d(1/L) = -dL / L^2, dL = (p.t) / sqrt(max(1e-7, p.p))
        Value* s = a.call(IntrinsicId::Dot, {x[0], x[0]});
        Value* len = a.call(IntrinsicId::Sqrt, {s});
        Value* tt = tan_or_zero(0);
        Value* dl = a.div(a.call(IntrinsicId::Dot, {x[0], tt}),
                          a.clamped_sqrt(s, 1e-7));
        Value* dinv = a.neg(a.div(dl, a.mul(len, len)));
        return a.add(a.div(tt, len), a.mul(x[0], dinv));
    }
    case IntrinsicId::Reflect: {
        Value* ti = tan_or_zero(0);
        Value* tn = tan_or_zero(1);
        Value* ni = a.call(IntrinsicId::Dot, {x[1], x[0]});
        Value* dni = a.add(a.call(IntrinsicId::Dot, {tn, x[0]}), a.call(IntrinsicId::Dot, {x[1], ti}));
        Value* two = a.cst(ni->type, 2.0);
        return a.sub(ti, a.mul(two, a.add(a.mul(x[1], dni), a.mul(tn, ni))));
    }
    default: break;
    }
    // Elementwise intrinsics have diagonal Jacobians: the reverse rule applied to the tangent
    // gives J t. Reductions (dot, length, distance) have row Jacobians: sum(grad * t).
    bool reduce = info.rule == lang::IntrinsicRule::Reduce;
    Value* total = nullptr;
    for (size_t k = 0; k < x.size(); ++k) {
        if (!t[k]) continue;
        Value* seed = reduce ? a.cst(r->type, 1.0) : t[k];
        std::vector<Value*> adj = intrinsic_adjoints(a, id, x, r, seed);
        if (!adj[k]) continue;
        Value* term = reduce ? a.sum(a.mul(adj[k], t[k])) : adj[k];
        total = total ? b.binary(OpKind::Add, total, term) : term;
    }
    return total;
}

}  // namespace sg::autodiff
