// src/call/glue.cpp — forward and backward glue generation.
#include "call/glue.h"

#include <cctype>
#include <map>
#include <sstream>

#include "call/errors.h"
#include "call/generators.h"
#include "call/generic_inference.h"
#include "call/value_kind.h"

namespace sg::call {

using lang::TensorAccess;
using lang::Type;

namespace {

/// The concrete tensor type name for a whole-tensor parameter, given whether a gradient view is
/// bound (interfaces become the matching concrete kind).
std::string concrete_tensor(const Type* t, bool with_grad, int batch_dims = 0) {
    const lang::TensorKind& k = t->tensor;
    if (k.buffer) return lang::type_name(t);  // one buffer per call (the binder refuses batches)
    std::string elem = lang::type_name(t->element) + ", " + std::to_string(t->rank + batch_dims);
    if (k.atomic) return "AtomicTensor<" + elem + ">";
    const char* prefix = k.access == TensorAccess::Read ? "" : k.access == TensorAccess::Write ? "W" : "RW";
    if (!k.differentiable) return std::string(prefix) + "Tensor<" + elem + ">";
    return std::string(prefix) + (with_grad ? "DiffTensor<" : "PrimalTensor<") + elem + ">";
}

/// Array gradients of up to this many elements are added element by element without a loop in
/// deterministic CUDA backward kernels (each add site then runs once per thread).
constexpr int64_t kMaxUnrolledAdds = 64;

class GlueWriter {
public:
    GlueWriter(const Binding& b, bool index_64bit, Glue& g) : b_(b), index_64bit_(index_64bit), g_(g) {}

    /// `t[c.., c..]` for an argument spanning the last `dims` call dimensions.
    std::string index(const std::string& tensor, int dims) const {
        if (dims == 0) return tensor + ".load()";
        std::string s = tensor + "[";
        for (int d = 0; d < dims; ++d) s += (d ? ", " : "") + cid(b_.call_rank - dims + d);
        return s + "]";
    }
    std::string store(const std::string& tensor, int dims, const std::string& value, bool atomic) const {
        std::string idx;
        for (int d = 0; d < dims; ++d) idx += cid(b_.call_rank - dims + d) + ", ";
        if (atomic) return tensor + ".add(" + idx + value + ");";
        if (dims == 0) return tensor + ".store(" + value + ");";
        return tensor + "[" + idx.substr(0, idx.size() - 2) + "] = " + value + ";";
    }
    static std::string cid(int d) { return "_c" + std::to_string(d); }
    /// A batch of tensors spanning the last `dims` call dims: this thread's tensor of it.
    std::string slice(const std::string& tensor, int dims) const {
        if (dims == 0) return tensor;
        std::string s = "__sg_slice(" + tensor;
        for (int d = 0; d < dims; ++d) s += ", " + cid(b_.call_rank - dims + d);
        return s + ")";
    }

    /// `Tensor<float3, 2>` for a leaf whose value is `t` (arrays: their element type, one more
    /// dim per array level) over `dims` call dims.
    static std::string tensor_type(const std::string& kind, const Type* t, int dims) {
        std::vector<int64_t> counts;
        const Type* inner = array_inner(t, &counts);
        return kind + "<" + lang::type_name(inner) + ", " + std::to_string(dims + int(counts.size())) + ">";
    }

