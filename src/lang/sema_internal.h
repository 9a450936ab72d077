// src/lang/sema_internal.h — the Sema class: the checker that walks declarations, statements and
// expressions, shared by its files (sema.cpp declarations and statements, sema_expr.cpp
// expressions, sema_call.cpp calls, sema_types.cpp type resolution, sema_generics.cpp
// instantiation, sema_diff.cpp and sema_flow.cpp differentiability, and the others named below).
//
// The state of each separate concern lives in a collaborator with its own interface, which Sema
// holds and asks: ModuleScope and Scopes (scopes.h) where names are found, Instances
// (instances.h) the generic instances made and their substitutions, Standins (standins.h) the
// stand-ins of type parameters and what each constraint offers, DefaultArguments (defaults.h)
// the rules of default parameter values and the arguments they give. None of them calls back
// into Sema except DefaultArguments, through the one callback it is given. Overload resolution
// (overloads.h) ranks a call's candidates by conversion cost; Sema finds them and reports.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lang/analysis.h"
#include "lang/defaults.h"
#include "lang/instances.h"
#include "lang/scopes.h"
#include "lang/sema.h"
#include "lang/standins.h"

namespace sg::lang {

/// Whether autodiff differentiates `f`'s body: it is [Differentiable] (or the legacy
/// [BackwardDifferentiable]). A function that only names a custom derivative is differentiable
/// for its callers, but its own body is never differentiated, so the body rules (30510, 30055,
/// 41022, 41031) do not apply to it.
bool body_is_differentiated(const FunctionDecl& f);

/// The synthesized `static const` a value parameter `p` stands for when its argument is `value`.
VarDecl* generic_value_constant(AstContext& ast, TypeContext& types, const GenericParam& p, int64_t value);

/// Whether a parameter passed `given` meets a requirement's parameter passed `required` (as in
/// slangc: the same direction, or any for an `inout` requirement).
bool direction_meets(ParamDir required, ParamDir given);
const char* direction_name(ParamDir d);
/// How messages name a member: "method 'f'", "__subscript's 'get'", "property 'x''s 'set'".
std::string accessor_display_name(const std::string& member);
/// What a derivative attribute names, as written: "g", "S.g" (sema_qualified_attributes.cpp).
std::string attribute_target_text(const Attribute& a);

/// The cooperative-kernel built-in `name` calls (ids, barriers, Interlocked*), or nullptr.
const Builtin* find_coop_builtin(const std::string& name);

class Sema {
public:
    Sema(AstContext& ast, TypeContext& types, Diagnostics& diags, bool allow_internal)
        : ast_(ast), types_(types), diags_(diags), allow_internal_(allow_internal),
          defaults_(ast, types, diags, [this](FunctionDecl* f, VarDecl* p, Expr* e) { check_default_value(f, p, e); }) {
    }

    SemaResult run(const std::vector<ModuleAst*>& modules);

    // ---- types (sema_types.cpp)
    const Type* resolve_type(TypeExpr* te);
    const Type* resolve_named_type(const std::string& name, SourceLoc loc, bool report);
    std::optional<int64_t> eval_const_int(Expr* e);
    std::optional<int64_t> eval_global(VarDecl* g);
    const Type* resolve_array_dims(TypeExpr* te, const Type* base);
    // ---- associated and member types (sema_assoc_types.cpp)
    /// A member type `name` of `owner` (typealias, typedef, nested struct), also of the structs a
    /// nested one is declared in; nullptr when none.
    const Type* member_alias_type(const StructDecl* owner, const std::string& name);
    /// `base.A.B` for te's member path (`T.Param`, `T::Param.Differential`); 30027 at a member
    /// base does not have.
    const Type* resolve_member_type_path(TypeExpr* te, const Type* base);
    /// Constraints of an interface's associated types name known interfaces (30015).
    void check_associated_constraint_names(const StructDecl* iface);
    /// Whether `t`, s's type for iface's k-th associated type, meets its constraints (38029).
    bool check_associated_type_constraints(const StructDecl* s, const StructDecl* iface, size_t k, const Type* t);
    /// `T.Param` (a chain of members naming a member type) in an expression: rewritten to a type
    /// name (a Name with its TypeExpr); false, changing nothing, when it is not one.
    bool fold_type_path(Expr* e);
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
    /// slangc's warning 30081 when the implicit conversion of `e` to `to` loses information
    /// (sema_conversions.cpp); silent for conversions that keep the value.
    void warn_implicit_conversion(Expr* e, const Type* to);
    void check_init_list(Expr* e, const Type* target);

