// src/lang/sema_switch.cpp — the checks of `switch` and `do`/`while`.
//
// A switch body is one scope (a declaration in one section is visible in the later ones, as in
// C and Slang). Its case labels are constant integers of the selector's type, each value once
// (30605), with at most one `default` (30602). Execution falls through from a section to the
// next one unless a `break` leaves the switch; lowering builds the if-chain (ir/lower_switch.cpp).
#include <map>

#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

constexpr int kDuplicateCase = 30605;     ///< Slang: "duplicate cases in switch"
constexpr int kMultipleDefaults = 30602;  ///< Slang: "multiple default cases in switch"

}  // namespace

void Sema::check_switch(Stmt* s) {
    const Type* sel = check_expr(s->cond);
    // Slang takes any selector; compared with floating-point labels it is an odd construct that
    // kernels do not need, so only integers, bools and enums are in the subset.
    if (!sel->is_error() && !sel->is_scalar())
        diags_.error(s->cond->loc, "switch condition must be an integer, bool or enum, got " + type_name(sel));
    else if (!sel->is_error() && is_floating(sel->scalar))
        diags_.unsupported(s->cond->loc, "switch on " + type_name(sel));
    scopes_.push();
    ++switch_depth_;
    std::map<int64_t, const Stmt*> values;
    const Stmt* default_label = nullptr;
    bool labelled = false;
    for (Stmt* b : s->body) {
        if (b->kind != StmtKind::Case) {
            if (!labelled && b->kind != StmtKind::Empty && b->kind != StmtKind::Decl)
                diags_.warning(b->loc, "statement before the first case label of a switch is never executed");
            check_stmt(b);
            continue;
        }
        labelled = true;
        if (!b->expr) {
            if (default_label) diags_.error(b->loc, "multiple default cases in switch", kMultipleDefaults);
            default_label = b;
            continue;
        }
        const Type* t = check_expr(b->expr);
        if (t->is_error() || sel->is_error()) continue;
        auto v = eval_const_int(b->expr);
        if (!v && b->expr->kind == ExprKind::BoolLit) v = int64_t(b->expr->int_value);
        if (!v) {
            diags_.error(b->expr->loc, "case label must be a compile-time constant integer");
            continue;
        }
        if (!implicitly_convertible(t, sel) && !(t->is_enum() && t == sel)) {
            diags_.error(b->expr->loc, "case label of type " + type_name(t) +
                                           " does not match the switch condition's type " + type_name(sel));
            continue;
        }
        // Compare as the selector's type computes: `case -1` of a uint switch is 0xffffffff.
        int64_t value = *v;
        if (sel->is_scalar() && !is_floating(sel->scalar) && scalar_bits(sel->scalar) < 64) {
            uint64_t mask = (uint64_t(1) << scalar_bits(sel->scalar)) - 1;
            value = int64_t(uint64_t(value) & mask);
            if (is_signed_integer(sel->scalar) && (value >> (scalar_bits(sel->scalar) - 1)) & 1)
                value = int64_t(uint64_t(value) | ~mask);
        }
        if (sel->is_bool()) value = value != 0;
        b->case_value = value;
        if (!values.emplace(value, b).second) diags_.error(b->loc, "duplicate cases in switch", kDuplicateCase);
    }
    --switch_depth_;
    scopes_.pop();
}

void Sema::check_do_while(Stmt* s) {
    ++loop_depth_;
    check_unscoped_body(s->then_stmt, "a loop's", "the loop");  // a block body's declarations stay in it
    --loop_depth_;
    check_convertible(s->cond, types_.boolean(), "loop condition");
    check_loop_bound(s);
}

}  // namespace sg::lang