    /// Reads a value of type `t` from `tensor` at the call index: arrays element by element into
    /// a local named `local` (loops over the array dims), everything else in one load.
    std::string load(const std::string& tensor, int dims, const Type* t, const std::string& local) {
        std::vector<int64_t> counts;
        array_inner(t, &counts);
        if (counts.empty()) return index(tensor, dims);
        std::vector<std::string> vars;
        std::string headers = loops(counts, local, vars);  // fills vars: before the statement uses them
        body += "    " + declare(t, local) + ";\n" + headers + "        " + local + subscripts(vars) + " = " +
                at(tensor, dims, vars) + ";\n";
        return local;
    }
    /// Stores `value` (of type `t`) into `tensor` at the call index (arrays element by element).
    std::string store_value(const std::string& tensor, int dims, const Type* t, const std::string& value, bool atomic) {
        std::vector<int64_t> counts;
        array_inner(t, &counts);
        if (counts.empty()) return store(tensor, dims, value, atomic);
        int64_t elements = 1;
        for (int64_t c : counts) elements *= c;
        if (atomic && b_.deterministic && b_.device == DeviceType::CUDA && elements <= kMaxUnrolledAdds) {
            // Deterministic CUDA orders each add site's adds, and a site may run once per thread
            // (codegen.h: ordered_params): one add per array element, no loop.
            std::string s;
            for (int64_t flat = 0; flat < elements; ++flat) {
                std::vector<std::string> lits(counts.size());
                int64_t rest = flat;
                for (size_t k = counts.size(); k-- > 0;) {
                    lits[k] = std::to_string(rest % counts[k]);
                    rest /= counts[k];
                }
                std::string idx = at(tensor, dims, lits);
                std::string args = idx.substr(tensor.size() + 1, idx.size() - tensor.size() - 2);
                s += std::string(flat ? "\n    " : "") + tensor + ".add(" + args + ", " + value + subscripts(lits) + ");";
            }
            return s;
        }
        std::vector<std::string> vars;
        std::string s = loops(counts, tensor, vars).substr(4);
        std::string idx = at(tensor, dims, vars);
        std::string args = idx.substr(tensor.size() + 1, idx.size() - tensor.size() - 2);
        std::string v = value + subscripts(vars);
        return s + "        " + (atomic ? tensor + ".add(" + args + ", " + v + ");" : idx + " = " + v + ";");
    }
    /// `for (...)` headers over `counts`, one per line; the loop variables go to `vars`.
    static std::string loops(const std::vector<int64_t>& counts, const std::string& tag, std::vector<std::string>& vars) {
        std::string s;
        for (size_t k = 0; k < counts.size(); ++k) {
            std::string v = "_i" + tag + "_" + std::to_string(k);
            vars.push_back(v);
            s += "    for (int " + v + " = 0; " + v + " < " + std::to_string(counts[k]) + "; " + v + "++)\n";
        }
        return s;
    }
    static std::string subscripts(const std::vector<std::string>& vars) {
        std::string s;
        for (const std::string& v : vars) s += "[" + v + "]";
        return s;
    }
    /// `t[c.., extra..]`.
    std::string at(const std::string& tensor, int dims, const std::vector<std::string>& extra) const {
        std::string s = tensor + "[";
        bool first = true;
        for (int d = 0; d < dims; ++d, first = false) s += (first ? "" : ", ") + cid(b_.call_rank - dims + d);
        for (const std::string& e : extra) {
            s += (first ? "" : ", ") + e;
            first = false;
        }
        return s + "]";
    }

    /// Declares the gradient buffer of elementwise input `i`: written with atomics unless each
    /// element has one thread (GradStrategy::Store).
    void gradient_param(const std::string& name, int i) {
        const ParamBinding& p = b_.params[size_t(i)];
        GlueParam g{name, ParamSource::ArgGrad, i, false, false};
        g.grad = p.grad_strategy;
        param(tensor_type(p.grad_atomic ? "AtomicTensor" : "RWTensor", p.type, p.call_dims) + " " + name, std::move(g));
    }

    /// Declares a kernel parameter.
    void param(const std::string& decl, GlueParam p) {
        decls.push_back(decl);
        g_.params.push_back(std::move(p));
    }
    /// A uniform parameter of `type` holding `component` of binding `i`'s argument.
    std::string uniform(int i, const std::string& name, const Type* type, int component) {
        param(lang::type_name(type) + " " + name, {name, ParamSource::Uniform, i, false, false, component, type});
        return name;
    }

    /// The value of an index-like leaf (grid, call_id, thread_id), one component per entry of `parts`.
    std::string assemble(const Type* t, const std::string& local, const std::vector<std::string>& parts) {
        if (t->is_scalar()) return lang::type_name(t) + "(" + parts[0] + ")";
        std::string s;
        if (t->is_vector()) {
            s = lang::type_name(t) + "(";
            for (size_t k = 0; k < parts.size(); ++k) s += (k ? ", " : "") + parts[k];
            return s + ")";
        }
        // Arrays cannot be built inline as call arguments: a local.
        body += "    " + lang::type_name(t->element) + " " + local + "[" + std::to_string(parts.size()) + "] = {";
        for (size_t k = 0; k < parts.size(); ++k) body += (k ? ", " : "") + lang::type_name(t->element) + "(" + parts[k] + ")";
        body += "};\n";
        return local;
    }

