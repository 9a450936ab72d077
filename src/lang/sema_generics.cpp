// src/lang/sema_generics.cpp — generics by monomorphization. An instantiation (declaration +
// argument list, cached) is a copy of the generic declaration (ast_clone.h) checked again with
// each generic parameter standing for its argument: a type parameter resolves to the argument
// type, a value parameter to a synthesized constant. IR lowering, autodiff and codegen therefore
// only ever see concrete functions and structs. Arguments are written (`f<4>(x)`, `Poly<3>`) or
// inferred from the types of the call's arguments (scalar type, vector width, array length,
// matrix shape, the arguments of a generic struct).
#include <functional>
#include <type_traits>

#include "syntax/ast_clone.h"
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// Instantiations nest at most this deep (a generic whose body instantiates itself with new
/// arguments, `f<N>` calling `f<N + 1>`, would otherwise never end).
constexpr int kMaxInstantiationDepth = 32;

bool is_floating_constraint(const std::string& c) {
    return c == "IFloat" || c == "__BuiltinFloatingPointType" || c == "__BuiltinRealType";
}

}  // namespace

bool Sema::is_builtin_interface(const std::string& name) const {
    static const std::set<std::string> kNames = {
        "IFloat",        "IArithmetic",          "IInteger", "IDifferentiable", "IComparable",
        "ILogical",      "__BuiltinFloatingPointType",       "__BuiltinIntegerType",
        "__BuiltinArithmeticType", "__BuiltinRealType",      "__BuiltinSignedArithmeticType", "__BuiltinType",
    };
    return kNames.count(name) != 0;
}

const Substitution* Sema::substitution_of(const FunctionDecl* f) const {
    if (!f) return nullptr;
    if (const Substitution* s = instances_.substitution(f)) return s;
    return f->owner ? substitution_of_struct(f->owner) : nullptr;
}

const Substitution* Sema::substitution_of_struct(const StructDecl* s) const {
    return instances_.substitution(s);
}

std::string Sema::instance_name(const std::string& base, const std::vector<GenericArg>& args) const {
    std::string s = base + "<";
    for (size_t k = 0; k < args.size(); ++k)
        s += (k ? ", " : "") + (args[k].is_value ? std::to_string(args[k].value) : type_name(args[k].type));
    return s + ">";
}

std::optional<int64_t> Sema::generic_value(const std::string& name) {
    if (subst_) {
        auto it = subst_->values.find(name);
        if (it != subst_->values.end()) return eval_const_int(it->second->init);
    }
    return std::nullopt;
}

bool Sema::satisfies(const GenericParam& p, const GenericArg& a) const {
    if (p.is_value || a.is_value) return p.is_value == a.is_value;
    if (a.type->is_error()) return true;  // already reported
    if (!satisfies_constraint(p.constraint, a.type)) return false;
    for (const std::string& c : p.more_constraints)  // `T : IA & IB`, `where T : IB`
        if (!satisfies_constraint(c, a.type)) return false;
    return true;
}

bool Sema::satisfies_constraint(const std::string& c, const Type* t) const {
    if (t->is_void() || t->is_tensor()) return false;
    if (c.empty() || is_deferred_constraint(c)) return true;  // "IGet<T>": checked by the instantiation
    if (const std::string* have = standins_.constraint_of(t)) return standin_implies(*have, c);
    bool scalar = t->is_scalar(), vec = t->is_vector(), mat = t->is_matrix();
    ScalarKind k = t->scalar;
    if (c == "IFloat") return (scalar || vec) && is_floating(k);
    if (c == "__BuiltinFloatingPointType" || c == "__BuiltinRealType") return scalar && is_floating(k);
    if (c == "IArithmetic") return scalar || vec || mat;  // bool too, as in Slang
    if (c == "__BuiltinArithmeticType") return scalar && k != ScalarKind::Bool;
    if (c == "__BuiltinSignedArithmeticType") return scalar && (is_floating(k) || is_signed_integer(k));
    if (c == "IInteger") return (scalar || vec) && is_integer(k);
    if (c == "__BuiltinIntegerType") return scalar && is_integer(k);
    if (c == "IComparable") return scalar || vec;
    if (c == "ILogical") return (scalar || vec) && (is_integer(k) || k == ScalarKind::Bool);
    if (c == "__BuiltinType") return scalar;
    if (c == "IDifferentiable") return types_.is_differentiable(t);
    return conforms_to(t, c);  // a struct, or a built-in type an extension conforms
}

