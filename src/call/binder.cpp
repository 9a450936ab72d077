// src/call/binder.cpp — argument-to-parameter binding and call-shape rules. How each kind of
// value binds is the marshalling table's (value_kind.cpp); here: matching arguments to
// parameters, recursion into composites, results, the call rank and broadcasting.
#include "call/binder.h"

#include <algorithm>

#include "call/errors.h"
#include "call/global_bindings.h"
#include "call/value_kind.h"

namespace sg::call {

using lang::ScalarKind;
using lang::Type;

bool element_shape(const Type* t, std::vector<int64_t>& shape, ScalarKind& scalar) {
    switch (t->kind) {
    case lang::TypeKind::Scalar: scalar = t->scalar; return true;
    case lang::TypeKind::Vector:
        shape.push_back(t->rows);
        scalar = t->scalar;
        return true;
    case lang::TypeKind::Matrix:
        shape.push_back(t->rows);
        shape.push_back(t->cols);
        scalar = t->scalar;
        return true;
    case lang::TypeKind::Array:
        shape.push_back(t->count);
        return element_shape(t->element, shape, scalar);
    default: return false;
    }
}

const Type* array_inner(const Type* t, std::vector<int64_t>* counts) {
    while (t->is_array()) {
        if (counts) counts->push_back(t->count);
        t = t->element;
    }
    return t;
}

const char* grad_strategy_name(GradStrategy s) {
    switch (s) {
    case GradStrategy::None: return "none";
    case GradStrategy::Store: return "store";
    case GradStrategy::Reduce: return "reduce";
    case GradStrategy::Atomic: return "atomic";
    case GradStrategy::Collide: return "collide";
    }
    return "?";
}

GradStrategy grad_strategy(const ParamBinding& p) {
    if (!p.differentiable || p.dir != lang::ParamDir::In) return GradStrategy::None;
    if (p.kind == BindingKind::WholeTensor) return GradStrategy::Collide;
    if (p.kind != BindingKind::Elementwise) return GradStrategy::None;
    if (!p.grad_atomic) return GradStrategy::Store;
    // Every thread writes the same element only when no call dim of the view varies; register
    // accumulation covers scalar and vector elements (an array or matrix element has too many
    // components to keep per thread: atomics).
    bool all = true;
    for (bool x : p.broadcast) all = all && x;
    const bool small_element = p.array_dims == 0 && (p.type->is_scalar() || p.type->is_vector());
    return all && small_element ? GradStrategy::Reduce : GradStrategy::Atomic;
}

namespace {

/// Nesting limit for composite arguments and struct results (a self-referencing list cannot
/// reach here: the describer stops at the same depth).
constexpr int kMaxValueDepth = 16;

class Binder final : public BindContext {
public:
    Binder(Binding& b, const CallModifiers& mods) : b_(b), mods_(mods) {}

    ValueNode bind(const BindRequest& r) {
        if (++depth_ > kMaxValueDepth) throw_value_error(r.where(*this) + ": the value is nested too deeply");
        request_ = &r;
        ValueNode node = value_kind(args[r.arg].kind).bind(*this, r);
        --depth_;
        return node;
    }

    /// `access` of a struct's field as the Differential spells it: a field with a
    /// [DerivativeMember] has its derivative under that name.
    std::string differential_access(const Type* parent, const std::string& access) const {
        if (!module || !parent || !parent->is_struct() || access.size() < 2 || access[0] != '.') return access;
        for (const lang::FieldInfo& f : module->types().fields(parent))
            if (f.name == access.substr(1) && !f.differential_name.empty()) return "." + f.differential_name;
        return access;
    }

    ValueNode bind_child(int arg, const Type* type, const std::string& access, const std::string& name,
                         bool differentiable) override {
        const BindRequest& parent = *request_;
        BindRequest r;
        r.arg = arg;
        r.type = type;
        r.dir = parent.dir;
        r.differentiable = differentiable;
        r.name = name;
        r.diff_path = parent.diff_path + differential_access(parent.type, access);
        r.param = parent.param;
        r.global = parent.global;
        ValueNode node = bind(r);
        request_ = &parent;
        node.access = access;
        return node;
    }

