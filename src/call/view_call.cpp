// src/call/view_call.cpp — SlangPy's calls of a function that takes TensorView or DiffTensorView
// parameters without being a [CUDAKernel] function (docs/calling.md, "Functions that take
// views"). SlangPy binds a view whole (it adds no call dimension), so such a call runs as many
// times as its other arguments say: once for numbers alone, N times with `_thread_count=N`, or
// once per element of an `sg.grid(shape)` argument. Here that call is a cooperative launch of a
// small [CUDAKernel] glue that calls the function (or bwd_diff / fwd_diff of it) from each
// thread (view_call_glue.cpp): a view binds exactly as a kernel's does (coop_launch.cpp), a grid
// parameter receives the grid's extents and a per-element tensor is a view with the call's
// extents (broadcast dimensions of stride 0), from which the glue reads the thread's element.
#include "call/coop_launch.h"

#include <algorithm>

#include "call/binder.h"
#include "call/errors.h"
#include "call/resolve.h"
#include "call/value_kind.h"

namespace sg::call {

namespace {

bool takes_view(const lang::FunctionDecl& f) {
    for (const lang::VarDecl* p : f.params)
        if (p->type && p->type->is_tensor() && p->type->tensor.view) return true;
    return false;
}

}  // namespace

const lang::FunctionDecl* view_function_decl(const UserModule& module, const Callee& callee) {
    const lang::FunctionDecl* view = nullptr;
    for (const lang::FunctionDecl* f : candidate_declarations(module, callee)) {
        if (lang::find_attribute(f->attrs, "CUDAKernel")) return nullptr;
        if (!view && takes_view(*f)) view = f;
    }
    return view;
}

bool is_view_function(const UserModule& module, const Callee& callee) {
    return view_function_decl(module, callee) != nullptr;
}

bool is_grid_parameter(const lang::Type* t) {
    return (t->is_scalar() || (t->is_vector() && t->rows <= 3)) && !t->enumeration &&
           (t->scalar == lang::ScalarKind::Int32 || t->scalar == lang::ScalarKind::UInt32);
}

int struct_tensor_components(const UserModule& module, const lang::FunctionDecl& decl, size_t k,
                             lang::ScalarKind* scalar, std::string* why) {
    const std::vector<ViewResultLeaf> leaves = view_struct_leaves(module, decl, k);
    int count = 0;
    for (const ViewResultLeaf& leaf : leaves) {
        const lang::Type* t = leaf.type;
        if (!(t->is_scalar() || (t->is_numeric() && t->scalar != lang::ScalarKind::Bool)) || t->enumeration) {
            if (why)
                *why = "its field '" + leaf.name + "' is a " + lang::type_name(t) +
                       " (scalars, vectors and matrices only yet)";
            return 0;
        }
        if (count && t->scalar != *scalar) {
            if (why)
                *why = "its fields are not all of one scalar type ('" + leaf.name + "' is " +
                       lang::scalar_name(t->scalar) + ", an earlier one " + lang::scalar_name(*scalar) + ")";
            return 0;
        }
        *scalar = t->scalar;
        count += t->is_vector() ? t->rows : t->is_matrix() ? t->rows * t->cols : 1;
    }
    if (!count && why) *why = "it has no fields";
    return count;
}

const ArgInfo* tensor_or_pair(const ArgInfo* all, const ArgInfo& arg) {
    if (arg.kind == ArgKind::Tensor) return &arg;
    if (arg.kind == ArgKind::List && arg.child_count == 2 && all[arg.first_child].kind == ArgKind::Tensor &&
        all[arg.first_child + 1].kind == ArgKind::Tensor)
        return &all[arg.first_child];
    return nullptr;
}

std::vector<const ArgInfo*> struct_leaf_args(const UserModule& module, const std::string& name,
                                             const lang::FunctionDecl& decl, size_t k, const ArgInfo* all,
                                             const ArgInfo& dict) {
    const lang::VarDecl& param = *decl.params[k];
    const std::string what = name + "(): parameter '" + param.name + "' (" + lang::type_name(param.type) + ")";
    // Every key a field of its struct (nested dicts for nested structs).
    auto check = [&](auto& self, const ArgInfo& d, const lang::Type* t, const std::string& at) -> void {
        for (int32_t c = 0; c < d.child_count; ++c) {
            const ArgInfo& child = all[d.first_child + c];
            const std::string key(child.name ? child.name : "", child.name_size);
            const lang::Type* field = nullptr;
            for (const lang::FieldInfo& f : module.types().fields(t))
                if (f.name == key) field = f.type;
            if (!field)
                throw_type_error(what + ": the dict names '" + at + key + "', which is no field of " +
                                 lang::type_name(t));
            if (field->is_struct()) {
                if (child.kind != ArgKind::Dict)
                    throw_type_error(what + ": field '" + at + key + "' (" + lang::type_name(field) +
                                     ") takes a dict of its fields, got " + arg_kind_name(child.kind));
                self(self, child, field, at + key + ".");
            }
        }
    };
    check(check, dict, param.type, "");
    std::vector<const ArgInfo*> out;
    for (const ViewResultLeaf& leaf : view_struct_leaves(module, decl, k)) {
        const ArgInfo* d = &dict;
        size_t start = 0;
        while (d) {
            const size_t dot = leaf.name.find('.', start);
            const std::string key = leaf.name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            const ArgInfo* found = nullptr;
            for (int32_t c = 0; c < d->child_count && !found; ++c) {
                const ArgInfo& child = all[d->first_child + c];
                if (std::string(child.name ? child.name : "", child.name_size) == key) found = &child;
            }
            d = found;
            if (dot == std::string::npos || !d) break;
            start = dot + 1;
        }
        if (!d) throw_type_error(what + ": the dict has no field '" + leaf.name + "'");
        out.push_back(d);
    }
    return out;
}

ViewCallForm view_call_form(UserModule& module, const std::string& name, const lang::FunctionDecl& decl,
                            const std::vector<const ArgInfo*>& bound, const ArgInfo* all, const LaunchShape& shape,
                            LaunchShape& out, const CallModifiers* mods) {
    out = shape;
    ViewCallForm form;
    const std::vector<std::vector<int>>* dim_maps = mods ? &mods->dim_maps : nullptr;
    // fn.map(): a per-element tensor's dims go to the named call dims (absolute, from the first),
    // not right-aligned; checked here, applied once the call's rank is known.
    auto map_of = [&](size_t p) -> const std::vector<int>* {
        return dim_maps && p < dim_maps->size() && !(*dim_maps)[p].empty() ? &(*dim_maps)[p] : nullptr;
    };
    struct Pending {
        std::string what, label;
        std::vector<int64_t> here;
        const std::vector<int>* map;
    };
    std::vector<Pending> pending;
    // The call shape: the broadcast of every grid's and every per-element tensor's.
    std::vector<int64_t> call_shape;
    std::vector<std::pair<std::string, std::vector<int64_t>>> earlier;  // each argument's call shape
    // SlangPy's broadcasting: right-aligned, extents equal or 1 (docs/calling.md, "Vectorization").
    auto join = [&](const std::string& what, const std::string& label, const std::vector<int64_t>& here) {
        std::vector<int64_t> joined(std::max(here.size(), call_shape.size()), 1);
        for (size_t i = 0; i < joined.size(); ++i) {
            const size_t d = joined.size() - 1 - i;
            const int64_t x = i < here.size() ? here[here.size() - 1 - i] : 1;
            const int64_t y = i < call_shape.size() ? call_shape[call_shape.size() - 1 - i] : 1;
            if (x != y && x != 1 && y != 1) {
                // The earlier argument whose extent there is y.
                for (const auto& [other, extents] : earlier)
                    if (i < extents.size() && extents[extents.size() - 1 - i] == y)
                        throw_value_error(what + ": its call shape " + shape_text(here.data(), int(here.size())) +
                                          " does not broadcast with " +
                                          shape_text(extents.data(), int(extents.size())) + " of parameter '" + other +
                                          "' (dimension " + std::to_string(d) + " of the call: " + std::to_string(x) +
                                          " against " + std::to_string(y) + ")");
            }
            joined[d] = x == 1 ? y : x;
        }
        call_shape = joined;
        earlier.emplace_back(label, here);
    };
    // A tensor's call dimensions against a value of type t (a vector's components last, a
    // matrix's rows and columns).
    auto tensor_dims = [&](const std::string& what, const ArgInfo& arg, const lang::Type* t) {
        const bool value = (t->is_scalar() || ((t->is_vector() || t->is_matrix()) && t->scalar != lang::ScalarKind::Bool)) &&
                           !t->enumeration;
        if (!value)
            throw_type_error(what + " is given a tensor: beside views, a tensor gives one element per call to a "
                                    "scalar, vector or matrix (or a struct) only yet");
        const int rank = arg.tensor.ndim - (t->is_vector() ? 1 : t->is_matrix() ? 2 : 0);
        if (rank < 1) throw_type_error(what + " is given a tensor of no call dimensions: pass the value as a number");
        return std::vector<int64_t>(arg.tensor.shape, arg.tensor.shape + rank);
    };
    for (size_t p = 0; p < decl.params.size(); ++p) {
        const lang::VarDecl& param = *decl.params[p];
        const ArgInfo& arg = *bound[p];
        const std::string what = name + "(): parameter '" + param.name + "' (" + lang::type_name(param.type) + ")";
        if (mods && p < mods->type_maps.size() && !mods->type_maps[p].empty() &&
            (arg.kind != ArgKind::Tensor || param.type->is_tensor() || param.type->is_struct()))
            throw_type_error(what + ": map() to a type applies to a tensor read per element beside views, as a scalar "
                                    "or vector");
        if (map_of(p) && arg.kind != ArgKind::Tensor)
            throw_type_error(what + ": map() applies to a tensor read per element beside views, not to " +
                             (param.type->is_tensor() ? std::string("a view (bound whole)") :
                                                        std::string(arg_kind_name(arg.kind))));
        if (param.type->is_tensor()) {
            if (map_of(p))
                throw_type_error(what + ": map() applies to a tensor read per element beside views, not to a view "
                                        "(bound whole)");
            continue;  // a view: coop_launch.cpp checks it
        }
        if (arg.kind == ArgKind::Tensor && !shape.implicit)
            throw_value_error(name + "(): _thread_count is only valid for kernels with call dimensionality 0, and "
                              "parameter '" + param.name + "' (" + lang::type_name(param.type) +
                              ") is given a tensor, which gives the call dimensions of its own");
        if (param.dir != lang::ParamDir::In && arg.kind != ArgKind::Tensor && !(param.type->is_struct() && arg.kind == ArgKind::Dict))
            throw_type_error(what + " is " + (param.dir == lang::ParamDir::Out ? "out" : "inout") + " and is given " +
                             arg_kind_name(arg.kind) + ": beside views it takes a tensor, one element per call, "
                             "which the call writes");
        if (param.type->is_struct() && arg.kind == ArgKind::Tensor) {
            // A struct from a tensor: its fields' components (in declaration order) in the last
            // dimension, one struct per call (SlangPy's form).
            lang::ScalarKind scalar = lang::ScalarKind::Float;
            std::string why;
            const int components = struct_tensor_components(module, decl, p, &scalar, &why);
            if (!components)
                throw_type_error(what + " is given a tensor, which holds a struct's fields in its last dimension: " +
                                 why);
            if (arg.tensor.ndim < 2 || arg.tensor.shape[arg.tensor.ndim - 1] != components)
                throw_value_error(what + " takes a tensor whose last dimension holds the " + std::to_string(components) +
                                  " components of its fields, and a call dimension before it");
            if (p >= 16)
                throw_type_error(what + ": a call of a function that takes views vectorizes its first 16 parameters only");
            if (map_of(p))
                throw_type_error(what + ": map() of a struct's tensor is not supported beside views yet");
            pending.push_back({what, param.name, std::vector<int64_t>(arg.tensor.shape, arg.tensor.shape + arg.tensor.ndim - 1),
                               nullptr});
            form.tensors |= 1u << p;
            continue;
        }
        if (param.type->is_struct()) {
            // A struct: a dict of its fields, each a number (or value) or a tensor read per element.
            if (arg.kind != ArgKind::Dict)
                throw_type_error(what + " takes a dict of its fields or a tensor of them beside views, got " +
                                 arg_kind_name(arg.kind));
            const std::vector<ViewResultLeaf> leaves = view_struct_leaves(module, decl, p);
            if (leaves.size() > 64)
                throw_type_error(what + ": a struct of more than 64 fields is not supported beside views yet");
            const std::vector<const ArgInfo*> fields = struct_leaf_args(module, name, decl, p, all, arg);
            uint64_t mask = 0;
            for (size_t j = 0; j < leaves.size(); ++j) {
                const std::string field_what = what + ": field '" + leaves[j].name + "' (" +
                                               lang::type_name(leaves[j].type) + ")";
                const lang::Type* t = leaves[j].type;
                if (!t->is_numeric())
                    throw_type_error(field_what + ": beside views, a struct's fields are scalars, vectors and matrices "
                                                  "only yet");
                if (const ArgInfo* tensor = tensor_or_pair(all, *fields[j])) {
                    if (!shape.implicit)
                        throw_value_error(name + "(): _thread_count is only valid for kernels with call dimensionality "
                                                 "0, and parameter '" + param.name + "' is given a tensor in field '" +
                                          leaves[j].name + "'");
                    pending.push_back({field_what, param.name + "." + leaves[j].name, tensor_dims(field_what, *tensor, t),
                                       nullptr});
                    mask |= uint64_t(1) << j;
                } else if (param.dir != lang::ParamDir::In) {
                    throw_type_error(field_what + " is in an " + (param.dir == lang::ParamDir::Out ? "out" : "inout") +
                                     " struct and is given " + arg_kind_name(fields[j]->kind) +
                                     ": it takes a tensor, one element per call, which the call writes");
                } else if (fields[j]->kind >= ArgKind::Grid && fields[j]->kind <= ArgKind::RandFloat) {
                    throw_type_error(field_what + " is given " + arg_kind_name(fields[j]->kind) +
                                     ": a struct's field beside views takes a number or a tensor yet");
                }
            }
            form.structs.emplace_back(uint32_t(p), mask);
            continue;
        }
        if (arg.kind != ArgKind::Grid && arg.kind != ArgKind::Tensor) {
            if (arg.kind >= ArgKind::CallId && arg.kind <= ArgKind::RandFloat)
                throw_type_error(what + " is given " + arg_kind_name(arg.kind) + ": a call of a function that takes "
                                 "views takes numbers, tensors and sg.grid(shape) for its other parameters yet");
            continue;
        }
        if (p >= 16)
            throw_type_error(what + ": a call of a function that takes views vectorizes its first 16 parameters only");
        if (arg.kind == ArgKind::Tensor) {
            // SlangPy's vectorization beside views: one element of the tensor per call, read as
            // the parameter's type or (fn.map(x="half3")) as another of its shape, converted.
            const lang::Type* read = param.type;
            if (mods && p < mods->type_maps.size() && !mods->type_maps[p].empty()) {
                const std::string& type_name = mods->type_maps[p];
                const lang::Type* m = mapped_type(module, type_name);
                if (!m) throw_type_error(what + ": map() names '" + type_name + "', which is no type of the module");
                const lang::Type* t = param.type;
                const bool same_shape = (m->is_scalar() && t->is_scalar()) ||
                                        (m->is_vector() && t->is_vector() && m->rows == t->rows);
                if (!same_shape || m->enumeration || t->enumeration || m->scalar == lang::ScalarKind::Bool)
                    throw_type_error(what + ": map() reads its tensor as " + lang::type_name(m) +
                                     ", which converts to " + lang::type_name(t) +
                                     " only as a scalar or vector of the same size beside views yet");
                if (param.dir != lang::ParamDir::In)
                    throw_type_error(what + ": map() to a type of a tensor the call writes is not supported beside "
                                            "views yet");
                read = m;
                form.read_types.resize(decl.params.size(), nullptr);
                form.read_types[p] = m;
            }
            std::vector<int64_t> here = tensor_dims(what, arg, read);
            if (const std::vector<int>* map = map_of(p)) {
                if (map->size() != here.size())
                    throw_value_error(what + ": map() names " + std::to_string(map->size()) + " dimension" +
                                      (map->size() == 1 ? "" : "s") + " but the argument has " +
                                      std::to_string(here.size()) + " call dimension" + (here.size() == 1 ? "" : "s"));
                for (size_t i = 0; i < map->size(); ++i) {
                    if ((*map)[i] < 0 || (*map)[i] >= 8) throw_value_error(what + ": map() dimension out of range");
                    for (size_t j = 0; j < i; ++j)
                        if ((*map)[j] == (*map)[i]) throw_value_error(what + ": map() names a call dimension twice");
                }
                if (param.dir != lang::ParamDir::In)
                    throw_type_error(what + ": map() of a tensor the call writes is not supported beside views yet");
            }
            pending.push_back({what, param.name, std::move(here), map_of(p)});
            form.tensors |= 1u << p;
        } else {
            if (!is_grid_parameter(param.type))
                throw_type_error(what + " is given an sg.grid: a grid's coordinate is an int or uint, or an int2/int3 "
                                        "(uint2/uint3) for a 2-D/3-D grid");
            const int components = param.type->is_vector() ? param.type->rows : 1;
            if (arg.number != 0)
                throw_type_error(what + ": an sg.grid with a stride or offset is not supported for a function that "
                                        "takes views yet");
            if (arg.tensor.ndim != components)
                throw_type_error(what + " takes the coordinate of a " + std::to_string(components) + "-D grid, got a " +
                                 std::to_string(arg.tensor.ndim) + "-D sg.grid");
            for (int d = 0; d < arg.tensor.ndim; ++d)
                if (arg.tensor.shape[d] < 0) throw_value_error(what + ": an sg.grid extent is negative");
            pending.push_back({what, param.name, std::vector<int64_t>(arg.tensor.shape, arg.tensor.shape + arg.tensor.ndim),
                               nullptr});
            form.grids |= 1u << p;
        }
    }
    // The call's rank, then every shape joined: a mapped tensor's extents at its call dims.
    size_t rank = 0;
    for (const Pending& e : pending) {
        size_t r = e.here.size();
        if (e.map) r = size_t(*std::max_element(e.map->begin(), e.map->end()) + 1);
        rank = std::max(rank, r);
    }
    for (const Pending& e : pending) {
        if (!e.map) {
            join(e.what, e.label, e.here);
            continue;
        }
        std::vector<int64_t> placed(rank, 1);
        for (size_t i = 0; i < e.map->size(); ++i) placed[size_t((*e.map)[i])] = e.here[i];
        join(e.what, e.label, placed);
    }
    if (mods && mods->has_call_group) {
        // SlangPy's call groups: the group's extents padded with leading 1s to the call's rank.
        const std::vector<int>& g = mods->call_group;
        std::string text = "(";
        for (size_t d = 0; d < g.size(); ++d) text += (d ? ", " : "") + std::to_string(g[d]);
        text += g.size() == 1 ? ",)" : ")";
        if (g.size() > call_shape.size())
            throw_value_error(name + "(): call_group_shape(): parameter 'shape' " + text + " has " +
                              std::to_string(g.size()) + " dimensions, the call's shape " +
                              std::to_string(call_shape.size()) + " (call_group_shape dimensionality (" +
                              std::to_string(g.size()) + ") must be <= call_shape dimensionality (" +
                              std::to_string(call_shape.size()) +
                              "). call_group_shape cannot have more dimensions than call_shape.)");
        form.call_group.assign(call_shape.size() - g.size(), 1);
        form.call_group.insert(form.call_group.end(), g.begin(), g.end());
    }
    if (earlier.empty()) return form;
    if (dim_maps)
        for (size_t p = 0; p < decl.params.size(); ++p)
            if (map_of(p)) {
                form.dim_maps.resize(decl.params.size());
                form.dim_maps[p] = *map_of(p);
            }
    // A tensor the call writes (an out or inout parameter's) has one element per call: none is
    // broadcast, which would have several calls write it.
    for (const auto& [label, extents] : earlier) {
        size_t p = 0;  // the parameter (a struct's field: "param.field")
        while (p < decl.params.size() && decl.params[p]->name != label.substr(0, label.find('.'))) ++p;
        if (p == decl.params.size() || decl.params[p]->dir == lang::ParamDir::In || extents == call_shape) continue;
        throw_value_error(name + "(): parameter '" + label + "' (" + lang::type_name(decl.params[p]->type) + ")" +
                          (label.find('.') == std::string::npos ? "" : " field") + " is " +
                          (decl.params[p]->dir == lang::ParamDir::Out ? "out" : "inout") + ": its tensor's call shape " +
                          shape_text(extents.data(), int(extents.size())) + " is not the call's " +
                          shape_text(call_shape.data(), int(call_shape.size())) +
                          ", so several calls would write one element (pass a tensor of the call's shape)");
    }
    if (!shape.implicit)
        throw_value_error(name + "(): _thread_count is only valid for kernels with call dimensionality 0: the sg.grid "
                                 "argument gives the call its threads (one per grid element); pass one or the other");
    form.rank = int(call_shape.size());
    form.call_shape = call_shape;
    int64_t threads = 1;
    for (int64_t e : call_shape) threads *= e;
    if (threads == 0) {
        out.grid[0] = 0;
        return form;
    }
    out.block[0] = threads < 256 ? threads : 256;
    out.block[1] = out.block[2] = out.grid[1] = out.grid[2] = 1;
    out.grid[0] = (threads + out.block[0] - 1) / out.block[0];
    out.thread_count = threads;
    out.implicit = true;
    return form;
}

}  // namespace sg::call
