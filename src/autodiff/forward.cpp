// src/autodiff/forward.cpp — forward-mode differentiation (fwd_diff): every differentiable value
// gets a tangent computed alongside it; If results and loop-carried values carry their tangents.
// Tangents have the primal's type (differentials.h); calls that survived inlining go to the
// callee's user-supplied forward derivative.
#include <unordered_map>

#include "autodiff/autodiff.h"
#include "autodiff/custom_calls.h"
#include "autodiff/differentials.h"
#include "autodiff/rules.h"
#include "ir/builder.h"
#include "ir/passes.h"

namespace sg::autodiff {

using namespace ir;

namespace {

class Forward {
public:
    Forward(Program& program, Function& stub, Function& primal)
        : types_(*program.types), stub_(stub), primal_(primal), b_(stub, *program.types), a_(b_) {}
    void run();

private:
    using Map = std::unordered_map<const Value*, Value*>;
    Value* P(const Value* v) {
        auto it = primal_map_.find(v);
        SG_INTERNAL_ASSERT(it != primal_map_.end(), "forward mode: value not mapped");
        return it->second;
    }
    Value* T(const Value* v) {
        auto it = tangent_.find(v);
        return it == tangent_.end() ? nullptr : it->second;
    }
    Value* T_or_zero(const Value* v) {
        Value* t = T(v);
        return t ? t : b_.zero(v->type);
    }
    bool diff(const Value* v) const { return types_.is_differentiable(v->type); }
    std::vector<Value*> emit_block(const Block& block);
    void emit_inst(const Inst& inst);
    void emit_call(const Inst& inst);
    Inst* clone(const Inst& inst);

