// src/lang/sema_divergence.cpp — a barrier at which the block meets, inside control flow of a
// [CUDAKernel] function whose condition depends on the thread: some threads of a block would
// wait at it and others never reach it (on the GPU a hang or undefined results). Slang accepts
// such a kernel; here it is a located error when the condition provably varies within a block:
// it is computed from cudaThreadIdx(), a per-lane wave value (WaveGetLaneIndex, WavePrefixSum,
// WaveIsFirstLane), or variables assigned from those or inside such control flow. Values that
// are the same for the whole block (cudaBlockIdx(), parameters, loop counters over uniform
// bounds) do not count. The same holds for a call, under such control flow, of a function that
// waits at a barrier (itself or through the functions it calls), and for a barrier (or such a
// call) after a `return` under such control flow: the threads that returned never reach it.
#include <functional>
#include <map>
#include <set>

#include "lang/coop.h"
#include "lang/sema_internal.h"
#include "lang/wave.h"

namespace sg::lang {

namespace {

/// The functions of a name (a callee whose call is not resolved yet: its body is checked later).
using FunctionLookup = std::function<const std::vector<FunctionDecl*>*(const std::string&)>;

/// Where a function waits for its block: the first barrier with GroupSync it reaches, itself or
/// through a function it calls (null when none).
class BarrierFinder {
public:
    explicit BarrierFinder(FunctionLookup lookup) : lookup_(std::move(lookup)) {}

    const Expr* in_function(const FunctionDecl* f) {
        if (!f || !f->body) return nullptr;
        auto [it, fresh] = memo_.emplace(f, nullptr);
        if (!fresh) return it->second;  // known, or being searched (recursion)
        const Expr* found = in_stmt(f->body);
        memo_[f] = found;
        return found;
    }

    /// The barrier a call waits at: a barrier built-in with GroupSync, or a user function that
    /// waits at one (by its resolution, or by name when its only function is known).
    const Expr* in_call(const Expr* e) {
        if (e->kind != ExprKind::Call || e->operands.empty()) return nullptr;
        if (e->builtin) {
            const BarrierInfo* b = e->builtin->kind == BuiltinKind::Barrier ? find_barrier(e->builtin->name) : nullptr;
            return b && b->sync ? e : nullptr;
        }
        if (e->callee) return in_function(e->callee);
        const Expr* callee = e->operands[0];
        if (callee->kind != ExprKind::Name) return nullptr;
        if (const BarrierInfo* b = find_barrier(callee->name)) return b->sync ? e : nullptr;
        const std::vector<FunctionDecl*>* fns = lookup_(callee->name);
        return fns && fns->size() == 1 ? in_function(fns->front()) : nullptr;
    }

private:
    const Expr* in_expr(const Expr* e) {
        if (!e) return nullptr;
        for (const Expr* o : e->operands)
            if (const Expr* found = in_expr(o)) return found;
        return in_call(e);
    }
    const Expr* in_stmt(const Stmt* s) {
        if (!s) return nullptr;
        for (const Expr* e : {s->expr, s->cond, s->step})
            if (const Expr* found = in_expr(e)) return found;
        for (const VarDecl* d : s->decls)
            if (const Expr* found = in_expr(d->init)) return found;
        for (const Stmt* b : s->body)
            if (const Expr* found = in_stmt(b)) return found;
        for (const Stmt* b : {s->init, s->then_stmt, s->else_stmt})
            if (const Expr* found = in_stmt(b)) return found;
        return nullptr;
    }

    FunctionLookup lookup_;
    std::map<const FunctionDecl*, const Expr*> memo_;
};

std::string at(SourceLoc loc) {
    const auto [line, column] = loc.file->line_col(loc.offset);
    return std::to_string(line) + ":" + std::to_string(column);
}

class BarrierDivergence {
public:
    BarrierDivergence(Diagnostics& diags, FunctionLookup lookup) : diags_(diags), barriers_(std::move(lookup)) {}

    void check(const FunctionDecl* f) {
        // Grow the set of varying variables to a fixed point (a loop's later assignments reach
        // its condition), then report.
        for (size_t before = size_t(-1); before != varying_.size();) {
            before = varying_.size();
            stmt(f->body, nullptr);
        }
        report_ = true;
        stmt(f->body, nullptr);
    }

private:
    Diagnostics& diags_;
    BarrierFinder barriers_;
    std::set<const VarDecl*> varying_;
    bool report_ = false;
    /// The first `return` under control flow that varies within a block (report pass), and the
    /// condition that made it so: a barrier after it waits for threads that have left.
    const Stmt* divergent_return_ = nullptr;
    const Expr* return_condition_ = nullptr;

