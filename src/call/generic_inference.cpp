// src/call/generic_inference.cpp — generic arguments from a Python call's arguments (see
// generic_inference.h). Each parameter's type as written is matched against its argument: a
// tensor's trailing dims fill the element type's array, vector and matrix extents (as the
// vectorization rules read them), a composite's children its parts. A Python scalar gives a weak
// hint (an int joins a float to float; a tensor's dtype wins over both).
#include "call/generic_inference.h"

#include <optional>

#include "call/binder.h"

namespace sg::call {

using lang::Expr;
using lang::GenericArg;
using lang::ScalarKind;
using lang::Type;
using lang::TypeExpr;

namespace {

constexpr int kMaxDepth = 16;

bool is_tensor_name(const std::string& n) {
    // The tensor built-ins of docs/language.md: every one ends in "Tensor".
    return n.size() >= 6 && n.compare(n.size() - 6, 6, "Tensor") == 0 && n.find('.') == std::string::npos;
}

bool floating_constraint(const std::string& c) {
    return c == "IFloat" || c == "__BuiltinFloatingPointType" || c == "__BuiltinRealType";
}

ScalarKind scalar_of_dtype(DType d, bool& ok) {
    ok = true;
    switch (d) {
    case DType::Bool: return ScalarKind::Bool;
    case DType::Int8: return ScalarKind::Int8;
    case DType::Int16: return ScalarKind::Int16;
    case DType::Int32: return ScalarKind::Int32;
    case DType::Int64: return ScalarKind::Int64;
    case DType::UInt8: return ScalarKind::UInt8;
    case DType::UInt16: return ScalarKind::UInt16;
    case DType::UInt32: return ScalarKind::UInt32;
    case DType::UInt64: return ScalarKind::UInt64;
    case DType::Float16: return ScalarKind::Half;
    case DType::Float32: return ScalarKind::Float;
    case DType::Float64: return ScalarKind::Double;
    default: ok = false; return ScalarKind::Float;
    }
}

struct Hint {
    GenericArg arg;
    bool weak = false;  ///< from a Python scalar: gives way to a tensor's or a value's type
    std::string from;   ///< the parameter it came from
};

class Inference {
public:
    Inference(const UserModule& m, const lang::FunctionDecl* g, const ArgInfo* args)
        : types_(const_cast<UserModule&>(m).types()),
          module_(m),
          g_(g),
          args_(args),
          bound_(g->generic_params.size()) {}