    std::string grid_value(int i) {
        // A vector gets .x = the last (fastest) call dimension; an array gets dimension order.
        const ParamBinding& p = b_.params[size_t(i)];
        const Type* t = p.type;
        int rank = p.dim_map.empty() ? p.call_dims : int(p.dim_map.size());
        std::vector<std::string> parts;
        for (int k = 0; k < rank; ++k) {
            int d = t->is_vector() ? rank - 1 - k : k;  // argument dimension of component k
            // fn.map(): grid dimension d reads call dimension map[d].
            int call_dim = p.dim_map.empty() ? b_.call_rank - rank + d : p.dim_map[size_t(d)];
            std::string c = cid(call_dim);
            if (p.grid_strided) {
                std::string n = "_p_" + p.ident;
                c = "(" + c + " * " + uniform(i, n + "_stride" + std::to_string(d), int_type(), kUniformGridStride + d) +
                    " + " + uniform(i, n + "_offset" + std::to_string(d), int_type(), kUniformGridOffset + d) + ")";
            }
            parts.push_back(c);
        }
        return assemble(t, "_g_" + p.ident, parts);
    }

    /// A generator's value (call_id, thread_id, wang_hash, rand_float), written by its row.
    std::string generator_value(int i) {
        const ParamBinding& p = b_.params[size_t(i)];
        const Type* t = p.type;
        int n = t->is_scalar() ? 1 : t->is_vector() ? t->rows : int(t->count);
        LeafGenerator glue(*this, i);
        std::vector<std::string> parts = value_kind(p.arg_kind).generator->components(glue, p, n);
        return assemble(t, "_g_" + p.ident, parts);
    }
    /// The per-thread value of input leaf `i` (forward, and non-differentiable reads in backward).
    std::string leaf_value(int i) {
        const ParamBinding& p = b_.params[size_t(i)];
        std::string n = "_p_" + p.ident;
        switch (p.kind) {
        case BindingKind::Uniform: return uniform(i, n, p.type, kUniformValue);
        case BindingKind::Grid: return grid_value(i);
        case BindingKind::Generator: return generator_value(i);
        case BindingKind::WholeTensor:
            param(concrete_tensor(p.type, false, p.call_dims) + " " + n, {n, ParamSource::ArgTensor, i, true, false});
            return slice(n, p.call_dims);
        case BindingKind::Elementwise:
            // A field of an out / inout dict is read here and written back after the call.
            param(tensor_type(p.is_output ? "RWTensor" : "Tensor", p.type, p.call_dims) + " " + n,
                  {n, ParamSource::ArgTensor, i, false, false});
            return load(n, p.call_dims, p.type, "_a_" + p.ident);
        }
        return "";
    }

    /// The value of a parameter slot's node: a leaf's value, a constructor for vectors and
    /// matrices, a local filled field by field for arrays and structs. `leaf` reads a leaf.
    template <class LeafFn>
    std::string node_value(const ValueNode& node, const std::string& local, LeafFn&& leaf) {
        if (node.leaf >= 0) return leaf(node.leaf);
        const Type* t = node.type;
        if (t->is_vector() || t->is_matrix()) {
            std::string s = lang::type_name(t) + "(";
            for (size_t k = 0; k < node.children.size(); ++k)
                s += (k ? ", " : "") + node_value(node.children[k], local + "_" + std::to_string(k), leaf);
            return s + ")";
        }
        std::vector<std::string> values;
        for (size_t k = 0; k < node.children.size(); ++k)
            values.push_back(node_value(node.children[k], local + "_" + std::to_string(k), leaf));
        body += "    " + declare(t, local) + ";\n";
        for (size_t k = 0; k < node.children.size(); ++k) body += "    " + local + node.children[k].access + " = " + values[k] + ";\n";
        return local;
    }

    static std::string declare(const Type* t, const std::string& name) {
        if (t->is_array()) return declare(t->element, name + "[" + std::to_string(t->count) + "]");
        return lang::type_name(t) + " " + name;
    }

    std::string prologue() const {
        std::string s;
        for (int d = 0; d < b_.call_rank; ++d)
            s += std::string(index_64bit_ ? "    int64_t _c" : "    int _c") + std::to_string(d) +
                 (index_64bit_ ? " = __sg_call_index64(" : " = __sg_call_index(") + std::to_string(d) + ");\n";
        return s;
    }
    /// The linear thread index (row-major over the call shape), declared on first use.
    std::string linear() {
        if (!linear_declared_) {
            std::string e = "0";
            for (int d = 0; d < b_.call_rank; ++d) {
                std::string extent = "_e" + std::to_string(d);
                param(std::string(index_64bit_ ? "int64_t " : "int ") + extent,
                      {extent, ParamSource::CallExtent, -1, false, false, d, nullptr});
                e = d == 0 ? cid(0) : "(" + e + ") * " + extent + " + " + cid(d);
            }
            body += std::string(index_64bit_ ? "    int64_t" : "    int") + " _lin = " + e + ";\n";
            linear_declared_ = true;
        }
        return "_lin";
    }