std::string Sema::describe_constraint_failure(const GenericParam& p, const GenericArg& a) const {
    if (p.is_value) return "generic parameter '" + p.name + "' takes an integer, not a type";
    if (a.is_value) return "generic parameter '" + p.name + "' takes a type, not a value";
    std::string c = p.constraint;
    for (const std::string& m : p.more_constraints)
        if (satisfies_constraint(c, a.type)) c = m;  // the first one it does not meet
    return "type argument " + type_name(a.type) + " does not conform to '" + c + "' (generic parameter '" + p.name +
           "')";
}

bool Sema::explicit_generic_args(TypeExpr* te, const std::vector<GenericParam>& params, const std::string& what,
                                 std::vector<GenericArg>& out, bool allow_partial) {
    size_t n = te->arg_is_value.size();
    if (n > params.size() || (!allow_partial && n < params.size())) {
        // Slang: 39999 (too many arguments to call) for a call's arguments.
        diags_.error(te->loc,
                     "'" + what + "' takes " + std::to_string(params.size()) + " generic argument" +
                         (params.size() == 1 ? "" : "s") + ", " + std::to_string(n) + " given",
                     allow_partial && n > params.size() ? 39999 : 0);
        return false;
    }
    size_t ti = 0, vi = 0;
    for (size_t k = 0; k < n; ++k) {
        GenericArg a;
        if (params[k].is_value) {
            a.is_value = true;
            std::optional<int64_t> v;
            SourceLoc at = te->loc;
            if (te->arg_is_value[k]) {
                at = te->value_args[vi]->loc;
                v = eval_const_int(te->value_args[vi++]);
            } else {
                TypeExpr* name = te->type_args[ti++];
                at = name->loc;
                if (name->type_args.empty() && name->array_dims.empty() && name->member.empty()) {
                    v = generic_value(name->name);
                    if (!v) {
                        auto g = module_.globals.find(name->name);
                        if (g != module_.globals.end() && g->second->is_const) v = eval_const_int(g->second->init);
                    }
                }
            }
            if (!v) {
                // Slang: 39999 for an expression (or variable) that is not a compile-time constant, 30019 for a type.
                diags_.error(at,
                             "generic argument '" + params[k].name + "' of '" + what + "' must be a constant integer",
                             te->arg_is_value[k] || !named_type(te->type_args[ti - 1]->name) ? 39999 : 30019);
                return false;
            }
            a.value = *v;
        } else {
            if (te->arg_is_value[k]) {
                diags_.error(te->value_args[vi]->loc,
                             "generic argument '" + params[k].name + "' of '" + what + "' must be a type", 30060);
                return false;
            }
            a.type = resolve_type(te->type_args[ti++]);
            if (a.type->is_error()) return false;
        }
        out.push_back(a);
    }
    return true;
}