    // ---- statements (sema.cpp)
    void check_bodies(size_t first);
    /// A function declared without a body (`float g(float x);`) and defined with the same
    /// parameter types, in either order: the definition, which takes the declaration's default
    /// values; the declaration leaves the checked functions.
    FunctionDecl* merge_declaration(FunctionDecl* a, FunctionDecl* b);
    void check_recursion_and_derivatives(size_t first_derivative_call);
    void check_global(VarDecl* g);
    /// A `static` global that is not const, and which static globals each function uses
    /// (FunctionDecl::static_globals, from result_.functions[first] on): sema_globals.cpp.
    void check_static_variable(VarDecl* g);
    /// `bwd_diff(S.f)(...)` / `fwd_diff(S::f)(...)` of a static method (sema_qualified_diff.cpp).
    const Type* check_qualified_derivative(Expr* e, Expr* target, bool bwd, const std::string& op);
    /// A global buffer or tensor (`RWStructuredBuffer<float> g_buf;`): true when `g` is one
    /// (checked; its type set), false when it is some other global.
    bool check_global_resource(VarDecl* g);
    /// A uniform global of value type `t` (`float g_scale;`): sema_uniform_globals.cpp.
    bool check_uniform_global(VarDecl* g, const Type* t);
    void check_uniform_type(VarDecl* g);
    void check_static_type(VarDecl* g);
    /// Initializers of static variables with a declared type, checked once functions are
    /// declared (they may construct structs and call functions).
    void check_static_initializers();
    void check_static_initializer(VarDecl* g);
    void collect_static_globals(size_t first);
    void check_function_attributes(FunctionDecl* f);
    std::string instance_context(const FunctionDecl* f) const;
    void check_function(FunctionDecl* f);
    void check_stmt(Stmt* s);
    /// A branch or while/do body: a declaration that is the whole body goes into the enclosing
    /// scope, with a warning (`whose` / `after`: "a branch's" / "the branch").
    void check_unscoped_body(Stmt* s, const char* whose, const char* after);

    // ---- differentiability (sema_diff.cpp)
    /// Resolves `[BackwardDerivative(fn)]` / `[ForwardDerivative(fn)]` on `f`: the overload of
    /// fn whose signature is f's derived signature.
    void resolve_custom_derivative(FunctionDecl* f, const Attribute& a, bool backward);
    /// The overloads an attribute names (`[BackwardDerivative(fn)]`, `[BackwardDerivativeOf(fn)]`);
    /// nullptr, after reporting, when its argument is not a known function's name.
    const std::vector<FunctionDecl*>* attribute_functions(const Attribute& a);
    /// The functions a derivative attribute on `f` may name: module functions; for a method its
    /// struct's methods; for an instance of a generic the same generic's instances with f's
    /// arguments (sema_member_derivatives.cpp). nullopt after reporting.
    std::optional<std::vector<FunctionDecl*>> derivative_attribute_candidates(FunctionDecl* f, const Attribute& a);
    /// `[BackwardDerivative(S.g)]`, `[ForwardDerivativeOf(S::f)]`: S's static methods of that
    /// name; nullopt after reporting (sema_qualified_attributes.cpp).
    std::optional<std::vector<FunctionDecl*>> qualified_attribute_candidates(FunctionDecl* f, const Attribute& a);
    /// A static method's custom derivative must be a static method (31156); false after reporting.
    bool check_static_derivative(const FunctionDecl* primal, const FunctionDecl* derivative, const Attribute& a);
    /// `[PrimalSubstitute(g)]` on f / `[PrimalSubstituteOf(f)]` on g (of): records g as f's
    /// primal substitute (sema_primal_substitute.cpp).
    void resolve_primal_substitute(FunctionDecl* f, const Attribute& a, bool of);
    /// 41022 and 41031 in a differentiated body (the derivative-flow analysis, sema_flow.cpp).
    void check_derivative_flow(FunctionDecl* f);
    /// bwd_diff(f) / fwd_diff(f): every function whose body the derivative goes through must
    /// have a derivative of that kind (a custom one, or a differentiable body).
    void check_derivative_availability(Expr* call, FunctionDecl* f, bool backward);