    std::string finish(const std::string& entry, const std::string& comment) const {
        std::string sig;
        for (size_t k = 0; k < decls.size(); ++k) sig += (k ? ",\n    " : "\n    ") + decls[k];
        std::string helpers;
        for (const char* h : helpers_) helpers += h;
        return helpers + "// " + comment + "\n[__sg_kernel]\nvoid " + entry + "(" + sig +
               ")\n{\n" + prologue() + body + "}\n";
    }

    std::vector<std::string> decls;
    std::string body;

private:
    /// The glue's services to the generator of leaf `i` (generators.h).
    class LeafGenerator final : public GeneratorGlue {
    public:
        LeafGenerator(GlueWriter& w, int i) : w_(w), i_(i) {}
        std::string uniform(const std::string& name, const Type* type, int component) override {
            return w_.uniform(i_, name, type, component);
        }
        std::string call_index(int d) override { return cid(d); }
        std::string linear_index() override { return w_.linear(); }
        void statement(const std::string& text) override { w_.body += text; }
        void helpers(const char* text) override {
            for (const char* h : w_.helpers_)
                if (h == text) return;
            w_.helpers_.push_back(text);
        }
        const Type* uint_type() const override { return w_.uint_type(); }
        const Type* float_type() const override { return w_.float_type(); }
        int call_rank() const override { return w_.b_.call_rank; }

    private:
        GlueWriter& w_;
        int i_;
    };

