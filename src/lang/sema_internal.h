// src/lang/sema_internal.h — the Sema class shared by sema.cpp (declarations, statements),
// sema_expr.cpp (expressions), sema_call.cpp (calls), sema_types.cpp (type resolution,
// conversions), sema_diff.cpp (custom derivatives, derivative availability) and sema_flow.cpp
// (errors 41022 and 41031).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lang/sema.h"

namespace sg::lang {

/// Whether autodiff differentiates `f`'s body: it is [Differentiable] (or the legacy
/// [BackwardDifferentiable]). A function that only names a custom derivative is differentiable
/// for its callers, but its own body is never differentiated, so the body rules (30510, 30055,
/// 41022, 41031) do not apply to it.
bool body_is_differentiated(const FunctionDecl& f);

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

    // ---- type declarations: typealias, typedef, enum, C-style casts (sema_typedecl.cpp)
    /// Records a top-level alias or enum (pass 1); a name that is already a type is 30200.
    void declare_type_name(Decl* d);
    /// Resolves the aliased type on first use (aliases may refer to later declarations).
    const Type* resolve_alias(TypeAliasDecl* a);
    /// Computes the enumerators' values and the enum type.
    void declare_enum(EnumDecl* e);
    /// A local `typealias` / `typedef` statement: declared in the innermost scope.
    void declare_local_alias(TypeAliasDecl* a);
    /// `Mode.A` / `Mode::A` when `e`'s base names an enum type: its type, else nullptr.
    const Type* check_enum_member(Expr* e);
    /// The value of `Mode.A` written as an expression, without checking it (array sizes, case
    /// labels, enumerator values); nullopt when `e` is not one.
    std::optional<int64_t> enum_member_value(const Expr* e);
    const Type* check_cast(Expr* e);
    EnumDecl* lookup_enum(const std::string& name) const;

    // ---- switch and do-while (sema_switch.cpp)
    void check_switch(Stmt* s);
    void check_do_while(Stmt* s);

    // ---- derivative attributes naming their primal (sema_diff.cpp)
    /// `[BackwardDerivativeOf(f)]` / `[ForwardDerivativeOf(f)]` on `g`: g becomes f's custom
    /// derivative of that kind (the tier-1 attribute written from the derivative's side).
    void resolve_derivative_of(FunctionDecl* g, const Attribute& a, bool backward);

    // ---- expressions (sema_expr.cpp)
    /// Checks `e`; `expected` guides initializer lists (nullptr: none). Returns e->type.
    const Type* check_expr(Expr* e, const Type* expected = nullptr);
    /// Checks `e` and that it converts implicitly to `to`; reports an error naming `what`.
    void check_convertible(Expr* e, const Type* to, const char* what);
    void check_init_list(Expr* e, const Type* target);

    // ---- statements (sema.cpp)
    void check_function(FunctionDecl* f);
    void check_stmt(Stmt* s);

    // ---- differentiability (sema_diff.cpp)
    /// Resolves `[BackwardDerivative(fn)]` / `[ForwardDerivative(fn)]` on `f`: the overload of
    /// fn whose signature is f's derived signature.
    void resolve_custom_derivative(FunctionDecl* f, const Attribute& a, bool backward);
    /// 41022 and 41031 in a differentiated body (the derivative-flow analysis, sema_flow.cpp).
    void check_derivative_flow(FunctionDecl* f);
    /// bwd_diff(f) / fwd_diff(f): every function whose body the derivative goes through must
    /// have a derivative of that kind (a custom one, or a differentiable body).
    void check_derivative_availability(Expr* call, FunctionDecl* f, bool backward);

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
    void push_scope() {
        scopes_.emplace_back();
        alias_scopes_.emplace_back();
    }
    void pop_scope() {
        scopes_.pop_back();
        alias_scopes_.pop_back();
    }
    void declare_local(VarDecl* v);
    VarDecl* lookup_local(const std::string& name) const;

    // loops
    void check_loop_bound(Stmt* s);

    AstContext& ast_;
    TypeContext& types_;
    Diagnostics& diags_;
    bool allow_internal_;

    std::map<std::string, StructDecl*> structs_;
    std::set<const StructDecl*> declared_structs_;   ///< field tables resolved (declare_struct)
    std::set<const StructDecl*> declaring_structs_;  ///< in progress: detects a struct containing itself
    std::map<std::string, std::vector<FunctionDecl*>> functions_;
    std::map<std::string, VarDecl*> globals_;
    std::vector<std::map<std::string, VarDecl*>> scopes_;
    std::map<std::string, TypeAliasDecl*> aliases_;                   ///< top-level typealias/typedef
    std::set<const TypeAliasDecl*> resolving_aliases_;                ///< in progress: detects cycles
    std::vector<std::map<std::string, TypeAliasDecl*>> alias_scopes_; ///< local ones, beside scopes_
    std::map<std::string, EnumDecl*> enums_;
    std::set<const EnumDecl*> declared_enums_;
    /// While an enum's values are evaluated: the enum and how many of its members have a value.
    struct EnumScope {
        const EnumDecl* decl = nullptr;
        size_t resolved = 0;
    } enum_scope_;
    int switch_depth_ = 0;  ///< switch bodies the current statement is in (break leaves the innermost)
    FunctionDecl* current_fn_ = nullptr;
    int loop_depth_ = 0;
    int expr_depth_ = 0;
    std::vector<std::pair<Expr*, bool>> derivative_calls_;  ///< (bwd_diff/fwd_diff call, backward)
    SemaResult result_;
};

}  // namespace sg::lang