    ValueNode add_leaf(ParamBinding pb) override {
        const BindRequest& r = *request_;
        pb.param = r.param;
        pb.arg = r.arg;
        pb.name = r.name;
        pb.type = r.type;
        pb.dir = r.dir;
        pb.diff_path = r.diff_path;
        pb.arg_kind = args[r.arg].kind;
        const std::string& base = b_.slots[size_t(r.param)].name;
        pb.ident = r.diff_path.empty() ? base : base + "_" + std::to_string(leaves_in_param_++);
        if (size_t(r.param) < mods_.dim_maps.size() && !mods_.dim_maps[size_t(r.param)].empty()) {
            // fn.map(): the argument's dims go to the named call dims, not right-aligned.
            const std::vector<int>& map = mods_.dim_maps[size_t(r.param)];
            if (pb.kind != BindingKind::Elementwise && pb.kind != BindingKind::Grid)
                throw_type_error(r.where(*this) + ": map() applies to tensors and grids, not to " +
                                 value_kind(pb.arg_kind).describe(args[r.arg]));
            if (int(map.size()) != pb.call_dims)
                throw_value_error(r.where(*this) + ": map() names " + std::to_string(map.size()) + " dimension" +
                                  (map.size() == 1 ? "" : "s") + " but the argument has " + std::to_string(pb.call_dims) +
                                  " call dimension" + (pb.call_dims == 1 ? "" : "s"));
            int rank = 0;
            for (size_t i = 0; i < map.size(); ++i) {
                if (map[i] < 0 || map[i] >= 8) throw_value_error(r.where(*this) + ": map() dimension out of range");
                for (size_t j = 0; j < i; ++j)
                    if (map[j] == map[i]) throw_value_error(r.where(*this) + ": map() names a call dimension twice");
                rank = std::max(rank, map[i] + 1);
            }
            pb.dim_map = map;
            pb.call_dims = rank;  // at least; the whole call once its rank is known (bind_call)
        }
        if (pb.kind == BindingKind::Elementwise) {
            std::vector<int64_t> counts;
            array_inner(r.type, &counts);
            pb.array_dims = int(counts.size());
            if (pb.array_dims && !pb.dim_map.empty())
                throw_type_error(r.where(*this) + ": map() of an array-typed argument is not supported yet");
        }
        if (pb.call_dims + pb.elem_dims > 8) throw_value_error(r.where(*this) + ": more than 8 tensor dimensions");
        b_.params.push_back(std::move(pb));
        ValueNode node;
        node.type = r.type;
        node.leaf = int(b_.params.size()) - 1;
        return node;
    }

