// src/lang/sema_operators.cpp — user-defined operators, as slangc 0.43.1 applies them:
//
// * a free function `V operator+(V a, V b)` (any binary operator) is called for `a + b` when no
//   built-in operator takes the operands; a built-in one that does wins (`operator+(float,
//   float)` does not change `1.0 + 2.0`). The expression becomes a call of the function, so
//   overloads, generics and derivatives work as for any call. A struct's member `operator+` is
//   never applied to `a + b` (Slang: 39999), and compound assignments do not use them.
// * a struct's `operator()` is called when a value of it is called: `p(3)` is `p.operator()(3)`.
#include "lang/sema_internal.h"

namespace sg::lang {

const Type* Sema::check_user_operator(Expr* e) {
    const std::string name = std::string("operator") + op_spelling(e->op);
    if (!module_.functions.count(name) && !module_.generic_functions.count(name)) return nullptr;
    auto* callee = ast_.make<Expr>();
    callee->kind = ExprKind::Name;
    callee->loc = e->loc;
    callee->name = name;
    callee->ref = RefKind::Function;
    callee->type = types_.void_type();
    e->kind = ExprKind::Call;
    e->op = Op::None;
    e->operands.insert(e->operands.begin(), callee);
    bool reported = false;
    std::vector<FunctionDecl*> candidates = call_candidates(e, callee, reported);
    if (candidates.empty()) {
        if (!reported)  // Slang: 39999, no overload of the operator applies
            diags_.error(e->loc, "no '" + name + "' takes " + type_name(e->operands[1]->type) + " and " +
                                     type_name(e->operands[2]->type),
                         39999);
        return types_.error_type();
    }
    return check_user_call(e, candidates);
}

bool Sema::rewrite_call_operator(Expr* e) {
    Expr* callee = e->operands[0];
    const Type* t = callee->type;
    if (!t || !t->is_struct() || !t->decl || find_methods(t->decl, "operator()").empty()) return false;
    auto* member = ast_.make<Expr>();
    member->kind = ExprKind::Member;
    member->loc = callee->loc;
    member->name = "operator()";
    member->operands.push_back(callee);
    callee->type = nullptr;  // checked again as the method's base
    callee->ref = RefKind::None;
    callee->var_ref = nullptr;
    e->operands[0] = member;
    return true;
}

}  // namespace sg::lang
