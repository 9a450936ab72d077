// src/syntax/ast.h — the abstract syntax tree of the kernel language.
//
// The parser builds it (every node with a SourceLoc); semantic analysis (sema.h) fills the
// annotation fields marked "sema" (types, resolved declarations, implicit conversions); lowering
// (ir/lower.h) reads the annotated tree. Nodes are owned by an AstContext arena and referenced by
// raw pointers; they are inspected by their `kind` field, never with dynamic_cast.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "syntax/diagnostics.h"

namespace sg::lang {

struct Type;
struct Expr;
struct Stmt;
struct FunctionDecl;
struct StructDecl;
struct VarDecl;

/// `public` / `internal` / `private` as written (Default: none, which Slang takes as internal).
enum class Visibility : uint8_t { Default, Public, Internal, Private };
struct Builtin;
struct TypeAliasDecl;
struct EnumDecl;

/// `[Name(args...)]` before a declaration or statement.
struct Attribute {
    SourceLoc loc;
    std::string name;
    std::vector<Expr*> args;
};

/// A type as written: `float`, `float3`, `vector<float,3>`, `IDiffTensor<float, 2>`,
/// `DifferentialPair<float>`, `T.Differential`, `float[5]`, `Particle`.
struct TypeExpr {
    SourceLoc loc;
    std::string name;                  ///< base name ("float", "IDiffTensor", "Particle")
    std::vector<TypeExpr*> type_args;  ///< generic type arguments (`<float, ...>`)
    std::vector<Expr*> value_args;     ///< generic value arguments, in order among type_args:
    std::vector<bool> arg_is_value;    ///< for each generic argument in order: value (true) or type
    std::string member;                ///< `T.Differential` → member == "Differential"; `T.A.B` → "A.B"
    std::vector<SourceLoc> member_locs; ///< where each part of `member` is written (`T::A` too)
    std::vector<Expr*> array_dims;     ///< outermost first: `float a[5][3]` → {5, 3}, `float[5][3] a` → {3, 5}
    const Type* resolved = nullptr;    ///< sema
};

// ---------------------------------------------------------------- expressions

enum class ExprKind : uint8_t {
    IntLit,       ///< int_value, int_suffix
    FloatLit,     ///< float_value, float_suffix
    BoolLit,      ///< int_value (0/1)
    Name,         ///< name; type_expr: explicit generic arguments (`f<4>`, `Poly<3>`), else null
    Unary,        ///< op, operands[0]
    Postfix,      ///< op (Inc/Dec), operands[0]
    Binary,       ///< op, operands[0..1]
    Assign,       ///< op (Assign or compound: AddAssign ...), operands[0] lhs, [1] rhs
    Conditional,  ///< operands[0] ? operands[1] : operands[2]
    Call,         ///< operands[0] callee, operands[1..] arguments
    TypeCtor,     ///< type_expr(operands...): `vector<float,3>(x)`, `float[2](a, b)`
    Index,        ///< operands[0] base, operands[1..] indices (`t[i, j]` has two)
    Member,       ///< operands[0] base, name (field, swizzle, method, `.shape`, `.p`, `.d`; `S::f` too)
    InitList,     ///< `{a, b, c}`: operands
    Comma,        ///< operands[0], operands[1]
    NoDiff,       ///< `no_diff expr`: operands[0]
    Cast,         ///< `(float)x`: type_expr, operands[0] (tier 2; parsed, reported by sema)
};

enum class Op : uint8_t {
    None,
    // unary
    Neg, Plus, Not, BitNot, PreInc, PreDec, Inc, Dec,
    // binary
    Mul, Div, Rem, Add, Sub, Shl, Shr, Lt, Gt, Le, Ge, Eq, Ne, BitAnd, BitXor, BitOr, LogAnd, LogOr,
    // assignment
    Assign, MulAssign, DivAssign, RemAssign, AddAssign, SubAssign, ShlAssign, ShrAssign,
    AndAssign, XorAssign, OrAssign,
};

const char* op_spelling(Op op);

/// What an Expr refers to after sema (for Name, Call and Member).
enum class RefKind : uint8_t {
    None,
    Local,        ///< var_ref: a local variable or parameter
    Global,       ///< var_ref: a `static const` global
    Function,     ///< overloads: candidate functions (Name used as callee)
    Builtin,      ///< builtin: an intrinsic or builtin function (sin, bwd_diff, diffPair, ...)
    Type,         ///< type_ref: a type used as constructor (`float3(...)`)
    Field,        ///< field_index: struct field
    Swizzle,      ///< swizzle: component indices
    TensorMember, ///< name: `shape`, `load`, `store`, `add`, `load_once`, `load_uniform`
    PairMember,   ///< name: `p`, `d`, `getPrimal`, `getDifferential` of DifferentialPair
    EnumMember,   ///< enum_value: an enumerator `Mode.A` / `Mode::A` (type: the enum)
};

struct Expr {
    ExprKind kind;
    SourceLoc loc;
    Op op = Op::None;
    std::vector<Expr*> operands;
    std::string name;
    uint64_t int_value = 0;
    double float_value = 0;
    std::string suffix;            ///< literal suffix as written ("u", "ull", "f", "h", "l")
    bool decimal = true;           ///< IntLit written in decimal (wide hex/binary literals are uint)
    TypeExpr* type_expr = nullptr;