    // ---- struct members (sema_members.cpp)
    /// Resolves the signature of a function or method (parameter and result types, `this`,
    /// [Differentiable]) and records it among the checked functions.
    void declare_signature(FunctionDecl* f);
    /// Static constants and member signatures of a struct whose fields are declared.
    void declare_members(StructDecl* s);
    /// `s.f(x)`, `S.f(x)`, `S::f(x)`, `f(x)` inside a method: a call of a member function.
    const Type* check_member_call(Expr* e);
    /// Whether `callee` (a Name) names a member function of the method being checked; rewrites
    /// the call to go through `this` (or the struct, for a static one) when it does.
    bool rewrite_implicit_member_call(Expr* e);
    /// A bare name inside a method that names a field or static constant of its struct.
    bool resolve_implicit_member(Expr* e);
    /// `S.N` / `S::N` / `S.f` where `base` names a struct type; nullptr when it names none.
    const Type* static_base_type(Expr* base);
    VarDecl* find_static_const(const StructDecl* s, const std::string& name) const;
    std::vector<FunctionDecl*> find_methods(const StructDecl* s, const std::string& name) const;
    /// The methods a call `s.f(args)` / `S.f(args)` may mean (e: the call, callee: the Member):
    /// the concrete ones, and the instantiations of the generic ones for the explicit
    /// (`s.f<float>(x)`) or inferred arguments (sema_generic_methods.cpp).
    std::vector<FunctionDecl*> member_candidates(Expr* e, Expr* callee, const StructDecl* s, bool& reported);
    /// `S(a, b)` for a struct with `__init`s.
    const Type* check_struct_constructor(Expr* e, const Type* t);
    /// Gives an `__init` body its `this` local and makes it return `this`.
    void prepare_init_body(FunctionDecl* f);

