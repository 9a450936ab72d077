// src/call/view_call_glue.cpp — the glue of a call of a function that takes views without being
// a [CUDAKernel] function (view_call.cpp decides the call's form; docs/calling.md, "Functions that
// take views").
//
// The glue is two functions appended to the user module (three for a struct method: a free
// function that wraps it):
//
//   * a body, `__sg_view_body_<f>(params..., results..., uint __sg_t, [uint4 __sg_e0, uint4 __sg_e1])`,
//     [Differentiable] when f is: it finds the thread's coordinate in the call shape (its extents
//     in __sg_e0/__sg_e1, dimension 0 first; in call groups SlangPy's call id), reads each
//     per-element argument there (a tensor is a view packed with the call's extents, a broadcast
//     dimension of stride 0: coop_launch.cpp), makes each grid's coordinate, builds each struct
//     from its fields (a kernel parameter per field of a dict, or a view of a tensor of them),
//     calls f, writes out and inout arguments back and stores its result at that coordinate (a
//     view per leaf: the value, or each field of a struct);
//   * a [CUDAKernel] entry that computes the thread's index and calls the body, bwd_diff of it
//     or fwd_diff of it.
//
// A differentiable per-element argument (a floating scalar or vector of a [Differentiable] f) is
// a DiffTensorView of its scalar, a vector's components in its last dimension: its loads'
// backward adds the argument's gradient into its gradient view (atomically: a broadcast element
// is read by several calls). A differentiable result is stored through a DiffTensorView the same
// way: the store's backward takes the result's gradient. So the derivative of the whole call is
// bwd_diff of the body, and a call's gradients are those of its views.
#include "call/coop_launch.h"

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "call/errors.h"