bool Sema::infer_generic_args(FunctionDecl* g, const std::vector<Expr*>& args, std::vector<GenericArg>& known,
                              size_t explicit_count, SourceLoc at, bool report) {
    const auto& params = g->generic_params;
    std::vector<std::optional<GenericArg>> bound(params.size());
    for (size_t k = 0; k < known.size(); ++k) bound[k] = known[k];
    auto index_of = [&](const std::string& name) -> int {
        for (size_t k = 0; k < params.size(); ++k)
            if (params[k].name == name) return int(k);
        return -1;
    };
    bool conflict = false;
    std::string conflict_text;
    auto bind = [&](int k, GenericArg a) {
        if (k < 0 || size_t(k) < explicit_count || conflict) return;
        if (params[size_t(k)].is_value != a.is_value) return;
        auto& b = bound[size_t(k)];
        if (!b) {
            b = a;
            return;
        }
        if (*b == a) return;
        // Two numeric types join to the wider one (`pick(1.0, 2)` takes T = float), as in Slang.
        if (!a.is_value && b->type->is_numeric() && a.type->is_numeric()) {
            if (const Type* j = binary_operand_type(types_, Op::Add, b->type, a.type)) {
                if (j == b->type || j == a.type) {
                    b->type = j;
                    return;
                }
            }
        }
        conflict = true;
        conflict_text = "generic argument '" + params[size_t(k)].name + "' of '" + g->name + "' cannot be deduced: " +
                        (a.is_value ? std::to_string(b->value) + " and " + std::to_string(a.value)
                                    : type_name(b->type) + " and " + type_name(a.type)) +
                        " both fit";
    };
    auto bind_value_expr = [&](Expr* e, int64_t v) {
        if (e && e->kind == ExprKind::Name) bind(index_of(e->name), GenericArg{nullptr, v, true});
    };
    auto bind_value_type_arg = [&](TypeExpr* te, int64_t v) {
        if (te->type_args.empty() && te->array_dims.empty()) bind(index_of(te->name), GenericArg{nullptr, v, true});
    };
    std::function<void(TypeExpr*, const Type*, int)> unify = [&](TypeExpr* te, const Type* t, int depth) {
        if (!te || !t || t->is_error() || depth > 64) return;
        // Array dimensions, outermost first.
        for (Expr* d : te->array_dims) {
            if (!t->is_array()) return;
            bind_value_expr(d, t->count);
            t = t->element;
        }
        if (!te->member.empty()) return;
        auto arg_at = [&](size_t k, const Type* sub, int64_t value) {
            if (k >= te->arg_is_value.size()) return;
            size_t ti = 0, vi = 0;
            for (size_t j = 0; j < k; ++j) (te->arg_is_value[j] ? vi : ti)++;
            if (te->arg_is_value[k]) {
                if (!sub) bind_value_expr(te->value_args[vi], value);
            } else if (sub) {
                unify(te->type_args[ti], sub, depth + 1);
            } else {
                bind_value_type_arg(te->type_args[ti], value);
            }
        };
        int k = index_of(te->name);
        if (k >= 0 && te->arg_is_value.empty()) {
            if (!params[size_t(k)].is_value) bind(k, GenericArg{t, 0, false});
            return;
        }
        if (te->name == "vector" && t->is_vector()) {
            arg_at(0, types_.scalar_of(t), 0);
            arg_at(1, nullptr, t->rows);
        } else if (te->name == "matrix" && t->is_matrix()) {
            arg_at(0, types_.scalar_of(t), 0);
            arg_at(1, nullptr, t->rows);
            arg_at(2, nullptr, t->cols);
        } else if (te->name == "DifferentialPair" && t->is_pair()) {
            arg_at(0, t->element, 0);
        } else if (t->is_tensor() && t->tensor.buffer && te->arg_is_value.size() == 1 &&
                   (te->name == "StructuredBuffer" || te->name == "RWStructuredBuffer")) {
            arg_at(0, t->element, 0);
        } else if (t->is_tensor() && t->tensor.view && te->arg_is_value.size() == 1 &&
                   te->name == (t->tensor.has_grad ? "DiffTensorView" : "TensorView")) {
            arg_at(0, t->element, 0);
        } else if (t->is_tensor() && te->arg_is_value.size() == 2) {
            arg_at(0, t->element, 0);
            arg_at(1, nullptr, t->rank);
        } else if (t->is_struct() && t->decl->generic_origin && t->decl->generic_origin->name == te->name) {
            const auto& sargs = t->decl->generic_args;
            for (size_t j = 0; j < sargs.size(); ++j)
                arg_at(j, sargs[j].is_value ? nullptr : sargs[j].type, sargs[j].value);
        }
    };
    for (size_t k = 0; k < g->params.size() && k < args.size(); ++k) {
        Expr* a = args[k];
        if (!a || a->kind == ExprKind::InitList || !a->type) continue;
        unify(g->params[k]->type_expr, a->type, 0);
    }
    if (conflict) {
        if (report) diags_.error(at, conflict_text, 30442);
        return false;
    }
    bind_through_generic_interfaces(g, bound);  // `U : IGet<T>` gives T
    for (size_t k = 0; k < params.size(); ++k) {
        if (!bound[k]) {
            if (report)
                diags_.error(at,
                             "generic parameter '" + params[k].name + "' of '" + g->name +
                                 "' could not be inferred from the arguments (write it: " + g->name + "<...>(...))",
                             30439);
            return false;
        }
        // An integer argument for a floating-point parameter converts (`sq(3)` takes T = float).
        GenericArg& b = *bound[k];
        if (k >= explicit_count && !b.is_value && is_floating_constraint(params[k].constraint) &&
            (b.type->is_scalar() || b.type->is_vector()) && !is_floating(b.type->scalar))
            b.type = types_.with_scalar(b.type, ScalarKind::Float);
    }
    known.clear();
    for (auto& b : bound) known.push_back(*b);
    return true;
}

