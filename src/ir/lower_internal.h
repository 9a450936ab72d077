// src/ir/lower_internal.h — the per-function lowering state shared by lower.cpp (functions,
// statements, control flow) and lower_expr.cpp (expressions).
#pragma once

#include <functional>
#include <map>
#include <set>

#include "ir/builder.h"
#include "lang/coop.h"
#include "ir/lower.h"
#include "lang/sema.h"

namespace sg::ir {

using lang::Expr;
using lang::ExprKind;
using lang::Stmt;
using lang::StmtKind;
using lang::VarDecl;

/// Variables in source order (declaration offset, then name, then file), so that If merging and
/// Loop carrying — which walk the environment — give the same IR, and so the same generated
/// kernel text and disk-cache key, in every process. Addresses order only exact ties.
struct VarOrder {
    bool operator()(const VarDecl* a, const VarDecl* b) const {
        if (!a || !b) return a < b;  // a missing flag (find(nullptr)) orders first
        if (a->loc.offset != b->loc.offset) return a->loc.offset < b->loc.offset;
        if (a->name != b->name) return a->name < b->name;
        const std::string* fa = a->loc.file ? &a->loc.file->name : nullptr;
        const std::string* fb = b->loc.file ? &b->loc.file->name : nullptr;
        if (fa && fb && *fa != *fb) return *fa < *fb;
        return a < b;
    }
};

/// The current SSA value of every variable in scope. Flags for early exits are pseudo-variables
/// (owned VarDecls, located at their statement) so that If merging and Loop carrying treat them
/// like user variables.
using Env = std::map<const VarDecl*, Value*, VarOrder>;

class Lowering::FunctionLowering {
public:
    FunctionLowering(Lowering& owner, lang::FunctionDecl* decl, Function& fn);
    void run();

    // ---- statements (lower.cpp)
    void lower_stmt(Stmt* s);
    void lower_stmts(const std::vector<Stmt*>& stmts, size_t first);
    void lower_loop(Stmt* s);
    /// Gives the declarations unscoped_decls(s) a value before s (0), so that s carries them out.
    void declare_unscoped(const Stmt* s);
    std::vector<Value*> lower_loop_body(Stmt* s, VarDecl* brk, VarDecl* cont, bool body_returns);
    /// A switch as an if-chain over its sections with a fallthrough flag (lower_switch.cpp).
    void lower_switch(Stmt* s);
    /// Builds an If on `cond` whose branches run `then_fn` / `else_fn` against copies of the
    /// environment; variables either branch changed become If results. `results` are extra
    /// values each branch returns (e.g. the value of a `?:`), with their types.
    std::vector<Value*> lower_if(Value* cond, const std::function<std::vector<Value*>()>& then_fn,
                                 const std::function<std::vector<Value*>()>& else_fn,
                                 const std::vector<const Type*>& result_types);
    Value* exited();  ///< bool: a return/break/continue flag is set (nullptr: cannot be)

    // ---- expressions (lower_expr.cpp)
    Value* lower_expr(Expr* e);
    Value* lower_expr_as(Expr* e, const Type* to);
    Value* convert(Value* v, const Type* to);
    void assign(Expr* lhs, Value* v);
    Value* lower_init_list(Expr* e, const Type* t);
    /// The value of a `t` nothing initializes: zero, except for the struct fields that declare a
    /// default value (`struct S { float a = 5; }`), nested structs and arrays of them included.
    Value* default_value(const Type* t);
    Value* lower_call(Expr* e);
    Value* lower_user_call(Expr* e, lang::FunctionDecl* callee, bool derivative, bool backward);
    Value* lower_constructor(Expr* e, const Type* t, size_t first);
    Value* lower_intrinsic(Expr* e);
    /// `X.dzero()` / `X.dadd(a, b)` (lower_differential.cpp).
    Value* lower_differential_member(Expr* e);
    Value* differential_add(Value* a, Value* b);
    Value* lower_tensor_access(Expr* at, Value* tensor, const std::vector<Expr*>& index,
                               std::vector<Value*>* out_index);
    Value* lower_binary(Expr* e);
    Value* binary_op(lang::Op op, Value* a, Value* b, const Type* operand_type, lang::SourceLoc loc);
    Value* lower_global(const VarDecl* g);
    /// The current value of static global `g`; a kernel gives it its initial value on first
    /// use (sema_globals.cpp).
    Value* static_value(const VarDecl* g);

    // ---- cooperative kernels (lower_coop.cpp)
    /// When `e` is a groupshared variable or an element (or sub-array) of one: its storage and
    /// the indices `e` applies to it; false otherwise.
    bool shared_path(Expr* e, Value*& view, std::vector<Value*>& index);
    /// Reads / writes `t`-typed data at `index` of a shared view (a whole sub-array when fewer
    /// indices than dimensions are given).
    Value* load_shared(Value* view, std::vector<Value*> index, const Type* t);
    void store_shared(Value* view, std::vector<Value*> index, const Type* t, Value* v);
    /// A CoopId, Barrier, Interlocked, ViewSize, ViewStride or ViewDims call.
    Value* lower_coop_call(Expr* e);
    /// An Interlocked operation on a local variable (lower_coop.cpp): read, update, write.
    Value* lower_local_interlocked(Expr* e, lang::AtomicOp op);
    /// A wave intrinsic call (lower_wave.cpp).
    Value* lower_wave_call(Expr* e);
    /// `t.sample(uv)` (lower_sample.cpp): SlangPy's bilinear read, built of loads and arithmetic
    /// (so that reverse mode differentiates it like any other code).
    Value* lower_tensor_sample(Expr* e);

    Lowering& owner_;
    lang::FunctionDecl* decl_;
    Function& fn_;
    lang::TypeContext& types_;
    Builder b_;
    Env env_;
    // Pseudo-variables for structured exits; `*_possible` says whether the function/loop uses them.
    VarDecl ret_flag_, ret_value_;
    /// (break, continue) per enclosing loop or switch; a switch's continue is its loop's (or
    /// nullptr outside loops): `continue` in a switch continues the loop around it.
    std::vector<std::pair<VarDecl*, VarDecl*>> loop_flags_;
    std::vector<std::unique_ptr<VarDecl>> owned_flags_;
    bool has_return_ = false;
};

/// Whether `s` contains a `return` (anywhere) or a break/continue that leaves the innermost
/// enclosing loop of `s`'s position.
bool stmt_may_return(const Stmt* s);
bool stmt_may_break(const Stmt* s);  ///< break/continue not nested inside an inner loop
/// Variables assigned anywhere inside `s` (roots of lvalues, out/inout arguments).
void collect_assigned(const Stmt* s, std::set<const VarDecl*>& out);
/// The declarations that statement `s` (an if, while, do or for) declares in its enclosing scope
/// (for: in its own) as in Slang: those that are a whole branch or loop body, through nested
/// braceless if/while/do bodies (sema checked them so; see Sema::check_unscoped_body).
std::vector<VarDecl*> unscoped_decls(const Stmt* s);
void collect_assigned_expr(const Expr* e, std::set<const VarDecl*>& out);

}  // namespace sg::ir