    // ---- generics (sema_generics.cpp)
    /// The substitution of an instantiated function (or of its struct's), or nullptr.
    const Substitution* substitution_of(const FunctionDecl* f) const;
    const Substitution* substitution_of_struct(const StructDecl* s) const;
    /// The instantiation of generic `g` with `args` (cached), its signature resolved and its body
    /// queued for checking; nullptr (reported) when the arguments do not satisfy `g`.
    FunctionDecl* instantiate_function(FunctionDecl* g, const std::vector<GenericArg>& args, SourceLoc at);
    StructDecl* instantiate_struct(StructDecl* g, const std::vector<GenericArg>& args, SourceLoc at);
    /// What both share: the instance of generic `g` (a FunctionDecl or a StructDecl) with `args`
    /// when one was made before (nullptr when that failed). Otherwise, unless it nests more than
    /// kMaxInstantiationDepth deep or `too_deep` (reported; remembered as failed, nullptr), a copy
    /// of `g` named after its arguments, registered as that instance with its depth and its
    /// substitution (`outer`'s, when given, plus `g`'s params → `args`), then given to `finish`
    /// (void(Decl*): what is particular to the kind) before it is returned.
    template <class Decl, class Finish>
    Decl* instantiate(Decl* g, const std::vector<GenericArg>& args, SourceLoc at, bool too_deep,
                      const Substitution* outer, Finish&& finish);
    /// Arguments written in `<...>` (of a TypeExpr) for `params`; false (reported) when wrong.
    bool explicit_generic_args(TypeExpr* te, const std::vector<GenericParam>& params, const std::string& what,
                               std::vector<GenericArg>& out, bool allow_partial);
    /// Infers the arguments of `g` not given explicitly (`known`) from call arguments.
    bool infer_generic_args(FunctionDecl* g, const std::vector<Expr*>& args, std::vector<GenericArg>& known,
                            size_t explicit_count, SourceLoc at, bool report);
    bool satisfies(const GenericParam& p, const GenericArg& a) const;
    /// Whether type `t` meets the one constraint `c` ("" is met by every value type).
    bool satisfies_constraint(const std::string& c, const Type* t) const;
    std::string describe_constraint_failure(const GenericParam& p, const GenericArg& a) const;
    /// The candidates of a call of `name`: the concrete overloads, and the instantiations of its
    /// generic ones for the explicit (`f<4>`) or inferred arguments.
    std::vector<FunctionDecl*> call_candidates(Expr* e, Expr* callee, bool& reported);
    /// Adds to `out` the instantiation of each of `generics` (free functions, or with `members`
    /// methods, named by their member name) that takes `args` with the explicit arguments of
    /// `callee` and inferred ones; with a single viable candidate its failure is reported.
    void instantiate_candidates(const std::vector<FunctionDecl*>& generics, Expr* e, Expr* callee,
                                const std::vector<Expr*>& args, bool members, std::vector<FunctionDecl*>& out,
                                bool& reported);
    std::optional<int64_t> generic_value(const std::string& name);
    /// Instantiates each generic function and struct that nothing instantiated with
    /// representative arguments, so that its body is checked once anyway.
    void check_uninstantiated_generics();
    bool representative_args(const std::vector<GenericParam>& params, std::vector<GenericArg>& out) const;
    /// Checks each generic function with an unconstrained type parameter once more, with an
    /// opaque type in its place (sema_generic_checks.cpp), as slangc checks a generic as declared.
    void check_generics_against_constraints();
    /// The representative arguments of `params` with a stand-in for each type parameter a
    /// stand-in models (added to `opaque`; `constrained`: one of them has a constraint); false
    /// when there is none, or nothing to check with.
    bool standin_args(const std::vector<GenericParam>& params, std::vector<GenericArg>& args,
                      std::set<const Type*>& opaque, bool& constrained);
    /// Checks the bodies `instantiate` makes; with `constrained`, keeps only the errors that say
    /// an operation or conversion does not exist for a stand-in (39999, 30019, 30027, 30438,
    /// 38029).
    void check_with_standins(const std::function<void()>& instantiate, bool constrained);
    /// The generic member functions of `s` (a plain struct, or an instance of a generic one:
    /// `struct_standins` when its arguments are stand-ins), each checked with stand-ins.
    void check_generic_methods_against_constraints(StructDecl* s, bool struct_constrained, bool struct_standins,
                                                   std::set<const Type*>& opaque);
    /// Drops the functions and structs made from these counts on, and forgets every instance
    /// that is one of them or names one of `opaque` (what a check made only to check).
    void drop_made_since(size_t functions, size_t structs, const std::set<const Type*>& opaque);
    /// The stand-in for type parameter `name`: a struct with no fields; with a built-in
    /// `constraint`, it offers exactly the operations that constraint gives (StandinOp); with a
    /// user interface, exactly its required methods.
    const Type* opaque_type(const std::string& name, const std::string& constraint = "");
    /// Whether `constraint` is one a stand-in models (the built-in interfaces slangc's rules
    /// were taken from; user interfaces and IDifferentiable keep their representative).
    bool standin_models(const std::string& constraint) const;
    /// A user interface a stand-in can model: no associated types, in it or its bases.
    bool models_user_interface(const std::string& name, int depth = 0) const;
    /// Whether a stand-in constrained by `have` satisfies constraint `want`.
    bool standin_implies(const std::string& have, const std::string& want) const;
    /// Operators, intrinsics and constructors with a constrained stand-in among their operands
    /// (nullptr when there is none): what the constraint gives, else 39999 as slangc.
    const Type* check_standin_unary(Expr* e, const Type* a);
    const Type* check_standin_binary(Expr* e, Op op, const Type* a, const Type* b, bool compound);
    const Type* check_standin_intrinsic(Expr* e, const IntrinsicInfo& info);
    const Type* check_standin_construct(Expr* e, const Type* to, const std::vector<Expr*>& args);
    /// `T(x)` / `(T)x` where `written` names a type parameter constrained by IArithmetic or
    /// __BuiltinArithmeticType: slangc constructs it through the constraint's `__init(int)`, so
    /// a floating `x` (operand `arg` of e) converts to int first, with warning 30081.
    void construct_through_constraint(Expr* e, const std::string& written, size_t arg);
    /// The instantiation `bwd_diff(f<...>)` / `bwd_diff(f)(args)` differentiates: explicit
    /// arguments, the rest inferred from the primal types of the derivative call's arguments.
    FunctionDecl* derivative_instance(Expr* call, Expr* target);
    std::string instance_name(const std::string& base, const std::vector<GenericArg>& args) const;

    // ---- the call layer's questions (analysis.cpp)
    std::vector<FunctionInfo> function_infos() const;
    FunctionDecl* instantiate_by_name(const std::string& name, const std::vector<GenericArg>& args);
    /// Checks `args` against generic declaration `g`'s parameters and instantiates it.
    FunctionDecl* instantiate_generic(FunctionDecl* g, const std::vector<GenericArg>& args);
    /// Drops the functions from index `first` on (a failed instantiation and what it made).
    void forget_functions_from(size_t first);
    const Type* named_type(const std::string& name) { return resolve_named_type(name, {}, false); }
    const SemaResult& result() const { return result_; }

