// src/call/glue.cpp — forward and backward glue generation.
#include "call/glue.h"

#include "call/errors.h"

namespace sg::call {

using lang::TensorAccess;
using lang::Type;

namespace {

/// The concrete tensor type name for a whole-tensor parameter, given whether a gradient view is
/// bound (interfaces become the matching concrete kind).
std::string concrete_tensor(const Type* t, bool with_grad) {
    const lang::TensorKind& k = t->tensor;
    std::string elem = lang::type_name(t->element) + ", " + std::to_string(t->rank);
    if (k.atomic) return "AtomicTensor<" + elem + ">";
    const char* prefix = k.access == TensorAccess::Read ? "" : k.access == TensorAccess::Write ? "W" : "RW";
    if (!k.differentiable) return std::string(prefix) + "Tensor<" + elem + ">";
    return std::string(prefix) + (with_grad ? "DiffTensor<" : "PrimalTensor<") + elem + ">";
}

class GlueWriter {
public:
    GlueWriter(const Binding& b, bool index_64bit) : b_(b), index_64bit_(index_64bit) {}

    /// `t[c.., c..]` for an argument spanning the last `dims` call dimensions.
    std::string index(const std::string& tensor, int dims) const {
        if (dims == 0) return tensor + ".load()";
        std::string s = tensor + "[";
        for (int d = 0; d < dims; ++d) s += (d ? ", " : "") + std::string("_c") + std::to_string(b_.call_rank - dims + d);
        return s + "]";
    }
    std::string store(const std::string& tensor, int dims, const std::string& value, bool atomic) const {
        std::string idx;
        for (int d = 0; d < dims; ++d) idx += std::string("_c") + std::to_string(b_.call_rank - dims + d) + ", ";
        if (atomic) return tensor + ".add(" + idx + value + ");";
        if (dims == 0) return tensor + ".store(" + value + ");";
        return tensor + "[" + idx.substr(0, idx.size() - 2) + "] = " + value + ";";
    }
    std::string grid_value(const ParamBinding& p) const {
        // A vector gets .x = the last (fastest) call dimension; an array gets dimension order.
        const Type* t = p.type;
        int rank = p.call_dims;
        auto cid = [&](int d) { return "_c" + std::to_string(b_.call_rank - rank + d); };
        if (t->is_scalar()) return lang::type_name(t) + "(" + cid(0) + ")";
        std::string s;
        if (t->is_vector()) {
            s = lang::type_name(t) + "(";
            for (int k = 0; k < rank; ++k) s += (k ? ", " : "") + cid(rank - 1 - k);
            return s + ")";
        }
        return "_g_" + p.name;  // arrays: a local declared by grid_locals()
    }
    std::string prologue() const {
        std::string s;
        for (int d = 0; d < b_.call_rank; ++d)
            s += std::string(index_64bit_ ? "    int64_t _c" : "    int _c") + std::to_string(d) +
                 (index_64bit_ ? " = __sg_call_index64(" : " = __sg_call_index(") + std::to_string(d) + ");\n";
        return s;
    }
    /// Declares array-typed grid locals (arrays cannot be built inline as call arguments).
    std::string grid_locals() const {
        std::string s;
        for (const ParamBinding& p : b_.params) {
            if (p.kind != BindingKind::Grid || !p.type->is_array()) continue;
            s += "    " + lang::type_name(p.type->element) + " _g_" + p.name + "[" + std::to_string(p.call_dims) + "] = {";
            for (int k = 0; k < p.call_dims; ++k) s += (k ? ", " : "") + std::string("_c") + std::to_string(b_.call_rank - p.call_dims + k);
            s += "};\n";
        }
        return s;
    }

private:
    const Binding& b_;
    bool index_64bit_;
};

std::string pname(const ParamBinding& p) { return "_p_" + p.name; }

}  // namespace

Glue make_forward_glue(const Binding& b, bool index_64bit) {
    GlueWriter w(b, index_64bit);
    Glue g;
    g.entry = "__sg_forward";
    std::vector<std::string> decls;
    std::string body = w.prologue() + w.grid_locals();
    std::vector<std::string> call_args;
    std::string post;
    if (!b.result_type->is_void()) {
        decls.push_back("RWTensor<" + lang::type_name(b.result_type) + ", " + std::to_string(b.call_rank) + "> _result");
        g.params.push_back({"_result", ParamSource::Result, -1, false, false});
    }
    for (size_t i = 0; i < b.params.size(); ++i) {
        const ParamBinding& p = b.params[i];
        std::string n = pname(p);
        switch (p.kind) {
        case BindingKind::Uniform:
            decls.push_back(lang::type_name(p.type) + " " + n);
            g.params.push_back({n, ParamSource::Uniform, int(i), false, false});
            call_args.push_back(n);
            break;
        case BindingKind::Grid: call_args.push_back(w.grid_value(p)); break;
        case BindingKind::WholeTensor:
            decls.push_back(concrete_tensor(p.type, false) + " " + n);
            g.params.push_back({n, ParamSource::ArgTensor, int(i), true, false});
            call_args.push_back(n);
            break;
        case BindingKind::Elementwise: {
            std::string tensor_kind = p.dir == lang::ParamDir::In ? "Tensor<" : "RWTensor<";
            decls.push_back(tensor_kind + lang::type_name(p.type) + ", " + std::to_string(p.call_dims) + "> " + n);
            g.params.push_back({n, ParamSource::ArgTensor, int(i), false, false});
            if (p.dir == lang::ParamDir::In) {
                call_args.push_back(w.index(n, p.call_dims));
            } else {
                std::string local = "_v_" + p.name;
                body += "    " + lang::type_name(p.type) + " " + local +
                        (p.dir == lang::ParamDir::InOut ? " = " + w.index(n, p.call_dims) : "") + ";\n";
                call_args.push_back(local);
                post += "    " + w.store(n, p.call_dims, local, false) + "\n";
            }
            break;
        }
        }
    }
    std::string call = b.function + "(";
    for (size_t k = 0; k < call_args.size(); ++k) call += (k ? ", " : "") + call_args[k];
    call += ")";
    if (!b.result_type->is_void()) body += "    " + w.store("_result", b.call_rank, call, false) + "\n";
    else body += "    " + call + ";\n";
    body += post;
    std::string sig;
    for (size_t k = 0; k < decls.size(); ++k) sig += (k ? ",\n    " : "\n    ") + decls[k];
    g.source = "// forward kernel for " + b.function + "\n[__sg_kernel]\nvoid __sg_forward(" + sig + ")\n{\n" + body + "}\n";
    return g;
}

Glue make_backward_glue(const Binding& b, bool index_64bit) {
    GlueWriter w(b, index_64bit);
    Glue g;
    g.entry = "__sg_backward";
    std::vector<std::string> decls;
    std::string body = w.prologue() + w.grid_locals();
    std::vector<std::string> call_args;
    std::string post;
    for (size_t i = 0; i < b.params.size(); ++i) {
        const ParamBinding& p = b.params[i];
        if (p.dir != lang::ParamDir::In && p.kind == BindingKind::Elementwise && p.differentiable)
            throw_type_error(b.function + "(): gradients through out/inout parameter '" + p.name + "' are not supported yet");
        std::string n = pname(p);
        switch (p.kind) {
        case BindingKind::Uniform:
            decls.push_back(lang::type_name(p.type) + " " + n);
            g.params.push_back({n, ParamSource::Uniform, int(i), false, false});
            if (p.differentiable) {
                body += "    var _d_" + p.name + " = diffPair(" + n + ");\n";
                call_args.push_back("_d_" + p.name);
            } else {
                call_args.push_back(n);
            }
            break;
        case BindingKind::Grid: call_args.push_back(w.grid_value(p)); break;
        case BindingKind::WholeTensor: {
            // Outputs of a differentiable function carry the incoming gradient as their grad view.
            bool grad = p.type->tensor.differentiable && (p.requires_grad || p.is_output);
            decls.push_back(concrete_tensor(p.type, grad) + " " + n);
            g.params.push_back({n, ParamSource::ArgTensor, int(i), true, grad});
            call_args.push_back(n);
            break;
        }
        case BindingKind::Elementwise:
            decls.push_back("Tensor<" + lang::type_name(p.type) + ", " + std::to_string(p.call_dims) + "> " + n);
            g.params.push_back({n, ParamSource::ArgTensor, int(i), false, false});
            if (!p.differentiable) {
                call_args.push_back(w.index(n, p.call_dims));
                break;
            }
            body += "    var _d_" + p.name + " = diffPair(" + w.index(n, p.call_dims) + ");\n";
            call_args.push_back("_d_" + p.name);
            if (p.requires_grad) {
                std::string gn = n + "_grad";
                decls.push_back((p.grad_atomic ? "AtomicTensor<" : "RWTensor<") + lang::type_name(p.type) + ", " +
                                std::to_string(p.call_dims) + "> " + gn);
                g.params.push_back({gn, ParamSource::ArgGrad, int(i), false, false});
                post += "    " + w.store(gn, p.call_dims, "_d_" + p.name + ".d", p.grad_atomic) + "\n";
            }
            break;
        }
    }
    const Type* r = b.result_type;
    bool diff_result = !r->is_void() && !b.decl->return_no_diff && lang::is_floating(r->is_array() ? r->element->scalar : r->scalar);
    if (diff_result) {
        decls.insert(decls.begin(), "Tensor<" + lang::type_name(r) + ", " + std::to_string(b.call_rank) + "> _result_grad");
        g.params.insert(g.params.begin(), {"_result_grad", ParamSource::ResultGrad, -1, false, false});
        call_args.push_back(w.index("_result_grad", b.call_rank));
    }
    std::string call = "bwd_diff(" + b.function + ")(";
    for (size_t k = 0; k < call_args.size(); ++k) call += (k ? ", " : "") + call_args[k];
    body += "    " + call + ");\n" + post;
    std::string sig;
    for (size_t k = 0; k < decls.size(); ++k) sig += (k ? ",\n    " : "\n    ") + decls[k];
    g.source = "// backward kernel for " + b.function + "\n[__sg_kernel]\nvoid __sg_backward(" + sig + ")\n{\n" + body + "}\n";
    return g;
}

}  // namespace sg::call