namespace sg::call {

namespace {

const char* kXyzw[] = {"x", "y", "z", "w"};

/// Whether a per-element argument of parameter `p` of `decl` is read through a DiffTensorView.
bool diff_element(const lang::FunctionDecl& decl, const lang::VarDecl& p) {
    return decl.is_differentiable && is_differentiable_value(p);
}

/// Whether `decl`'s result is stored through a DiffTensorView.
bool diff_result(const lang::FunctionDecl& decl) {
    const lang::Type* rt = decl.result_type;
    return decl.is_differentiable && rt && rt->is_numeric() && lang::is_floating(rt->scalar) &&
           !rt->enumeration;
}

/// The scalars of a value of type `t` in order (row-major for a matrix): each one's index
/// suffix in a view of the scalar whose last dims hold the value (", c" for a vector, ", r, c"
/// for a matrix, "" for a scalar) and its access in the value (".x", "[r][c]", "").
std::vector<std::pair<std::string, std::string>> scalar_parts(const lang::Type* t) {
    std::vector<std::pair<std::string, std::string>> out;
    if (t->is_matrix()) {
        for (int r = 0; r < t->rows; ++r)
            for (int c = 0; c < t->cols; ++c)
                out.emplace_back(", " + std::to_string(r) + ", " + std::to_string(c),
                                 "[" + std::to_string(r) + "][" + std::to_string(c) + "]");
    } else if (t->is_vector()) {
        for (int c = 0; c < t->rows; ++c) out.emplace_back(", " + std::to_string(c), std::string(".") + kXyzw[c]);
    } else {
        out.emplace_back("", "");
    }
    return out;
}

/// The call shape's extent of dimension d.
std::string extent(int d) { return std::string("__sg_e") + (d < 4 ? "0." : "1.") + kXyzw[d % 4]; }

/// The coordinate list "__sg_c0, ..., __sg_c{rank-1}" (dimension 0 first), or "0" for a single call.
std::string coordinates(int rank) {
    if (rank == 0) return "0";
    std::string s;
    for (int d = 0; d < rank; ++d) s += (d ? ", __sg_c" : "__sg_c") + std::to_string(d);
    return s;
}

/// The free function `name` that calls struct method `f` (its parameters, `this` first for an
/// instance method), differentiable when the method is; "" for a free function.
std::string method_wrapper(const lang::FunctionDecl& f, const std::string& name) {
    if (!f.owner) return "";
    std::string params, args;
    for (size_t k = 0; k < f.params.size(); ++k) {
        const lang::VarDecl* p = f.params[k];
        const std::string arg = p == f.this_param ? std::string("__sg_self") : "__sg_a" + std::to_string(k);
        const char* dir = p->dir == lang::ParamDir::InOut ? "inout " : p->dir == lang::ParamDir::Out ? "out " : "";
        params += std::string(params.empty() ? "" : ", ") + dir + (p->is_no_diff ? "no_diff " : "") +
                  lang::type_name(p->type) + " " + arg;
        if (p != f.this_param) args += (args.empty() ? "" : ", ") + arg;
    }
    const std::string target = f.this_param ? "__sg_self." + f.member_name : f.owner->name + "." + f.member_name;
    const bool returns = f.result_type && !f.result_type->is_void();
    return std::string(f.is_differentiable ? "[Differentiable]\n" : "") + (f.return_no_diff ? "no_diff " : "") +
           (f.result_type ? lang::type_name(f.result_type) : std::string("void")) + " " + name + "(" + params +
           ")\n{\n    " + (returns ? "return " : "") + target + "(" + args + ");\n}\n";
}

}  // namespace

bool view_result_is_differentiable(const lang::FunctionDecl& decl) { return diff_result(decl); }

namespace {
/// The leaves of a value of type `t`: struct fields in declaration order, depth first; anything
/// else is one leaf. A leaf carries a gradient in a [Differentiable] function when it is a
/// floating scalar, vector (or, `matrices`, matrix) that no no_diff covers.
std::vector<ViewResultLeaf> leaves_of(const UserModule& module, const lang::FunctionDecl& decl, const lang::Type* t,
                                      bool no_diff, bool matrices) {
    std::vector<ViewResultLeaf> out;
    auto walk = [&](auto& self, const lang::Type* t, const std::string& access, const std::string& name,
                    bool no_diff) -> void {
        if (t->is_struct()) {
            // The fields of a struct that is no IDifferentiable carry no gradient (Slang's 41031
            // for a derivative stored into one).
            const bool plain = no_diff || !module.types().is_differentiable(t);
            for (const lang::FieldInfo& f : module.types().fields(t))
                self(self, f.type, access + "." + f.name, name.empty() ? f.name : name + "." + f.name, plain || f.no_diff);
            return;
        }
        const bool diff = decl.is_differentiable && !no_diff && (t->is_scalar() || t->is_vector() ||
                                                                 (matrices && t->is_matrix())) &&
                          lang::is_floating(t->scalar) && !t->enumeration;
        out.push_back({access, name, t, diff});
    };
    walk(walk, t, "", "", no_diff);
    return out;
}
}  // namespace

std::vector<ViewResultLeaf> view_result_leaves(const UserModule& module, const lang::FunctionDecl& decl) {
    const lang::Type* rt = decl.result_type;
    if (!rt || rt->is_void()) return {};
    return leaves_of(module, decl, rt, false, true);
}

std::vector<ViewResultLeaf> view_struct_leaves(const UserModule& module, const lang::FunctionDecl& decl, size_t k) {
    return leaves_of(module, decl, decl.params[k]->type, decl.params[k]->is_no_diff, true);
}

bool view_element_is_differentiable(const lang::FunctionDecl& decl, size_t k) {
    return diff_element(decl, *decl.params[k]);
}

Glue view_call_glue(const FunctionState& fn, const lang::FunctionDecl& decl, CoopPass pass, const ViewCallForm& form) {
    const char* what = pass == CoopPass::Backward ? "bwd" : pass == CoopPass::Forward ? "fwd" : "call";
    if (pass != CoopPass::Primal && !decl.is_differentiable)
        throw_type_error(fn.name + ".bwds(): " + fn.name +
                         " is not [Differentiable]: mark it [Differentiable] to run its derivative");
    const lang::Type* rt = decl.result_type;
    const std::vector<ViewResultLeaf> leaves = view_result_leaves(*fn.module, decl);
    for (const ViewResultLeaf& leaf : leaves) {
        const lang::Type* t = leaf.type;
        if (!((t->is_scalar() || (t->is_numeric() && t->scalar != lang::ScalarKind::Bool)) && !t->enumeration))
            throw_type_error(fn.name + "(): it takes a TensorView and returns a " + lang::type_name(rt) +
                             (leaf.name.empty() ? "" : " whose field '" + leaf.name + "' is a " + lang::type_name(t)) +
                             ": a call of a function that takes views returns scalars, vectors, matrices and structs "
                             "of them only yet (write other results through a view)");
        if (form.rank + (t->is_vector() ? 1 : t->is_matrix() ? 2 : 0) > 8)
            throw_value_error(fn.name + "(): its results would have more than 8 dimensions");
    }
    const bool diff = decl.is_differentiable;
    // A struct method (m.Struct.method, `this` its first parameter when it has one) is called
    // through a free function that wraps it.
    std::string ident;
    for (char c : decl.name) ident += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    const std::string wrapper = method_wrapper(decl, "__sg_vmethod_" + ident);
    const std::string function = decl.owner ? "__sg_vmethod_" + ident : decl.name;
    const std::string body = "__sg_view_body_" + ident;
    Glue glue;
    glue.entry = "__sg_view_" + std::string(what) + "_" + ident;

    // The thread's coordinate in the call shape, dimension 0 first (the last varies fastest).
    std::string setup;
    if (!form.call_group.empty()) {
        // In call groups: SlangPy's call id of the running element.
        for (int d = 0; d < form.rank; ++d)
            setup += "    uint __sg_c" + std::to_string(d) + " = uint(__slangpy_call_id(" + std::to_string(d) + "));\n";
    } else if (form.rank > 0) {
        setup += "    uint __sg_r = __sg_t;\n";
        for (int d = form.rank - 1; d >= 0; --d) {
            setup += "    uint __sg_c" + std::to_string(d) + " = __sg_r % " + extent(d) + ";\n";
            if (d > 0) setup += "    __sg_r /= " + extent(d) + ";\n";
        }
    }
    const std::string at = coordinates(form.rank);
    std::vector<std::string> params, entry_params, entry_args;  // the body's, the entry's, the body call's
    std::string args, entry_setup, write_back;
    for (size_t k = 0; k < decl.params.size(); ++k) {
        const lang::VarDecl& p = *decl.params[k];
        const std::string name = "p" + std::to_string(k);
        const std::string type = lang::type_name(p.type);
        if (p.dir != lang::ParamDir::In && !(form.tensors & (1u << k)) && !form.struct_tensors(k))
            throw_type_error(fn.name + "(): parameter '" + p.name + "' (" + type + ") is " +
                             (p.dir == lang::ParamDir::Out ? "out" : "inout") +
                             ": beside views it takes a tensor, one element per call, which the call writes");
        std::string value = name, param_type = type;
        if (const uint64_t* mask = form.struct_tensors(k)) {
            // A struct from a dict: each field (leaf) a number or a tensor read per element; the
            // body builds the value from them.
            // An out or inout one: every field a tensor, written back after the call.
            const std::vector<ViewResultLeaf> leaves = view_struct_leaves(*fn.module, decl, k);
            const bool written = p.dir != lang::ParamDir::In;
            value = "v" + name;
            setup += "    " + type + " " + value + ";\n";
            for (size_t j = 0; j < leaves.size(); ++j) {
                const ViewResultLeaf& leaf = leaves[j];
                const std::string lname = name + "_" + std::to_string(j), ltype = lang::type_name(leaf.type);
                const std::string field = value + leaf.access;
                std::string read = lname;
                if (*mask & (uint64_t(1) << j)) {
                    if (leaf.diff || leaf.type->is_matrix()) {
                        // A view of its scalar, the value's components in its last dims.
                        params.push_back((leaf.diff ? "DiffTensorView<" : "TensorView<") +
                                         std::string(lang::scalar_name(leaf.type->scalar)) + "> " + lname);
                        read = ltype + "(";
                        bool first = true;
                        for (const auto& [suffix, access] : scalar_parts(leaf.type)) {
                            read += (first ? "" : ", ") + (leaf.diff ? lname + ".load(" + at + suffix + ")"
                                                                     : lname + "[" + at + suffix + "]");
                            first = false;
                            if (written)
                                write_back += leaf.diff ? "    " + lname + ".store(" + at + suffix + ", " + field + access + ");\n"
                                                        : "    " + lname + "[" + at + suffix + "] = " + field + access + ";\n";
                        }
                        read += ")";
                    } else {
                        params.push_back("TensorView<" + ltype + "> " + lname);
                        read = lname + "[" + at + "]";
                        if (written) write_back += "    " + lname + "[" + at + "] = " + field + ";\n";
                    }
                    if (p.dir == lang::ParamDir::Out) read = ltype + "(0)";
                    entry_args.push_back(lname);
                } else if (written) {
                    throw_type_error(fn.name + "(): parameter '" + p.name + "' (" + type + ") is " +
                                     (p.dir == lang::ParamDir::Out ? "out" : "inout") + ": its field '" + leaf.name +
                                     "' takes a tensor, one element per call, which the call writes");
                } else {
                    // A number; one that carries no gradient is no_diff in the body.
                    params.push_back((diff && !leaf.diff ? "no_diff " : "") + ltype + " " + lname);
                    std::string passed = lname;
                    if (pass != CoopPass::Primal && leaf.diff) {
                        entry_setup += "    DifferentialPair<" + ltype + "> d" + lname + " = diffPair(" + lname + ", " +
                                       ltype + "(0));\n";
                        passed = "d" + lname;
                    }
                    entry_args.push_back(passed);
                }
                setup += "    " + value + leaf.access + " = " + read + ";\n";
            }
            args += (k ? ", " : "") + value;
            continue;
        }
        if ((form.tensors & (1u << k)) && p.type->is_struct()) {
            // A struct per call from a tensor: its fields' components in the last dimension, read
            // (and for an out or inout one written back) at the thread's coordinate; through a
            // DiffTensorView when a field carries a gradient (the others detached).
            lang::ScalarKind scalar = lang::ScalarKind::Float;
            struct_tensor_components(*fn.module, decl, k, &scalar);
            const std::vector<ViewResultLeaf> leaves = view_struct_leaves(*fn.module, decl, k);
            bool any_diff = false;
            for (const ViewResultLeaf& leaf : leaves) any_diff |= leaf.diff;
            param_type = std::string(any_diff ? "DiffTensorView<" : "TensorView<") + lang::scalar_name(scalar) + ">";
            value = "v" + name;
            setup += "    " + type + " " + value + ";\n";
            int offset = 0;
            for (const ViewResultLeaf& leaf : leaves) {
                const std::vector<std::pair<std::string, std::string>> parts = scalar_parts(leaf.type);
                const std::string ltype = lang::type_name(leaf.type), field = value + leaf.access;
                auto index = [&](size_t c) { return at + ", " + std::to_string(offset + int(c)); };
                std::string read = parts.size() > 1 ? ltype + "(" : "";
                for (size_t c = 0; c < parts.size(); ++c)
                    read += (c ? ", " : "") + (any_diff ? name + ".load(" + index(c) + ")" : name + "[" + index(c) + "]");
                if (parts.size() > 1) read += ")";
                if (any_diff && !leaf.diff) read = "detach(" + read + ")";
                if (p.dir == lang::ParamDir::Out) read = ltype + "(0)";
                setup += "    " + field + " = " + read + ";\n";
                if (p.dir != lang::ParamDir::In)
                    for (size_t c = 0; c < parts.size(); ++c) {
                        const std::string part = field + parts[c].second;
                        write_back += any_diff ? "    " + name + ".store(" + index(c) + ", " + part + ");\n"
                                               : "    " + name + "[" + index(c) + "] = " + part + ";\n";
                    }
                offset += int(parts.size());
            }
        } else if ((form.tensors & (1u << k)) && p.type->is_matrix()) {
            // A matrix per call: a view of its scalar with the rows and columns last (a
            // DiffTensorView when it carries a gradient), read and for out/inout written back.
            const bool through_diff = diff_element(decl, p);
            param_type = std::string(through_diff ? "DiffTensorView<" : "TensorView<") + lang::scalar_name(p.type->scalar) + ">";
            value = "v" + name;
            auto index = [&](int r, int c) { return at + ", " + std::to_string(r) + ", " + std::to_string(c); };
            std::string read = type + "(";
            for (int r = 0; r < p.type->rows; ++r)
                for (int c = 0; c < p.type->cols; ++c)
                    read += std::string(r || c ? ", " : "") +
                            (through_diff ? name + ".load(" + index(r, c) + ")" : name + "[" + index(r, c) + "]");
            read += ")";
            if (p.dir == lang::ParamDir::Out) read = type + "(0)";
            setup += "    " + type + " " + value + " = " + read + ";\n";
            if (p.dir != lang::ParamDir::In)
                for (int r = 0; r < p.type->rows; ++r)
                    for (int c = 0; c < p.type->cols; ++c) {
                        const std::string part = value + "[" + std::to_string(r) + "][" + std::to_string(c) + "]";
                        write_back += through_diff ? "    " + name + ".store(" + index(r, c) + ", " + part + ");\n"
                                                   : "    " + name + "[" + index(r, c) + "] = " + part + ";\n";
                    }
        } else if (form.tensors & (1u << k)) {
            // One element per call: read at the thread's coordinate (the view has the call's
            // extents; fn.map(x="half3"): of that type, converted); an out or inout one is written
            // back there after the call.
            const bool read = p.dir != lang::ParamDir::Out;
            const std::string v = "v" + name;
            const lang::Type* as = form.read_type(k) ? form.read_type(k) : p.type;
            if (diff_element(decl, p) && lang::is_floating(as->scalar)) {
                const std::string scalar = lang::scalar_name(as->scalar);
                param_type = "DiffTensorView<" + scalar + ">";
                if (!read) {
                    setup += "    " + type + " " + v + " = " + type + "(0);\n";
                } else if (p.type->is_vector()) {
                    setup += "    " + type + " " + v + " = " + type + "(";
                    for (int c = 0; c < p.type->rows; ++c)
                        setup += (c ? ", " : "") + (as == p.type ? std::string() : lang::scalar_name(p.type->scalar)) +
                                 (as == p.type ? "" : "(") + name + ".load(" + at + ", " + std::to_string(c) + ")" +
                                 (as == p.type ? "" : ")");
                    setup += ");\n";
                } else {
                    setup += "    " + type + " " + v + " = " + type + "(" + name + ".load(" + at + "));\n";
                }
                if (p.dir != lang::ParamDir::In) {
                    if (p.type->is_vector())
                        for (int c = 0; c < p.type->rows; ++c)
                            write_back += "    " + name + ".store(" + at + ", " + std::to_string(c) + ", " + v + "." +
                                          kXyzw[c] + ");\n";
                    else
                        write_back += "    " + name + ".store(" + at + ", " + v + ");\n";
                }
            } else {
                param_type = "TensorView<" + lang::type_name(as) + ">";
                setup += "    " + type + " " + v + " = " + type + "(" + (read ? name + "[" + at + "]" : "0") + ");\n";
                if (p.dir != lang::ParamDir::In) write_back += "    " + name + "[" + at + "] = " + v + ";\n";
            }
            value = v;
        } else if (form.grids & (1u << k)) {
            // A grid's coordinate: component c is call dimension rank-1-c (a grid extent of 1 is
            // broadcast: coordinate 0).
            const std::string comp = p.type->scalar == lang::ScalarKind::UInt32 ? "uint" : "int";
            const int rows = p.type->is_vector() ? p.type->rows : 1;
            std::string coord = type + "(";
            for (int c = 0; c < rows; ++c) {
                const std::string e = p.type->is_vector() ? name + "." + kXyzw[c] : name;
                coord += (c ? ", " : "") + comp + "(uint(" + e + ") == 1u ? 0u : __sg_c" +
                         std::to_string(form.rank - 1 - c) + ")";
            }
            setup += "    " + type + " g" + name + " = " + coord + ");\n";
            value = "g" + name;
        }
        params.push_back(param_type + " " + name);
        args += (k ? ", " : "") + value;
        std::string passed = name;
        if (pass != CoopPass::Primal && diff && is_differentiable_value(p) && !(form.tensors & (1u << k))) {
            // bwd_diff takes an inout pair, fwd_diff a pair: its derivative starts at zero and is dropped.
            entry_setup += "    DifferentialPair<" + type + "> d" + name + " = diffPair(" + name + ", " + type + "(0));\n";
            passed = "d" + name;
        }
        entry_args.push_back(passed);
    }
    std::string call = "    " + function + "(" + args + ");\n" + write_back;
    if (!leaves.empty()) {
        // One result per call, at the thread's coordinate (a single call writes element 0): each
        // leaf (the value, or each field of a struct) through a view of its own.
        call = "    " + lang::type_name(rt) + " __sg_value = " + function + "(" + args + ");\n" + write_back;
        for (size_t j = 0; j < leaves.size(); ++j) {
            const ViewResultLeaf& leaf = leaves[j];
            const lang::Type* t = leaf.type;
            const std::string view = leaves.size() == 1 && leaf.name.empty() ? "__sg_result" : "__sg_result" + std::to_string(j);
            const std::string value = "__sg_value" + leaf.access;
            const std::string scalar = lang::scalar_name(t->scalar);
            if (t->is_matrix()) {
                // A view of the scalar with the rows and columns last.
                params.push_back((leaf.diff ? "DiffTensorView<" : "TensorView<") + scalar + "> " + view);
                for (int row = 0; row < t->rows; ++row)
                    for (int col = 0; col < t->cols; ++col)
                        call += "    " + view + ".store(" + at + ", " + std::to_string(row) + ", " + std::to_string(col) +
                                ", " + value + "[" + std::to_string(row) + "][" + std::to_string(col) + "]);\n";
            } else if (leaf.diff) {
                // A DiffTensorView of the scalar (a vector's components last): its store's
                // backward takes the result's gradient.
                params.push_back("DiffTensorView<" + scalar + "> " + view);
                if (t->is_vector())
                    for (int c = 0; c < t->rows; ++c)
                        call += "    " + view + ".store(" + at + ", " + std::to_string(c) + ", " + value + "." + kXyzw[c] +
                                ");\n";
                else
                    call += "    " + view + ".store(" + at + ", " + value + ");\n";
            } else {
                params.push_back("TensorView<" + lang::type_name(t) + "> " + view);
                call += "    " + view + "[" + at + "] = " + value + ";\n";
            }
            entry_args.push_back(view);
        }
    }
    entry_params = params;
    params.push_back("uint __sg_t");
    entry_args.push_back("__sg_t");
    if (form.rank > 0) {
        for (const char* e : {"uint4 __sg_e0", "uint4 __sg_e1"}) {
            params.push_back(e);
            entry_params.push_back(e);
        }
        entry_args.push_back("__sg_e0");
        entry_args.push_back("__sg_e1");
    }
    auto join = [](const std::vector<std::string>& v) {
        std::string s;
        for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
        return s;
    };
    const std::string callee = pass == CoopPass::Primal ? body : std::string(what) + "_diff(" + body + ")";
    const std::string thread = form.rank > 0 ? "    uint __sg_t = cudaBlockIdx().x * cudaBlockDim().x + cudaThreadIdx().x;\n"
                                             : "    uint __sg_t = 0u;\n";
    glue.source = wrapper + std::string(diff ? "[Differentiable]\n" : "") + "void " + body + "(" + join(params) + ")\n{\n" +
                  setup + call + "}\n[CUDAKernel]\nvoid " + glue.entry + "(" + join(entry_params) + ")\n{\n" +
                  thread + entry_setup + "    " + callee + "(" + join(entry_args) + ");\n}\n";
    return glue;
}

}  // namespace sg::call