void Sema::instantiate_candidates(const std::vector<FunctionDecl*>& generics, Expr* e, Expr* callee,
                                  const std::vector<Expr*>& args, bool members, std::vector<FunctionDecl*>& out,
                                  bool& reported) {
    size_t viable = 0;
    for (FunctionDecl* g : generics) viable += accepts_argument_count(*g, args.size());
    bool report = out.empty() && viable == 1;
    for (FunctionDecl* g : generics) {
        if (!accepts_argument_count(*g, args.size())) continue;
        std::vector<GenericArg> gargs;
        if (callee->type_expr && !allow_internal_ && is_interface_parameter(g->generic_params.front())) {
            // Only parameters of interface type made it generic (sema_interface_parameters.cpp);
            // the call glue names the specialization it binds.
            diags_.error(callee->loc, "'" + callee->name + "' is not generic", 39999);
            reported = true;
            continue;
        }
        if (callee->type_expr && !explicit_generic_args(callee->type_expr, g->generic_params,
                                                        members ? g->member_name : g->name, gargs, true)) {
            reported = true;
            continue;
        }
        size_t explicit_count = gargs.size();
        if (!infer_generic_args(g, args, gargs, explicit_count, e->loc, report)) {
            reported |= report;
            continue;
        }
        bool ok = true;
        for (size_t k = 0; k < gargs.size() && ok; ++k) {
            if (satisfies(g->generic_params[k], gargs[k])) continue;
            ok = false;
            if (report && is_interface_parameter(g->generic_params[k])) {  // Slang: a type mismatch
                diags_.error(e->loc, describe_interface_argument(g->generic_params[k], gargs[k]) + " in call of '" +
                                         g->name + "'",
                             30019);
                reported = true;
            } else if (report) {
                diags_.error(e->loc, describe_constraint_failure(g->generic_params[k], gargs[k]) + " in call of '" +
                                         g->name + "'",
                             38029);
                reported = true;
            }
        }
        // `where T == U`: one argument for both (Slang: 30442, the arguments cannot be deduced).
        for (size_t k = 0; k < gargs.size() && ok; ++k)
            for (const std::string& other : g->generic_params[k].same_as)
                for (size_t j = 0; j < gargs.size() && ok; ++j) {
                    if (g->generic_params[j].name != other || gargs[j] == gargs[k]) continue;
                    ok = false;
                    if (report)
                        diags_.error(e->loc, "'" + g->name + "' needs one type for '" + g->generic_params[k].name +
                                                 "' and '" + other + "' (where " + g->generic_params[k].name + " == " +
                                                 other + "), got " + type_name(gargs[k].type) + " and " +
                                                 type_name(gargs[j].type),
                                     30442);
                    reported |= report;
                }
        if (!ok) continue;
        if (FunctionDecl* inst = instantiate_function(g, gargs, e->loc)) out.push_back(inst);
        else reported = true;
    }
}

