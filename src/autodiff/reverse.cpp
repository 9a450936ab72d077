// src/autodiff/reverse.cpp — reverse-mode differentiation (bwd_diff).
//
// The backward function first recomputes the primal body (dropping its memory writes), then
// walks the instructions backwards accumulating adjoints. Regions are handled by recomputation:
// the reverse of `if c {A} else {B}` is `if c {recompute A; reverse A} else {...}`, which keeps
// every primal value of a region in scope where its adjoint code needs it. Loops store the state
// they carry at the start of each iteration in a tape of MaxIters+1 slots and are reversed
// iteration by iteration from the tape. Adjoints of values defined outside a region flow in and
// out of the reversed region as If results / loop-carried values, so the output stays SSA.
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "autodiff/autodiff.h"
#include "autodiff/custom_calls.h"
#include "autodiff/differentials.h"
#include "autodiff/reverse_context.h"
#include "autodiff/rules.h"
#include "lang/coop.h"
#include "ir/builder.h"
#include "ir/passes.h"

namespace sg::autodiff {

using namespace ir;

namespace {

using Context = ReverseContext;
using Adjoints = std::unordered_map<const Value*, Value*>;

bool is_store(OpKind op) {
    return op == OpKind::TensorStore || op == OpKind::TensorAtomicAdd || op == OpKind::TensorGradAdd ||
           op == OpKind::TensorGradStore || op == OpKind::Trap;
}

class Reverse {
public:
    Reverse(Program& program, Function& stub, Function& primal)
        : types_(*program.types), stub_(stub), primal_(primal), b_(stub, *program.types), a_(b_) {}

    void run();

private:
    bool differentiable(const Value* v) const { return types_.is_differentiable(v->type) && !no_diff_.count(v); }
    bool active(const Block& block) const;
    bool active_inst(const Inst& inst) const;

    Value* get(Context& ctx, const Value* v) {
        Value* p = ctx.find(v);
        SG_INTERNAL_ASSERT(p != nullptr, "reverse mode: primal value %" + std::to_string(v->id) + " not recomputed");
        return p;
    }
    void add_adjoint(Adjoints& adj, const Value* v, Value* contribution) {
        if (!contribution || !differentiable(v)) return;
        auto it = adj.find(v);
        adj[v] = it == adj.end() ? contribution : a_.accumulate(it->second, contribution);
    }

    /// Re-emits `block` (except its terminator) into the builder's block, recording primal values
    /// in `ctx`; returns the mapped terminator operands.
    std::vector<Value*> emit_primal(const Block& block, Context& ctx);
    void emit_primal_inst(const Inst& inst, Context& ctx);
    void emit_primal_loop(const Inst& loop, Context& ctx);
    void emit_primal_if(const Inst& iff, Context& ctx);

    void reverse_block(const Block& block, Context& ctx, Adjoints& adj);
    void reverse_inst(const Inst& inst, Context& ctx, Adjoints& adj);
    void reverse_if(const Inst& iff, Context& ctx, Adjoints& adj);
    void reverse_loop(const Inst& loop, Context& ctx, Adjoints& adj);
    void reverse_tensor(const Inst& inst, Context& ctx, Adjoints& adj);
    void reverse_call(const Inst& inst, Context& ctx, Adjoints& adj);
    /// Differentiable values defined outside `inst` and used inside its regions.
    std::vector<const Value*> free_values(const Inst& inst) const;