    void start_param() { leaves_in_param_ = 0; }

private:
    Binding& b_;
    const CallModifiers& mods_;
    const BindRequest* request_ = nullptr;
    int depth_ = 0;
    int leaves_in_param_ = 0;
};

/// The result's leaves: the whole value when a tensor can hold it, else one per struct field.
void result_leaves(const UserModule& module, const std::string& function, const Type* t, const std::string& path,
                   const std::string& diff_path, std::vector<std::string>& keys, std::vector<ResultLeaf>& out, int depth,
                   bool differentiable) {
    if (depth > kMaxValueDepth) throw_type_error(function + "(): the result type is nested too deeply");
    ResultLeaf leaf;
    if (element_shape(t, leaf.elem_shape, leaf.scalar)) {
        std::vector<int64_t> counts;
        array_inner(t, &counts);
        leaf.array_dims = int(counts.size());
        leaf.path = path;
        leaf.diff_path = diff_path;
        leaf.keys = keys;
        leaf.differentiable = differentiable && lang::is_floating(leaf.scalar);
        leaf.type = t;
        out.push_back(std::move(leaf));
        return;
    }
    if (!t->is_struct())
        throw_type_error(function + "(): returning " + lang::type_name(t) + " to Python is not supported yet");
    for (const lang::FieldInfo& f : module.types().fields(t)) {
        keys.push_back(f.name);
        // A field's derivative may live under another name in the Differential ([DerivativeMember]).
        const std::string& d = f.differential_name.empty() ? f.name : f.differential_name;
        result_leaves(module, function, f.type, path + "." + f.name, diff_path + "." + d, keys, out, depth + 1,
                      differentiable && !f.no_diff);
        keys.pop_back();
    }
}

/// Whether a value read as `from` converts to a parameter of type `to` in the glue: the same
/// type, or numeric types of the same shape (a scalar splats to a vector or matrix).
bool map_converts(const Type* from, const Type* to) {
    if (from == to) return true;
    if (!from->is_numeric() || !to->is_numeric()) return false;
    if (from->is_scalar()) return true;
    return from->kind == to->kind && from->rows == to->rows && (!from->is_matrix() || from->cols == to->cols);
}

}  // namespace

const Type* mapped_type(UserModule& module, const std::string& name) {
    std::string base = name;
    std::vector<int64_t> counts;
    while (!base.empty() && base.back() == ']') {
        size_t open = base.rfind('[');
        if (open == std::string::npos || open + 1 >= base.size() - 1) return nullptr;
        std::string digits = base.substr(open + 1, base.size() - open - 2);
        if (digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return nullptr;
        int64_t n = std::stoll(digits);
        if (n <= 0) return nullptr;
        counts.insert(counts.begin(), n);
        base = base.substr(0, open);
        while (!base.empty() && base.back() == ' ') base.pop_back();
    }
    const Type* t = module.named_type(base);
    if (!t || t->is_void()) return nullptr;
    // float[3][2]: an array of 3 arrays of 2.
    for (size_t k = counts.size(); k-- > 0;) t = module.types().array(t, counts[k]);
    return t;
}

std::vector<int> match_arguments(const lang::FunctionDecl* fn, const std::string& function, size_t positional,
                                 const std::vector<std::string>& keyword_names) {
    const size_t nparams = fn->params.size();
    std::vector<int> arg_of(nparams, -1);
    if (positional > nparams)
        throw_type_error(function + "() takes " + std::to_string(nparams) + " argument" + (nparams == 1 ? "" : "s") + " but " +
                         std::to_string(positional) + " were given (Too many arguments: expected " + std::to_string(nparams) +
                         ", got " + std::to_string(positional) + ")");
    for (size_t i = 0; i < positional; ++i) arg_of[i] = int(i);
    for (size_t k = 0; k < keyword_names.size(); ++k) {
        const std::string& kw = keyword_names[k];
        auto it = std::find_if(fn->params.begin(), fn->params.end(), [&](lang::VarDecl* p) { return p->name == kw; });
        if (it == fn->params.end()) {
            std::string names;
            for (const lang::VarDecl* q : fn->params) names += (names.empty() ? "" : ", ") + q->name;
            throw_type_error(function + "() got an unexpected keyword argument '" + kw + "' (No parameter named '" + kw +
                             "'; its parameters: " + (names.empty() ? "none" : names) + ")");
        }
        size_t p = size_t(it - fn->params.begin());
        if (arg_of[p] >= 0)
            throw_type_error(function + "() got multiple values for argument '" + kw + "' (Parameter '" + kw +
                             "' specified multiple times)");
        arg_of[p] = int(positional + k);
    }
    for (size_t p = 0; p < nparams; ++p)
        if (arg_of[p] < 0 && !fn->params[p]->default_value)
            throw_type_error(function + "() missing required argument '" + fn->params[p]->name + "' (Parameter '" +
                             fn->params[p]->name + "' not specified)");
    return arg_of;
}

bool param_would_differentiate(const UserModule& module, const lang::VarDecl& param) {
    return !param.is_no_diff && (lang::param_is_differentiable(module.types(), param) ||
                                 (param.type->is_tensor() && param.type->tensor.differentiable));
}

Binding bind_declaration(const UserModule& module, lang::FunctionDecl* fn, const ArgInfo* args, size_t positional,
                         const std::vector<std::string>& keyword_names, bool grad_mode, DeviceType device,
                         const CallModifiers& modifiers, int result_arg) {
    const std::string& function = fn->name;
    Binding b;
    b.function = function;
    b.decl = fn;
    b.device = device;
    const size_t nparams = fn->params.size();
    std::vector<int> arg_of = match_arguments(fn, function, positional, parameter_keywords(keyword_names));

    Binder binder(b, modifiers);
    binder.module = &module;
    binder.function = &b.function;
    binder.args = args;
    binder.grad_mode = grad_mode;
    binder.device = device;
    for (size_t p = 0; p < nparams; ++p) {
        lang::VarDecl* param = fn->params[p];
        if (param->type->is_tensor() && param->type->tensor.view) [[unlikely]]
            throw_type_error(function + "(): parameter '" + param->name + "' is a " + lang::type_name(param->type) +
                             ": TensorView parameters belong to [CUDAKernel] functions, which are launched (a "
                             "function called per element takes Tensor<T, N>, RWTensor<T, N> or StructuredBuffer<T>)");
        ParamSlot slot;
        slot.name = param->name;
        slot.type = param->type;
        slot.dir = param->dir;
        // Differentiable tensors carry their gradient in a buffer; other values in pairs.
        slot.differentiable = fn->is_differentiable && param_would_differentiate(module, *param);
        slot.read_type = param->type;
        if (arg_of[p] < 0) {
            // Left out: the kernel passes the parameter's default (glue.cpp).
            bool mapped = (p < modifiers.type_maps.size() && !modifiers.type_maps[p].empty()) ||
                          (p < modifiers.dim_maps.size() && !modifiers.dim_maps[p].empty());
            if (mapped)
                throw_type_error(function + "(): map() names parameter '" + param->name +
                                 "', which the call leaves to its default value");
            slot.defaulted = true;
            b.slots.push_back(slot);
            continue;
        }
        if (p < modifiers.type_maps.size() && !modifiers.type_maps[p].empty()) {
            // fn.map(a="float3"): the argument is read as that type, then converted.
            const std::string& name = modifiers.type_maps[p];
            const Type* t = mapped_type(const_cast<UserModule&>(module), name);
            std::string where = function + "(): parameter '" + param->name + "' of type " + lang::type_name(param->type);
            if (!t) throw_type_error(where + ": map() names '" + name + "', which is no type of the module");
            if (!map_converts(t, param->type))
                throw_type_error(where + ": map() reads it as " + lang::type_name(t) + ", which does not convert to " +
                                 lang::type_name(param->type));
            if (t != param->type && param->dir != lang::ParamDir::In)
                throw_type_error(where + ": map() to another type (" + lang::type_name(t) +
                                 ") of an out/inout parameter is not supported yet");
            slot.read_type = t;
        }
        b.slots.push_back(slot);
        BindRequest r;
        r.arg = arg_of[p];
        r.type = slot.read_type;
        r.dir = param->dir;
        r.differentiable = slot.differentiable;
        r.name = param->name;
        r.param = int(p);
        binder.start_param();
        b.slots.back().value = binder.bind(r);
    }
    // The globals it uses (global_bindings.h): slots after the parameters, no gradient.
    for (const GlobalValue& g : match_globals(*fn, function, positional, keyword_names)) {
        ParamSlot slot;
        slot.name = "__global_" + g.global->name;
        slot.global = g.global->name;
        slot.type = slot.read_type = g.global->type;
        b.slots.push_back(slot);
        BindRequest r;
        r.arg = g.arg;
        r.type = slot.type;
        r.name = g.global->name;
        r.param = int(b.slots.size()) - 1;
        r.global = true;
        binder.start_param();
        b.slots.back().value = binder.bind(r);
    }
    check_global_values(b, args, nparams);
    for (const ParamBinding& pb : b.params) {
        b.call_rank = std::max(b.call_rank, pb.call_dims);
        b.autograd |= pb.requires_grad;
        if (const Generator* g = value_kind(pb.arg_kind).generator) b.uses_call_extents |= g->reads_call_extents;
    }
    // fn.map() names absolute call dims: a mapped leaf's view spans the whole call.
    for (ParamBinding& pb : b.params)
        if (!pb.dim_map.empty()) pb.call_dims = b.call_rank;
    if (modifiers.strict_broadcasting)
        for (const ParamBinding& pb : b.params)
            if (pb.call_dims > 0 && pb.call_dims < b.call_rank && pb.dim_map.empty())
                throw_value_error(function + "(): parameter '" + pb.name + "' has " + std::to_string(pb.call_dims) +
                                  " call dimension" + (pb.call_dims == 1 ? "" : "s") + " but the call has " +
                                  std::to_string(b.call_rank) +
                                  " (strict_broadcasting forbids implicit rank padding; Strict broadcasting is enabled)");
    b.device_index = binder.device_index == -2 ? (device == DeviceType::CPU ? -1 : 0) : binder.device_index;
    b.result_type = fn->result_type;
    if (!b.result_type->is_void()) {
        std::vector<std::string> keys;
        result_leaves(module, function, b.result_type, "", "", keys, b.result_leaves, 0, !fn->return_no_diff);
        b.result_elem_dims = int(b.result_leaves[0].elem_shape.size());
    }
    if (result_arg >= 0) {
        // A `_result=` tensor is written at the call index: its leading dims are call dims.
        const TensorInfo& t = args[result_arg].tensor;
        if (b.result_leaves.size() != 1) throw_type_error(function + "(): _result= cannot take a struct or void result");
        const ResultLeaf& leaf = b.result_leaves[0];
        int e = int(leaf.elem_shape.size());
        if (t.ndim < e || !std::equal(leaf.elem_shape.begin(), leaf.elem_shape.end(), t.shape + t.ndim - e))
            throw_value_error(function + "(): _result= needs a tensor whose last dims are " +
                              shape_text(leaf.elem_shape.data(), e) + " (the result is " + lang::type_name(leaf.type) +
                              "), got shape " + shape_text(t.shape, t.ndim));
        if (t.dtype != dtype_of(leaf.scalar))
            throw_type_error(function + "(): _result= needs " + with_article(dtype_name(dtype_of(leaf.scalar))) +
                             " tensor, got " + with_article(dtype_name(t.dtype)) + " tensor");
        if (t.device_type != device) throw_value_error(function + "(): _result= is on another device than the module");
        b.result_arg = result_arg;
        b.result_call_dims = t.ndim - e;
        b.call_rank = std::max(b.call_rank, b.result_call_dims);
    }
    // Broadcast flags from this call's shapes (the key fixes which extents are 1).
    int64_t shape[8];
    compute_call_shape(b, args, shape);
    for (ParamBinding& pb : b.params) {
        const ArgInfo& a = args[pb.arg];
        pb.broadcast.assign(size_t(pb.call_dims), false);
        if (pb.kind == BindingKind::WholeTensor && pb.call_dims > 0) {
            // A batch of tensors: a broadcast slice is shared by several threads.
            bool shared = pb.call_dims < b.call_rank;
            for (int d = 0; d < pb.call_dims; ++d) {
                int call_dim = b.call_rank - pb.call_dims + d;
                pb.broadcast[size_t(d)] = a.tensor.shape[d] == 1 && shape[call_dim] != 1;
                shared |= pb.broadcast[size_t(d)];
            }
            if (pb.is_output && shared)
                throw_value_error(function + "(): writable tensor parameter '" + pb.name +
                                  "' is broadcast over the call; every thread would write the same slice");
            continue;
        }
        if (pb.kind != BindingKind::Elementwise) continue;
        bool shared = false;
        if (pb.dim_map.empty()) {
            for (int d = 0; d < pb.call_dims; ++d) {
                int call_dim = b.call_rank - pb.call_dims + d;
                pb.broadcast[size_t(d)] = a.tensor.shape[d] == 1 && shape[call_dim] != 1;
            }
            // Rank padding (over call extents other than 1) or an extent-1 dim makes several
            // threads share an element.
            for (int d = 0; d < b.call_rank - pb.call_dims; ++d) shared |= shape[d] != 1;
        } else {
            // A mapped view spans call dims [0, call_dims): unmapped ones are broadcast.
            for (int d = 0; d < pb.call_dims; ++d) {
                auto it = std::find(pb.dim_map.begin(), pb.dim_map.end(), d);
                int64_t extent = it == pb.dim_map.end() ? 1 : a.tensor.shape[it - pb.dim_map.begin()];
                int call_dim = b.call_rank - pb.call_dims + d;
                pb.broadcast[size_t(d)] = extent == 1 && shape[call_dim] != 1;
            }
            shared = pb.call_dims < b.call_rank;
        }
        for (bool x : pb.broadcast) shared |= x;
        pb.grad_atomic = shared;
        pb.grad_strategy = grad_strategy(pb);
        if (pb.is_output && shared)
            throw_value_error(function + "(): out parameter '" + pb.name + "' is broadcast; every thread would write the same element");
    }
    for (ParamBinding& pb : b.params)
        if (pb.kind == BindingKind::WholeTensor) pb.grad_strategy = grad_strategy(pb);
    b.writes_tensors = b.result_arg >= 0;
    for (const ParamBinding& pb : b.params) b.writes_tensors |= pb.is_output && pb.arg_kind == ArgKind::Tensor;
    b.deterministic = modifiers.deterministic;
    b.fast_math = modifiers.fast_math;
    if (grad_mode && !b.autograd && fn->is_differentiable && !lang::differentiates_forward_only(*fn))
        // As SlangPy does, a call of a differentiable function that gets any tensor requiring grad
        // is part of the graph, whatever parameter binds it: a read-only or no_diff one gets no
        // gradient (None), but the result has a grad_fn.
        for (const ParamBinding& pb : b.params)
            b.autograd |= pb.arg_kind == ArgKind::Tensor && !pb.is_output && args[pb.arg].tensor.requires_grad &&
                          size_t(pb.param) < nparams;  // a global holds no gradient
    b.autograd = b.autograd && fn->is_differentiable;
    if (b.autograd && lang::differentiates_forward_only(*fn))
        // A forward-only function has no backward derivative for torch autograd to call.
        throw_type_error(function + "() is forward-only differentiable ([ForwardDifferentiable] or only a "
                                    "[ForwardDerivative]): torch autograd and fn.bwds need a backward derivative; "
                                    "make it [Differentiable], or call it under torch.no_grad() or with inputs that "
                                    "do not require grad");
    if (grad_mode && !fn->is_differentiable)
        // A tensor that requires grad reaches a parameter [Differentiable] would differentiate:
        // the call warns once per function (invoke.cpp), decided here once per plan.
        for (const ParamBinding& pb : b.params)
            if (pb.arg_kind == ArgKind::Tensor && args[pb.arg].tensor.requires_grad && size_t(pb.param) < nparams &&
                (!pb.is_output || pb.dir == lang::ParamDir::InOut) &&
                param_would_differentiate(module, *fn->params[size_t(pb.param)])) {
                b.undifferentiated_param = pb.name;
                break;
            }
    if (b.autograd)
        for (const ParamBinding& pb : b.params)
            if (pb.kind == BindingKind::WholeTensor && pb.differentiable &&
                pb.type->tensor.access == lang::TensorAccess::ReadWrite)
                // One gradient view cannot hold both the incoming gradient of the new values and
                // the outgoing one of the old values.
                throw_type_error(function + "(): gradients through read-write tensor parameter '" + pb.name + "' (" +
                                 lang::type_name(pb.type) +
                                 ") are not supported yet; read through an IDiffTensor and write through an "
                                 "IWDiffTensor, or call it under torch.no_grad()");
    return b;
}

/// The extent of call dim `d` (of the leaf's `call_dims`) that leaf `pb` gives: right-aligned
/// argument dims, or those fn.map() sent there (1 where none goes).
static int64_t leaf_extent(const ParamBinding& pb, const ArgInfo& a, int d) {
    if (pb.dim_map.empty()) return a.tensor.shape[d];
    for (size_t i = 0; i < pb.dim_map.size(); ++i)
        if (pb.dim_map[i] == d) return a.tensor.shape[i];
    return 1;
}

void compute_call_shape(const Binding& b, const ArgInfo* args, int64_t* shape) {
    const int rank = b.call_rank;
    for (int d = 0; d < rank; ++d) shape[d] = 1;
    for (const ParamBinding& pb : b.params) {
        if (pb.call_dims == 0) continue;
        const ArgInfo& a = args[pb.arg];
        for (int d = 0; d < pb.call_dims; ++d) {
            int call_dim = rank - pb.call_dims + d;
            int64_t e = leaf_extent(pb, a, d);
            if (e == shape[call_dim] || e == 1) continue;
            if (shape[call_dim] == 1) {
                shape[call_dim] = e;
                continue;
            }
            // Find who set the extent, for the message.
            std::string other;
            for (const ParamBinding& q : b.params) {
                if (&q == &pb || q.call_dims == 0) continue;
                int qd = call_dim - (rank - q.call_dims);
                if (qd >= 0 && qd < q.call_dims && leaf_extent(q, args[q.arg], qd) == shape[call_dim]) {
                    other = "'" + q.name + "' of shape " + shape_text(args[q.arg].tensor.shape, args[q.arg].tensor.ndim);
                    break;
                }
            }
            throw_value_error(b.function + "(): parameter '" + pb.name + "' of shape " +
                              shape_text(a.tensor.shape, a.tensor.ndim) + " does not broadcast with " + other +
                              " (call dimension " + std::to_string(call_dim) + ": " + std::to_string(e) + " vs " +
                              std::to_string(shape[call_dim]) + "; Shape mismatch)");
        }
    }
    if (b.result_arg >= 0) {
        // The result is written, not read: its extents must be the call's (1 sets nothing only
        // where the call's extent is 1 too).
        const TensorInfo& t = args[b.result_arg].tensor;
        for (int d = 0; d < b.result_call_dims; ++d) {
            int call_dim = rank - b.result_call_dims + d;
            if (shape[call_dim] == 1) shape[call_dim] = t.shape[d];
        }
        int64_t want[16];
        for (int d = 0; d < rank; ++d) want[d] = shape[d];
        bool ok = b.result_call_dims == rank;
        for (int d = 0; ok && d < rank; ++d) ok = t.shape[d] == shape[d];
        if (!ok)
            throw_value_error(b.function + "(): _result= of shape " + shape_text(t.shape, t.ndim) +
                              " does not match the call shape " + shape_text(want, rank));
    }
}

}  // namespace sg::call