    // ---- sema annotations
    const Type* type = nullptr;        ///< type of the value
    bool is_lvalue = false;
    RefKind ref = RefKind::None;
    VarDecl* var_ref = nullptr;
    FunctionDecl* callee = nullptr;    ///< resolved user function for Call
    const Builtin* builtin = nullptr;  ///< resolved builtin for Call / Name
    const Type* type_ref = nullptr;    ///< constructor type for Call of a type name
    std::vector<int> swizzle;          ///< component indices for RefKind::Swizzle
    int field_index = -1;
    /// For a Call: the function that bwd_diff/fwd_diff was applied to (`bwd_diff(f)(...)`).
    FunctionDecl* diff_target = nullptr;
    /// For a Member naming an enumerator (`Mode.A`, `Mode::A`): its value (ref == EnumMember).
    int64_t enum_value = 0;
};

// ---------------------------------------------------------------- statements and declarations

enum class StmtKind : uint8_t {
    Block,     ///< body
    Expr,      ///< expr
    Decl,      ///< decls (one statement may declare several: `float a = 1, b;`)
    If,        ///< cond, then_stmt, else_stmt (nullable)
    For,       ///< init (nullable Stmt), cond (nullable), step (nullable), then_stmt = body
    While,     ///< cond, then_stmt = body
    DoWhile,   ///< then_stmt = body, cond (tier 2)
    Break,
    Continue,
    Return,    ///< expr (nullable)
    Empty,
    Switch,    ///< cond; body = the statements of the switch block, with Case labels among them
    Case,      ///< `case expr:` (expr) or `default:` (expr == nullptr); only directly in a Switch body
    TypeAlias, ///< alias: a local `typealias X = T;` / `typedef T X;`
};

struct Stmt {
    StmtKind kind;
    SourceLoc loc;
    std::vector<Attribute> attrs;  ///< `[MaxIters(16)]`, `[ForceUnroll]`, `[unroll]`
    std::vector<Stmt*> body;
    std::vector<VarDecl*> decls;
    Expr* expr = nullptr;
    Expr* cond = nullptr;
    Stmt* init = nullptr;
    Expr* step = nullptr;
    Stmt* then_stmt = nullptr;
    Stmt* else_stmt = nullptr;
    TypeAliasDecl* alias = nullptr;  ///< TypeAlias
    int64_t case_value = 0;          ///< sema: the value of a `case` label
};

/// The direct parts of a statement: its nested statements (body, init, then, else) go to
/// `on_stmt`, the expressions it holds itself (declaration initializers, expr, cond, step) to
/// `on_expr`, in that order; either may be null. The one list of a statement's parts for every
/// walk over the tree that must miss none (const or not: `S` is `Stmt*` or `const Stmt*`).
template <class S, class OnStmt, class OnExpr>
void for_each_part(S s, OnStmt&& on_stmt, OnExpr&& on_expr) {
    for (auto* b : s->body) on_stmt(b);
    for (auto* v : s->decls) on_expr(v->init);
    on_expr(s->expr);
    on_expr(s->cond);
    on_expr(s->step);
    on_stmt(s->init);
    on_stmt(s->then_stmt);
    on_stmt(s->else_stmt);
}

/// Parameter direction modifiers.
enum class ParamDir : uint8_t { In, Out, InOut };

/// A variable: local, parameter, struct field or global `static const`.
struct VarDecl {
    SourceLoc loc;
    std::string name;
    TypeExpr* type_expr = nullptr;  ///< nullptr for `var x = ...` / `let x = ...`
    Expr* init = nullptr;
    /// A parameter's default value as parsed. Sema never annotates it: the declaration and
    /// each call that leaves the argument out check copies of their own (clone_expr).
    Expr* default_value = nullptr;
    std::string default_text;       ///< the default's tokens, spaced: the call glue passes it
    ParamDir dir = ParamDir::In;    ///< parameters only
    bool is_no_diff = false;
    bool is_constref = false;       ///< `__constref` parameter: read-only, passed by reference
    SourceLoc column_major;         ///< where `column_major` was written (a field's: its layout in a buffer, FieldInfo::column_major)
    bool is_const = false;          ///< `const`, `let`, `static const`
    bool is_static = false;
    bool is_param = false;
    bool is_global = false;
    bool is_extern = false;         ///< `extern static const`: its value comes at link time
    bool is_export = false;         ///< `export static const`: fills other modules' externs
    bool is_groupshared = false;    ///< `groupshared` global: one copy per block of a cooperative kernel
    Visibility visibility = Visibility::Default;  ///< struct members (also accepted elsewhere)
    /// `[DerivativeMember(D.f)]` on a struct field: the field of the struct's declared
    /// Differential D that holds its derivative (sema_derivative_members.cpp); else nullptr.
    Expr* derivative_member = nullptr;

