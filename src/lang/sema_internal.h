// src/lang/sema_internal.h — the Sema class shared by sema.cpp (declarations, statements),
// sema_expr.cpp (expressions) and sema_types.cpp (type resolution, conversions).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lang/sema.h"

namespace sg::lang {

class Sema {
public:
    Sema(AstContext& ast, TypeContext& types, Diagnostics& diags, bool allow_internal)
        : ast_(ast), types_(types), diags_(diags), allow_internal_(allow_internal) {}

    SemaResult run(const std::vector<ModuleAst*>& modules);

    // ---- types (sema_types.cpp)
    const Type* resolve_type(TypeExpr* te);
    const Type* resolve_named_type(const std::string& name, SourceLoc loc, bool report);
    std::optional<int64_t> eval_const_int(Expr* e);
    void declare_struct(StructDecl* s);

    // ---- expressions (sema_expr.cpp)
    /// Checks `e`; `expected` guides initializer lists (nullptr: none). Returns e->type.
    const Type* check_expr(Expr* e, const Type* expected = nullptr);
    /// Checks `e` and that it converts implicitly to `to`; reports an error naming `what`.
    void check_convertible(Expr* e, const Type* to, const char* what);
    void check_init_list(Expr* e, const Type* target);

    // ---- statements (sema.cpp)
    void check_function(FunctionDecl* f);
    void check_stmt(Stmt* s);

private:
    friend struct ExprChecker;
    // expression helpers (sema_expr.cpp)
    const Type* check_name(Expr* e);
    const Type* check_unary(Expr* e);
    const Type* check_binary(Expr* e);
    const Type* check_assign(Expr* e);
    const Type* check_conditional(Expr* e);
    const Type* check_call(Expr* e);
    const Type* check_index(Expr* e);
    const Type* check_member(Expr* e);
    const Type* check_user_call(Expr* e, const std::vector<FunctionDecl*>& candidates);
    const Type* check_derivative_call(Expr* e, FunctionDecl* target, bool backward);
    const Type* check_constructor(Expr* e, const Type* t, size_t first_arg);
    const Type* check_intrinsic(Expr* e, const IntrinsicInfo& info);
    const Type* check_tensor_method(Expr* e, Expr* tensor, const std::string& method);
    const Type* check_tensor_index(Expr* at, const Type* tensor, const std::vector<Expr*>& index);
    void require_lvalue(Expr* e, const char* what);
    bool is_integer_scalar(const Type* t) const { return t->is_scalar() && is_integer(t->scalar); }

    // scopes
    void push_scope() { scopes_.emplace_back(); }
    void pop_scope() { scopes_.pop_back(); }
    void declare_local(VarDecl* v);
    VarDecl* lookup_local(const std::string& name) const;

    // loops
    void check_loop_bound(Stmt* s);

    AstContext& ast_;
    TypeContext& types_;
    Diagnostics& diags_;
    bool allow_internal_;

    std::map<std::string, StructDecl*> structs_;
    std::map<std::string, std::vector<FunctionDecl*>> functions_;
    std::map<std::string, VarDecl*> globals_;
    std::vector<std::map<std::string, VarDecl*>> scopes_;
    FunctionDecl* current_fn_ = nullptr;
    int loop_depth_ = 0;
    int expr_depth_ = 0;
    SemaResult result_;
};

}  // namespace sg::lang