    /// Matches parameter type `te` (its first `skip` array dims already taken) with argument `arg`.
    void unify(const TypeExpr* te, size_t skip, int arg, const std::string& from, int depth) {
        if (!te || arg < 0 || depth > kMaxDepth || !conflict_.empty()) return;
        const ArgInfo& a = args_[arg];
        const size_t arrays = te->array_dims.size() > skip ? te->array_dims.size() - skip : 0;
        switch (a.kind) {
        case ArgKind::Tensor: unify_tensor(te, skip, a, from); break;
        case ArgKind::Int:
        case ArgKind::Float:
        case ArgKind::Bool:
            if (arrays == 0 && is_type_param(te)) {
                ScalarKind k = a.kind == ArgKind::Int     ? ScalarKind::Int32
                               : a.kind == ArgKind::Float ? ScalarKind::Float
                                                          : ScalarKind::Bool;
                bind(index_of(te->name), type_arg(types_.scalar(k)), true, from);
            }
            break;
        case ArgKind::Value: {
            if (arrays) break;
            ScalarKind k = ScalarKind(a.scalar);
            if (is_type_param(te)) {
                bind(index_of(te->name), type_arg(a.cols ? types_.matrix(k, a.rows, a.cols) : types_.vector(k, a.rows)),
                     false, from);
            } else if (te->name == "vector" && a.cols == 0) {
                bind_type_at(te, 0, types_.scalar(k), false, from);
                bind_value_at(te, 1, a.rows, from);
            } else if (te->name == "matrix" && a.cols) {
                bind_type_at(te, 0, types_.scalar(k), false, from);
                bind_value_at(te, 1, a.rows, from);
                bind_value_at(te, 2, a.cols, from);
            }
            break;
        }
        case ArgKind::List:
            if (arrays) {
                bind_value_expr(te->array_dims[skip], a.child_count, from);
                for (int i = 0; i < a.child_count; ++i) unify(te, skip + 1, a.first_child + i, from, depth + 1);
            } else if (te->name == "vector") {
                bind_value_at(te, 1, a.child_count, from);
                for (int i = 0; i < a.child_count; ++i)
                    unify(type_expr_at(te, 0), 0, a.first_child + i, from, depth + 1);
            } else if (te->name == "matrix") {
                bind_value_at(te, 1, a.child_count, from);
                for (int i = 0; i < a.child_count; ++i) {
                    const ArgInfo& row = args_[a.first_child + i];
                    if (row.kind != ArgKind::List) continue;
                    bind_value_at(te, 2, row.child_count, from);
                    for (int j = 0; j < row.child_count; ++j)
                        unify(type_expr_at(te, 0), 0, row.first_child + j, from, depth + 2);
                }
            }
            break;
        case ArgKind::Dict:
            // `_type` names the dict's type: a struct, or a vector ({"_type": "float4", "x": ...}).
            if (arrays == 0 && a.struct_name) {
                if (const Type* t = module_.named_type(std::string(a.struct_name, a.struct_name_size)))
                    unify_mapped(te, skip, t, from, depth);
            }
            break;
        case ArgKind::Grid:
            // int[N] / vector<int, N> from the grid's rank.
            if (arrays == 1) bind_value_expr(te->array_dims[skip], a.tensor.ndim, from);
            else if (arrays == 0 && te->name == "vector") bind_value_at(te, 1, a.tensor.ndim, from);
            break;
        default: break;
        }
    }

    /// Matches parameter type `te` (its first `skip` array dims already taken) with the type its
    /// argument is read as by fn.map(a="float3").
    void unify_mapped(const TypeExpr* te, size_t skip, const Type* t, const std::string& from, int depth) {
        if (!te || !t || depth > kMaxDepth || !conflict_.empty()) return;
        if (te->array_dims.size() > skip) {
            if (!t->is_array()) return;
            bind_value_expr(te->array_dims[skip], t->count, from);
            return unify_mapped(te, skip + 1, t->element, from, depth + 1);
        }
        if (is_type_param(te)) {
            bind(index_of(te->name), type_arg(t), false, from);
        } else if (te->name == "vector" && t->is_vector()) {
            bind_type_at(te, 0, types_.scalar(t->scalar), false, from);
            bind_value_at(te, 1, t->rows, from);
        } else if (te->name == "matrix" && t->is_matrix()) {
            bind_type_at(te, 0, types_.scalar(t->scalar), false, from);
            bind_value_at(te, 1, t->rows, from);
            bind_value_at(te, 2, t->cols, from);
        }
    }

    /// The arguments, or false with the reason.
    bool finish(std::vector<GenericArg>& out, std::string& why) {
        if (!conflict_.empty()) {
            why = conflict_;
            return false;
        }
        out.clear();
        const auto& params = g_->generic_params;
        for (size_t k = 0; k < params.size(); ++k) {
            if (!bound_[k] && params[k].name.starts_with("some ")) {
                // A parameter of interface type (lang/sema_interface_parameters.cpp): its struct
                // is named by the dict's `_type`.
                why = "parameter '" + params[k].name.substr(5) + "' has interface type '" + params[k].constraint +
                      "': pass a dict whose '_type' names the struct (or a struct value of a known type)";
                return false;
            }
            if (!bound_[k]) {
                why = "generic parameter '" + params[k].name +
                      "' cannot be inferred from the arguments (name it: " + g_->name + "<...>)";
                return false;
            }
            GenericArg a = bound_[k]->arg;
            // A Python int for a floating-point parameter converts (cubic(2, 0.5, 1) takes T = float).
            if (!a.is_value && bound_[k]->weak && floating_constraint(params[k].constraint) && a.type->is_scalar() &&
                !lang::is_floating(a.type->scalar))
                a.type = types_.float32();
            out.push_back(a);
        }
        return true;
    }

private:
    static GenericArg type_arg(const Type* t) { return GenericArg{t, 0, false}; }