    bool varies(const Expr* e) const {
        if (!e) return false;
        if (e->kind == ExprKind::Name && e->var_ref && varying_.count(e->var_ref)) return true;
        if (e->kind == ExprKind::Call && e->builtin) {
            CoopId id;
            if (e->builtin->kind == BuiltinKind::CoopId && find_coop_id(e->builtin->name, id) && id == CoopId::ThreadIdx)
                return true;
            WaveOp op;
            if (e->builtin->kind == BuiltinKind::Wave && find_wave_op(e->builtin->name, op) &&
                (op == WaveOp::LaneIndex || op == WaveOp::PrefixSum || op == WaveOp::IsFirstLane))
                return true;
        }
        for (const Expr* o : e->operands)
            if (varies(o)) return true;
        return false;
    }

    static const VarDecl* root_var(const Expr* e) {
        while (e && (e->kind == ExprKind::Index || e->kind == ExprKind::Member) && !e->operands.empty()) e = e->operands[0];
        return e && e->kind == ExprKind::Name ? e->var_ref : nullptr;
    }

    /// Assignments and barrier calls in `e`, evaluated under `divergent` (the varying condition
    /// that controls it, or null).
    void expr(const Expr* e, const Expr* divergent) {
        if (!e) return;
        for (const Expr* o : e->operands) expr(o, divergent);
        if (e->kind == ExprKind::Assign || (e->kind == ExprKind::Unary && (e->op == Op::PreInc || e->op == Op::PreDec)) ||
            e->kind == ExprKind::Postfix) {
            const VarDecl* v = root_var(e->operands[0]);
            if (v && (divergent || (e->kind == ExprKind::Assign && varies(e->operands[1])))) varying_.insert(v);
        }
        if (!report_ || e->kind != ExprKind::Call || (!divergent && !divergent_return_)) return;
        const Expr* barrier = barriers_.in_call(e);
        if (!barrier) return;
        // What waits: the barrier itself, or a call of a function that waits at one.
        const bool direct = barrier == e;
        const std::string name = direct ? std::string(e->builtin ? e->builtin->name : e->operands[0]->name) : "";
        const std::string callee = e->callee ? e->callee->name : e->operands[0]->name;
        const std::string what = direct ? name + "()"
                                        : "the call of " + callee + "(), which waits for the block at " +
                                              at(barrier->loc) + ",";
        if (divergent)
            diags_.error(e->loc, what + " inside control flow that depends on the thread (the condition at " +
                                     at(condition_start(divergent)->loc) +
                                     " varies within a block): every thread of a block must reach the same barriers");
        else
            diags_.error(e->loc, what + " after a return that only some threads of a block take (the return at " +
                                     at(divergent_return_->loc) + ", under the condition at " +
                                     at(condition_start(return_condition_)->loc) +
                                     "): every thread of a block must reach the same barriers; keep the threads and "
                                     "skip their work instead (`if (inside) { ... }`)");
    }

    /// Where a condition starts (a binary operator is located at itself).
    static const Expr* condition_start(const Expr* first) {
        while ((first->kind == ExprKind::Binary || first->kind == ExprKind::Index || first->kind == ExprKind::Member ||
                first->kind == ExprKind::Postfix || first->kind == ExprKind::Conditional) &&
               !first->operands.empty() && first->operands[0]->loc.valid())
            first = first->operands[0];
        return first;
    }

    void stmt(const Stmt* s, const Expr* divergent) {
        if (!s) return;
        switch (s->kind) {
        case StmtKind::Block:
            for (const Stmt* b : s->body) stmt(b, divergent);
            return;
        case StmtKind::Expr: expr(s->expr, divergent); return;
        case StmtKind::Return:
            expr(s->expr, divergent);
            if (report_ && divergent && !divergent_return_) {
                divergent_return_ = s;
                return_condition_ = divergent;
            }
            return;
        case StmtKind::Decl:
            for (const VarDecl* d : s->decls) {
                expr(d->init, divergent);
                if (divergent || varies(d->init)) varying_.insert(d);
            }
            return;
        case StmtKind::If: {
            expr(s->cond, divergent);
            const Expr* c = divergent ? divergent : varies(s->cond) ? s->cond : nullptr;
            stmt(s->then_stmt, c);
            stmt(s->else_stmt, c);
            return;
        }
        case StmtKind::For:
        case StmtKind::While:
        case StmtKind::DoWhile: {
            stmt(s->init, divergent);
            expr(s->cond, divergent);
            const Expr* c = divergent ? divergent : varies(s->cond) ? s->cond : nullptr;
            stmt(s->then_stmt, c);
            expr(s->step, c);
            return;
        }
        case StmtKind::Switch: {
            expr(s->cond, divergent);
            const Expr* c = divergent ? divergent : varies(s->cond) ? s->cond : nullptr;
            for (const Stmt* b : s->body) stmt(b, c);
            return;
        }
        default: return;
        }
    }
};

}  // namespace

void Sema::check_barrier_divergence(const FunctionDecl* f) {
    if (!f->body) return;
    FunctionLookup lookup = [this](const std::string& name) -> const std::vector<FunctionDecl*>* {
        auto it = module_.functions.find(name);
        return it == module_.functions.end() ? nullptr : &it->second;
    };
    BarrierDivergence(diags_, std::move(lookup)).check(f);
}

}  // namespace sg::lang
