// src/lang/sema_accessors.cpp — uses of `property` and `__subscript` members (their accessors
// are methods: parser_accessors.cpp). Each use becomes a call of an accessor, checked, lowered
// and differentiated as any method call:
//
//   s.x          s.__get_x()                 s[i]          s.__subscript_get(i)
//   s.x = v      s.__set_x(v)                s[i] = v      s.__subscript_set(i, v)
//   s.x += v     s.__set_x(s.x + v)          s[i] *= v     s.__subscript_set(i, s[i] * v)
//
// `s[i++] *= v;` as a statement first takes its index into a constant (hoist_index_operands).
//
// A property without a getter cannot be read, one without a setter cannot be assigned (30011,
// as any value that is not an lvalue).
#include "lang/sema_internal.h"
#include "syntax/ast_clone.h"

namespace sg::lang {

namespace {

/// `base.name` as a callee.
Expr* member_callee(AstContext& ast, Expr* base, const std::string& name, SourceLoc loc) {
    auto* m = ast.make<Expr>();
    m->kind = ExprKind::Member;
    m->loc = loc;
    m->name = name;
    m->operands.push_back(base);
    return m;
}

/// Whether evaluating `e` may change something (an assignment, ++/--, a call): such an operand
/// cannot be read twice, as `s[i++] += v` would through its getter and setter.
bool has_side_effects(const Expr* e) {
    if (!e) return false;
    if (e->kind == ExprKind::Assign || e->kind == ExprKind::Postfix || e->kind == ExprKind::Call) return true;
    if (e->kind == ExprKind::Unary && (e->op == Op::PreInc || e->op == Op::PreDec)) return true;
    for (const Expr* o : e->operands)
        if (has_side_effects(o)) return true;
    return false;
}

}  // namespace

bool Sema::hoist_index_operands(Stmt* s) {
    // `s[i++] *= 4;` as a statement: `{ let t = i++; s[t] *= 4; }`, so that the getter and the
    // setter see one index, evaluated once (before the right side, left to right). Only index
    // operands move; a base with side effects stays (it is not a place a setter could write).
    Expr* e = s->expr;
    if (e->kind != ExprKind::Assign || e->op == Op::Assign) return false;
    Expr* lhs = e->operands[0];
    if (lhs->kind != ExprKind::Index || lhs->operands.size() < 2 || has_side_effects(lhs->operands[0])) return false;
    bool any = false;
    for (size_t k = 1; k < lhs->operands.size(); ++k) any |= has_side_effects(lhs->operands[k]);
    if (!any) return false;
    std::vector<Stmt*> body;
    for (size_t k = 1; k < lhs->operands.size(); ++k) {
        Expr* op = lhs->operands[k];
        if (!has_side_effects(op)) continue;
        auto* v = ast_.make<VarDecl>();
        v->loc = op->loc;
        v->name = "__sg_index" + std::to_string(hoisted_indices_++);
        v->init = op;
        v->is_const = true;
        auto* decl = ast_.make<Stmt>();
        decl->kind = StmtKind::Decl;
        decl->loc = op->loc;
        decl->decls = {v};
        body.push_back(decl);
        auto* name = ast_.make<Expr>();
        name->kind = ExprKind::Name;
        name->loc = op->loc;
        name->name = v->name;
        lhs->operands[k] = name;
    }
    auto* assign = ast_.make<Stmt>();
    assign->kind = StmtKind::Expr;
    assign->loc = s->loc;
    assign->expr = e;
    body.push_back(assign);
    s->kind = StmtKind::Block;
    s->expr = nullptr;
    s->body = std::move(body);
    return true;
}

std::string accessor_display_name(const std::string& member) {
    if (member == "__subscript_get" || member == "__subscript_set")
        return std::string("__subscript's '") + (member == "__subscript_get" ? "get" : "set") + "'";
    if (member.rfind("__get_", 0) == 0 || member.rfind("__set_", 0) == 0)
        return "property '" + member.substr(6) + "''s '" + member.substr(2, 3) + "'";
    return "method '" + member + "'";
}

bool Sema::accessor_sibling(const StructDecl* s, const FunctionDecl* r, SourceLoc& at) {
    // The other accessor of the same subscript or property: `get` for a missing `set`.
    const std::string& m = r->member_name;
    std::string other;
    if (m == "__subscript_get" || m == "__subscript_set") other = m == "__subscript_get" ? "__subscript_set" : "__subscript_get";
    else if (m.rfind("__get_", 0) == 0) other = "__set_" + m.substr(6);
    else if (m.rfind("__set_", 0) == 0) other = "__get_" + m.substr(6);
    else return false;
    std::vector<FunctionDecl*> found = find_methods(s, other);
    if (found.empty()) return false;
    at = found.front()->loc;
    return true;
}

const Type* Sema::check_property_read(Expr* e, const Type* bt) {
    const std::string getter = "__get_" + e->name;
    if (find_methods(bt->decl, getter).empty()) {
        if (find_methods(bt->decl, "__set_" + e->name).empty()) return nullptr;
        diags_.error(e->loc, "property '" + e->name + "' of struct " + type_name(bt) + " has no 'get'", 30011);
        return types_.error_type();
    }
    Expr* base = e->operands[0];
    e->kind = ExprKind::Call;
    e->operands = {member_callee(ast_, base, getter, e->loc)};
    e->name.clear();
    e->ref = RefKind::None;
    return check_call(e);
}

const Type* Sema::check_subscript_read(Expr* e, const Type* bt) {
    if (!bt->is_struct() || !bt->decl || find_methods(bt->decl, "__subscript_get").empty()) return nullptr;
    e->kind = ExprKind::Call;
    e->operands[0] = member_callee(ast_, e->operands[0], "__subscript_get", e->loc);
    return check_call(e);
}

const Type* Sema::check_accessor_assign(Expr* e) {
    Expr* lhs = e->operands[0];
    if ((lhs->kind != ExprKind::Member && lhs->kind != ExprKind::Index) || lhs->operands.empty()) return nullptr;
    Expr* base = lhs->operands[0];
    if (base->kind == ExprKind::Name && !lookup_local(base->name) && !module_.globals.count(base->name))
        return nullptr;  // `S.N`, `float.maxValue`, an enum: no value to call a setter on
    const Type* bt = check_expr(base);
    if (!bt->is_struct() || !bt->decl) return nullptr;
    const bool index = lhs->kind == ExprKind::Index;
    const std::string setter = index ? "__subscript_set" : "__set_" + lhs->name;
    if (find_methods(bt->decl, setter).empty()) return nullptr;
    if (!index)
        for (const auto& f : types_.fields(bt))
            if (f.name == lhs->name) return nullptr;  // a field of that name wins
    Expr* value = e->operands[1];
    if (e->op != Op::Assign && has_side_effects(lhs)) {
        diags_.unsupported(e->loc, "a compound assignment through a property or subscript whose operands have side "
                                   "effects, inside an expression (they would be evaluated twice; as a statement "
                                   "of its own it works)");
        return types_.error_type();
    }
    if (e->op != Op::Assign) {  // `s.x += v`: the setter gets `s.x + v`
        static const Op kCompound[] = {Op::Mul, Op::Div, Op::Rem,    Op::Add,    Op::Sub,
                                       Op::Shl, Op::Shr, Op::BitAnd, Op::BitXor, Op::BitOr};
        auto* sum = ast_.make<Expr>();
        sum->kind = ExprKind::Binary;
        sum->loc = e->loc;
        sum->op = kCompound[int(e->op) - int(Op::MulAssign)];
        sum->operands = {clone_expr(ast_, lhs), value};
        value = sum;
    }
    std::vector<Expr*> operands{member_callee(ast_, base, setter, lhs->loc)};
    if (index) operands.insert(operands.end(), lhs->operands.begin() + 1, lhs->operands.end());
    operands.push_back(value);
    e->kind = ExprKind::Call;
    e->op = Op::None;
    e->operands = std::move(operands);
    return check_call(e);
}

}  // namespace sg::lang
