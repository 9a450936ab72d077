// src/call/coop_launch.cpp — the launch of a [CUDAKernel] function, or of the glue of a function
// that takes views (view_call.cpp, view_call_glue.cpp): arguments checked against its
// parameters (TensorView: a tensor of the element's dtype on the launch's device, at most 8-D
// after a vector element's trailing dimension; scalars, vectors and matrices: numbers; for a
// function that takes views also per-element tensors, struct fields and results), the kernel
// compiled once per device and form, the parameter block packed (coop_pack.h; a TensorView
// field is a rank-8 view and its rank), and one launch through the device's backend.
#include "call/coop_launch.h"

#include <cstring>

#include "call/call_group.h"
#include "call/coop_pack.h"
#include "call/kernel_index.h"
#include "call/errors.h"
#include "call/global_bindings.h"
#include "call/kernel_faults.h"
#include "call/resolve.h"
#include "call/value_kind.h"
#include "lang/coop.h"

namespace sg::call {

namespace {

const lang::FunctionDecl* kernel_decl(const UserModule& module, const Callee& callee) {
    for (const lang::FunctionDecl* f : candidate_declarations(module, callee))
        if (lang::find_attribute(f->attrs, "CUDAKernel")) return f;
    return nullptr;
}

bool is_number(const ArgInfo& a) { return a.kind == ArgKind::Int || a.kind == ArgKind::Float || a.kind == ArgKind::Bool; }

/// Whether `arg` is a value of matrix type `t`: an sg matrix value (its components row-major), or
/// a list of rows of numbers.
bool matrix_value(const ArgInfo* all, const ArgInfo& arg, const lang::Type* t) {
    if (arg.kind == ArgKind::Value) return arg.child_count == t->rows * t->cols;
    if (arg.kind != ArgKind::List || arg.child_count != t->rows) return false;
    for (int r = 0; r < t->rows; ++r) {
        const ArgInfo& row = all[arg.first_child + r];
        if (row.kind != ArgKind::List || row.child_count != t->cols) return false;
        for (int c = 0; c < t->cols; ++c)
            if (!is_number(all[row.first_child + c])) return false;
    }
    return true;
}

/// The kernel of `fn` for a device and pass, compiled on first use.
/// A function that takes views without being a [CUDAKernel] function runs through glue that
/// calls it (view_call.cpp), in the form its call binds (grids, per-element tensors).
const CompiledKernel& kernel_for(FunctionState& fn, const lang::FunctionDecl& decl, DeviceType device, int index,
                                 CoopPass pass, bool view_function, const ViewCallForm& form) {
    // bits 0-11: device and pass; 12: a view function; 13-16: its call rank; 17-32: its grid
    // parameters; 33-48: its per-element tensor parameters (view_call.cpp: 16 at most)
    const int64_t slot = ((device == DeviceType::CUDA ? (index < 0 ? 0 : index) + 1 : 0) * 4 + int(pass)) |
                         (view_function ? int64_t(1) << 12 : 0) | (int64_t(form.rank & 15) << 13) |
                         (int64_t(form.grids & 0xffff) << 17) | (int64_t(form.tensors & 0xffff) << 33);
    // Struct parameters from dicts (which of their fields are tensors) and call groups (their
    // extents), in the key too.
    std::string struct_key;
    for (const auto& [p, mask] : form.structs) struct_key += std::to_string(p) + ":" + std::to_string(mask) + ";";
    if (!form.call_group.empty()) {
        struct_key += "groups";
        for (int g : form.call_group) struct_key += ":" + std::to_string(g);
    }
    if (form.fast_math) struct_key += ";fast";
    for (size_t p = 0; p < form.read_types.size(); ++p)
        if (form.read_types[p]) struct_key += ";read" + std::to_string(p) + ":" + lang::type_name(form.read_types[p]);
    if (struct_key.empty()) {
        auto it = fn.coop_kernels.find(slot);
        if (it != fn.coop_kernels.end()) return *it->second;
    } else {
        struct_key = std::to_string(slot) + ";" + struct_key;
        auto it = fn.view_struct_kernels.find(struct_key);
        if (it != fn.view_struct_kernels.end()) return *it->second;
    }
    Glue glue;  // the primal: no glue, the [CUDAKernel] function is the kernel
    glue.entry = decl.name;
    if (view_function) glue = view_call_glue(fn, decl, pass, form);
    else if (pass != CoopPass::Primal) glue = coop_derivative_glue(fn, decl, pass);
    codegen::CodegenOptions options;
    options.fast_math = form.fast_math;
    if (!form.call_group.empty()) {  // the glue runs as the blocks of the call's groups
        options.call_group_rank = form.rank;
        for (int d = 0; d < 8; ++d) options.call_group[d] = d < form.rank ? form.call_group[size_t(d)] : 1;
    }
    auto k = std::make_shared<CompiledKernel>(cached_kernel(*fn.module, glue, options, device, index));
    LaunchSite site;
    site.function = fn.name;
    const std::string& file = fn.module->name();
    site.file = file.find('.') == std::string::npos ? file + ".slang" : file;
    for (size_t p = 0; p < decl.params.size(); ++p) {  // a struct from a dict: a kernel parameter per field
        const std::string param = "parameter '" + decl.params[p]->name + "'";
        if (form.struct_tensors(p))
            for (const ViewResultLeaf& leaf : view_struct_leaves(*fn.module, decl, p))
                site.params.push_back(param + ", field '" + leaf.name + "'");
        else
            site.params.push_back(param);
    }
    k->site = register_launch_site(std::move(site));
    if (!struct_key.empty()) return *fn.view_struct_kernels.emplace(struct_key, std::move(k)).first->second;
    return *fn.coop_kernels.emplace(slot, std::move(k)).first->second;
}

}  // namespace

bool is_cooperative(const UserModule& module, const Callee& callee) { return kernel_decl(module, callee) != nullptr; }

namespace {

/// The [CUDAKernel] function, or the function that takes views (view_call.cpp), `fn` names.
const lang::FunctionDecl& require_kernel(const FunctionState& fn) {
    const lang::FunctionDecl* decl = kernel_decl(*fn.module, fn.callee);
    if (!decl) decl = view_function_decl(*fn.module, fn.callee);
    if (!decl)
        throw_type_error(fn.name + "() is not a [CUDAKernel] function: call it with its arguments (it runs once per "
                                   "element of the call), or mark it [CUDAKernel] to launch it");
    return *decl;
}

bool is_diff_view(const lang::Type* t) { return t->is_tensor() && t->tensor.view && t->tensor.has_grad; }

/// The argument of each parameter: by position, then by name. With `leaves` (the result of a
/// function that takes views: view_result_leaves), a keyword `_result` (a result that is no
/// struct) or `_result:<field>` (a struct's leaf) goes to `results` (the results to write, or
/// their gradient in its backward).
std::vector<const ArgInfo*> bind_arguments(const std::string& name, const lang::FunctionDecl& decl, const CallArgs& a,
                                           const std::vector<ViewResultLeaf>* leaves = nullptr,
                                           std::vector<const ArgInfo*>* results = nullptr) {
    const size_t n = decl.params.size();
    std::vector<const ArgInfo*> bound(n, nullptr);
    if (a.positional > n)
        throw_type_error(name + "() takes " + std::to_string(n) + " arguments, got " + std::to_string(a.positional));
    for (size_t k = 0; k < a.positional; ++k) bound[k] = &a.args[k];
    for (size_t k = a.positional; k < a.count; ++k) {
        const std::string& key = (*a.keywords)[k - a.positional];
        if (leaves && !leaves->empty() && key.compare(0, 7, "_result") == 0 && (key.size() == 7 || key[7] == ':')) {
            const std::string field = key.size() == 7 ? "" : key.substr(8);
            size_t j = 0;
            while (j < leaves->size() && (*leaves)[j].name != field) ++j;
            if (j == leaves->size())
                throw_type_error(name + "(): " + (field.empty() ? std::string("_result takes a tensor of a result that is "
                                                                              "no struct: give a struct's fields as "
                                                                              "_result:<field>")
                                                                : "the result has no field '" + field + "'"));
            (*results)[j] = &a.args[k];
            continue;
        }
        if (!key.empty() && key[0] == kGlobalMarker)  // fn.set() of a module global
            throw_type_error(name + "(): set() gives the module's global '" + key.substr(1) +
                             "' a value: globals of a launched function are not supported yet (pass the value as an "
                             "argument)");
        size_t p = 0;
        while (p < n && decl.params[p]->name != key) ++p;
        if (p == n) throw_type_error(name + "(): no parameter named '" + key + "'");
        if (bound[p]) throw_type_error(name + "(): parameter '" + key + "' is given twice");
        bound[p] = &a.args[k];
    }
    for (size_t p = 0; p < n; ++p)
        if (!bound[p]) throw_type_error(name + "(): parameter '" + decl.params[p]->name + "' has no argument");
    return bound;
}

}  // namespace

std::vector<CoopParam> coop_params(const FunctionState& fn) {
    std::vector<CoopParam> out;
    const lang::FunctionDecl& decl = require_kernel(fn);
    const bool view_function = !lang::find_attribute(decl.attrs, "CUDAKernel");
    for (size_t k = 0; k < decl.params.size(); ++k) {
        const lang::VarDecl* p = decl.params[k];
        using K = CoopParamKind;
        const bool in = p->dir == lang::ParamDir::In;
        const K value = view_function && p->type->is_struct()                         ? (in ? K::Struct : K::StructOut)
                        : !(view_function && view_element_is_differentiable(decl, k)) ? K::Value
                        : in                                                           ? K::DiffElement
                                                                                       : K::DiffElementOut;
        out.push_back({p->name, !p->type->is_tensor() ? value : is_diff_view(p->type) ? K::DiffTensorView : K::TensorView,
                       ""});
    }
    // A struct parameter's fields that carry a gradient (read per element from a tensor).
    for (size_t k = 0; view_function && k < decl.params.size(); ++k)
        if (decl.params[k]->type->is_struct())
            for (const ViewResultLeaf& leaf : view_struct_leaves(*fn.module, decl, k))
                if (leaf.diff) out.push_back({decl.params[k]->name + "." + leaf.name, CoopParamKind::StructField, ""});
    if (view_function)
        for (const ViewResultLeaf& leaf : view_result_leaves(*fn.module, decl))
            out.push_back({leaf.name.empty() ? "_result" : "_result:" + leaf.name, leaf.diff ? CoopParamKind::DiffResult : CoopParamKind::Result,
                           leaf.type->is_numeric() ? dtype_name(dtype_of(leaf.type->scalar)) : ""});
    return out;
}

bool coop_needs_autograd(const FunctionState& fn, const CallArgs& a) {
    const lang::FunctionDecl* decl = kernel_decl(*fn.module, fn.callee);
    if (!decl) decl = view_function_decl(*fn.module, fn.callee);
    if (!decl || !(decl->is_differentiable || lang::find_attribute(decl->attrs, "Differentiable"))) return false;
    const bool view_function = !lang::find_attribute(decl->attrs, "CUDAKernel");
    std::vector<const ArgInfo*> bound;
    const std::vector<ViewResultLeaf> leaves = view_function ? view_result_leaves(*fn.module, *decl)
                                                             : std::vector<ViewResultLeaf>{};
    std::vector<const ArgInfo*> results(leaves.size(), nullptr);
    try {
        bound = bind_arguments(fn.name, *decl, a, &leaves, &results);
    } catch (...) {
        return false;  // the launch reports it
    }
    for (size_t p = 0; p < bound.size(); ++p) {
        // A DiffTensorView, or (a function that takes views) a per-element differentiable value.
        const bool diff = is_diff_view(decl->params[p]->type) ||
                          (view_function && view_element_is_differentiable(*decl, p));
        if (diff && bound[p]->kind == ArgKind::Tensor && bound[p]->tensor.requires_grad) return true;
        if (view_function && decl->params[p]->type->is_struct() && bound[p]->kind == ArgKind::Tensor &&
            bound[p]->tensor.requires_grad) {
            // A struct from a tensor that requires grad, one of whose fields carries a gradient.
            for (const ViewResultLeaf& leaf : view_struct_leaves(*fn.module, *decl, p))
                if (leaf.diff) return true;
        }
        if (view_function && decl->params[p]->type->is_struct() && bound[p]->kind == ArgKind::Dict) {
            // A struct's field that carries a gradient, from a tensor that requires grad.
            std::vector<const ArgInfo*> fields;
            try {
                fields = struct_leaf_args(*fn.module, fn.name, *decl, p, a.args, *bound[p]);
            } catch (...) {
                return false;  // the launch reports it
            }
            const std::vector<ViewResultLeaf> leaves = view_struct_leaves(*fn.module, *decl, p);
            for (size_t j = 0; j < leaves.size(); ++j)
                if (leaves[j].diff && fields[j]->kind == ArgKind::Tensor && fields[j]->tensor.requires_grad) return true;
        }
    }
    return false;
}

LaunchShape thread_count_shape(const FunctionState& fn, int64_t threads) {
    if (threads <= 0)
        throw_value_error(fn.name + "(): _thread_count must be a positive number of threads, got " +
                          std::to_string(threads));
    LaunchShape s;
    s.block[0] = threads < 256 ? threads : 256;
    s.grid[0] = (threads + s.block[0] - 1) / s.block[0];
    s.thread_count = threads;
    return s;
}

namespace {
/// The result tensors of a launch (owned references, one per result leaf; null where given),
/// released if the launch throws.
struct ResultTensors {
    Host& host;
    std::vector<void*> objects;
    explicit ResultTensors(Host& h) : host(h) {}
    ~ResultTensors() {
        for (void* o : objects)
            if (o) host.release(o);
    }
    /// The first, the others appended to `more`.
    void* take(std::vector<void*>* more) {
        void* first = objects.empty() ? nullptr : objects[0];
        for (size_t j = 1; j < objects.size(); ++j) {
            if (more) more->push_back(objects[j]);
            else if (objects[j]) host.release(objects[j]);
        }
        objects.clear();
        return first;
    }
};
}  // namespace

void* launch_cooperative(Host& host, FunctionState& fn, const CallArgs& a, const LaunchShape& shape, CoopPass pass,
                         bool* single, std::vector<void*>* more, const CallModifiers* mods) {
    const lang::FunctionDecl* decl = &require_kernel(fn);
    const bool view_function = !lang::find_attribute(decl->attrs, "CUDAKernel");
    const std::string name = fn.name + (view_function ? (pass == CoopPass::Primal ? "" : ".bwds")
                                        : pass == CoopPass::Backward ? ".bwd" : pass == CoopPass::Forward ? ".fwd" : "");
    if (!view_function && shape.implicit)
        throw_type_error(name + "() is a [CUDAKernel] function: launch it with _thread_count=N");
    for (int d = 0; d < 3; ++d)
        if (shape.block[d] < 1 || shape.grid[d] < 1)
            throw_value_error(name + "(): blockSize and gridSize must be positive in every dimension, got blockSize=(" +
                              std::to_string(shape.block[0]) + ", " + std::to_string(shape.block[1]) + ", " +
                              std::to_string(shape.block[2]) + ") gridSize=(" + std::to_string(shape.grid[0]) + ", " +
                              std::to_string(shape.grid[1]) + ", " + std::to_string(shape.grid[2]) + ")");
    const int64_t threads_per_block = shape.block[0] * shape.block[1] * shape.block[2];
    if (threads_per_block > 1024)
        throw_value_error(name + "(): a block has at most 1024 threads, got " + std::to_string(threads_per_block));

    const size_t n = decl->params.size();
    // The result of a function that takes views: its leaves (the value, or a struct's fields),
    // and per leaf a given tensor (`_result=`: the results to write, or in a derivative pass their
    // gradient).
    const std::vector<ViewResultLeaf> leaves = view_function ? view_result_leaves(*fn.module, *decl)
                                                             : std::vector<ViewResultLeaf>{};
    const bool returns = !leaves.empty();
    std::vector<const ArgInfo*> given(leaves.size(), nullptr);
    const std::vector<const ArgInfo*> bound = bind_arguments(name, *decl, a, &leaves, &given);
    if (returns && a.result_index >= 0) {  // a `_result=` tensor
        if (leaves.size() != 1 || !leaves[0].name.empty())
            throw_type_error(name + "(): _result takes a tensor of a result that is no struct: give a struct's fields "
                                    "as _result:<field>");
        given[0] = &a.args[size_t(a.result_index)];
    }
    // A (values, gradient) pair of tensors: for a DiffTensorView, or (a function that takes views)
    // for a differentiable value read per element. The values bind as any argument, the gradient
    // is checked against them.
    std::vector<const ArgInfo*> grads(n, nullptr);
    std::vector<const ArgInfo*> values = bound;
    // A struct parameter read from a tensor: its components (0: not a struct), and whether a
    // field carries a gradient.
    std::vector<int> struct_components(n, 0);
    std::vector<bool> struct_diff(n, false);
    for (size_t p = 0; view_function && p < n; ++p) {
        if (!decl->params[p]->type->is_struct()) continue;
        lang::ScalarKind scalar = lang::ScalarKind::Float;
        struct_components[p] = struct_tensor_components(*fn.module, *decl, p, &scalar);
        for (const ViewResultLeaf& leaf : view_struct_leaves(*fn.module, *decl, p)) struct_diff[p] = struct_diff[p] || leaf.diff;
    }
    for (size_t p = 0; p < n; ++p) {
        const bool diff_element = view_function && (view_element_is_differentiable(*decl, p) || struct_diff[p]);
        if (!(is_diff_view(decl->params[p]->type) || diff_element) || bound[p]->kind != ArgKind::List) continue;
        const std::string what = name + "(): parameter '" + decl->params[p]->name + "' (" +
                                 lang::type_name(decl->params[p]->type) + ")";
        const ArgInfo& pair = *bound[p];
        const bool tensors = pair.child_count == 2 && a.args[pair.first_child].kind == ArgKind::Tensor &&
                             a.args[pair.first_child + 1].kind == ArgKind::Tensor;
        if (diff_element && !tensors) continue;  // a vector's components: a value
        if (!tensors) throw_type_error(what + " takes a tensor or a (values, gradient) pair of tensors");
        values[p] = &a.args[pair.first_child];
        grads[p] = &a.args[pair.first_child + 1];
        const TensorInfo& v = values[p]->tensor;
        const TensorInfo& g = grads[p]->tensor;
        // A DiffTensorView<half>'s gradient is float32 (Slang's `.diff.diff` is a TensorView<float>).
        const DType want = v.dtype == DType::Float16 ? DType::Float32 : v.dtype;
        if (g.dtype != want)
            throw_type_error(what + ": the gradient is a " + dtype_name(g.dtype) + " tensor, the values " +
                             dtype_name(v.dtype) + (want != v.dtype ? " (whose gradient is float32)" : ""));
        bool same = g.ndim == v.ndim;
        for (int d = 0; same && d < v.ndim; ++d) same = g.shape[d] == v.shape[d];
        if (!same) throw_value_error(what + ": the gradient's shape differs from the values'");
        if (g.device_type != v.device_type || g.device_index != v.device_index)
            throw_value_error(what + ": the gradient is on another device than the values");
    }
    // A function that takes views: sg.grid and tensor arguments give its threads (view_call.cpp).
    LaunchShape grid_shape = shape;
    ViewCallForm form;
    if (view_function) {
        form = view_call_form(*fn.module, name, *decl, values, a.args, shape, grid_shape, mods);
        form.fast_math = (mods && mods->fast_math) || fn.module_options.fast_math;
    } else {
        for (size_t p = 0; p < n; ++p)
            if (bound[p]->kind == ArgKind::Grid)
                throw_type_error(name + "(): parameter '" + decl->params[p]->name + "' (" +
                                 lang::type_name(decl->params[p]->type) +
                                 ") takes a number, got an sg.grid: a [CUDAKernel] function reads its thread's "
                                 "place from cudaThreadIdx() and cudaBlockIdx()");
    }
    DeviceType device = DeviceType::CPU;
    int device_index = -1;
    bool have_device = false;
    // A struct parameter from a dict: per field (leaf), its argument, and for a tensor (or a
    // (values, gradient) pair) the values and the gradient.
    struct StructArgs {
        std::vector<ViewResultLeaf> leaves;
        std::vector<const ArgInfo*> args, values, grads;
    };
    std::vector<StructArgs> structs(n);
    for (size_t p = 0; p < n; ++p) {
        const uint64_t* mask = form.struct_tensors(p);
        if (!mask) continue;
        StructArgs& st = structs[p];
        st.leaves = view_struct_leaves(*fn.module, *decl, p);
        st.args = struct_leaf_args(*fn.module, name, *decl, p, a.args, *values[p]);
        st.values.assign(st.leaves.size(), nullptr);
        st.grads.assign(st.leaves.size(), nullptr);
        for (size_t j = 0; j < st.leaves.size(); ++j) {
            const ArgInfo& arg = *st.args[j];
            const lang::Type* t = st.leaves[j].type;
            const std::string what = name + "(): parameter '" + decl->params[p]->name + "' (" +
                                     lang::type_name(decl->params[p]->type) + "): field '" + st.leaves[j].name + "' (" +
                                     lang::type_name(t) + ")";
            if (!(*mask & (uint64_t(1) << j))) {
                if (t->is_scalar() && !is_number(arg))
                    throw_type_error(what + " takes a number or a tensor, got " + arg_kind_name(arg.kind));
                if (t->is_vector() && !((arg.kind == ArgKind::Value || arg.kind == ArgKind::List) &&
                                        arg.child_count == t->rows))
                    throw_type_error(what + " takes a " + lang::type_name(t) + " value (" + std::to_string(t->rows) +
                                     " numbers) or a tensor, got " + arg_kind_name(arg.kind));
                if (t->is_matrix() && !matrix_value(a.args, arg, t))
                    throw_type_error(what + " takes a " + lang::type_name(t) + " value (" + std::to_string(t->rows) +
                                     " rows of " + std::to_string(t->cols) + " numbers) or a tensor, got " +
                                     arg_kind_name(arg.kind));
                continue;
            }
            st.values[j] = tensor_or_pair(a.args, arg);
            if (arg.kind == ArgKind::List) {
                st.grads[j] = &a.args[size_t(arg.first_child + 1)];
                if (!st.leaves[j].diff)
                    throw_type_error(what + " is given a (values, gradient) pair, but it carries no gradient");
            }
        }
    }
    // A tensor argument's dtype, element dimensions, rank and device.
    auto check_tensor = [&](const std::string& what, const ArgInfo& arg, const lang::Type* e, bool per_element) {
        if (arg.kind != ArgKind::Tensor) throw_type_error(what + " takes a tensor, got " + arg_kind_name(arg.kind));
        const DType want = dtype_of(e->scalar);
        if (arg.tensor.dtype != want)
            throw_type_error(what + " takes a " + dtype_name(want) + " tensor, got " + dtype_name(arg.tensor.dtype));
        const int components = e->is_vector() ? e->rows : 1;
        const int rank = arg.tensor.ndim - (components > 1 ? 1 : 0) - (e->is_matrix() ? 2 : 0);
        if (components > 1 && (arg.tensor.ndim == 0 || arg.tensor.shape[arg.tensor.ndim - 1] != components))
            throw_value_error(what + " takes a tensor whose last dimension holds the " + std::to_string(components) +
                              " components of an element");
        if (e->is_matrix() && (arg.tensor.ndim < 2 || arg.tensor.shape[arg.tensor.ndim - 2] != e->rows ||
                               arg.tensor.shape[arg.tensor.ndim - 1] != e->cols))
            throw_value_error(what + " takes a tensor whose last two dimensions hold the " + std::to_string(e->rows) +
                              " x " + std::to_string(e->cols) + " components of an element");
        if (rank > lang::kMaxViewRank || rank < 0)
            throw_value_error(what + " takes a tensor of at most " + std::to_string(lang::kMaxViewRank) +
                              " dimensions (besides a vector element's), got " + std::to_string(arg.tensor.ndim));
        const int element_dims = e->is_matrix() ? 2 : components > 1 ? 1 : 0;
        if (per_element && element_dims && form.rank + element_dims > lang::kMaxViewRank)
            throw_value_error(what + ": a " + (element_dims == 2 ? "matrix" : "vector") +
                              " read per element takes a call of at most " +
                              std::to_string(lang::kMaxViewRank - element_dims) + " dimensions, got " +
                              std::to_string(form.rank));
        if (arg.tensor.device_type != DeviceType::CPU && arg.tensor.device_type != DeviceType::CUDA)
            throw_value_error(what + ": tensors on this device are not supported");
        if (!have_device) {
            device = arg.tensor.device_type;
            device_index = arg.tensor.device_index;
            have_device = true;
        } else if (device != arg.tensor.device_type || device_index != arg.tensor.device_index) {
            throw_value_error(what + " is on another device than the earlier tensor arguments");
        }
    };
    for (size_t p = 0; p < n; ++p) {
        const lang::VarDecl* param = decl->params[p];
        const ArgInfo& arg = *values[p];
        const std::string what = name + "(): parameter '" + param->name + "' (" + lang::type_name(param->type) + ")";
        if (!structs[p].leaves.empty()) {
            for (size_t j = 0; j < structs[p].leaves.size(); ++j) {
                const ArgInfo* v = structs[p].values[j];
                if (!v) continue;
                const std::string field = what + ": field '" + structs[p].leaves[j].name + "' (" +
                                          lang::type_name(structs[p].leaves[j].type) + ")";
                check_tensor(field, *v, structs[p].leaves[j].type, true);
                if (const ArgInfo* g = structs[p].grads[j]) {
                    const DType want = v->tensor.dtype == DType::Float16 ? DType::Float32 : v->tensor.dtype;
                    bool same = g->tensor.dtype == want && g->tensor.ndim == v->tensor.ndim &&
                                g->tensor.device_type == v->tensor.device_type &&
                                g->tensor.device_index == v->tensor.device_index;
                    for (int d = 0; same && d < v->tensor.ndim; ++d) same = g->tensor.shape[d] == v->tensor.shape[d];
                    if (!same)
                        throw_value_error(field + ": the gradient differs from the values in dtype, shape or device");
                }
            }
            continue;
        }
        const bool per_element = form.tensors & (1u << p);  // a tensor, one element per call
        if (per_element && param->type->is_struct()) {  // its fields' components last (view_call.cpp checked them)
            lang::ScalarKind scalar = lang::ScalarKind::Float;
            struct_tensor_components(*fn.module, *decl, p, &scalar);
            check_tensor(what, arg, fn.module->types().scalar(scalar), false);
            continue;
        }
        if (param->type->is_tensor() || per_element) {
            const lang::Type* read = form.read_type(p) ? form.read_type(p) : param->type;  // fn.map(x="half3")
            check_tensor(what, arg, per_element ? read : param->type->element, per_element);
            continue;
        }
        const lang::Type* t = param->type;
        if (form.grids & (1u << p)) continue;  // its extents are written below
        if (t->is_scalar() && !is_number(arg))
            throw_type_error(what + " takes a number, got " + arg_kind_name(arg.kind));
        if (t->is_vector() && !(arg.kind == ArgKind::Value && arg.child_count == t->rows) &&
            !(arg.kind == ArgKind::List && arg.child_count == t->rows))
            throw_type_error(what + " takes a " + lang::type_name(t) + " value (" + std::to_string(t->rows) +
                             " numbers), got " + arg_kind_name(arg.kind));
        if (t->is_matrix()) {
            if (!matrix_value(a.args, arg, t))
                throw_type_error(what + " takes a " + lang::type_name(t) + " value (" + std::to_string(t->rows) + " rows of " +
                                 std::to_string(t->cols) + " numbers), got " + arg_kind_name(arg.kind));
            continue;
        }
        if (!t->is_scalar() && !t->is_vector())
            throw_type_error(what + ": only TensorView, scalar, vector and matrix parameters can be launched with yet");
    }
    if (!have_device) {
        device = fn.device;
        device_index = fn.device_index;
    }

    // The results of a function that takes views and returns a value: one per call per leaf
    // (view_call_glue.cpp), of the call's shape (a single call's: (1,)) and the leaf's element.
    std::vector<std::vector<int64_t>> result_shapes;
    for (size_t j = 0; j < leaves.size(); ++j) {
        const ViewResultLeaf& leaf = leaves[j];
        const lang::Type* t = leaf.type;
        const std::string what = name + "(): " + (leaf.name.empty() ? "_result" : "_result:" + leaf.name);
        std::vector<int64_t> rs(form.call_shape.begin(), form.call_shape.end());
        if (form.rank == 0) rs.push_back(1);  // one call: a view needs an index (returned 0-d)
        if (t->is_vector() || t->is_matrix()) rs.push_back(t->rows);
        if (t->is_matrix()) rs.push_back(t->cols);
        if (int(rs.size()) > kMaxTensorRank)
            throw_value_error(name + "(): its results would have more than " + std::to_string(kMaxTensorRank) +
                              " dimensions");
        if (pass != CoopPass::Primal && leaf.diff && !given[j])
            throw_type_error(name + "(): the gradient of the result" +
                             (leaf.name.empty() ? std::string() : "'s field '" + leaf.name + "'") +
                             " is missing (pass it as the last argument)");
        if (const ArgInfo* g = given[j]) {
            // A tensor of the results' shape (a single call's without its leading 1) and dtype.
            const DType want = pass != CoopPass::Primal && t->scalar == lang::ScalarKind::Half && leaf.diff
                                   ? DType::Float32 : dtype_of(t->scalar);
            if (g->kind != ArgKind::Tensor) throw_type_error(what + " takes a tensor, got " + arg_kind_name(g->kind));
            const TensorInfo& gt = g->tensor;
            if (gt.dtype != want)
                throw_type_error(what + " takes a " + dtype_name(want) + " tensor, got " + dtype_name(gt.dtype));
            const int skip = form.rank == 0 ? 1 : 0;
            bool same = size_t(gt.ndim) == rs.size() - size_t(skip);
            for (int d = 0; same && d < gt.ndim; ++d) same = gt.shape[d] == rs[size_t(d + skip)];
            if (!same)
                throw_value_error(what + " takes a tensor of shape " +
                                  shape_text(rs.data() + skip, int(rs.size()) - skip) + ", got " +
                                  shape_text(gt.shape, gt.ndim));
            if (gt.device_type != device || (device == DeviceType::CUDA && gt.device_index != device_index))
                throw_value_error(what + " is on another device than the call's tensors");
        }
        result_shapes.push_back(std::move(rs));
    }
    if (single) *single = returns && form.rank == 0;
    ResultTensors results(host);
    std::vector<TensorInfo> result_infos(leaves.size(), TensorInfo{});
    for (size_t j = 0; j < leaves.size(); ++j)
        results.objects.push_back(given[j] ? nullptr
                                           : host.empty(result_shapes[j].data(), int(result_shapes[j].size()),
                                                        dtype_of(leaves[j].type->scalar), device, device_index, false,
                                                        result_infos[j]));
    if (grid_shape.grid[0] == 0) return results.take(more);  // an empty call shape: no thread runs
    const CompiledKernel& k = kernel_for(fn, *decl, device, device_index, pass, view_function, form);
    const codegen::ParamLayout& layout = k.generated.layout;
    std::vector<uint8_t> block(layout.size, 0);
    codegen::CallHeader header{};
    for (int64_t& d : header.shape) d = 1;
    for (int d = 0; d < 3; ++d) {
        header.shape[d] = grid_shape.block[d];
        header.shape[3 + d] = grid_shape.grid[d];
    }
    header.shape[6] = grid_shape.thread_count;
    header.total = grid_shape.grid[0] * grid_shape.grid[1] * grid_shape.grid[2];
    header.rank = 7;
    std::memcpy(block.data(), &header, sizeof header);
    using Form = codegen::FieldShape::Form;
    ParamPacker pack{block, a.args};
    size_t next_field = 0;  // a struct from a dict has a field per leaf
    for (size_t p = 0; p < n; ++p) {
        if (!structs[p].leaves.empty()) {
            const StructArgs& st = structs[p];
            for (size_t j = 0; j < st.leaves.size(); ++j) {
                const codegen::ParamField& f = layout.fields[next_field++];
                if (!st.values[j]) {
                    pack.value(f, *st.args[j]);
                    continue;
                }
                const TensorInfo t = expanded(st.values[j]->tensor, element_dims_of(*st.leaves[j].type), form.call_shape);
                const int rank = pack.view(f, t);
                if (f.tensor.grad_view && st.grads[j])
                    pack.grad(f, t, expanded(st.grads[j]->tensor, element_dims_of(*st.leaves[j].type), form.call_shape), rank);
            }
            continue;
        }
        const codegen::ParamField& f = layout.fields[next_field++];
        const ArgInfo& arg = *values[p];
        if (form.grids & (1u << p)) {  // a grid's extents, the last (fastest) dimension in .x
            const int rank = arg.tensor.ndim;
            for (int c = 0; c < rank; ++c) {
                ArgInfo extent;
                extent.kind = ArgKind::Int;
                extent.integer = arg.tensor.shape[rank - 1 - c];
                write_scalar(block.data() + f.offset + size_t(c) * size_t(lang::scalar_bits(f.shape.scalar) / 8),
                             f.shape.scalar, extent);
            }
            continue;
        }
        if (f.shape.form != Form::Tensor) {
            pack.value(f, arg);
            continue;
        }
        // A per-element tensor: a view with the call's extents (its components last), a broadcast
        // dimension of stride 0.
        const bool per_element = form.tensors & (1u << p);
        const std::vector<int>* map = p < form.dim_maps.size() && !form.dim_maps[p].empty() ? &form.dim_maps[p] : nullptr;
        const int element_dims = struct_components[p] ? 1 : element_dims_of(*decl->params[p]->type);
        const TensorInfo t = per_element ? expanded(arg.tensor, element_dims, form.call_shape, map) : arg.tensor;
        const int rank = pack.view(f, t);
        if (f.tensor.grad_view && grads[p])  // the gradient's record, laid out as the values'
            pack.grad(f, t, per_element ? expanded(grads[p]->tensor, element_dims, form.call_shape, map)
                                        : grads[p]->tensor, rank);
    }
    // A function that takes views and returns a value: its results, one view per leaf.
    for (size_t j = 0; j < leaves.size(); ++j) {
        TensorInfo info{};
        if (given[j]) {  // the given tensor (a single call's gets its leading 1 back)
            info = given[j]->tensor;
            if (form.rank == 0) {
                for (int d = info.ndim; d > 0; --d) {
                    info.shape[d] = info.shape[d - 1];
                    info.strides[d] = info.strides[d - 1];
                }
                info.shape[0] = 1;
                info.strides[0] = 0;
                ++info.ndim;
            }
        } else {
            info = result_infos[j];
        }
        const codegen::ParamField& f = layout.fields[next_field + j];
        pack.view(f, info);
        if (f.tensor.grad_view && pass != CoopPass::Primal) {
            // A derivative pass: the given tensor is the results' gradient (the values are not read).
            const size_t off = f.tensor.grad_view - f.tensor.data;
            const size_t record = f.tensor.view_rank + sizeof(int64_t) - f.tensor.data;
            std::memmove(block.data() + f.tensor.data + off, block.data() + f.tensor.data, record);
        }
    }
    if (form.rank > 0) {  // the call's extents (dimension 0 first), two uint4 after the parameters
        const size_t first = next_field + leaves.size();
        for (int d = 0; d < 8; ++d) {
            const uint32_t e = d < form.rank ? uint32_t(form.call_shape[size_t(d)]) : 1u;
            std::memcpy(block.data() + layout.fields[first + size_t(d / 4)].offset + size_t(d % 4) * 4, &e, 4);
        }
    }
    const runtime::Backend& backend = runtime::backend(device);
    runtime::LaunchRequest r;
    r.kernel = k.loaded.get();
    r.block = block.data();
    r.block_size = block.size();
    r.total = header.total;
    r.stream = host.current_stream(device, device_index);
    r.site = k.site;
    r.wait = debug_mode();
    for (int d = 0; d < 3; ++d) {
        r.coop_block[d] = grid_shape.block[d];
        r.coop_grid[d] = grid_shape.grid[d];
    }
    if (!form.call_group.empty()) {
        // In call groups the header holds the call's shape (the entry cuts it into groups), and
        // the launch is the groups' blocks (call_group.cpp).
        codegen::CallHeader grouped{};
        for (int64_t& d : grouped.shape) d = 1;
        for (int d = 0; d < form.rank; ++d) grouped.shape[d] = form.call_shape[size_t(d)];
        grouped.rank = form.rank;
        grouped.total = header.total;
        call_group_launch(k, grouped, r);
        grouped.total = r.total;
        std::memcpy(block.data(), &grouped, sizeof grouped);
    }
    const runtime::LaunchResult result = backend.launch(r);
    if (result.origin != runtime::FaultOrigin::None) [[unlikely]]
        raise_launch_fault(result, backend);
    return results.take(more);
}

}  // namespace sg::call