    const Type* int_type() const { return &types_.i; }
    const Type* uint_type() const { return &types_.u; }
    const Type* float_type() const { return &types_.f; }
    struct Scalars {
        Type i, u, f;
        Scalars() {
            i.kind = u.kind = f.kind = lang::TypeKind::Scalar;
            i.scalar = lang::ScalarKind::Int32;
            u.scalar = lang::ScalarKind::UInt32;
            f.scalar = lang::ScalarKind::Float;
        }
    };
    static inline const Scalars types_{};
    const Binding& b_;
    bool index_64bit_;
    Glue& g_;
    bool linear_declared_ = false;
    std::vector<const char*> helpers_;  ///< function definitions put before the kernel, each once
};

bool is_plain(const ParamSlot& s) { return s.value.leaf >= 0; }

/// After the call: each output tensor field under `node` (the local `value` + its access path)
/// stored back at the call index.
void store_fields(GlueWriter& w, const Binding& b, const ValueNode& node, const std::string& value, std::string& post) {
    if (node.leaf >= 0) {
        const ParamBinding& p = b.params[size_t(node.leaf)];
        if (p.kind == BindingKind::Elementwise && p.is_output)
            post += "    " + w.store_value("_p_" + p.ident, p.call_dims, p.type, value, false) + "\n";
        return;
    }
    for (const ValueNode& child : node.children) store_fields(w, b, child, value + child.access, post);
}

/// What the glue calls: the function, or for a struct method (m.Struct.method) a free function
/// wrapping it, which bwd_diff can take like any other.
std::string callee(const Binding& b) {
    const lang::FunctionDecl* f = b.decl;
    if (!f || !f->owner) return b.function;
    std::string name = "__sg_method_";
    for (char c : b.function) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return name;
}

/// The wrapper of a struct method: the same parameters (`this` first for instance methods, as
/// the binding has them), differentiable when the method is; "" for free functions.
std::string method_wrapper(const Binding& b) {
    const lang::FunctionDecl* f = b.decl;
    if (!f || !f->owner) return "";
    std::string params, args;
    for (size_t k = 0; k < f->params.size(); ++k) {
        const lang::VarDecl* p = f->params[k];
        std::string name = p == f->this_param ? std::string("__sg_self") : "__sg_a" + std::to_string(k);
        const char* dir = p->dir == lang::ParamDir::InOut ? "inout " : p->dir == lang::ParamDir::Out ? "out " : "";
        params += std::string(params.empty() ? "" : ", ") + dir + (p->is_no_diff ? "no_diff " : "") +
                  GlueWriter::declare(p->type, name);
        if (p != f->this_param) args += (args.empty() ? "" : ", ") + name;
    }
    // A constructor (`__init`) is called by the struct's name; its `this` is the value it makes.
    std::string target = f->is_init         ? f->owner->name
                         : f->this_param    ? "__sg_self." + f->member_name
                                            : f->owner->name + "." + f->member_name;
    std::string call = target + "(" + args + ")";
    const bool returns = !f->result_type->is_void();
    const char* attribute = !f->is_differentiable                     ? ""
                            : lang::differentiates_forward_only(*f) ? "[ForwardDifferentiable]\n"
                                                                     : "[Differentiable]\n";
    return std::string(attribute) + (f->return_no_diff ? "no_diff " : "") +
           lang::type_name(f->result_type) + " " + callee(b) + "(" + params + ")\n{\n    " + (returns ? "return " : "") +
           call + ";\n}\n";
}

/// The default value of a parameter the call left out, as kernel source: its tokens, with the
/// generic parameters of the function (or of its struct) replaced by this instantiation's
/// arguments (not a member's name after a `.`).
std::string default_text(const Binding& b, size_t slot) {
    const lang::FunctionDecl* f = b.decl;
    std::map<std::string, std::string> args;
    auto bind = [&](const std::vector<lang::GenericParam>& params, const std::vector<lang::GenericArg>& values) {
        for (size_t k = 0; k < params.size() && k < values.size(); ++k)
            args[params[k].name] = generic_arg_text(values[k]);
    };
    if (f->owner && f->owner->generic_origin) bind(f->owner->generic_origin->generic_params, f->owner->generic_args);
    if (f->generic_origin) bind(f->generic_origin->generic_params, f->generic_args);
    std::string text, token, previous;
    std::istringstream tokens(f->params[slot]->default_text);
    while (tokens >> token) {
        auto it = previous == "." ? args.end() : args.find(token);
        text += (text.empty() ? "" : " ") + (it == args.end() ? token : it->second);
        previous = token;
    }
    return text;
}

/// A local of the parameter's type holding its default (the call then resolves as the user
/// function's own calls do: by the parameter's type, not the default's); returns its name.
std::string default_local(GlueWriter& w, const Binding& b, size_t slot) {
    std::string name = "_default_" + std::to_string(slot);
    w.body += "    " + GlueWriter::declare(b.slots[slot].type, name) + " = " + default_text(b, slot) + ";\n";
    return name;
}

/// A slot's value as the parameter's type: fn.map() by type may read it as another one.
std::string convert(const ParamSlot& s, const std::string& value) {
    if (!s.read_type || s.read_type == s.type) return value;
    return lang::type_name(s.type) + "(" + value + ")";
}

/// A backward argument for a leaf that is not differentiable: its value, or, where map() by
/// type read it as a non-differentiable type for a differentiable parameter (int into float),
/// a pair without a gradient.
template <class Writer>
std::string as_backward_arg(Writer& w, const ParamSlot& s, const ParamBinding& p, const std::string& value) {
    if (!s.read_type || s.read_type == s.type || !s.differentiable || s.type->is_tensor()) return value;
    w.body += "    var _d_" + p.ident + " = diffPair(" + value + ");\n";
    return "_d_" + p.ident;
}

/// A gradient of leaf `p` (of a converted slot: of the parameter's type) as the leaf's type.
std::string gradient_as_leaf(const ParamSlot& s, const ParamBinding& p, const std::string& grad) {
    if (!s.read_type || s.read_type == s.type) return grad;
    if (p.type->is_scalar() && !s.type->is_scalar() && p.diff_path.empty()) {
        // A scalar splat to every component: its gradient is their sum.
        std::string sum;
        const int rows = s.type->rows, cols = s.type->is_matrix() ? s.type->cols : 0;
        for (int r = 0; r < rows; ++r) {
            if (cols == 0) {
                sum += (r ? " + " : "") + grad + "[" + std::to_string(r) + "]";
                continue;
            }
            for (int c = 0; c < cols; ++c)
                sum += (r || c ? " + " : "") + grad + "[" + std::to_string(r) + "][" + std::to_string(c) + "]";
        }
        return lang::type_name(p.type) + "(" + sum + ")";
    }
    return lang::type_name(p.type) + "(" + grad + ")";
}

/// The glue comment that says how the gradient of input `p` is written (visible in debug_code).
std::string strategy_comment(const Binding& b, const ParamBinding& p) {
    std::string why;
    switch (p.grad_strategy) {
    case GradStrategy::Store: why = "one thread per element: a plain store, no zero fill"; break;
    case GradStrategy::Reduce:
        why = b.deterministic ? "broadcast along every call dimension: summed per thread, then per block in a fixed "
                                "order; blocks combined in block order (deterministic)"
                              : "broadcast along every call dimension: summed in registers, then as a tree (CUDA: "
                                "warp, block, the blocks in double; CPU: per chunk, chunks pairwise); one rounding";
        break;
    case GradStrategy::Atomic:
        why = b.deterministic ? "broadcast along some call dimensions: summed in a fixed order (deterministic; CUDA: "
                                "per warp in lane order, warps and blocks in order, or in fixed point where that "
                                "does not fit)"
                              : "broadcast along some call dimensions: warp-aggregated atomics";
        break;
    case GradStrategy::Collide:
        why = b.deterministic ? "colliding by data: summed in a fixed order (deterministic; CUDA: per warp in lane "
                                "order, warps and blocks in order, or in fixed point where that does not fit)"
                              : "colliding by data: warp-aggregated atomics; on CUDA a block-private copy in "
                                "shared memory when the gradient fits 16 KiB";
        break;
    case GradStrategy::None: return "";
    }
    return "    // gradient of '" + p.name + "': " + grad_strategy_name(p.grad_strategy) + " (" + why + ")\n";
}

/// A module parameter the function uses (global_bindings.h): the entry assigns the global its
/// value, read as any input is (no gradient), before the call.
void assign_global(GlueWriter& w, const ParamSlot& slot) {
    std::string value = w.node_value(slot.value, "_v_" + slot.name, [&](int i) { return w.leaf_value(i); });
    w.body += "    " + slot.global + " = " + value + ";\n";
}

}  // namespace

Glue make_forward_glue(const Binding& b, bool index_64bit) {
    Glue g;
    GlueWriter w(b, index_64bit, g);
    g.entry = "__sg_forward";
    std::vector<std::string> call_args;
    std::string post;
    const bool one_result = b.result_leaves.size() == 1 && b.result_leaves[0].path.empty();
    for (size_t k = 0; k < b.result_leaves.size(); ++k) {
        std::string n = one_result ? "_result" : "_result_" + std::to_string(k);
        w.param(GlueWriter::tensor_type("RWTensor", b.result_leaves[k].type, b.call_rank) + " " + n,
                {n, ParamSource::Result, int(k), false, false});
    }
    for (size_t s = 0; s < b.slots.size(); ++s) {
        const ParamSlot& slot = b.slots[s];
        if (!slot.global.empty()) {
            assign_global(w, slot);
            continue;
        }
        if (slot.defaulted) {
            call_args.push_back(default_local(w, b, s));
            continue;
        }
        if (!is_plain(slot)) {
            std::string value = w.node_value(slot.value, "_v_" + slot.name, [&](int i) { return w.leaf_value(i); });
            if (slot.dir == lang::ParamDir::In) {
                call_args.push_back(convert(slot, value));
                continue;
            }
            // An out / inout struct given as a dict (SlangPy's instances, `this` of a
            // [mutating] method): the function writes the local, each tensor field is stored back.
            call_args.push_back(value);
            store_fields(w, b, slot.value, value, post);
            continue;
        }
        const int i = slot.value.leaf;
        const ParamBinding& p = b.params[size_t(i)];
        if (p.kind != BindingKind::Elementwise || p.dir == lang::ParamDir::In) {
            call_args.push_back(convert(slot, w.leaf_value(i)));
            continue;
        }
        // out / inout: a local the function writes, stored back after the call.
        std::string n = "_p_" + p.ident;
        w.param(GlueWriter::tensor_type("RWTensor", p.type, p.call_dims) + " " + n, {n, ParamSource::ArgTensor, i, false, false});
        std::string local = "_v_" + p.ident;
        if (p.dir == lang::ParamDir::InOut && p.array_dims == 0) {
            w.body += "    " + lang::type_name(p.type) + " " + local + " = " + w.index(n, p.call_dims) + ";\n";
        } else if (p.dir == lang::ParamDir::InOut) {
            local = w.load(n, p.call_dims, p.type, local);
        } else {
            w.body += "    " + GlueWriter::declare(p.type, local) + ";\n";
        }
        call_args.push_back(local);
        post += "    " + w.store_value(n, p.call_dims, p.type, local, false) + "\n";
    }
    std::string call = callee(b) + "(";
    for (size_t k = 0; k < call_args.size(); ++k) call += (k ? ", " : "") + call_args[k];
    call += ")";
    if (one_result && b.result_leaves[0].array_dims == 0) {
        w.body += "    " + w.store("_result", b.call_rank, call, false) + "\n";
    } else if (!b.result_leaves.empty()) {
        w.body += "    " + GlueWriter::declare(b.result_type, "_r") + " = " + call + ";\n";
        for (size_t k = 0; k < b.result_leaves.size(); ++k)
            w.body += "    " + w.store_value(one_result ? "_result" : "_result_" + std::to_string(k), b.call_rank,
                                             b.result_leaves[k].type, "_r" + b.result_leaves[k].path, false) + "\n";
    } else {
        w.body += "    " + call + ";\n";
    }
    w.body += post;
    g.source = method_wrapper(b) + w.finish("__sg_forward", "forward kernel for " + b.function);
    return g;
}

Glue make_backward_glue(const Binding& b, bool index_64bit) {
    for (const ParamSlot& slot : b.slots)
        if (!is_plain(slot) && !slot.defaulted && slot.dir != lang::ParamDir::In && slot.differentiable)
            throw_type_error(b.function + "(): parameter '" + slot.name + "' is an out/inout struct given field by "
                             "field (a dict or an instance list): its gradients are not supported yet (pass the "
                             "fields' tensors without requires_grad, or a Tensor of the struct to a tensor parameter)");
    Glue g;
    GlueWriter w(b, index_64bit, g);
    g.entry = "__sg_backward";
    std::vector<std::string> call_args;
    std::string post;
    const Type* r = b.result_type;
    bool diff_result = false;
    for (const ResultLeaf& leaf : b.result_leaves) diff_result |= leaf.differentiable;
    const bool one_result = b.result_leaves.size() == 1 && b.result_leaves[0].path.empty();
    std::string result_grad;
    if (diff_result && one_result) {
        // First in the signature, as the launcher and the existing kernels expect.
        w.param(GlueWriter::tensor_type("Tensor", r, b.call_rank) + " _result_grad",
                {"_result_grad", ParamSource::ResultGrad, 0, false, false});
        result_grad = w.load("_result_grad", b.call_rank, r, "_rg");
    } else if (diff_result) {
        // A struct result: its Differential, filled field by field from the leaves' gradients.
        w.body += "    " + lang::type_name(r) + ".Differential _rg;\n";
        for (size_t k = 0; k < b.result_leaves.size(); ++k) {
            const ResultLeaf& leaf = b.result_leaves[k];
            if (!leaf.differentiable) continue;
            std::string n = "_result_grad_" + std::to_string(k);
            w.param(GlueWriter::tensor_type("Tensor", leaf.type, b.call_rank) + " " + n,
                    {n, ParamSource::ResultGrad, int(k), false, false});
            w.body += "    _rg" + leaf.diff_path + " = " + w.load(n, b.call_rank, leaf.type, "_rg_" + std::to_string(k)) + ";\n";
        }
        result_grad = "_rg";
    }
    for (size_t s = 0; s < b.slots.size(); ++s) {
        const ParamSlot& slot = b.slots[s];
        if (!slot.global.empty()) {
            assign_global(w, slot);
            continue;
        }
        if (slot.defaulted) {
            // A constant of the kernel: a differentiable parameter gets a pair whose gradient
            // goes nowhere.
            std::string value = default_local(w, b, s);
            if (!slot.differentiable) {
                call_args.push_back(value);
                continue;
            }
            std::string pair = "_default_pair_" + std::to_string(s);
            w.body += "    var " + pair + " = diffPair(" + value + ");\n";
            call_args.push_back(pair);
            continue;
        }
        if (!is_plain(slot)) {
            std::string value =
                convert(slot, w.node_value(slot.value, "_v_" + slot.name, [&](int i) { return w.leaf_value(i); }));
            bool any_grad = false;
            for (const ParamBinding& p : b.params) any_grad |= p.param == int(s) && p.differentiable;
            if (!slot.differentiable || !any_grad) {
                call_args.push_back(value);
                continue;
            }
            std::string pair = "_d_" + slot.name;
            w.body += "    var " + pair + " = diffPair(" + value + ");\n";
            call_args.push_back(pair);
            for (size_t i = 0; i < b.params.size(); ++i) {
                const ParamBinding& p = b.params[i];
                if (p.param != int(s) || !p.requires_grad || p.kind != BindingKind::Elementwise) continue;
                std::string gn = "_p_" + p.ident + "_grad";
                w.gradient_param(gn, int(i));
                post += strategy_comment(b, p) + "    " +
                        w.store_value(gn, p.call_dims, p.type, gradient_as_leaf(slot, p, pair + ".d" + p.diff_path),
                                      p.grad_atomic) + "\n";
            }
            continue;
        }
        const int i = slot.value.leaf;
        const ParamBinding& p = b.params[size_t(i)];
        std::string n = "_p_" + p.ident;
        if (p.kind == BindingKind::Elementwise && p.dir == lang::ParamDir::InOut && p.differentiable) {
            // An inout pair goes in holding the old value and the written value's incoming
            // gradient, and comes out holding the old value's gradient. The argument tensor is
            // the old value as saved before the forward wrote it.
            std::string gin = n + "_dout";
            w.param(GlueWriter::tensor_type("Tensor", p.type, p.call_dims) + " " + n, {n, ParamSource::ArgTensor, i, false, false});
            w.param(GlueWriter::tensor_type("Tensor", p.type, p.call_dims) + " " + gin,
                    {gin, ParamSource::ArgOutGrad, i, false, false});
            std::string old_value = w.load(n, p.call_dims, p.type, "_a_" + p.ident);
            std::string dout = w.load(gin, p.call_dims, p.type, "_a_" + p.ident + "_dout");
            w.body += "    var _d_" + p.ident + " = diffPair(" + old_value + ", " + dout + ");\n";
            call_args.push_back("_d_" + p.ident);
            if (p.requires_grad) {
                std::string gn = n + "_grad";
                w.param(GlueWriter::tensor_type("RWTensor", p.type, p.call_dims) + " " + gn, {gn, ParamSource::ArgGrad, i, false, false});
                post += "    " + w.store_value(gn, p.call_dims, p.type, "_d_" + p.ident + ".d", false) + "\n";
            }
            continue;
        }
        if (p.kind == BindingKind::Elementwise && p.dir == lang::ParamDir::Out && p.differentiable) {
            // An out parameter's derivative argument is its incoming gradient.
            std::string gn = n + "_grad";
            w.param(GlueWriter::tensor_type("Tensor", p.type, p.call_dims) + " " + gn, {gn, ParamSource::ArgGrad, i, false, false});
            call_args.push_back(w.load(gn, p.call_dims, p.type, "_a_" + p.ident + "_grad"));
            continue;
        }
        if (p.kind == BindingKind::Elementwise && p.dir != lang::ParamDir::In) {
            // Not differentiable: bwd_diff drops an out parameter and takes an inout one as an
            // input, its old value (saved before the forward wrote it).
            if (p.dir == lang::ParamDir::InOut) {
                w.param(GlueWriter::tensor_type("Tensor", p.type, p.call_dims) + " " + n, {n, ParamSource::ArgTensor, i, false, false});
                call_args.push_back(w.load(n, p.call_dims, p.type, "_a_" + p.ident));
            }
            continue;
        }
        switch (p.kind) {
        case BindingKind::Uniform:
            if (p.differentiable) {
                std::string v = w.uniform(i, n, p.type, kUniformValue);
                w.body += "    var _d_" + p.ident + " = diffPair(" + convert(slot, v) + ");\n";
                call_args.push_back("_d_" + p.ident);
            } else {
                call_args.push_back(as_backward_arg(w, slot, p, convert(slot, w.leaf_value(i))));
            }
            break;
        case BindingKind::Grid:
        case BindingKind::Generator: call_args.push_back(as_backward_arg(w, slot, p, convert(slot, w.leaf_value(i)))); break;
        case BindingKind::WholeTensor: {
            // Outputs of a differentiable function carry the incoming gradient as their grad view.
            bool grad = p.type->tensor.differentiable && (p.requires_grad || p.is_output);
            GlueParam gp{n, ParamSource::ArgTensor, i, true, grad};
            if (grad && p.requires_grad) {
                w.body += strategy_comment(b, p);
                gp.grad = p.grad_strategy;
                gp.type = p.type;
            }
            w.param(concrete_tensor(p.type, grad, p.call_dims) + " " + n, std::move(gp));
            call_args.push_back(w.slice(n, p.call_dims));
            break;
        }
        case BindingKind::Elementwise:
            if (!p.differentiable) {
                call_args.push_back(as_backward_arg(w, slot, p, convert(slot, w.leaf_value(i))));
                break;
            }
            w.param(GlueWriter::tensor_type("Tensor", p.type, p.call_dims) + " " + n, {n, ParamSource::ArgTensor, i, false, false});
            w.body += "    var _d_" + p.ident + " = diffPair(" + convert(slot, w.load(n, p.call_dims, p.type, "_a_" + p.ident)) +
                      ");\n";
            call_args.push_back("_d_" + p.ident);
            if (p.requires_grad) {
                std::string gn = n + "_grad";
                w.gradient_param(gn, i);
                post += strategy_comment(b, p) + "    " +
                        w.store_value(gn, p.call_dims, p.type, gradient_as_leaf(slot, p, "_d_" + p.ident + ".d"),
                                      p.grad_atomic) + "\n";
            }
            break;
        }
    }
    if (diff_result) call_args.push_back(result_grad);
    std::string call = "bwd_diff(" + callee(b) + ")(";
    for (size_t k = 0; k < call_args.size(); ++k) call += (k ? ", " : "") + call_args[k];
    w.body += "    " + call + ");\n" + post;
    g.source = method_wrapper(b) + w.finish("__sg_backward", "backward kernel for " + b.function);
    return g;
}

}  // namespace sg::call