    const Type* type = nullptr;     ///< sema
    int index = -1;                 ///< sema: parameter index or field index
};

/// One parameter of a generic declaration: `T`, `T : IFloat`, `let N : int`, legacy `int N`.
struct GenericParam {
    SourceLoc loc;
    std::string name;
    bool is_value = false;           ///< `let N : int` / `int N`
    TypeExpr* value_type = nullptr;  ///< the value parameter's type (`int`, `uint`)
    std::string constraint;          ///< type parameter: interface name ("" when unconstrained)
    /// Further constraints the argument must meet too: `T : IA & IB`, `where T : IB` (parser_where.cpp).
    std::vector<std::string> more_constraints;
    /// Every constraint as written, in the order above (where clauses' after the list's). A
    /// generic interface with its arguments (`U : IGet<T>`) is named in the strings by its text
    /// ("IGet<T>"); sema resolves it from here (sema_generic_interfaces.cpp).
    std::vector<TypeExpr*> constraint_types;
    /// `where T == U`: the type parameters whose arguments must be this one's (parser_where.cpp).
    std::vector<std::string> same_as;
    std::vector<SourceLoc> same_as_locs;
};

/// One argument of an instantiation: a type, or an integer for a value parameter.
struct GenericArg {
    const Type* type = nullptr;
    int64_t value = 0;
    bool is_value = false;
    bool operator<(const GenericArg& o) const {
        if (is_value != o.is_value) return is_value < o.is_value;
        return is_value ? value < o.value : type < o.type;
    }
    bool operator==(const GenericArg& o) const = default;
};

struct FunctionDecl {
    SourceLoc loc;
    std::string name;               ///< free function: its name; method: "Struct.method"
    std::vector<Attribute> attrs;   ///< `[Differentiable]`, `[BackwardDerivative(f)]`, ...
    TypeExpr* return_type = nullptr;
    bool return_no_diff = false;
    std::vector<VarDecl*> params;
    Stmt* body = nullptr;           ///< nullptr for a declaration without body

    // ---- sema annotations
    const Type* result_type = nullptr;
    bool is_differentiable = false;               ///< [Differentiable] / [BackwardDifferentiable] / [ForwardDifferentiable]
    FunctionDecl* custom_backward = nullptr;      ///< [BackwardDerivative(fn)]
    FunctionDecl* custom_forward = nullptr;       ///< [ForwardDerivative(fn)]
    /// [PrimalSubstitute(g)] / [PrimalSubstituteOf(f)]: derivatives differentiate g in its place
    FunctionDecl* primal_substitute = nullptr;
    bool is_glue_entry = false;                   ///< the generated kernel entry (glue only)
    Visibility visibility = Visibility::Default;
    /// sema: the bodiless stand-in for `fwd_diff(f)` when a derivative operator is applied to
    /// it (a higher-order derivative); lowering makes it f's forward derivative stub.
    FunctionDecl* derivative_of = nullptr;
    /// sema: the `static` (non-const) globals it reads or writes, through its callees too, in
    /// declaration order; lowering passes them in and out as hidden inout parameters.
    std::vector<VarDecl*> static_globals;