std::vector<FunctionDecl*> Sema::call_candidates(Expr* e, Expr* callee, bool& reported) {
    std::vector<FunctionDecl*> out;
    auto concrete = module_.functions.find(callee->name);
    auto generic = module_.generic_functions.find(callee->name);
    if (!callee->type_expr && concrete != module_.functions.end()) out = concrete->second;
    if (generic == module_.generic_functions.end()) {
        if (callee->type_expr) {
            diags_.error(callee->loc, "'" + callee->name + "' is not generic", 39999);
            reported = true;
            out.clear();
        }
        return out;
    }
    size_t nargs = e->operands.size() - 1;
    std::vector<Expr*> args(e->operands.begin() + 1, e->operands.end());
    instantiate_candidates(generic->second, e, callee, args, false, out, reported);
    if (out.empty() && !reported) {
        const FunctionDecl* g = generic->second.front();
        if (generic->second.size() == 1 && (concrete == module_.functions.end() || callee->type_expr))
            diags_.error(e->loc,
                         "function '" + g->name + "' takes " + argument_count_text(*g) + ", " + std::to_string(nargs) +
                             " given",
                         30438);
        else diags_.error(e->loc, "no overload of '" + g->name + "' accepts these arguments");
        reported = true;
    }
    return out;
}

bool Sema::representative_args(const std::vector<GenericParam>& params, std::vector<GenericArg>& out) const {
    for (const GenericParam& p : params) {
        if (p.is_value) {
            out.push_back({nullptr, 4, true});  // fits vector<T, N> and matrix<T, N, N>
            continue;
        }
        const std::string& c = p.constraint;
        const Type* t = nullptr;
        if (c == "IInteger" || c == "__BuiltinIntegerType" || c == "ILogical" || c == "IArithmetic" ||
            c == "__BuiltinArithmeticType" || c == "IComparable")
            t = const_cast<TypeContext&>(types_).int32();
        else if (c.empty() || is_builtin_interface(c))
            t = const_cast<TypeContext&>(types_).float32();
        else
            for (const StructDecl* s : result_.structs)
                if (!s->generic_origin && conforms_to(s->type, c)) {
                    t = s->type;
                    break;
                }
        if (t && !satisfies(p, {t, 0, false})) {
            // `T : IA & IB`: the first struct (or float, int) that meets every constraint.
            t = nullptr;
            std::vector<const Type*> tries{const_cast<TypeContext&>(types_).float32(),
                                           const_cast<TypeContext&>(types_).int32()};
            for (const StructDecl* s : result_.structs)
                if (!s->generic_origin) tries.push_back(s->type);
            for (const Type* c : tries)
                if (!t && satisfies(p, {c, 0, false})) t = c;
        }
        if (!t) return false;  // no struct conforms to the interface: nothing to check with
        out.push_back({t, 0, false});
    }
    return true;
}

void Sema::check_uninstantiated_generics() {
    const std::set<const void*> instantiated = instances_.instantiated_generics();
    instances_.set_making_representatives(true);
    for (FunctionDecl* g : result_.generic_functions) {
        std::vector<GenericArg> args;
        if (instantiated.count(g) || !representative_args(g->generic_params, args)) continue;
        instantiate_function(g, args, g->loc);
    }
    for (StructDecl* g : result_.generic_structs) {
        std::vector<GenericArg> args;
        if (instantiated.count(g) || !representative_args(g->generic_params, args)) continue;
        instantiate_struct(g, args, g->loc);
    }
    // Generic member functions: a struct's generic methods are its own clones in each instance
    // of a generic struct, so one is uninstantiated when no instance's copy of it was.
    std::set<std::pair<const StructDecl*, size_t>> methods_instantiated;
    auto origin_of = [](const StructDecl* s) { return s->generic_origin ? s->generic_origin : s; };
    const size_t structs = result_.structs.size();
    for (size_t i = 0; i < structs; ++i) {
        const StructDecl* s = result_.structs[i];
        for (size_t k = 0; k < s->methods.size(); ++k)
            if (instantiated.count(s->methods[k])) methods_instantiated.insert({origin_of(s), k});
    }
    for (size_t i = 0; i < structs; ++i) {
        StructDecl* s = result_.structs[i];
        for (size_t k = 0; k < s->methods.size(); ++k) {
            FunctionDecl* m = s->methods[k];
            std::vector<GenericArg> args;
            if (m->generic_params.empty() || !methods_instantiated.insert({origin_of(s), k}).second ||
                !representative_args(m->generic_params, args))
                continue;
            instantiate_function(m, args, m->loc);
        }
    }
    check_unused_instance_extensions();
    instances_.set_making_representatives(false);
}