    // ---- interfaces (sema_interfaces.cpp)
    void declare_interface(StructDecl* s);
    /// Every requirement of every interface `s` lists is met (reported per missing method).
    void check_conformance(StructDecl* s);
    /// Whether struct type `t` declares (directly or through interface inheritance) `iface`.
    bool conforms_to(const Type* t, const std::string& iface) const;
    bool interface_extends(const StructDecl* iface, const std::string& base, int depth = 0) const;
    /// A copy of each of iface's default implementations that `s` does not implement itself, as
    /// a method of s (sema_interface_defaults.cpp).
    void adopt_default_implementations(StructDecl* s, const StructDecl* iface);
    /// An `override` method of `s` names a member of one of the interfaces it conforms to (30854).
    void check_overrides(const StructDecl* s, const std::vector<const StructDecl*>& interfaces);
    bool is_builtin_interface(const std::string& name) const;

    // ---- generic interfaces: `interface IGet<T>` (sema_generic_interfaces.cpp)
    /// A constraint string that names a generic interface with arguments ("IGet<T>"): `satisfies`
    /// leaves it to the instantiation (check_generic_interface_constraints).
    static bool is_deferred_constraint(const std::string& c);
    /// 30401 for a constraint naming a generic interface without its arguments (pass 1).
    void check_generic_interface_names(const std::vector<ModuleAst*>& modules);
    /// The instance `IGet<float>` names (under subst_), made on first use; nullptr when reported.
    StructDecl* interface_instance(TypeExpr* te);
    StructDecl* instantiate_interface(StructDecl* g, const std::vector<GenericArg>& args, SourceLoc at);
    void finish_interface_instance(StructDecl* s);
    /// Names in `s->bases` the instance of each generic interface written with arguments.
    void resolve_generic_bases(StructDecl* s);
    /// The generic-interface constraints of `params` met by `args` (38029 at `at` otherwise),
    /// resolved with the substitution of `instance`.
    bool check_generic_interface_constraints(const std::vector<GenericParam>& params,
                                             const std::vector<GenericArg>& args, const void* instance,
                                             const std::string& what, SourceLoc at);
    /// Parameters of instance `f` typed by a type parameter that only generic interfaces not
    /// extending IDifferentiable constrain: no_diff.
    void mark_generic_interface_parameters(const FunctionDecl* g, FunctionDecl* f);
    /// Binds type parameters that appear as a generic-interface constraint's arguments from the
    /// bases of the struct bound to the constrained parameter.
    void bind_through_generic_interfaces(const FunctionDecl* g, std::vector<std::optional<GenericArg>>& bound);

    // ---- parameters of interface type (sema_interface_parameters.cpp)
    /// Each parameter of interface type (`IShape s`, `IGet<float> g`) of a function or method
    /// becomes a generic parameter of its own constrained by the interface (before pass 1).
    void make_interface_parameters_generic(const std::vector<ModuleAst*>& modules);
    /// Whether `p` is one of those (named "some <parameter>").
    static bool is_interface_parameter(const GenericParam& p);
    /// 30077 at `at` for an out / inout parameter of interface type of instance `f` of `g`.
    bool check_interface_parameter_directions(const FunctionDecl* g, const FunctionDecl* f, SourceLoc at);
    std::string describe_interface_argument(const GenericParam& p, const GenericArg& a) const;

    // ---- `__init` requirements of interfaces (sema_interface_inits.cpp)
    /// The parameter types of init requirement `r` of `iface` (with a generic instance's
    /// arguments); false when one does not resolve (reported).
    bool init_requirement_params(const StructDecl* iface, const FunctionDecl* r, std::vector<const Type*>& out);
    /// `s` declares an `__init` that requirement `r` of `iface` can call (38100 otherwise).
    void check_init_requirement(StructDecl* s, const StructDecl* iface, const FunctionDecl* r);
    /// `T(args)` on the stand-in of a type parameter whose interface requires `__init`s: `to`
    /// when one takes the arguments, 39999 when none does; nullptr without such requirements.
    const Type* check_standin_init(Expr* e, const Type* to, const std::vector<Expr*>& args);