    int index_of(const std::string& name) const {
        const auto& params = g_->generic_params;
        for (size_t k = 0; k < params.size(); ++k)
            if (params[k].name == name) return int(k);
        return -1;
    }

    bool is_type_param(const TypeExpr* te) const {
        int k = index_of(te->name);
        return k >= 0 && !g_->generic_params[size_t(k)].is_value && te->arg_is_value.empty() && te->member.empty();
    }

    /// The written generic argument at position `k` of `te` as a type expression (nullptr for a value).
    static const TypeExpr* type_expr_at(const TypeExpr* te, size_t k) {
        if (k >= te->arg_is_value.size() || te->arg_is_value[k]) return nullptr;
        size_t ti = 0;
        for (size_t j = 0; j < k; ++j) ti += !te->arg_is_value[j];
        return ti < te->type_args.size() ? te->type_args[ti] : nullptr;
    }

    /// The name written as generic argument `k` of `te` (`N` in `vector<float, N>`), or "".
    static std::string name_at(const TypeExpr* te, size_t k) {
        if (k >= te->arg_is_value.size()) return "";
        if (const TypeExpr* t = type_expr_at(te, k))
            return t->type_args.empty() && t->array_dims.empty() && t->member.empty() ? t->name : "";
        size_t vi = 0;
        for (size_t j = 0; j < k; ++j) vi += te->arg_is_value[j];
        const Expr* e = vi < te->value_args.size() ? te->value_args[vi] : nullptr;
        return e && e->kind == lang::ExprKind::Name ? e->name : "";
    }

    void bind_value_expr(const Expr* e, int64_t v, const std::string& from) {
        if (e && e->kind == lang::ExprKind::Name) bind(index_of(e->name), GenericArg{nullptr, v, true}, false, from);
    }

    void bind_value_at(const TypeExpr* te, size_t k, int64_t v, const std::string& from) {
        std::string n = name_at(te, k);
        if (!n.empty()) bind(index_of(n), GenericArg{nullptr, v, true}, false, from);
    }

    void bind_type_at(const TypeExpr* te, size_t k, const Type* t, bool weak, const std::string& from) {
        const TypeExpr* sub = type_expr_at(te, k);
        if (sub && is_type_param(sub)) bind(index_of(sub->name), type_arg(t), weak, from);
    }

    /// Trailing tensor dims the written type takes as one element (-1: it is not read from a tensor).
    int element_rank(const TypeExpr* te, size_t skip) const {
        int arrays = int(te->array_dims.size() > skip ? te->array_dims.size() - skip : 0);
        if (is_type_param(te)) return arrays;
        if (te->name == "vector") return arrays + 1;
        if (te->name == "matrix") return arrays + 2;
        if (!te->type_args.empty() || !te->value_args.empty()) return -1;
        const Type* t = module_.named_type(te->name);
        if (!t) return -1;
        std::vector<int64_t> shape;
        ScalarKind k;
        if (!element_shape(t, shape, k)) return -1;
        return arrays + int(shape.size());
    }