FunctionDecl* Sema::derivative_instance(Expr* call, Expr* target) {
    const auto& generics = module_.generic_functions[target->name];
    if (generics.size() != 1) {
        diags_.unsupported(target->loc, "bwd_diff/fwd_diff of an overloaded generic function");
        return nullptr;
    }
    FunctionDecl* g = generics.front();
    std::vector<GenericArg> gargs;
    if (target->type_expr && !explicit_generic_args(target->type_expr, g->generic_params, g->name, gargs, true))
        return nullptr;
    size_t explicit_count = gargs.size();
    if (explicit_count < g->generic_params.size()) {
        // A derivative's argument for a differentiable parameter is a DifferentialPair of the
        // primal: infer from the primal types, in parameter order.
        std::vector<Expr*> primal_args;
        std::vector<std::unique_ptr<Expr>> shadows;
        for (size_t k = 0; k < g->params.size() && k + 1 < call->operands.size(); ++k) {
            Expr* a = call->operands[k + 1];
            if (a->type && a->type->is_pair()) {
                shadows.push_back(std::make_unique<Expr>(*a));
                shadows.back()->type = a->type->element;
                a = shadows.back().get();
            }
            primal_args.push_back(a);
        }
        if (!infer_generic_args(g, primal_args, gargs, explicit_count, call->loc, true)) return nullptr;
    }
    for (size_t k = 0; k < gargs.size(); ++k)
        if (!satisfies(g->generic_params[k], gargs[k])) {
            diags_.error(target->loc, describe_constraint_failure(g->generic_params[k], gargs[k]) + " in '" +
                                          instance_name(g->name, gargs) + "'",
                         38029);
            return nullptr;
        }
    return instantiate_function(g, gargs, target->loc);
}

VarDecl* generic_value_constant(AstContext& ast, TypeContext& types, const GenericParam& p, int64_t value) {
    auto* lit = ast.make<Expr>();
    lit->kind = ExprKind::IntLit;
    lit->loc = p.loc;
    lit->int_value = uint64_t(value < 0 ? -value : value);
    lit->type = types.int32();
    Expr* init = lit;
    if (value < 0) {
        init = ast.make<Expr>();
        init->kind = ExprKind::Unary;
        init->op = Op::Neg;
        init->loc = p.loc;
        init->operands = {lit};
        init->type = types.int32();
    }
    auto* v = ast.make<VarDecl>();
    v->loc = p.loc;
    v->name = p.name;
    v->init = init;
    v->is_const = v->is_static = v->is_global = true;
    v->type = types.int32();
    return v;
}

namespace {

FunctionDecl* clone_decl(AstContext& ast, const FunctionDecl* g) { return clone_function(ast, g); }
StructDecl* clone_decl(AstContext& ast, const StructDecl* g) { return clone_struct(ast, g); }

}  // namespace

template <class Decl, class Finish>
Decl* Sema::instantiate(Decl* g, const std::vector<GenericArg>& args, SourceLoc at, bool too_deep,
                        const Substitution* outer, Finish&& finish) {
    if (std::optional<void*> made = instances_.find(g, args)) return static_cast<Decl*>(*made);
    const void* within = current_fn_ ? current_fn_ : defaults_.expanding_for();  // a default's instantiations nest too
    int depth = instances_.depth(within) + 1;
    std::string name = instance_name(g->name, args);
    if (depth > kMaxInstantiationDepth || too_deep) {
        diags_.error(at, "instantiating '" + name + "' nests more than " + std::to_string(kMaxInstantiationDepth) +
                             " instantiations deep (a generic instantiating itself without end?)",
                     55207);  // Slang: generic specialization exceeded maximum depth
        instances_.record_failure(g, args);
        return nullptr;
    }
    Decl* d = clone_decl(ast_, g);
    d->generic_params.clear();
    d->generic_origin = g;
    d->generic_args = args;
    d->name = name;
    if constexpr (std::is_same_v<Decl, StructDecl>)
        for (FunctionDecl* m : d->methods) m->name = name + "." + m->member_name;  // methods go by their struct's name
    auto subst = std::make_unique<Substitution>();
    if (outer) *subst = *outer;
    for (size_t k = 0; k < args.size(); ++k) {
        const GenericParam& p = g->generic_params[k];
        if (p.is_value) subst->values[p.name] = generic_value_constant(ast_, types_, p, args[k].value);
        else subst->types[p.name] = args[k].type;
    }
    instances_.record(g, args, d, std::move(subst), depth);
    finish(d);
    return d;
}