    lang::TypeContext& types_;
    Function& stub_;
    Function& primal_;
    Builder b_;
    Arith a_;
    Map primal_map_;
    Map tangent_;
};

/// Copies a primal instruction into the stub, its results becoming the primal values.
Inst* Forward::clone(const Inst& inst) {
    CloneMap map{[this](Value* v) { return P(v); }, [this](const Value* r, Value* v) { primal_map_[r] = v; }};
    return clone_inst(stub_, *b_.insert_block(), inst, map);
}

std::vector<Value*> Forward::emit_block(const Block& block) {
    for (const auto& inst : block.insts) {
        if (inst->op == OpKind::Yield || inst->op == OpKind::Return) {
            std::vector<Value*> out;
            for (const Value* v : inst->operands) out.push_back(P(v));
            for (const Value* v : inst->operands)
                if (diff(v)) out.push_back(T_or_zero(v));
            return out;
        }
        emit_inst(*inst);
    }
    return {};
}

void Forward::emit_inst(const Inst& inst) {
    b_.set_loc(inst.loc);
    if (inst.op == OpKind::If) {
        std::vector<const Type*> types;
        for (const Value* r : inst.results) types.push_back(r->type);
        for (const Value* r : inst.results)
            if (diff(r)) types.push_back(r->type);
        Inst* copy = b_.if_(P(inst.operands[0]), types);
        Block* outer = b_.insert_block();
        for (int r = 0; r < 2; ++r) {
            b_.set_insert(copy->regions[size_t(r)].get());
            b_.yield(emit_block(*inst.regions[size_t(r)]));
        }
        b_.set_insert(outer);
        size_t t = inst.results.size();
        for (size_t k = 0; k < inst.results.size(); ++k) {
            primal_map_[inst.results[k]] = copy->results[k];
            if (diff(inst.results[k])) tangent_[inst.results[k]] = copy->results[t++];
        }
        return;
    }
    if (inst.op == OpKind::Loop) {
        std::vector<Value*> init;
        for (const Value* v : inst.operands) init.push_back(P(v));
        for (const Value* v : inst.operands)
            if (diff(v)) init.push_back(T_or_zero(v));
        Inst* copy = b_.loop(init, inst.imm_int);
        Block* outer = b_.insert_block();
        b_.set_insert(copy->regions[0].get());
        const Block& src = *inst.regions[0];
        size_t t = src.params.size();
        for (size_t k = 0; k < src.params.size(); ++k) {
            primal_map_[src.params[k]] = copy->regions[0]->params[k];
            if (diff(src.params[k])) tangent_[src.params[k]] = copy->regions[0]->params[t++];
        }
        std::vector<Value*> y = emit_block(src);
        // emit_block appends tangents of every differentiable yield operand, including the
        // continue flag's position (never differentiable), so the order matches the init.
        b_.yield(y);
        b_.set_insert(outer);
        t = inst.results.size();
        for (size_t k = 0; k < inst.results.size(); ++k) {
            primal_map_[inst.results[k]] = copy->results[k];
            if (diff(inst.results[k])) tangent_[inst.results[k]] = copy->results[t++];
        }
        return;
    }
    if (inst.op == OpKind::TensorStore) {
        clone(inst);
        const Value* t = inst.operands[0];
        if (t->type->tensor.has_grad) {
            std::vector<Value*> index;
            const size_t count = t->type->tensor.view ? inst.operands.size() - 2 : size_t(t->type->rank);
            for (size_t d = 1; d <= count; ++d) index.push_back(P(inst.operands[d]));
            b_.tensor_grad_store(P(t), index, T_or_zero(inst.operands.back()));
        }
        return;
    }
    if (inst.op == OpKind::Call) return emit_call(inst);
    Inst* copy = clone(inst);
    const Value* u = inst.result();
    if (!u || !diff(u)) return;
    auto t = [&](size_t k) { return T(inst.operands[k]); };
    auto p = [&](size_t k) { return P(inst.operands[k]); };
    Value* out = nullptr;
    auto sum = [&](Value* x, Value* y) { return x ? (y ? a_.add(x, y) : x) : y; };
    switch (inst.op) {
    case OpKind::Add: out = sum(t(0), t(1)); break;
    case OpKind::Sub: out = sum(t(0), t(1) ? a_.neg(t(1)) : nullptr); break;
    case OpKind::Mul: out = sum(t(0) ? a_.mul(t(0), p(1)) : nullptr, t(1) ? a_.mul(p(0), t(1)) : nullptr); break;
    case OpKind::Div:
        out = sum(t(0) ? a_.div(t(0), p(1)) : nullptr,
                  t(1) ? a_.neg(a_.div(a_.mul(copy->result(), t(1)), p(1))) : nullptr);
        break;
    case OpKind::Neg: out = t(0) ? a_.neg(t(0)) : nullptr; break;
    case OpKind::Rem: out = t(0); break;
    case OpKind::Select:
        if (t(1) || t(2)) out = b_.select(p(0), T_or_zero(inst.operands[1]), T_or_zero(inst.operands[2]));
        break;
    case OpKind::Detach: break;
    case OpKind::KeepDerivative: out = t(1); break;
    case OpKind::Convert:
        if (t(0)) out = b_.convert(t(0), u->type);
        break;
    case OpKind::Splat:
        if (t(0)) out = b_.splat(t(0), u->type);
        break;
    case OpKind::Construct: {
        bool any = false;
        std::vector<Value*> members;
        for (size_t k = 0; k < inst.operands.size(); ++k) {
            any |= t(k) != nullptr;
            members.push_back(diff(inst.operands[k]) ? T_or_zero(inst.operands[k]) : p(k));
        }
        if (any) out = b_.construct(u->type, members);
        break;
    }
    case OpKind::Extract:
        if (t(0)) out = b_.extract(t(0), int(inst.imm_int));
        break;
    case OpKind::Insert:
        if (t(0) || t(1)) out = b_.insert(T_or_zero(inst.operands[0]), int(inst.imm_int), T_or_zero(inst.operands[1]));
        break;
    case OpKind::ExtractDyn:
        if (t(0)) out = b_.extract_dyn(t(0), p(1));
        break;
    case OpKind::InsertDyn:
        if (t(0) || t(2)) out = b_.insert_dyn(T_or_zero(inst.operands[0]), p(1), T_or_zero(inst.operands[2]));
        break;
    case OpKind::Swizzle:
        if (t(0)) out = b_.swizzle(t(0), inst.imm_list);
        break;
    case OpKind::Intrinsic: {
        std::vector<Value*> args, tans;
        bool any = false;
        for (size_t k = 0; k < inst.operands.size(); ++k) {
            args.push_back(p(k));
            tans.push_back(diff(inst.operands[k]) ? t(k) : nullptr);
            any |= tans.back() != nullptr;
        }
        if (any) out = intrinsic_tangent(a_, inst.intrinsic(), args, tans, copy->result());
        break;
    }
    case OpKind::TensorLoad: {
        const Value* tv = inst.operands[0];
        if (tv->type->tensor.has_grad) {
            std::vector<Value*> index;
            const size_t count = tv->type->tensor.view ? inst.operands.size() - 1 : size_t(tv->type->rank);
            for (size_t d = 1; d <= count; ++d) index.push_back(p(d));
            out = b_.tensor_grad_load(P(tv), index);
        }
        break;
    }
    default: break;
    }
    if (out) tangent_[u] = out;
}

/// A call that survived inlining has a user-supplied forward derivative (sema made sure that
/// every call forward mode meets has one, or warned, below). It computes the primal too, so the
/// primal call is not repeated: results that are pairs give the primal (.p) and the tangent (.d).
void Forward::emit_call(const Inst& inst) {
    const Function& callee = *inst.callee;
    Function* fwd = callee.custom_forward;
    if (!fwd && !(callee.custom_backward && inst.imm_int == 0)) {
        // Only a call whose results are detached (no_diff / detach) gets here without a forward
        // derivative (sema reports every other one): it computes its primal and no tangent.
        clone(inst);
        return;
    }
    // The declared arguments (pairs for the differentiable ones) and the globals' values
    // (custom_calls.h: the derivative may take them elsewhere, or fewer of them).
    std::vector<Value*> args;
    std::unordered_map<const void*, Value*> globals;
    size_t operand = 0;
    for (size_t k = 0; k < callee.params.size(); ++k) {
        const Param& p = callee.params[k];
        if (p.dir == ParamDir::Out) continue;
        const Value* op = inst.operands[operand++];
        const void* g = nullptr;
        if (hidden_global(callee, k, &g)) globals[g] = P(op);
        else if (!p.no_diff && types_.is_differentiable(p.type))
            args.push_back(b_.construct(types_.pair(p.type), {P(op), to_differential(b_, T_or_zero(op), p.type)}));
        else args.push_back(P(op));
    }
    std::vector<Value*> declared;
    std::unordered_map<const void*, Value*> written;  // what the derivative leaves in the globals
    if (!fwd) {
        // A function with only a [BackwardDerivative], called in a differentiated body (no_diff
        // or not): as Slang does, every result (the return value, out and inout arguments) is
        // 0 with a zero tangent (sema warned); the globals keep their values. A call written in
        // a non-differentiable callee that was inlined here stays a primal call, above.
        for (const Value* r : inst.results) declared.push_back(b_.zero(r->type));
    } else {
        split_results(*fwd, b_.call(fwd, arguments_with_globals(*fwd, args, globals)), declared, written);
    }
    size_t d = 0, r = callee.return_type && !callee.return_type->is_void() ? 1 : 0;
    auto take = [&](const Value* result, Value* v) {
        if (v->type->is_pair() && !result->type->is_pair()) {
            primal_map_[result] = b_.extract(v, 0);
            tangent_[result] = from_differential(b_, b_.extract(v, 1), result->type);
        } else {
            primal_map_[result] = v;
        }
    };
    if (r) take(inst.results[0], declared[d++]);
    for (size_t k = 0; k < callee.params.size(); ++k) {
        if (callee.params[k].dir == ParamDir::In) continue;
        const Value* result = inst.results[r++];
        const void* g = nullptr;
        if (hidden_global(callee, k, &g)) {  // the value it wrote, else the one it had
            auto w = written.find(g);
            primal_map_[result] = w != written.end() ? w->second : globals.at(g);
            if (!fwd) ++d;
            continue;
        }
        SG_INTERNAL_ASSERT(d < declared.size(), "forward mode: result count of @" + callee.name);
        take(result, declared[d++]);
    }
    SG_INTERNAL_ASSERT(d == declared.size(), "forward mode: result count of @" + callee.name);
}

void Forward::run() {
    Block* body = stub_.body.get();
    b_.set_insert(body);
    b_.set_loc(primal_.loc);
    const Block& src = *primal_.body;
    size_t e = 0;
    for (size_t k = 0; k < primal_.params.size(); ++k) {
        const Param& p = primal_.params[k];
        if (p.dir == ParamDir::Out) continue;
        Value* v = body->params[e];
        const Value* pv = src.params[e++];
        if (stub_.params[k].type->is_pair()) {
            primal_map_[pv] = b_.extract(v, 0);
            tangent_[pv] = from_differential(b_, b_.extract(v, 1), pv->type);
        } else {
            primal_map_[pv] = v;
        }
    }
    std::vector<Value*> out = emit_block(src);
    // out = primal results, then tangents of the differentiable ones, in order.
    const Inst* ret = src.terminator();
    std::vector<Value*> results;
    size_t t = ret->operands.size();
    for (size_t k = 0; k < ret->operands.size(); ++k) {
        Value* primal = out[k];
        if (stub_.result_types[k]->is_pair()) {
            Value* tangent = diff(ret->operands[k]) ? to_differential(b_, out[t++], primal->type)
                                                    : b_.zero(types_.differential(primal->type));
            results.push_back(b_.construct(stub_.result_types[k], {primal, tangent}));
        } else {
            if (diff(ret->operands[k])) ++t;
            results.push_back(primal);
        }
    }
    b_.ret(results);
}

}  // namespace

void forward_mode(Program& program, Function& stub, Function& primal) {
    inline_calls(primal);
    Forward(program, stub, primal).run();
    after_pass(stub, "forward_mode");
}

}  // namespace sg::autodiff