    void unify_tensor(const TypeExpr* te, size_t skip, const ArgInfo& a, const std::string& from) {
        const TensorInfo& t = a.tensor;
        bool ok = false;
        ScalarKind k = scalar_of_dtype(t.dtype, ok);
        if (!ok) return;
        if (skip == 0 && te->array_dims.empty() && te->arg_is_value.size() == 2 && is_tensor_name(te->name)) {
            // Tensor<T, D>: the whole tensor (T's element dims are the trailing ones).
            const TypeExpr* elem = type_expr_at(te, 0);
            int e = elem ? element_rank(elem, 0) : 0;
            if (elem && is_type_param(elem)) bind(index_of(elem->name), type_arg(types_.scalar(k)), false, from);
            if (e >= 0) bind_value_at(te, 1, t.ndim - e, from);
            return;
        }
        if (skip == 0 && te->array_dims.empty() && te->arg_is_value.size() == 1 &&
            (te->name == "StructuredBuffer" || te->name == "RWStructuredBuffer")) {
            // StructuredBuffer<T>: dim 0 counts the elements, the rest is one element (a type
            // parameter alone is a scalar: (N,)).
            const TypeExpr* elem = type_expr_at(te, 0);
            if (!elem || t.ndim < 1) return;
            if (is_type_param(elem)) {
                if (t.ndim == 1) bind(index_of(elem->name), type_arg(types_.scalar(k)), false, from);
                return;
            }
            ArgInfo element = a;
            element.tensor.ndim = t.ndim - 1;
            for (int d = 0; d + 1 < t.ndim; ++d) element.tensor.shape[d] = t.shape[d + 1];
            unify_tensor(elem, 0, element, from);
            return;
        }
        int r = element_rank(te, skip);
        if (r < 0 || t.ndim < r) return;
        const int64_t* dims = t.shape + (t.ndim - r);
        size_t arrays = te->array_dims.size() > skip ? te->array_dims.size() - skip : 0;
        for (size_t i = 0; i < arrays; ++i) bind_value_expr(te->array_dims[skip + i], dims[i], from);
        dims += arrays;
        if (is_type_param(te)) {
            bind(index_of(te->name), type_arg(types_.scalar(k)), false, from);
        } else if (te->name == "vector") {
            bind_type_at(te, 0, types_.scalar(k), false, from);
            bind_value_at(te, 1, dims[0], from);
        } else if (te->name == "matrix") {
            bind_type_at(te, 0, types_.scalar(k), false, from);
            bind_value_at(te, 1, dims[0], from);
            bind_value_at(te, 2, dims[1], from);
        }
    }

    void bind(int k, GenericArg a, bool weak, const std::string& from) {
        if (k < 0 || !conflict_.empty()) return;
        const lang::GenericParam& p = g_->generic_params[size_t(k)];
        if (p.is_value != a.is_value) return;
        std::optional<Hint>& b = bound_[size_t(k)];
        if (!b) {
            b = Hint{a, weak, from};
            return;
        }
        if (b->arg == a) {
            b->weak = b->weak && weak;
            return;
        }
        if (!a.is_value) {
            if (b->weak && !weak) {
                b = Hint{a, weak, from};
                return;
            }
            if (weak && !b->weak) return;
            if (weak && b->weak && a.type->is_scalar() && b->arg.type->is_scalar()) {
                // Python int and float: float.
                if (lang::is_floating(a.type->scalar)) b->arg = a;
                return;
            }
        }
        auto text = [](const GenericArg& x) { return generic_arg_text(x); };
        conflict_ = "generic parameter '" + p.name + "' is " + text(b->arg) + " from parameter '" + b->from + "' but " +
                    text(a) + " from parameter '" + from + "'";
    }

    lang::TypeContext& types_;
    const UserModule& module_;
    const lang::FunctionDecl* g_;
    const ArgInfo* args_;
    std::vector<std::optional<Hint>> bound_;
    std::string conflict_;
};

}  // namespace

std::string generic_arg_text(const GenericArg& a) {
    return a.is_value ? std::to_string(a.value) : a.type ? lang::type_name(a.type) : "?";
}

bool infer_generic_args(const UserModule& module, const lang::FunctionDecl* g, const ArgInfo* args,
                        const std::vector<int>& arg_of, std::vector<GenericArg>& out, std::string& why,
                        const std::vector<const Type*>* mapped) {
    Inference inference(module, g, args);
    for (size_t p = 0; p < g->params.size() && p < arg_of.size(); ++p) {
        if (arg_of[p] < 0) continue;  // left to its default: its type does not infer
        if (mapped && p < mapped->size() && (*mapped)[p])
            inference.unify_mapped(g->params[p]->type_expr, 0, (*mapped)[p], g->params[p]->name, 0);
        else
            inference.unify(g->params[p]->type_expr, 0, arg_of[p], g->params[p]->name, 0);
    }
    return inference.finish(out, why);
}

}  // namespace sg::call