FunctionDecl* Sema::instantiate_function(FunctionDecl* g, const std::vector<GenericArg>& args, SourceLoc at) {
    // A generic method of a generic struct's instance also sees the struct's arguments.
    const Substitution* outer = g->owner ? substitution_of_struct(g->owner) : nullptr;
    return instantiate(g, args, at, false, outer, [&](FunctionDecl* f) {
        if (check_generic_interface_constraints(g->generic_params, args, f, f->name, at))
            mark_generic_interface_parameters(g, f);
        check_interface_parameter_directions(g, f, at);  // `inout IShape s`: 30077
        // As in Slang, a parameter typed by a type parameter whose constraint is a user interface
        // that does not extend IDifferentiable is not differentiable inside the generic, whatever
        // the argument: no derivative flows through it.
        for (VarDecl* p : f->params) {
            const TypeExpr* te = p->type_expr;
            if (!te || !te->type_args.empty() || !te->array_dims.empty() || !te->member.empty()) continue;
            for (const GenericParam& gp : g->generic_params) {
                if (gp.is_value || gp.name != te->name) continue;
                // `T : IA & IDifferentiable`: differentiable when one of its constraints says so.
                bool user_iface = false, differentiable = false;
                std::vector<std::string> all{gp.constraint};
                all.insert(all.end(), gp.more_constraints.begin(), gp.more_constraints.end());
                for (const std::string& c : all) {
                    auto iface = module_.interfaces.find(c);
                    if (iface == module_.interfaces.end())
                        differentiable |= c == "IDifferentiable" || Standins::builtin_implies(c, "IDifferentiable");
                    else if (interface_extends(iface->second, "IDifferentiable")) differentiable = true;
                    else user_iface = true;
                }
                if (user_iface && !differentiable) p->is_no_diff = true;
            }
        }
        std::string context = diags_.set_context(instance_context(f));
        declare_signature(f);
        if (attributes_checked_) check_function_attributes(f);
        diags_.set_context(context);
    });
}

StructDecl* Sema::instantiate_struct(StructDecl* g, const std::vector<GenericArg>& args, SourceLoc at) {
    // Struct instances also nest through the fields of the structs being declared.
    bool too_deep = declaring_structs_.size() > size_t(kMaxInstantiationDepth);
    return instantiate(g, args, at, too_deep, nullptr, [&](StructDecl* s) {
        check_generic_interface_constraints(g->generic_params, args, s, s->name, at);
        s->type = types_.structure(s);
        module_.structs[s->name] = s;
        result_.structs.push_back(s);
        apply_instance_extensions(g, s, args);  // `extension Box<float>` (sema_extensions_instances.cpp)
        std::string context = diags_.set_context(
            (instances_.making_representatives() ? "in generic " + g->name + ", checked as " : "in instantiation ") +
            s->name);
        declare_struct(s);
        declare_members(s);
        if (attributes_checked_) {
            check_field_defaults(s);
            for (FunctionDecl* m : s->methods)
                if (m->generic_params.empty()) check_function_attributes(m);
        }
        diags_.set_context(context);
    });
}

StructDecl* Sema::instantiate_interface(StructDecl* g, const std::vector<GenericArg>& args, SourceLoc at) {
    return instantiate(g, args, at, false, nullptr, [&](StructDecl* s) { finish_interface_instance(s); });
}

}  // namespace sg::lang