    // ---- generic method requirements (sema_generic_requirements.cpp)
    struct GenericSignature {
        const Type* result = nullptr;
        std::vector<std::pair<const Type*, ParamDir>> params;  ///< without `this`
    };
    /// The result and parameter types of generic `f` with `args` for its generic parameters
    /// (and `outer`'s, its struct's); false, reporting nothing, when they do not resolve.
    bool generic_signature(const FunctionDecl* f, const Substitution* outer, const std::vector<GenericArg>& args,
                           GenericSignature& out);
    /// 0 when generic method `m` of `s` has requirement `r`'s signature with its generic
    /// parameters renamed to r's; 1 when the parameters differ, 2 when the result does.
    int compare_generic_signatures(const FunctionDecl* r, const Substitution& assoc, const FunctionDecl* m,
                                   const StructDecl* s);
    /// Generic requirement `r` of `iface` is met by a generic method of `s` (reported if not).
    void check_generic_requirement(StructDecl* s, const StructDecl* iface, const FunctionDecl* r,
                                   const Substitution& assoc);
    /// The instantiation of a generic method of `s` that meets non-generic requirement `r`
    /// (resolved to `ret` and `params`), or nullptr.
    FunctionDecl* generic_method_meeting(StructDecl* s, const FunctionDecl* r, const Type* ret,
                                         const std::vector<const Type*>& params);

private:
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
    /// A call `T.f(args)` of a type's static methods: the callee becomes a plain name of them
    /// (located at `loc`) and the call is checked against them as a free function's overloads.
    const Type* check_static_method_call(Expr* e, SourceLoc loc, const std::vector<FunctionDecl*>& statics);
    /// Checks `e`, a copy of parameter `p`'s default, as a global constant's initializer is: at
    /// module scope, with `f`'s generic arguments, converted to p's type (for defaults_).
    void check_default_value(FunctionDecl* f, VarDecl* p, Expr* e);
    /// The default values of `s`'s fields (`struct S { float a = 5; }`): each is checked as a
    /// global constant's initializer is, with the struct's static constants and generic
    /// arguments in scope, converted to its field's type (sema_field_defaults.cpp).
    void check_field_defaults(StructDecl* s);
    const Type* check_derivative_call(Expr* e, FunctionDecl* target, bool backward);
    /// Whether check_derivative_call(e, target, backward) would accept the call's (checked)
    /// arguments, reporting nothing; `exact`: every `in` argument has the parameter's type.
    bool derivative_call_fits(Expr* e, FunctionDecl* target, bool backward, bool exact);
    const Type* check_constructor(Expr* e, const Type* t, size_t first_arg);
    const Type* check_intrinsic(Expr* e, const IntrinsicInfo& info);
    /// `pow<float>(x, 3)`: the built-in with its element type given (sema_explicit_intrinsics.cpp).
    const Type* check_explicit_intrinsic(Expr* e, const IntrinsicInfo& info);
    const Type* check_tensor_method(Expr* e, Expr* tensor, const std::string& method);
    const Type* check_tensor_index(Expr* at, const Type* tensor, const std::vector<Expr*>& index);
    // ---- cooperative kernels (sema_coop.cpp)
    const Type* resolve_view_type(TypeExpr* te);
    const Type* check_view_index(Expr* at, const Type* view, const std::vector<Expr*>& index);
    const Type* check_view_method(Expr* e, const Type* view, const std::string& method);
    const Type* check_view_member(Expr* e, const Type* view, const std::string& name);
    /// A call of a CoopId, Barrier or Interlocked built-in (e->builtin is set).
    const Type* check_coop_call(Expr* e);
    void check_groupshared(VarDecl* g);
    /// A call of a wave intrinsic (sema_wave.cpp).
    const Type* check_wave_call(Expr* e);
    /// A [CUDAKernel] body: a barrier under a condition that varies within a block is an error
    /// (sema_divergence.cpp).
    void check_barrier_divergence(const FunctionDecl* f);
    /// [CUDAKernel]: a void result, parameters a launch can bind.
    void check_kernel_signature(FunctionDecl* f);
    // ---- StructuredBuffer / RWStructuredBuffer (sema_buffers.cpp)
    const Type* resolve_buffer_type(TypeExpr* te);
    /// `buf[i]` (and `buf.Load(i)`: `at` is the call): operand 1 is the index.
    const Type* check_buffer_index(Expr* at, const Type* buffer);
    const Type* check_buffer_member(Expr* e, const Type* buffer);
    const Type* check_buffer_method(Expr* e, const Type* buffer, const std::string& method);
    /// Reports `e` unless it is assignable: Slang's 30011, or `code` (30047 for an argument).
    void require_lvalue(Expr* e, const char* what, int code = 30011);
    bool is_integer_scalar(const Type* t) const { return t->is_scalar() && is_integer(t->scalar); }