    lang::TypeContext& types_;
    Function& stub_;
    Function& primal_;
    Builder b_;
    Arith a_;
    std::unordered_set<const Value*> no_diff_;  ///< primal values of no_diff parameters
};

/// A call that passes a DiffTensorView: the callee reads and writes through it, so its custom
/// backward runs whether or not the call's results have adjoints (a void tile renderer).
bool passes_diff_view(const Inst& inst) {
    if (inst.op != OpKind::Call) return false;
    for (const Value* v : inst.operands)
        if (v->type->is_tensor() && v->type->tensor.view && v->type->tensor.has_grad) return true;
    return false;
}

bool Reverse::active_inst(const Inst& inst) const {
    if (inst.primal_only) return false;  // a non-differentiable callee: its call or its inlined body
    if (passes_diff_view(inst)) return true;
    for (const Value* r : inst.results)
        if (types_.is_differentiable(r->type)) return true;
    if ((inst.op == OpKind::TensorLoad || inst.op == OpKind::TensorStore) && inst.operands[0]->type->tensor.has_grad)
        return true;
    for (const auto& region : inst.regions)
        if (active(*region)) return true;
    return false;
}

bool Reverse::active(const Block& block) const {
    for (const auto& inst : block.insts)
        if (active_inst(*inst)) return true;
    return false;
}

std::vector<Value*> Reverse::emit_primal(const Block& block, Context& ctx) {
    for (const auto& inst : block.insts) {
        if (inst->op == OpKind::Yield || inst->op == OpKind::Return) {
            std::vector<Value*> out;
            for (const Value* v : inst->operands) out.push_back(get(ctx, v));
            return out;
        }
        emit_primal_inst(*inst, ctx);
    }
    return {};
}

/// Whether operand 0 of a tensor op is a groupshared variable's storage.
bool on_shared(const Inst& inst) { return inst.operands[0]->type->tensor.shared; }

/// The index operands of a tensor load or store: [1, end) less a store's value. A TensorView's
/// count is the indices written (its rank is known at the launch only).
std::vector<const Value*> index_operands(const Inst& inst) {
    const size_t end = inst.operands.size() - (inst.op == OpKind::TensorLoad || inst.op == OpKind::TensorGradLoad ? 0 : 1);
    const Type* t = inst.operands[0]->type;
    const size_t count = t->tensor.view ? end - 1 : size_t(t->rank);
    return std::vector<const Value*>(inst.operands.begin() + 1, inst.operands.begin() + 1 + count);
}

void Reverse::emit_primal_inst(const Inst& inst, Context& ctx) {
    // The backward pass never repeats the primal's writes, except to groupshared memory: a
    // cooperative kernel's block rebuilds its shared state (behind the same barriers) to
    // recompute what its threads read from it.
    if (is_store(inst.op) && !(inst.op == OpKind::TensorStore && on_shared(inst))) return;
    if (inst.op == OpKind::TensorAtomic && !on_shared(inst)) {
        // An atomic on device memory is not repeated: its result is the element as it is now.
        std::vector<Value*> index;
        const size_t values = inst.imm_int == int64_t(lang::AtomicOp::CompareExchange) ? 2 : 1;
        for (size_t k = 1; k + values < inst.operands.size(); ++k) index.push_back(get(ctx, inst.operands[k]));
        ctx.set(inst.result(), b_.tensor_load(get(ctx, inst.operands[0]), index));
        return;
    }
    // A void call through DiffTensorViews (with a custom backward) writes the primal's outputs:
    // not repeated, its backward runs in the reverse pass.
    if (passes_diff_view(inst) && inst.results.empty()) return;
    if (inst.op == OpKind::Loop) return emit_primal_loop(inst, ctx);
    if (inst.op == OpKind::If) return emit_primal_if(inst, ctx);
    SG_INTERNAL_ASSERT(inst.regions.empty(), "reverse mode: unexpected region op");
    SG_INTERNAL_ASSERT(inst.op != OpKind::Call || inst.callee->custom_backward,
                       "reverse mode: call of @" + (inst.callee ? inst.callee->name : std::string("?")) +
                           " was not inlined and has no backward derivative");
    CloneMap map{[&](Value* v) { return get(ctx, v); }, [&](const Value* r, Value* v) { ctx.set(r, v); }};
    clone_inst(stub_, *b_.insert_block(), inst, map);
}

void Reverse::emit_primal_if(const Inst& iff, Context& ctx) {
    std::vector<const Type*> types;
    for (const Value* r : iff.results) types.push_back(r->type);
    Inst* copy = b_.if_(get(ctx, iff.operands[0]), types);
    copy->loc = iff.loc;
    Block* outer = b_.insert_block();
    for (int r = 0; r < 2; ++r) {
        b_.set_insert(copy->regions[size_t(r)].get());
        Context::Scope branch(ctx);  // values of the branch stay inside it
        b_.yield(emit_primal(*iff.regions[size_t(r)], ctx));
    }
    b_.set_insert(outer);
    for (size_t k = 0; k < iff.results.size(); ++k) ctx.set(iff.results[k], copy->results[k]);
}

void Reverse::emit_primal_loop(const Inst& loop, Context& ctx) {
    bool taped = active(*loop.regions[0]);
    int64_t capacity = std::max<int64_t>(loop.imm_int, 1) + 1;
    SG_INTERNAL_ASSERT(!taped || loop.imm_int > 0, "reverse mode: differentiable loop without MaxIters");
    LoopTape tape;
    std::vector<Value*> init;
    for (const Value* v : loop.operands) init.push_back(get(ctx, v));
    if (taped) {
        for (const Value* v : loop.operands) tape.slots.push_back(b_.local_alloc(v->type, capacity));
        init.push_back(b_.const_int(types_.int32(), 0));
    }
    Inst* copy = b_.loop(init, loop.imm_int);
    copy->loc = loop.loc;
    Block* outer = b_.insert_block();
    Block* body = copy->regions[0].get();
    b_.set_insert(body);
    const Block& src = *loop.regions[0];
    std::vector<Value*> yields;
    Value* counter = nullptr;
    {
        Context::Scope iteration(ctx);
        for (size_t k = 0; k < src.params.size(); ++k) ctx.set(src.params[k], body->params[k]);
        if (taped) {
            // The tape index is clamped: a loop running past MaxIters is the user's error (wrong
            // gradients, reported in debug mode), never a write past the tape.
            counter = body->params.back();
            Value* last = b_.const_int(types_.int32(), capacity - 1);
            Value* slot = b_.intrinsic(lang::IntrinsicId::Min, types_.int32(), {counter, last});
            for (size_t k = 0; k < tape.slots.size(); ++k) b_.local_store(tape.slots[k], slot, body->params[k]);
            // Entering the body a (MaxIters + 2)-th time means the loop ran more than MaxIters
            // iterations: the tape cannot replay them, so the thread reports it and stops.
            Value* bound = b_.const_int(types_.int32(), loop.imm_int);
            Inst* check = b_.if_(b_.binary(OpKind::Gt, counter, bound), {});
            check->loc = loop.loc;
            b_.set_insert(check->regions[0].get());
            b_.trap(ir::kTrapLoopPastMaxIters, counter, bound);
            check->regions[0]->insts.back()->loc = loop.loc;
            b_.yield({});
            b_.set_insert(check->regions[1].get());
            b_.yield({});
            b_.set_insert(body);
        }
        yields = emit_primal(src, ctx);
    }
    if (taped) yields.push_back(b_.binary(OpKind::Add, counter, b_.const_int(types_.int32(), 1)));
    b_.yield(yields);
    b_.set_insert(outer);
    for (size_t k = 0; k < loop.results.size(); ++k) ctx.set(loop.results[k], copy->results[k]);
    if (taped) {
        tape.count = b_.intrinsic(lang::IntrinsicId::Min, types_.int32(),
                                  {copy->results.back(), b_.const_int(types_.int32(), capacity)});
        ctx.set_tape(&loop, tape);
    }
}

std::vector<const Value*> Reverse::free_values(const Inst& inst) const {
    std::unordered_set<const Value*> defined;
    std::vector<const Value*> out;
    std::unordered_set<const Value*> seen;
    std::function<void(const Block&)> visit = [&](const Block& b) {
        for (const Value* p : b.params) defined.insert(p);
        for (const auto& i : b.insts) {
            for (const auto& r : i->regions) visit(*r);
            for (const Value* r : i->results) defined.insert(r);
        }
    };
    for (const auto& r : inst.regions) visit(*r);
    std::function<void(const Block&)> uses = [&](const Block& b) {
        for (const auto& i : b.insts) {
            for (const Value* o : i->operands)
                if (!defined.count(o) && differentiable(o) && seen.insert(o).second) out.push_back(o);
            for (const auto& r : i->regions) uses(*r);
        }
    };
    for (const auto& r : inst.regions) uses(*r);
    return out;
}

void Reverse::reverse_block(const Block& block, Context& ctx, Adjoints& adj) {
    for (size_t k = block.insts.size(); k-- > 0;) {
        const Inst& inst = *block.insts[k];
        if (inst.op == OpKind::Yield || inst.op == OpKind::Return) continue;
        reverse_inst(inst, ctx, adj);
    }
}

void Reverse::reverse_if(const Inst& iff, Context& ctx, Adjoints& adj) {
    std::vector<const Value*> outer = free_values(iff);
    std::vector<const Type*> types;
    std::vector<Value*> incoming;
    for (const Value* v : outer) {
        auto it = adj.find(v);
        incoming.push_back(it != adj.end() ? it->second : b_.zero(v->type));
        types.push_back(v->type);
    }
    // Adjoints of the If's results, materialized before the reversed If so both branches see them.
    std::vector<Value*> result_adj;
    for (const Value* r : iff.results) {
        auto it = adj.find(r);
        result_adj.push_back(it != adj.end() ? it->second : nullptr);
    }
    Inst* rev = b_.if_(get(ctx, iff.operands[0]), types);
    Block* saved = b_.insert_block();
    for (int r = 0; r < 2; ++r) {
        b_.set_insert(rev->regions[size_t(r)].get());
        Context::Scope branch(ctx);
        const Block& src = *iff.regions[size_t(r)];
        emit_primal(src, ctx);
        Adjoints local;
        for (size_t k = 0; k < outer.size(); ++k) local[outer[k]] = incoming[k];
        const Inst* y = src.terminator();
        for (size_t k = 0; k < iff.results.size(); ++k) add_adjoint(local, y->operands[k], result_adj[k]);
        reverse_block(src, ctx, local);
        std::vector<Value*> out;
        for (const Value* v : outer) out.push_back(local[v]);
        b_.yield(out);
    }
    b_.set_insert(saved);
    for (size_t k = 0; k < outer.size(); ++k) adj[outer[k]] = rev->results[k];
}

void Reverse::reverse_loop(const Inst& loop, Context& ctx, Adjoints& adj) {
    const LoopTape* found = ctx.tape(&loop);
    SG_INTERNAL_ASSERT(found != nullptr, "reverse mode: loop without a tape");
    const LoopTape tape = *found;  // a copy: the scopes below may change the map
    const Block& src = *loop.regions[0];
    std::vector<const Value*> outer = free_values(loop);
    // Carried state: iteration index, adjoints of the differentiable carried values, adjoints of
    // the outer values the body uses.
    std::vector<size_t> diff_carried;
    for (size_t k = 0; k < loop.results.size(); ++k)
        if (types_.is_differentiable(loop.results[k]->type)) diff_carried.push_back(k);
    std::vector<Value*> init{b_.binary(OpKind::Sub, tape.count, b_.const_int(types_.int32(), 1))};
    for (size_t k : diff_carried) {
        auto it = adj.find(loop.results[k]);
        init.push_back(it != adj.end() ? it->second : b_.zero(loop.results[k]->type));
    }
    for (const Value* v : outer) {
        auto it = adj.find(v);
        init.push_back(it != adj.end() ? it->second : b_.zero(v->type));
    }
    Inst* rev = b_.loop(init, loop.imm_int);
    Block* saved = b_.insert_block();
    Block* body = rev->regions[0].get();
    b_.set_insert(body);
    Value* it = body->params[0];
    Context::Scope iteration(ctx);
    for (size_t k = 0; k < src.params.size(); ++k) ctx.set(src.params[k], b_.local_load(tape.slots[k], it));
    emit_primal(src, ctx);
    Adjoints local;
    for (size_t k = 0; k < outer.size(); ++k) local[outer[k]] = body->params[1 + diff_carried.size() + k];
    const Inst* y = src.terminator();
    for (size_t j = 0; j < diff_carried.size(); ++j)
        add_adjoint(local, y->operands[1 + diff_carried[j]], body->params[1 + j]);
    reverse_block(src, ctx, local);
    std::vector<Value*> next{b_.binary(OpKind::Gt, it, b_.const_int(types_.int32(), 0)),
                             b_.binary(OpKind::Sub, it, b_.const_int(types_.int32(), 1))};
    for (size_t k : diff_carried) {
        auto f = local.find(src.params[k]);
        next.push_back(f != local.end() ? f->second : b_.zero(src.params[k]->type));
    }
    for (const Value* v : outer) next.push_back(local[v]);
    b_.yield(next);
    b_.set_insert(saved);
    // The outer adjoints first: they were carried through the reversed loop from their value
    // before it, so they replace it. An initial value may be an outer value too (`r = x;` then
    // `r *= x` in the body): its contribution is added after, not overwritten.
    for (size_t k = 0; k < outer.size(); ++k) adj[outer[k]] = rev->results[1 + diff_carried.size() + k];
    for (size_t j = 0; j < diff_carried.size(); ++j)
        add_adjoint(adj, loop.operands[diff_carried[j]], rev->results[1 + j]);
}

void Reverse::reverse_tensor(const Inst& inst, Context& ctx, Adjoints& adj) {
    const Value* t = inst.operands[0];
    if (!t->type->tensor.has_grad) return;  // outside the grad mask: no gradient code at all
    std::vector<Value*> index;
    for (const Value* i : index_operands(inst)) index.push_back(get(ctx, i));
    if (inst.op == OpKind::TensorLoad) {
        // d(load t[i]) accumulates into grad(t)[i]; a DiffTensorView's `loadOnce` (imm_int 1)
        // stores it there, without atomics (each element is loaded once).
        auto it = adj.find(inst.result());
        if (it != adj.end() && t->type->tensor.view && inst.imm_int == 1)
            b_.tensor_grad_store(get(ctx, t), index, it->second);
        else if (it != adj.end())
            b_.tensor_grad_add(get(ctx, t), index, it->second);
    } else if (inst.op == OpKind::TensorStore) {
        // store t[i] = v: v takes grad(t)[i]. A DiffTensorView's `store` takes it (reads and
        // clears it atomically, as slangtorch does); its `storeOnce` (imm_int 1) reads it.
        Value* g = b_.tensor_grad_load(get(ctx, t), index);
        if (t->type->tensor.view && inst.imm_int == 0) g->def->imm_int = 1;
        add_adjoint(adj, inst.operands.back(), g);
    }
}

void Reverse::reverse_inst(const Inst& inst, Context& ctx, Adjoints& adj) {
    b_.set_loc(inst.loc);
    if (!active_inst(inst)) return;
    switch (inst.op) {
    case OpKind::If: return reverse_if(inst, ctx, adj);
    case OpKind::Loop: return reverse_loop(inst, ctx, adj);
    case OpKind::TensorLoad:
    case OpKind::TensorStore: return reverse_tensor(inst, ctx, adj);
    case OpKind::Call: return reverse_call(inst, ctx, adj);
    default: break;
    }
    const Value* u = inst.result();
    if (!u) return;
    auto found = adj.find(u);
    if (found == adj.end()) return;
    Value* d = found->second;
    auto P = [&](size_t k) { return get(ctx, inst.operands[k]); };
    auto arg = [&](size_t k) { return inst.operands[k]; };
    switch (inst.op) {
    case OpKind::Add:
        add_adjoint(adj, arg(0), d);
        add_adjoint(adj, arg(1), d);
        break;
    case OpKind::Sub:
        add_adjoint(adj, arg(0), d);
        add_adjoint(adj, arg(1), a_.neg(d));
        break;
    case OpKind::Mul:  // d(ab) = b da + a db
        add_adjoint(adj, arg(0), a_.mul(d, P(1)));
        add_adjoint(adj, arg(1), a_.mul(d, P(0)));
        break;
    case OpKind::Div:  // d(a/b) = da/b - a db/b^2
        add_adjoint(adj, arg(0), a_.div(d, P(1)));
        add_adjoint(adj, arg(1), a_.neg(a_.div(a_.mul(d, get(ctx, u)), P(1))));
        break;
    case OpKind::Neg: add_adjoint(adj, arg(0), a_.neg(d)); break;
    case OpKind::Rem: add_adjoint(adj, arg(0), d); break;  // fmod: d/dx = 1, d/dy = 0
    case OpKind::Select: {
        Value* z = b_.zero(d->type);
        add_adjoint(adj, arg(1), b_.select(P(0), d, z));
        add_adjoint(adj, arg(2), b_.select(P(0), z, d));
        break;
    }
    case OpKind::Detach: break;
    case OpKind::KeepDerivative: add_adjoint(adj, arg(1), d); break;
    case OpKind::Convert:
        if (lang::is_floating(arg(0)->type->scalar)) add_adjoint(adj, arg(0), b_.convert(d, arg(0)->type));
        break;
    case OpKind::Splat: add_adjoint(adj, arg(0), a_.sum(d)); break;
    case OpKind::Construct:
        for (size_t k = 0; k < inst.operands.size(); ++k) add_adjoint(adj, arg(k), b_.extract(d, int(k)));
        break;
    case OpKind::Extract: {
        add_adjoint(adj, arg(0), b_.insert(b_.zero(arg(0)->type), int(inst.imm_int), d));
        break;
    }
    case OpKind::Insert:
        add_adjoint(adj, arg(1), b_.extract(d, int(inst.imm_int)));
        add_adjoint(adj, arg(0), b_.insert(d, int(inst.imm_int), b_.zero(arg(1)->type)));
        break;
    case OpKind::ExtractDyn: add_adjoint(adj, arg(0), b_.insert_dyn(b_.zero(arg(0)->type), P(1), d)); break;
    case OpKind::InsertDyn:
        add_adjoint(adj, arg(2), b_.extract_dyn(d, P(1)));
        add_adjoint(adj, arg(0), b_.insert_dyn(d, P(1), b_.zero(arg(2)->type)));
        break;
    case OpKind::Swizzle: {
        Value* z = b_.zero(arg(0)->type);
        for (size_t k = 0; k < inst.imm_list.size(); ++k) {
            int c = inst.imm_list[k];
            z = b_.insert(z, c, b_.binary(OpKind::Add, b_.extract(z, c), b_.extract(d, int(k))));
        }
        add_adjoint(adj, arg(0), z);
        break;
    }
    case OpKind::Intrinsic: {
        std::vector<Value*> args;
        for (size_t k = 0; k < inst.operands.size(); ++k) args.push_back(P(k));
        std::vector<Value*> grads = intrinsic_adjoints(a_, inst.intrinsic(), args, get(ctx, u), d);
        for (size_t k = 0; k < grads.size(); ++k) add_adjoint(adj, arg(k), grads[k]);
        break;
    }
    default: break;  // comparisons, integer ops, shapes, call indices: no derivative
    }
}

/// A call that survived inlining has a user-supplied backward derivative (sema made sure that
/// every call reverse mode meets has one): call it with the primal arguments paired with the
/// incoming adjoints, in the derived signature's order (docs/language.md, "Autodiff"), and
/// take each differentiable argument's adjoint from the `.d` of its pair afterwards.
void Reverse::reverse_call(const Inst& inst, Context& ctx, Adjoints& adj) {
    const Function& callee = *inst.callee;
    Function* bwd = callee.custom_backward;
    SG_INTERNAL_ASSERT(bwd != nullptr, "reverse mode: call of @" + callee.name + " has no backward derivative");
    std::vector<Value*> result_adj(inst.results.size(), nullptr);
    bool any = false;
    for (size_t k = 0; k < inst.results.size(); ++k) {
        auto it = adj.find(inst.results[k]);
        if (it == adj.end()) continue;
        result_adj[k] = it->second;
        any = true;
    }
    if (!any && !passes_diff_view(inst)) return;  // nothing downstream depends on the call's results
    auto adjoint_of_result = [&](size_t k) { return result_adj[k] ? result_adj[k] : b_.zero(inst.results[k]->type); };
    const bool has_return = callee.return_type && !callee.return_type->is_void();
    std::vector<Value*> args;
    std::vector<const Value*> pair_operands;  // the operand each of bwd's (pair) results belongs to
    // The globals' values before the call, matched to bwd's by global (custom_calls.h).
    std::unordered_map<const void*, Value*> globals;
    size_t slot = has_return ? 1 : 0, operand = 0;
    for (size_t k = 0; k < callee.params.size(); ++k) {
        const Param& p = callee.params[k];
        const bool diff = !p.no_diff && types_.is_differentiable(p.type);
        if (p.dir == ParamDir::Out) {
            if (diff) args.push_back(to_differential(b_, adjoint_of_result(slot), p.type));
            ++slot;
            continue;
        }
        const Value* op = inst.operands[operand++];
        const void* g = nullptr;
        if (hidden_global(callee, k, &g)) {
            globals[g] = get(ctx, op);
            if (p.dir == ParamDir::InOut) ++slot;
            continue;
        }
        if (!diff) {
            args.push_back(get(ctx, op));  // a non-differentiable inout is passed as `in`
            if (p.dir == ParamDir::InOut) ++slot;
            continue;
        }
        Value* seed = p.dir == ParamDir::InOut ? adjoint_of_result(slot++) : b_.zero(p.type);
        args.push_back(b_.construct(types_.pair(p.type), {get(ctx, op), to_differential(b_, seed, p.type)}));
        pair_operands.push_back(op);
    }
    if (has_return && !callee.return_no_diff && types_.is_differentiable(callee.return_type))
        args.push_back(to_differential(b_, adjoint_of_result(0), callee.return_type));
    // What a backward derivative writes to a global is not kept: the backward pass reads the
    // globals as the primal pass left them.
    std::vector<Value*> results;
    std::unordered_map<const void*, Value*> written;
    split_results(*bwd, b_.call(bwd, arguments_with_globals(*bwd, args, globals)), results, written);
    SG_INTERNAL_ASSERT(results.size() == pair_operands.size(), "reverse mode: result count of @" + bwd->name);
    for (size_t k = 0; k < results.size(); ++k)
        add_adjoint(adj, pair_operands[k], from_differential(b_, b_.extract(results[k], 1), pair_operands[k]->type));
}

void Reverse::run() {
    Block* body = stub_.body.get();
    b_.set_insert(body);
    b_.set_loc(primal_.loc);
    Context ctx;
    // Map the stub's parameters (the derived signature) onto the primal's. The primal's results
    // are its return value, then every out/inout parameter in order; each gets its seed (the
    // incoming gradient) from dResult, an out parameter's gradient or an inout pair's .d.
    std::vector<Value*> primal_args;
    std::vector<Value*> seeds(primal_.result_types.size(), nullptr);
    std::vector<int> pair_param_of(primal_.params.size(), -1);  // stub body param holding the pair
    auto diff = [&](const Param& p) { return !p.no_diff && types_.is_differentiable(p.type); };
    const bool has_return = primal_.return_type && !primal_.return_type->is_void();
    size_t stub_entry = 0, result_slot = has_return ? 1 : 0;
    for (size_t k = 0; k < primal_.params.size(); ++k) {
        const Param& p = primal_.params[k];
        if (p.dir == ParamDir::Out) {
            // A differentiable out parameter becomes `in T.Differential`; a non-differentiable
            // one is dropped. Either way it occupies a result slot of the primal.
            if (diff(p)) seeds[result_slot] = from_differential(b_, body->params[stub_entry++], p.type);
            ++result_slot;
            continue;
        }
        Value* v = body->params[stub_entry++];
        if (diff(p)) {
            pair_param_of[k] = int(stub_entry - 1);
            primal_args.push_back(b_.extract(v, 0));
            if (p.dir == ParamDir::InOut) seeds[result_slot] = from_differential(b_, b_.extract(v, 1), p.type);
        } else {
            primal_args.push_back(v);  // a non-differentiable inout is `in` in the derived signature
        }
        if (p.dir == ParamDir::InOut) ++result_slot;
    }
    if (has_return && !primal_.return_no_diff && types_.is_differentiable(primal_.return_type)) {
        SG_INTERNAL_ASSERT(stub_entry < body->params.size(), "reverse mode: missing dResult of " + primal_.name);
        seeds[0] = from_differential(b_, body->params[stub_entry], primal_.return_type);
    }
    const Block& src = *primal_.body;
    for (size_t k = 0; k < src.params.size(); ++k) ctx.set(src.params[k], primal_args[k]);
    // no_diff parameters never receive adjoints.
    for (size_t k = 0, e = 0; k < primal_.params.size(); ++k) {
        if (primal_.params[k].dir == ParamDir::Out) continue;
        if (!diff(primal_.params[k])) no_diff_.insert(src.params[e]);
        ++e;
    }
    emit_primal(src, ctx);
    Adjoints adj;
    const Inst* ret = src.terminator();
    for (size_t k = 0; k < seeds.size(); ++k)
        if (seeds[k]) add_adjoint(adj, ret->operands[k], seeds[k]);
    reverse_block(src, ctx, adj);
    // Results: the inout pairs with their new derivatives (the primal part is unchanged).
    std::vector<Value*> results;
    for (size_t k = 0, e = 0; k < primal_.params.size(); ++k) {
        const Param& p = primal_.params[k];
        if (p.dir == ParamDir::Out) continue;
        const Value* pv = src.params[e++];
        if (pair_param_of[k] < 0) continue;
        Value* pair = body->params[size_t(pair_param_of[k])];
        auto it = adj.find(pv);
        Value* d = it != adj.end() ? it->second : b_.zero(p.type);
        results.push_back(b_.construct(pair->type, {b_.extract(pair, 0), to_differential(b_, d, p.type)}));
    }
    b_.ret(results);
}

}  // namespace

void reverse_mode(Program& program, Function& stub, Function& primal) {
    inline_calls(primal);
    Reverse(program, stub, primal).run();
    after_pass(stub, "reverse_mode");
}

}  // namespace sg::autodiff