    // ---- members and generics (parser, except where marked sema)
    std::vector<GenericParam> generic_params;     ///< `f<T : IFloat, let N : int>`: a generic function
    /// `where T : IA & IB` clauses not yet merged into generic_params (parser only).
    std::vector<GenericParam> where_clauses;
    StructDecl* owner = nullptr;                  ///< member function of this struct or interface
    std::string member_name;                      ///< method: the name inside the struct ("energy")
    bool is_static = false;                       ///< `static` member function (no `this`)
    bool is_mutating = false;                     ///< `[mutating]`: `this` is inout
    bool is_init = false;                         ///< `__init(...)`: a constructor, returns the struct
    bool is_override = false;                     ///< `override`: replaces an interface's default implementation
    VarDecl* this_param = nullptr;                ///< sema: params[0] of a method that has `this`
    FunctionDecl* generic_origin = nullptr;       ///< sema: an instantiation's generic declaration
    std::vector<GenericArg> generic_args;         ///< sema: an instantiation's arguments
};

/// A struct, or an interface (`is_interface`: methods are requirements, there are no fields).
struct StructDecl {
    SourceLoc loc;
    std::string name;                ///< a generic struct's instantiation: "Poly<3>" (sema)
    Visibility visibility = Visibility::Default;
    std::vector<std::string> bases;  ///< `: IDifferentiable, IActivation`
    std::vector<SourceLoc> base_locs;
    /// Per base: a generic interface's arguments as written (`S : IGet<float>`), else nullptr;
    /// sema resolves it to the interface's instance and names that in `bases` (sema_generic_interfaces.cpp).
    std::vector<TypeExpr*> base_types;
    std::vector<VarDecl*> fields;
    std::vector<FunctionDecl*> methods;     ///< member functions, static functions and `__init`s
    std::vector<VarDecl*> static_consts;    ///< `static const int N = 3;`
    std::vector<VarDecl*> type_aliases;     ///< `typealias T = float;` (type_expr; satisfies associatedtype)
    std::vector<GenericParam> generic_params;
    std::vector<std::string> associated_types;  ///< interface: `associatedtype T;`
    std::vector<SourceLoc> associated_locs;
    /// A generic extension (`extension<T> Box<T>`): the struct as written with its arguments;
    /// generic_params are the extension's (sema_generic_extensions.cpp).
    TypeExpr* extension_target = nullptr;
    /// Per associated type: the interfaces it must conform to (`associatedtype D : IA, IB;`).
    std::vector<std::vector<std::string>> associated_constraints;
    std::vector<std::vector<SourceLoc>> associated_constraint_locs;
    bool is_interface = false;

    const Type* type = nullptr;      ///< sema
    StructDecl* generic_origin = nullptr;  ///< sema: an instantiation's generic declaration
    std::vector<GenericArg> generic_args;  ///< sema: an instantiation's arguments
};

/// `typealias X = T;` or `typedef T X;` (top level or local): X names the type T.
struct TypeAliasDecl {
    SourceLoc loc;                  ///< at the new name
    std::string name;
    TypeExpr* type = nullptr;
    const Type* resolved = nullptr; ///< sema
};

/// One enumerator: `B = 4` (value nullptr when implicit: the previous value plus one).
struct EnumMember {
    SourceLoc loc;
    std::string name;
    Expr* value = nullptr;
    int64_t resolved = 0;           ///< sema
};

/// `enum Mode { A, B = 4, C }` or `enum class Mode : uint { ... }`.
struct EnumDecl {
    SourceLoc loc;                  ///< at the name
    std::string name;
    bool is_class = false;
    TypeExpr* underlying = nullptr; ///< `: uint`; nullptr: int
    std::vector<EnumMember> members;
    const Type* type = nullptr;     ///< sema
};

/// Extension: `extension S : IFoo { methods }` (structure: its members, named after S; sema moves
/// them into S).
enum class DeclKind : uint8_t { Import, Function, Struct, Interface, GlobalVar, Unsupported, TypeAlias, Enum, Extension };

/// What an Import declaration says: `import m;`, `__include m;`, `module m;`, `implementing m;`.
enum class ImportKind : uint8_t { Import, Include, ModuleName, Implementing };

struct Decl {
    DeclKind kind;
    SourceLoc loc;
    std::string import_name;             ///< Import: "slangpy", "util.math", "lib/defs.slang"
    ImportKind import_kind = ImportKind::Import;
    bool import_is_path = false;         ///< written as a string ("file.slang")
    SourceLoc import_loc;                ///< the name (where "cannot open" points)
    FunctionDecl* function = nullptr;
    StructDecl* structure = nullptr;
    std::vector<VarDecl*> globals;       ///< GlobalVar (`static const float K[2] = {...};`)
    TypeAliasDecl* alias = nullptr;      ///< TypeAlias
    EnumDecl* enumeration = nullptr;     ///< Enum
};

/// One parsed source file.
struct ModuleAst {
    const SourceFile* file = nullptr;
    std::vector<Decl*> decls;
};

/// Arena owning every AST node of one compilation.
class AstContext {
public:
    template <class T, class... Args>
    T* make(Args&&... args) {
        auto node = std::make_unique<Holder<T>>(std::forward<Args>(args)...);
        T* raw = &node->value;
        nodes_.push_back(std::move(node));
        return raw;
    }

private:
    struct HolderBase {
        virtual ~HolderBase() = default;
    };
    template <class T>
    struct Holder : HolderBase {
        template <class... Args>
        explicit Holder(Args&&... args) : value{std::forward<Args>(args)...} {}
        T value;
    };
    std::vector<std::unique_ptr<HolderBase>> nodes_;
};

/// Finds an attribute by name (case-sensitive); nullptr when absent.
const Attribute* find_attribute(const std::vector<Attribute>& attrs, const char* name);

}  // namespace sg::lang