    // scopes
    /// While alive, expressions are checked at module scope, as a global constant's
    /// initializer is: no locals, no enclosing function (so no implicit `this`). Restores the
    /// body's scopes however the check ends (a CompileError too).
    class AtModuleScope {
    public:
        explicit AtModuleScope(Sema& s)
            : s_(s), scopes_(std::move(s.scopes_)), fn_(s.current_fn_), loops_(s.loop_depth_) {
            s.scopes_ = Scopes();
            s.current_fn_ = nullptr;
            s.loop_depth_ = 0;
            s.scopes_.push();
        }
        ~AtModuleScope() {
            s_.scopes_ = std::move(scopes_);
            s_.current_fn_ = fn_;
            s_.loop_depth_ = loops_;
        }
        AtModuleScope(const AtModuleScope&) = delete;
        AtModuleScope& operator=(const AtModuleScope&) = delete;

    private:
        Sema& s_;
        Scopes scopes_;
        FunctionDecl* fn_;
        int loops_;
    };
    /// Declares `v` in the innermost scope (30200 when that scope has one of its name).
    void declare_local(VarDecl* v);
    VarDecl* lookup_local(const std::string& name) const { return scopes_.lookup(name); }

    // loops
    void check_loop_bound(Stmt* s);
    // ---- `float.getPi()`, `int.maxValue` (sema_scalar_members.cpp)
    const Type* scalar_type_base(const Expr* base);
    const Type* check_scalar_type_member(Expr* e, bool called);
    // ---- `V.dzero()`, `V.dadd(a, b)`, `V.Differential(...)` (sema_differential_members.cpp)
    const Type* check_differential_member(Expr* e);
    // ---- `extension S { ... }`: its members moved into S (sema_extensions.cpp)
    void merge_extensions(const std::vector<ModuleAst*>& modules);
    /// ext's members and interfaces moved into target (a struct, or a generic declaration).
    void move_extension_members(StructDecl* ext, StructDecl* target);
    /// `extension<T> Box<T> { ... }`: into Box's generic declaration (sema_generic_extensions.cpp).
    void merge_generic_extension(StructDecl* ext, const TypeExpr* target);
    // ---- extensions of some instances and of built-in types (sema_extensions_instances.cpp,
    // sema_extensions_builtin.cpp)
    struct InstanceExtension {
        StructDecl* ext = nullptr;      ///< as parsed: its members are cloned into each instance it matches
        StructDecl* generic = nullptr;  ///< the generic struct it extends
        std::vector<int> param_at;      ///< per struct argument: the extension's parameter it names, or -1
        std::vector<GenericArg> fixed;  ///< per struct argument that names none: the argument written
        std::vector<const TypeExpr*> written;  ///< per such type argument: as written (resolved on first use)
        bool resolved = false, ok = true;      ///< `written` resolved into `fixed`; without an error
        bool used = false;                     ///< some instance matched it
    };
    std::vector<InstanceExtension> instance_extensions_;
    std::map<const Type*, StructDecl*> builtin_extensions_;  ///< `extension float { ... }`: its members
    void register_instance_extension(StructDecl* ext, StructDecl* g, const TypeExpr* target);
    /// `extension<T : IFoo> T : IBar { ... }`: the members of every type that conforms to IFoo
    /// (sema_extensions_blanket.cpp), given to each struct when its members are declared.
    std::vector<StructDecl*> blanket_extensions_;
    void register_blanket_extension(StructDecl* ext);
    void apply_blanket_extensions(StructDecl* s);
    bool resolve_instance_pattern(InstanceExtension& x);
    /// The members of each extension of `g` whose pattern `args` match, into instance `s`.
    void apply_instance_extensions(const StructDecl* g, StructDecl* s, const std::vector<GenericArg>& args);
    /// Each extension of some instances that none matched: checked through a representative one.
    void check_unused_instance_extensions();
    void merge_builtin_extension(StructDecl* ext, const Type* t);
    void declare_builtin_extensions();
    /// The members extensions give built-in type `t` (a scalar, vector or matrix), or nullptr.
    const StructDecl* builtin_extension(const Type* t) const;
    /// `float.K`, `float3.make()`: a static member of a built-in type's extension; nullptr when none.
    const Type* check_builtin_type_member(Expr* e, bool called);
    // ---- a struct declared in a generic struct sees the outer's member types (sema_nested_generic.cpp)
    void share_outer_member_types();
    // ---- `property` and `__subscript` uses: calls of their accessors (sema_accessors.cpp)
    const Type* check_property_read(Expr* e, const Type* struct_type);
    const Type* check_subscript_read(Expr* e, const Type* base_type);
    const Type* check_accessor_assign(Expr* e);
    /// `s[i++] *= 4;`: the index operands with side effects into constants first (a Block).
    bool hoist_index_operands(Stmt* s);
    int hoisted_indices_ = 0;
    /// A requirement that is one accessor of a subscript or property (`__subscript_set`) whose
    /// other accessor s has: true, with `at` there (Slang: 38105, not 38100).
    bool accessor_sibling(const StructDecl* s, const FunctionDecl* r, SourceLoc& at);
    // ---- `operator+` functions and `operator()` members (sema_operators.cpp)
    /// `a + b` that no built-in operator takes, when the program declares `operator+`: the call.
    const Type* check_user_operator(Expr* e);
    /// `p(x)` where p is a value of a struct with `operator()`: rewrites the callee to `p.operator()`.
    bool rewrite_call_operator(Expr* e);
    // ---- `m._12`, `m._m01` (sema_matrix_elements.cpp)
    const Type* check_matrix_element(Expr* e, const Type* matrix);
    // ---- public / internal / private (sema_visibility.cpp)
    void check_member_visibility(const StructDecl* s);
    void check_member_access(SourceLoc loc, const StructDecl* owner, Visibility v, const std::string& member);
    void check_init_list_visibility(const Expr* list, const Type* struct_type);
    // ---- a struct's own `typedef S Differential;` (sema_differential_alias.cpp)
    bool declares_own_differential(StructDecl* s);
    // ---- `[DerivativeMember(D.f)]` on fields of a struct whose Differential is D (sema_derivative_members.cpp)
    /// The declared Differential D of `s` (`typedef D Differential;`, D not s) when every
    /// differentiable field names its counterpart (recorded in `fields`); nullptr otherwise
    /// (reported: 30121 a field without one, 30027 an unknown field, 30019 another type).
    const Type* declared_member_differential(StructDecl* s, std::vector<FieldInfo>& fields);
    /// [DerivativeMember] on a field of a struct that is not differentiable.
    void check_derivative_members_unused(StructDecl* s);
    // ---- derivatives of derivatives (sema_higher_order.cpp)
    FunctionDecl* derivative_function(Expr* outer, Expr* target);
    Expr* int_literal(SourceLoc loc, int64_t value);

