// src/lang/sema_divergence.cpp — a barrier at which the block meets, inside control flow of a
// [CUDAKernel] function whose condition depends on the thread: some threads of a block would
// wait at it and others never reach it (on the GPU a hang or undefined results). Slang accepts
// such a kernel; here it is a located error when the condition provably varies within a block:
// it is computed from cudaThreadIdx(), a per-lane wave value (WaveGetLaneIndex, WavePrefixSum,
// WaveIsFirstLane), or variables assigned from those or inside such control flow. Values that
// are the same for the whole block (cudaBlockIdx(), parameters, loop counters over uniform
// bounds) do not count, nor does an early `return` (threads past the end of a tensor commonly
// leave before a kernel's last barrier).
#include <set>

#include "lang/coop.h"
#include "lang/sema_internal.h"
#include "lang/wave.h"

namespace sg::lang {

namespace {

class BarrierDivergence {
public:
    explicit BarrierDivergence(Diagnostics& diags) : diags_(diags) {}

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
    std::set<const VarDecl*> varying_;
    bool report_ = false;

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
        if (e->kind == ExprKind::Call && e->builtin && e->builtin->kind == BuiltinKind::Barrier && divergent &&
            report_) {
            const BarrierInfo* b = find_barrier(e->builtin->name);
            if (b && b->sync) {
                const Expr* first = divergent;  // where the condition starts (a binary operator is located at itself)
                while ((first->kind == ExprKind::Binary || first->kind == ExprKind::Index || first->kind == ExprKind::Member ||
                        first->kind == ExprKind::Postfix || first->kind == ExprKind::Conditional) &&
                       !first->operands.empty() && first->operands[0]->loc.valid())
                    first = first->operands[0];
                const auto [line, column] = first->loc.file->line_col(first->loc.offset);
                diags_.error(e->loc, std::string(b->name) + "() inside control flow that depends on the thread (the "
                                                            "condition at " +
                                         std::to_string(line) + ":" + std::to_string(column) +
                                         " varies within a block): every thread of a block must reach the same "
                                         "barriers");
            }
        }
    }

    void stmt(const Stmt* s, const Expr* divergent) {
        if (!s) return;
        switch (s->kind) {
        case StmtKind::Block:
            for (const Stmt* b : s->body) stmt(b, divergent);
            return;
        case StmtKind::Expr:
        case StmtKind::Return: expr(s->expr, divergent); return;
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
    if (f->body) BarrierDivergence(diags_).check(f);
}

}  // namespace sg::lang
