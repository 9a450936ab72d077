// src/call/resolve.cpp — choosing the declaration a Python call binds to (see resolve.h): the
// candidates of a name, inference and instantiation of generic ones, ranking, and the messages
// for no fit and for ties.
#include "call/resolve.h"

#include <algorithm>
#include <tuple>

#include "call/call_key.h"
#include "call/errors.h"
#include "call/generic_inference.h"
#include "call/global_bindings.h"
#include "call/value_kind.h"

namespace sg::call {

using lang::FunctionDecl;
using lang::GenericArg;
using lang::ScalarKind;

std::string Callee::text() const {
    if (!explicit_args) return name;
    std::string s = name + "<";
    for (size_t k = 0; k < generic_args.size(); ++k) s += (k ? ", " : "") + generic_arg_text(generic_args[k]);
    return s + ">";
}

// ---------------------------------------------------------------- signatures for messages

namespace {

std::string expr_text(const lang::Expr* e) {
    if (!e) return "?";
    if (e->kind == lang::ExprKind::Name) return e->name;
    if (e->kind == lang::ExprKind::IntLit) return std::to_string(e->int_value);
    return "...";
}

std::string type_expr_text(const lang::TypeExpr* te) {
    if (!te) return "?";
    if (te->resolved) return lang::type_name(te->resolved);
    std::string s = te->name;
    if (!te->arg_is_value.empty()) {
        s += "<";
        size_t ti = 0, vi = 0;
        for (size_t k = 0; k < te->arg_is_value.size(); ++k) {
            s += k ? ", " : "";
            if (te->arg_is_value[k]) s += vi < te->value_args.size() ? expr_text(te->value_args[vi++]) : "?";
            else s += ti < te->type_args.size() ? type_expr_text(te->type_args[ti++]) : "?";
        }
        s += ">";
    }
    if (!te->member.empty()) s += "." + te->member;
    for (const lang::Expr* d : te->array_dims) {
        s += '[';
        s += expr_text(d);
        s += ']';
    }
    return s;
}

const char* dir_prefix(lang::ParamDir d) {
    return d == lang::ParamDir::Out ? "out " : d == lang::ParamDir::InOut ? "inout " : "";
}

}  // namespace

std::string signature_text(const FunctionDecl* fn) {
    std::string s = fn->result_type ? lang::type_name(fn->result_type) : type_expr_text(fn->return_type);
    s += " " + fn->name;
    if (!fn->generic_params.empty()) {
        s += "<";
        for (size_t k = 0; k < fn->generic_params.size(); ++k) {
            const lang::GenericParam& p = fn->generic_params[k];
            s += k ? ", " : "";
            if (p.is_value) s += "let " + p.name + " : " + (p.value_type ? type_expr_text(p.value_type) : "int");
            else s += p.name + (p.constraint.empty() ? "" : " : " + p.constraint);
        }
        s += ">";
    }
    s += "(";
    for (size_t k = 0; k < fn->params.size(); ++k) {
        const lang::VarDecl* p = fn->params[k];
        s += (k ? ", " : "") + std::string(dir_prefix(p->dir)) + param_type_text(p) + " " + p->name;
        if (p->default_value) s += " = " + p->default_text;
    }
    return s + ")";
}

std::string param_type_text(const lang::VarDecl* p) {
    return p->type ? lang::type_name(p->type) : type_expr_text(p->type_expr);
}

// ---------------------------------------------------------------- lookup names with generic arguments

namespace {

std::vector<std::string> split_top_level(const std::string& s) {
    std::vector<std::string> parts;
    int depth = 0;
    std::string cur;
    for (char c : s) {
        if (c == '<') ++depth;
        if (c == '>') --depth;
        if (c == ',' && depth == 0) {
            parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    parts.push_back(cur);
    return parts;
}

bool is_integer_text(const std::string& s) {
    size_t i = s[0] == '-' ? 1 : 0;
    if (i >= s.size() || s.size() - i > 18) return false;
    for (; i < s.size(); ++i)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

std::string generic_params_text(const FunctionDecl* g) {
    std::string s = "<";
    for (size_t k = 0; k < g->generic_params.size(); ++k) {
        const lang::GenericParam& p = g->generic_params[k];
        s += (k ? ", " : "") +
             (p.is_value ? "let " + p.name + " : int" : p.name + (p.constraint.empty() ? "" : " : " + p.constraint));
    }
    return s + ">";
}

bool args_fit_params(const FunctionDecl* g, const std::vector<GenericArg>& args) {
    if (g->generic_params.size() != args.size()) return false;
    for (size_t k = 0; k < args.size(); ++k)
        if (g->generic_params[k].is_value != args[k].is_value) return false;
    return true;
}

/// The first error message of a failed instantiation.
std::string instantiation_reason(const lang::CompileError& e) {
    for (const lang::Diagnostic& d : e.diagnostics)
        if (d.severity == lang::Severity::Error) return d.message;
    std::string s = e.what();
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

}  // namespace

bool parse_callee(const UserModule& module, const std::string& text, Callee& out) {
    std::string t;
    for (char c : text)
        if (c != ' ' && c != '\t' && c != '\n') t += c;
    size_t open = t.find('<');
    out = Callee{};
    if (open != std::string::npos && !module.functions(t).empty()) open = std::string::npos;  // "Poly<3>.eval"
    out.name = open == std::string::npos ? t : t.substr(0, open);
    if (open == std::string::npos) return !module.functions(t).empty() || !module.generic_functions(t).empty();
    std::vector<FunctionDecl*> generics = module.generic_functions(out.name);
    if (generics.empty()) {
        if (module.functions(out.name).empty()) return false;
        throw_value_error("'" + text + "': function '" + out.name + "' of module '" + module.name() +
                          "' is not generic");
    }
    if (t.back() != '>' || t.size() == open + 2)
        throw_value_error("'" + text + "': expected generic arguments as " + out.name + "<a, b, ...>");
    out.explicit_args = true;
    for (const std::string& part : split_top_level(t.substr(open + 1, t.size() - open - 2))) {
        if (part.empty()) throw_value_error("'" + text + "': an empty generic argument");
        if (is_integer_text(part)) {
            out.generic_args.push_back(GenericArg{nullptr, std::stoll(part), true});
        } else if (const lang::Type* type = module.named_type(part)) {
            out.generic_args.push_back(GenericArg{type, 0, false});
        } else {
            throw_value_error("'" + text + "': generic argument '" + part +
                              "' is neither an integer nor a type of module '" + module.name() + "'");
        }
    }
    std::string reasons;
    for (FunctionDecl* g : generics) {
        if (!args_fit_params(g, out.generic_args)) {
            reasons += "\n  " + signature_text(g) + ": it takes " + generic_params_text(g);
            continue;
        }
        try {
            module.instantiate(g, out.generic_args);
            return true;
        } catch (const lang::CompileError& e) {
            reasons += "\n  " + signature_text(g) + ": " + instantiation_reason(e);
        }
    }
    throw_value_error("'" + text + "': function '" + out.name + "' cannot take the generic arguments " + out.text() +
                      ":" + reasons);
}

std::vector<FunctionDecl*> candidate_declarations(const UserModule& module, const Callee& callee) {
    std::vector<FunctionDecl*> out;
    if (!callee.explicit_args) out = module.functions(callee.name);
    for (FunctionDecl* g : module.generic_functions(callee.name)) {
        if (!callee.explicit_args) {
            out.push_back(g);
        } else if (args_fit_params(g, callee.generic_args)) {
            try {
                out.push_back(module.instantiate(g, callee.generic_args));
            } catch (const lang::CompileError&) {
                // Not a candidate for these arguments.
            }
        }
    }
    return out;
}

// ---------------------------------------------------------------- resolution

namespace {

/// How much a Python scalar converts to reach its parameter's type: 0 exact.
int scalar_conversion(ArgKind kind, ScalarKind to) {
    switch (kind) {
    case ArgKind::Int:
        if (to == ScalarKind::Int32) return 0;
        if (lang::is_integer(to)) return 1;
        return to == ScalarKind::Float ? 2 : 3;
    case ArgKind::Float: return to == ScalarKind::Float ? 0 : to == ScalarKind::Double ? 1 : 2;
    case ArgKind::Bool: return to == ScalarKind::Bool ? 0 : 2;
    default: return 0;
    }
}

struct Rank {
    int conversions = 0;  ///< Python scalars and value types converted
    int call_dims = 0;    ///< tensor dims read as call dims rather than as the element
    int generic = 0;      ///< 1 for an instantiation
    auto tie() const { return std::tie(conversions, call_dims, generic); }
    bool operator<(const Rank& o) const { return tie() < o.tie(); }
    bool operator==(const Rank& o) const { return tie() == o.tie(); }
};

Rank rank_of(const Binding& b, const ArgInfo* args, const std::vector<int>& arg_of, bool generic) {
    Rank r;
    r.generic = generic ? 1 : 0;
    for (const ParamBinding& pb : b.params) {
        const ArgInfo& a = args[pb.arg];
        if (pb.kind == BindingKind::Uniform && pb.type->is_scalar())
            r.conversions += scalar_conversion(a.kind, pb.type->scalar);
        if (pb.kind == BindingKind::Elementwise) r.call_dims += pb.call_dims;
    }
    for (size_t p = 0; p < arg_of.size() && p < b.slots.size(); ++p) {
        if (arg_of[p] < 0) continue;  // left to its default
        const ArgInfo& a = args[arg_of[p]];
        const lang::Type* t = b.slots[p].type;
        if (a.kind == ArgKind::Value && (t->is_vector() || t->is_matrix()) && ScalarKind(a.scalar) != t->scalar)
            r.conversions += 1;
    }
    return r;
}

void add_extent_check(Binding& b, int arg, int dim, int64_t extent);

/// Element extents the key's extent classes do not tell apart (above 4) that this binding
/// read as its element: a call that differs there must not use the plan (call_key.h).
void record_extent_checks(Binding& b, const ArgInfo* args) {
    for (const ParamBinding& pb : b.params) {
        if (pb.kind != BindingKind::Elementwise) continue;
        const TensorInfo& t = args[pb.arg].tensor;
        for (int d = t.ndim - pb.elem_dims; d < t.ndim; ++d)
            if (d >= 0 && extent_class(t.shape[d]) == 0) add_extent_check(b, pb.arg, d, t.shape[d]);
    }
}

void add_extent_check(Binding& b, int arg, int dim, int64_t extent) {
    for (const ExtentCheck& c : b.extent_checks)
        if (c.arg == arg && c.dim == dim) return;
    b.extent_checks.push_back({arg, dim, extent});
}

/// The same for the dims another candidate would read as its element (f(float) chosen for an
/// (N, 6) tensor beside f(float[5]): an (N, 5) tensor must not reuse that plan).
void record_candidate_extent_checks(Binding& b, const FunctionDecl* fn, const std::vector<int>& arg_of,
                                    const ArgInfo* args) {
    for (size_t p = 0; p < arg_of.size() && p < fn->params.size(); ++p) {
        if (arg_of[p] < 0) continue;  // left to its default
        const ArgInfo& a = args[arg_of[p]];
        const lang::Type* t = fn->params[p]->type;
        if (a.kind != ArgKind::Tensor || !t || t->is_tensor()) continue;
        std::vector<int64_t> elem;
        ScalarKind k;
        if (!element_shape(t, elem, k)) continue;
        for (int d = a.tensor.ndim - int(elem.size()); d < a.tensor.ndim; ++d)
            if (d >= 0 && extent_class(a.tensor.shape[d]) == 0) add_extent_check(b, arg_of[p], d, a.tensor.shape[d]);
    }
}

/// "f(): parameter 'x' ..." → "parameter 'x' ..." (the candidate line names the function).
std::string without_function_prefix(const std::string& message, const std::string& function) {
    std::string prefix = function + "(): ";
    if (message.compare(0, prefix.size(), prefix) == 0) return message.substr(prefix.size());
    prefix = function + "() ";
    if (message.compare(0, prefix.size(), prefix) == 0) return message.substr(function.size() + 3);
    return message;
}

struct Attempt {
    FunctionDecl* declared = nullptr;  ///< the candidate (a generic declaration or a function)
    FunctionDecl* bound = nullptr;     ///< what was bound (the instantiation of a generic)
    bool fits = false;
    std::vector<int> arg_of;  ///< per parameter, its argument (empty when they did not match)
    Binding binding;
    Rank rank;
    std::string reason;
    ErrorKind error_kind = ErrorKind::Type;
};

std::string arguments_text(const ArgInfo* args, size_t count, size_t positional,
                           const std::vector<std::string>& keywords) {
    std::string s;
    for (size_t i = 0; i < count; ++i) {
        s += i ? ", " : "";
        if (i >= positional && i - positional < keywords.size()) s += keywords[i - positional] + "=";
        s += value_kind(args[i].kind).describe(args[i]);
    }
    return s;
}

}  // namespace

Binding resolve_call(const UserModule& module, const Callee& callee, const ArgInfo* args, size_t positional,
                     const std::vector<std::string>& keyword_names, bool grad_mode, DeviceType device,
                     const CallModifiers& modifiers, int result_arg) {
    const std::string name = callee.text();
    std::vector<FunctionDecl*> plain;
    if (!callee.explicit_args) plain = module.functions(callee.name);
    std::vector<FunctionDecl*> generics = module.generic_functions(callee.name);
    if (plain.empty() && generics.empty())
        throw_value_error("module '" + module.name() + "' has no function '" + callee.name + "'");
    std::vector<Attempt> attempts;
    auto attempt = [&](FunctionDecl* declared, bool generic) {
        Attempt a;
        a.declared = declared;
        try {
            FunctionDecl* fn = declared;
            a.arg_of = match_arguments(declared, name, positional, parameter_keywords(keyword_names));
            const std::vector<int>& arg_of = a.arg_of;
            if (generic) {
                std::vector<GenericArg> gargs = callee.generic_args;
                if (callee.explicit_args) {
                    if (!args_fit_params(declared, gargs))
                        throw_type_error(name + "(): it takes the generic arguments " + generic_params_text(declared));
                } else {
                    std::string why;
                    // fn.map(a="float3") decides a mapped parameter's generic arguments.
                    std::vector<const lang::Type*> mapped(declared->params.size(), nullptr);
                    for (size_t p = 0; p < mapped.size() && p < modifiers.type_maps.size(); ++p)
                        if (!modifiers.type_maps[p].empty())
                            mapped[p] = mapped_type(const_cast<UserModule&>(module), modifiers.type_maps[p]);
                    if (!infer_generic_args(module, declared, args, arg_of, gargs, why, &mapped))
                        throw_type_error(name + "(): " + why);
                }
                try {
                    fn = module.instantiate(declared, gargs);
                } catch (const lang::CompileError& e) {
                    throw_type_error(name + "(): " + instantiation_reason(e));
                }
            }
            a.bound = fn;
            a.binding =
                bind_declaration(module, fn, args, positional, keyword_names, grad_mode, device, modifiers, result_arg);
            a.rank = rank_of(a.binding, args, arg_of, generic);
            a.fits = true;
        } catch (const ValueOverScalar& e) {
            if (plain.size() + generics.size() == 1) throw;  // the one candidate: called again by components
            a.reason = e.what();
            a.error_kind = e.kind;
        } catch (const CallError& e) {
            a.reason = e.what();
            a.error_kind = e.kind;
        }
        attempts.push_back(std::move(a));
    };
    for (FunctionDecl* f : plain) attempt(f, false);
    for (FunctionDecl* g : generics) attempt(g, true);

    if (attempts.size() == 1 && !attempts[0].fits) throw CallError(attempts[0].error_kind, attempts[0].reason);
    const Attempt* best = nullptr;
    for (const Attempt& a : attempts)
        if (a.fits && (!best || a.rank < best->rank)) best = &a;
    const size_t count = positional + keyword_names.size();
    if (!best) {
        std::string message = name + "(): no overload fits the arguments (" +
                              arguments_text(args, count, positional, keyword_names) + "); the candidates:";
        for (const Attempt& a : attempts) {
            const std::string& fn_name = a.bound ? a.bound->name : name;
            message += "\n  " + signature_text(a.declared) + ": " + without_function_prefix(a.reason, fn_name);
        }
        throw_type_error(message);
    }
    std::vector<const Attempt*> tied;
    for (const Attempt& a : attempts)
        if (a.fits && a.rank == best->rank) tied.push_back(&a);
    if (tied.size() > 1) {
        std::string message = name + "(): the call is ambiguous: " + std::to_string(tied.size()) +
                              " overloads fit the arguments (" +
                              arguments_text(args, count, positional, keyword_names) + ") equally well:";
        for (const Attempt* a : tied)
            message += "\n  " + signature_text(a->declared) +
                       (a->bound != a->declared ? " (as " + a->bound->name + ")" : std::string());
        throw_type_error(message);
    }
    Binding b = best->binding;
    record_extent_checks(b, args);
    if (attempts.size() > 1)
        for (const Attempt& a : attempts) {
            const FunctionDecl* fn = a.bound ? a.bound : a.declared->generic_params.empty() ? a.declared : nullptr;
            if (fn && !a.arg_of.empty()) record_candidate_extent_checks(b, fn, a.arg_of, args);
        }
    return b;
}

Binding bind_call(const UserModule& module, const std::string& function, const ArgInfo* args, size_t positional,
                  size_t count, const std::vector<std::string>& keyword_names, bool grad_mode, DeviceType device,
                  const CallModifiers& modifiers, int result_arg) {
    (void)count;
    Callee callee;
    callee.name = function;
    return resolve_call(module, callee, args, positional, keyword_names, grad_mode, device, modifiers, result_arg);
}

}  // namespace sg::call