    AstContext& ast_;
    TypeContext& types_;
    Diagnostics& diags_;
    bool allow_internal_;

    // The collaborators: each owns one concern's state behind its own interface.
    ModuleScope module_;         ///< module-level names (scopes.h)
    Scopes scopes_;              ///< the locals of the body being checked (scopes.h)
    Instances instances_;        ///< instances of generics made, with their substitutions (instances.h)
    Standins standins_;          ///< type parameters' stand-ins and what constraints offer (standins.h)
    DefaultArguments defaults_;  ///< default parameter values (defaults.h)

    // Where the check is.
    const Substitution* subst_ = nullptr;  ///< of the declaration being resolved or checked
    FunctionDecl* current_fn_ = nullptr;
    int loop_depth_ = 0;
    int switch_depth_ = 0;  ///< switch bodies the current statement is in (break leaves the innermost)
    int expr_depth_ = 0;
    int const_depth_ = 0;
    bool attributes_checked_ = false;  ///< later instantiations check their attributes themselves
    bool in_standin_intrinsic_ = false;
    bool allow_empty_array_ = false;  ///< a local variable's type is resolved: `float a[0]` is valid

    // Declarations resolved lazily, and the ones in progress (which detect cycles).
    const StructDecl* resolving_struct_ = nullptr;   ///< whose field types are being resolved
    const StructDecl* field_defaults_of_ = nullptr;  ///< whose field defaults are being checked
    std::set<const StructDecl*> declared_structs_;   ///< field tables resolved (declare_struct)
    std::set<const StructDecl*> declaring_structs_;  ///< in progress: detects a struct containing itself
    std::set<const TypeAliasDecl*> resolving_aliases_;   ///< in progress: detects cycles
    std::set<const VarDecl*> resolving_member_aliases_;  ///< a struct's, in progress
    std::set<const EnumDecl*> declared_enums_;
    /// While an enum's values are evaluated: the enum and how many of its members have a value.
    struct EnumScope {
        const EnumDecl* decl = nullptr;
        size_t resolved = 0;
    } enum_scope_;

    std::vector<std::pair<Expr*, bool>> derivative_calls_;  ///< (bwd_diff/fwd_diff call, backward)
    std::map<FunctionDecl*, FunctionDecl*> derivative_functions_;  ///< f → the stand-in for fwd_diff(f)
    SemaResult result_;
};

}  // namespace sg::lang
