// src/ir/lower_switch.cpp — lowering of `switch`: an if-chain over the sections, in order.
//
// Section i runs when execution is "running" there and no break/return/continue happened:
//   running_i = running_{i-1} || (one of i's labels matches)        (running_{-1} = false)
// so a matching section falls through into the next ones until a `break` sets the switch's
// flag. `default` matches when no case label of the whole switch does, wherever it stands.
// The flags are plain SSA values and pseudo-variables, so autodiff sees only Ifs (branch
// conditions are recomputed or stored by the reverse pass like any other).
#include "ir/lower_internal.h"

namespace sg::ir {

namespace {

/// The statements between one group of labels and the next.
struct Section {
    std::vector<const Stmt*> labels;
    std::vector<Stmt*> stmts;
};

}  // namespace

void Lowering::FunctionLowering::lower_switch(Stmt* s) {
    Value* selector = lower_expr(s->cond);
    // Compare as the selector's integer type (an enum compares as its underlying type).
    const Type* key_type = types_.scalar_of(selector->type);
    selector = convert(selector, key_type);

    std::vector<Section> sections;
    for (Stmt* b : s->body) {
        if (b->kind == StmtKind::Case) {
            if (sections.empty() || !sections.back().stmts.empty()) sections.emplace_back();
            sections.back().labels.push_back(b);
        } else if (!sections.empty()) {
            sections.back().stmts.push_back(b);
        } else if (b->kind == StmtKind::Decl) {
            // Before the first label: never executed, but its names are in scope below.
            for (VarDecl* v : b->decls) env_[v] = v->type->is_tensor() ? b_.undef(v->type) : b_.zero(v->type);
        }
    }
    // The body is one scope: a variable declared in one section is visible in the later ones,
    // so it gets a value before the chain (zero, like any variable declared without one).
    for (const Section& sec : sections)
        for (Stmt* st : sec.stmts) {
            if (st->kind == StmtKind::Decl)
                for (VarDecl* v : st->decls) env_[v] = v->type->is_tensor() ? b_.undef(v->type) : b_.zero(v->type);
            if (st->kind != StmtKind::For) declare_unscoped(st);  // `case 0: if (c) int z = 1;`
        }

    b_.set_loc(s->loc);
    auto matches = [&](const Stmt* label) {
        Value* k = key_type->is_bool() ? b_.const_bool(label->case_value != 0)
                                       : b_.const_int(key_type, label->case_value);
        return b_.binary(OpKind::Eq, selector, k);
    };
    Value* any_case = nullptr;  // for default: some case label matched
    for (const Section& sec : sections)
        for (const Stmt* label : sec.labels)
            if (label->expr)
                any_case = any_case ? b_.binary(OpKind::LogicOr, any_case, matches(label)) : matches(label);

    owned_flags_.push_back(std::make_unique<VarDecl>());
    VarDecl* brk = owned_flags_.back().get();
    brk->name = "__switch_break";
    brk->loc = s->loc;
    brk->type = types_.boolean();
    VarDecl* cont = loop_flags_.empty() ? nullptr : loop_flags_.back().second;
    loop_flags_.push_back({brk, cont});
    env_[brk] = b_.const_bool(false);

    Value* running = b_.const_bool(false);
    for (const Section& sec : sections) {
        b_.set_loc(sec.labels[0]->loc);
        for (const Stmt* label : sec.labels) {
            Value* hit = label->expr ? matches(label)
                                     : (any_case ? b_.unary(OpKind::LogicNot, any_case) : b_.const_bool(true));
            running = b_.binary(OpKind::LogicOr, running, hit);
        }
        Value* go = running;
        if (Value* ex = exited()) go = b_.binary(OpKind::LogicAnd, go, b_.unary(OpKind::LogicNot, ex));
        lower_if(
            go,
            [&] {
                lower_stmts(sec.stmts, 0);
                return std::vector<Value*>{};
            },
            [] { return std::vector<Value*>{}; }, {});
    }
    loop_flags_.pop_back();
    env_.erase(brk);
    for (Stmt* b : s->body) {
        if (b->kind == StmtKind::Decl)
            for (VarDecl* v : b->decls) env_.erase(v);
        if (b->kind != StmtKind::For)
            for (VarDecl* v : unscoped_decls(b)) env_.erase(v);
    }
}

}  // namespace sg::ir
