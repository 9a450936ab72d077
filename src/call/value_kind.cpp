// src/call/value_kind.cpp — the rows of the marshalling table (see value_kind.h).
#include "call/value_kind.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "call/call_key.h"
#include "call/element_layout.h"
#include "call/errors.h"
#include "call/key_bytes.h"

namespace sg::call {

using lang::ScalarKind;
using lang::Type;

DType dtype_of(ScalarKind k) {
    switch (k) {
    case ScalarKind::Bool: return DType::Bool;
    case ScalarKind::Int8: return DType::Int8;
    case ScalarKind::Int16: return DType::Int16;
    case ScalarKind::Int32: return DType::Int32;
    case ScalarKind::Int64: return DType::Int64;
    case ScalarKind::UInt8: return DType::UInt8;
    case ScalarKind::UInt16: return DType::UInt16;
    case ScalarKind::UInt32: return DType::UInt32;
    case ScalarKind::UInt64: return DType::UInt64;
    case ScalarKind::Half: return DType::Float16;
    case ScalarKind::Float: return DType::Float32;
    case ScalarKind::Double: return DType::Float64;
    }
    return DType::Unknown;
}

std::string shape_text(const int64_t* shape, int ndim) {
    std::string s = "(";
    for (int d = 0; d < ndim; ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
    if (ndim == 1) s += ",";
    return s + ")";
}

std::string BindRequest::where(const BindContext& c) const {
    return *c.function + (global ? "(): global '" : "(): parameter '") + name + "' of type " + lang::type_name(type);
}

namespace {

const char* device_name(DeviceType d) { return d == DeviceType::CUDA ? "cuda" : d == DeviceType::CPU ? "cpu" : "other"; }

void put_extents(std::string& s, const int64_t* shape, int ndim) {
    put<uint8_t>(s, uint8_t(ndim));
    for (int d = 0; d < ndim; ++d) put<uint8_t>(s, extent_class(shape[d]));
}

void render_extents(const std::string& s, size_t& pos, std::string& out) {
    int ndim = take<uint8_t>(s, pos);
    out += "[";
    for (int d = 0; d < ndim; ++d) {
        uint8_t c = take<uint8_t>(s, pos);
        out += (d ? "," : "") + (c ? std::to_string(c) : std::string("*"));
    }
    out += "]";
}

/// The module's scalar type of kind `k` (interned: the module's type context only grows).
const Type* scalar_type(BindContext& c, ScalarKind k) { return const_cast<UserModule*>(c.module)->types().scalar(k); }

void no_key(const ArgInfo&, std::string&) {}
void no_render(const std::string&, size_t&, std::string&) {}

// ---------------------------------------------------------------- None: an unsupported object

std::string describe_none(const ArgInfo& a) { return std::string("a Python ") + (a.type_name ? a.type_name : "object"); }

ValueNode bind_none(BindContext& c, const BindRequest& r) {
    throw_type_error(r.where(c) + " cannot take " + describe_none(c.args[r.arg]));
}

// ---------------------------------------------------------------- Python scalars: uniforms

std::string describe_scalar(const ArgInfo& a) { return std::string("a Python ") + arg_kind_name(a.kind); }

ValueNode bind_scalar(BindContext& c, const BindRequest& r) {
    const ArgInfo& a = c.args[r.arg];
    const Type* t = r.type;
    if (r.dir != lang::ParamDir::In)
        throw_type_error(r.where(c) + " is an out/inout parameter and needs a tensor or a ValueRef, got " + describe_scalar(a));
    if (!t->is_scalar())
        throw_type_error(r.where(c) + " cannot take " + describe_scalar(a) +
                         " (pass a tensor, a list or a value type for non-scalar parameters)");
    if (a.kind == ArgKind::Float && !lang::is_floating(t->scalar))
        throw_type_error(r.where(c) + " cannot take a Python float (the parameter is an integer)");
    ParamBinding pb;
    pb.kind = BindingKind::Uniform;
    pb.differentiable = r.differentiable && lang::is_floating(t->scalar);
    return c.add_leaf(pb);
}

// ---------------------------------------------------------------- grid and generators

void key_grid(const ArgInfo& a, std::string& s) {
    put_extents(s, a.tensor.shape, a.tensor.ndim);
    put<uint8_t>(s, a.number != 0);  // stride or offset given: they become uniforms
}

void render_grid(const std::string& s, size_t& pos, std::string& out) {
    render_extents(s, pos, out);
    if (take<uint8_t>(s, pos)) out += " strided";
}

std::string describe_grid(const ArgInfo& a) { return "grid(" + shape_text(a.tensor.shape, a.tensor.ndim) + ")"; }

/// Components of an integer index type: int → 1, int3 → 3, int[2] → 2; 0 when not one.
int index_components(const Type* t, bool allow_unsigned = true) {
    auto ok = [&](ScalarKind k) { return k == ScalarKind::Int32 || (allow_unsigned && k == ScalarKind::UInt32); };
    if (t->is_scalar() && ok(t->scalar)) return 1;
    if (t->is_vector() && ok(t->scalar)) return t->rows;
    if (t->is_array() && t->element->is_scalar() && ok(t->element->scalar)) return int(t->count);
    return 0;
}

ValueNode bind_grid(BindContext& c, const BindRequest& r) {
    const ArgInfo& a = c.args[r.arg];
    int rank = a.tensor.ndim;
    if (r.dir != lang::ParamDir::In) throw_type_error(r.where(c) + " is an out/inout parameter and cannot take " + describe_grid(a));
    if (index_components(r.type) != rank)
        throw_value_error(r.where(c) + " cannot take " + describe_grid(a) + ": a grid of rank " + std::to_string(rank) +
                          " binds to int" + (rank > 1 ? std::to_string(rank) : "") + " or int[" + std::to_string(rank) +
                          "] (Could not find suitable conversion from a grid of rank " + std::to_string(rank) + " to " +
                          lang::type_name(r.type) + ")");
    ParamBinding pb;
    pb.kind = BindingKind::Grid;
    pb.call_dims = rank;
    pb.grid_strided = a.number != 0;
    return c.add_leaf(pb);
}

std::string describe_generator(const ArgInfo& a) {
    return std::string(arg_kind_name(a.kind)) + (a.rows ? "(dim=" + std::to_string(a.rows) + ")" : "()");
}

/// A generator's required number of components (SlangPy's `dim`; 0: any) decides its binding.
void key_generator(const ArgInfo& a, std::string& s) { put<uint8_t>(s, a.rows); }

void render_generator(const std::string& s, size_t& pos, std::string& out) {
    if (uint8_t dim = take<uint8_t>(s, pos)) out += " dim=" + std::to_string(dim);
}

ValueNode bind_generator(BindContext& c, const BindRequest& r) {
    const ArgInfo& a = c.args[r.arg];
    const Type* t = r.type;
    if (r.dir != lang::ParamDir::In)
        throw_type_error(r.where(c) + " is an out/inout parameter and cannot take " + describe_generator(a));
    const Generator& g = *value_kind(a.kind).generator;
    if (!g.binds_to(t))
        throw_type_error(r.where(c) + " cannot take " + describe_generator(a) + " (it binds to " + g.binds_to_text + ")");
    if (a.rows) {
        // dim= asks for exactly that many components: a vector (or array) of dim, or a scalar for 1.
        int n = t->is_scalar() ? 1 : t->is_vector() ? t->rows : int(t->count);
        if (n != a.rows)
            throw_type_error(r.where(c) + " cannot take " + describe_generator(a) +
                             ": it has " + std::to_string(n) + " component" + (n == 1 ? "" : "s") + ", the generator asks for " +
                             std::to_string(a.rows));
    }
    ParamBinding pb;
    pb.kind = BindingKind::Generator;
    pb.call_dims = 0;  // follows the call shape; sets no extent
    return c.add_leaf(pb);
}

// ---------------------------------------------------------------- tensors

void key_tensor(const ArgInfo& a, std::string& s) {
    const TensorInfo& t = a.tensor;
    put<uint8_t>(s, uint8_t(t.dtype));
    put<uint8_t>(s, t.requires_grad);
    put<uint8_t>(s, uint8_t(t.device_type));
    put<uint8_t>(s, uint8_t(t.device_index + 1));
    put<uint8_t>(s, uint8_t(a.origin));
    put<uint8_t>(s, a.rows);  // a shadegrad Tensor's element dims (its elements bind whole)
    put_extents(s, t.shape, t.ndim);
}

void render_tensor(const std::string& s, size_t& pos, std::string& out) {
    DType dtype = DType(take<uint8_t>(s, pos));
    uint8_t rg = take<uint8_t>(s, pos);
    uint8_t dev = take<uint8_t>(s, pos);
    int index = int(take<uint8_t>(s, pos)) - 1;
    uint8_t origin = take<uint8_t>(s, pos);
    uint8_t element_dims = take<uint8_t>(s, pos);
    out += std::string(" ") + dtype_name(dtype) + " " + (dev == 0 ? "cpu" : "cuda:" + std::to_string(index)) + " ";
    render_extents(s, pos, out);
    out += " g" + std::to_string(rg);
    if (origin == uint8_t(ArgOrigin::NumPy)) out += " numpy";
    if (origin == uint8_t(ArgOrigin::Ref)) out += " ref";
    if (element_dims) out += " Tensor/" + std::to_string(element_dims);
}

std::string describe_tensor(const ArgInfo& a) {
    const char* what = a.origin == ArgOrigin::NumPy ? " array of shape " : a.origin == ArgOrigin::Ref ? " ValueRef of shape " : " tensor of shape ";
    return with_article(dtype_name(a.tensor.dtype)) + what + shape_text(a.tensor.shape, a.tensor.ndim) +
           (a.tensor.device_type == DeviceType::CUDA ? " on cuda:" + std::to_string(a.tensor.device_index) : " on cpu");
}

ValueNode bind_tensor(BindContext& c, const BindRequest& r) {
    const ArgInfo& a = c.args[r.arg];
    const TensorInfo& ti = a.tensor;
    const Type* t = r.type;
    std::string where = r.where(c);
    if (ti.device_type == DeviceType::Other) [[unlikely]]
        throw_value_error(where + " got a tensor on " + (a.type_name ? std::string(a.type_name) : "a device") +
                          ", which shadegrad cannot run on (it runs kernels on cpu and cuda tensors); the module's "
                          "device is " + device_name(c.device));
    if (ti.device_type != c.device && a.origin != ArgOrigin::Ref)
        throw_value_error(where + " got a tensor on " + device_name(ti.device_type) + ", but the module's device is " +
                          device_name(c.device));
    if (c.device_index == -2) c.device_index = ti.device_index;
    else if (ti.device_index != c.device_index)
        throw_value_error(where + " got a tensor on cuda:" + std::to_string(ti.device_index) +
                          ", but other tensors of the call are on cuda:" + std::to_string(c.device_index) +
                          "; every tensor of one call must be on the same device");
    if (ti.dtype == DType::Unknown) throw_type_error(where + " got a tensor of an unsupported dtype");
    std::vector<int64_t> elem;
    ScalarKind scalar = ScalarKind::Float;
    const Type* value_type = t->is_tensor() ? t->element : t;
    ElementLayout layout;
    if (t->is_tensor()) {
        std::string why;
        if (!element_layout(c.module->types(), value_type, layout, why)) throw_type_error(where + ": " + why);
        elem = layout.shape;
        scalar = layout.scalar;
    } else if (!element_shape(value_type, elem, scalar)) {
        // A struct element from one tensor: one trailing dim of its components (a struct Tensor).
        std::string why;
        if (value_type->is_struct() && element_layout(c.module->types(), value_type, layout, why)) {
            elem = layout.shape;
            scalar = layout.scalar;
        } else if (value_type->is_struct()) {
            throw_type_error(where + " cannot be read from one tensor: " + why + "; pass a dict with a value or "
                             "tensor per field (as SlangPy does)");
        } else {
            throw_type_error(where + " cannot be read from a tensor");
        }
    }
    if (dtype_of(scalar) != ti.dtype)
        throw_type_error(where + " needs " + with_article(dtype_name(dtype_of(scalar))) + " tensor, got " +
                         describe_tensor(a));
    ParamBinding pb;
    int e = int(elem.size());
    if (a.rows > e && a.rows <= ti.ndim)  // a shadegrad Tensor of float3 to a float: SlangPy finds no binding either
        throw_type_error(where + " cannot take a shadegrad.Tensor whose elements have shape " +
                         shape_text(ti.shape + ti.ndim - a.rows, a.rows) +
                         " (a Tensor's elements bind whole, as in SlangPy; its .to_torch() reads their components)");
    if (t->is_tensor()) {
        if (ti.ndim < t->rank + e)
            throw_type_error(where + " needs a tensor of rank " + std::to_string(t->rank + e) + ", got " + describe_tensor(a));
        if (e && !std::equal(elem.begin(), elem.end(), ti.shape + ti.ndim - e))
            throw_type_error(where + " needs a tensor whose last dims are " + shape_text(elem.data(), e) + ", got " +
                             describe_tensor(a));
        if (r.dir != lang::ParamDir::In) throw_type_error(where + ": tensor parameters cannot be out/inout (the tensor type says the access)");
        if (t->tensor.buffer && ti.ndim != 1 + e) {
            std::string want = "(N";
            for (int64_t d : elem) want += ", " + std::to_string(d);
            throw_type_error(where + " needs a tensor of shape " + want + (e ? ")" : ",)") + " (one buffer per call), got " +
                             describe_tensor(a));
        }
        if (layout.flat && !inner_dims_flat(ti.shape, ti.strides, ti.ndim, e))
            throw_type_error(where + " reads its elements' components with one stride, but the last dims of " +
                             describe_tensor(a) + " are not contiguous among themselves (pass .contiguous())");
        pb.kind = BindingKind::WholeTensor;
        pb.is_output = t->tensor.access != lang::TensorAccess::Read;
        // Extra leading dims are a batch of tensors: call dims, each thread sees its slice.
        pb.call_dims = ti.ndim - t->rank - e;
        pb.differentiable = r.differentiable && t->tensor.differentiable;
    } else {
        if (ti.ndim < e || !std::equal(elem.begin(), elem.end(), ti.shape + ti.ndim - e))
            throw_type_error(where + " needs a tensor whose last dims are " + shape_text(elem.data(), e) + ", got " +
                             describe_tensor(a));
        if (layout.flat && !inner_dims_flat(ti.shape, ti.strides, ti.ndim, e))
            throw_type_error(where + " reads its components with one stride, but the last dims of " +
                             describe_tensor(a) + " are not contiguous among themselves (pass .contiguous())");
        pb.kind = BindingKind::Elementwise;
        pb.call_dims = ti.ndim - e;
        pb.is_output = r.dir != lang::ParamDir::In;
        pb.differentiable = r.differentiable && lang::is_floating(scalar);
    }
    pb.elem_dims = e;
    // An inout argument's old value is an input (its gradient flows to the tensor's history);
    // a write-only one's old value is overwritten and gets none.
    pb.requires_grad = pb.differentiable && c.grad_mode && ti.requires_grad && (!pb.is_output || r.dir == lang::ParamDir::InOut);
    return c.add_leaf(pb);
}

// ---------------------------------------------------------------- lists and tuples

void key_composite(const ArgInfo& a, std::string& s) { put<uint16_t>(s, uint16_t(a.child_count)); }

void render_composite(const std::string& s, size_t& pos, std::string& out) {
    out += "/" + std::to_string(take<uint16_t>(s, pos));
}

std::string describe_list(const ArgInfo& a) {
    return "a Python list of " + std::to_string(a.child_count) + " item" + (a.child_count == 1 ? "" : "s");
}

const char* kComponents[] = {".x", ".y", ".z", ".w"};

void check_composite_dir(BindContext& c, const BindRequest& r, const std::string& what) {
    if (r.dir != lang::ParamDir::In)
        throw_type_error(r.where(c) + " is an out/inout parameter: " + what +
                         " cannot be written back (pass a tensor or a ValueRef)");
}

ValueNode bind_list(BindContext& c, const BindRequest& r) {
    const ArgInfo& a = c.args[r.arg];
    const Type* t = r.type;
    check_composite_dir(c, r, describe_list(a));
    ValueNode node;
    node.type = t;
    if (t->is_array()) {
        if (a.child_count != t->count)
            throw_type_error(r.where(c) + " needs " + std::to_string(t->count) + " items, got " + describe_list(a));
        for (int i = 0; i < a.child_count; ++i) {
            std::string access = "[" + std::to_string(i) + "]";
            node.children.push_back(c.bind_child(a.first_child + i, t->element, access, r.name + access, r.differentiable));
        }
        return node;
    }
    if (t->is_vector()) {
        if (a.child_count != t->rows)
            throw_type_error(r.where(c) + " needs " + std::to_string(t->rows) + " components, got " + describe_list(a));
        for (int i = 0; i < a.child_count; ++i)
            node.children.push_back(c.bind_child(a.first_child + i, scalar_type(c, t->scalar), kComponents[i],
                                                 r.name + kComponents[i], r.differentiable));
        return node;
    }
    if (t->is_matrix()) {
        // A matrix from a list of rows, each a list of components: the glue reads it row-major.
        if (a.child_count != t->rows)
            throw_type_error(r.where(c) + " needs " + std::to_string(t->rows) + " rows, got " + describe_list(a));
        const Type* scalar = scalar_type(c, t->scalar);
        for (int i = 0; i < a.child_count; ++i) {
            const ArgInfo& row = c.args[a.first_child + i];
            if (row.kind != ArgKind::List || row.child_count != t->cols)
                throw_type_error(r.where(c) + " needs " + std::to_string(t->rows) + " rows of " + std::to_string(t->cols) +
                                 " components, got " + value_kind(row.kind).describe(row) + " as row " + std::to_string(i));
            for (int j = 0; j < row.child_count; ++j) {
                std::string access = "[" + std::to_string(i) + "][" + std::to_string(j) + "]";
                node.children.push_back(c.bind_child(row.first_child + j, scalar, access, r.name + access, r.differentiable));
            }
        }
        return node;
    }
    throw_type_error(r.where(c) + " cannot take " + describe_list(a) + " (a list binds to an array, a vector or a matrix)");
}

// ---------------------------------------------------------------- dicts

void key_dict(const ArgInfo& a, std::string& s) {
    put<uint16_t>(s, uint16_t(a.child_count));
    put<uint8_t>(s, uint8_t(a.struct_name_size));
    s.append(a.struct_name ? a.struct_name : "", a.struct_name_size);  // `_type`, if any; the children carry their keys
}

void render_dict(const std::string& s, size_t& pos, std::string& out) {
    out += "/" + std::to_string(take<uint16_t>(s, pos));
    uint8_t n = take<uint8_t>(s, pos);
    if (n) out += " _type=" + s.substr(pos, n);
    pos += n;
}

std::string describe_dict(const ArgInfo& a) {
    return "a Python dict of " + std::to_string(a.child_count) + " field" + (a.child_count == 1 ? "" : "s");
}

/// For a dict that lacks a field: its keys the struct does not have (a misspelling, most often)
/// and the struct's fields, as the end of the message ("" when every key is a field).
std::string unknown_keys_text(const BindContext& c, const ArgInfo& a, const std::vector<lang::FieldInfo>& fields,
                              const std::string& struct_name) {
    std::string unknown;
    int count = 0;
    for (int i = 0; i < a.child_count; ++i) {
        const ArgInfo& child = c.args[a.first_child + i];
        const std::string key(child.name, child.name_size);
        if (std::none_of(fields.begin(), fields.end(), [&](const lang::FieldInfo& f) { return f.name == key; })) {
            unknown += (count++ ? ", '" : "'") + key + "'";
        }
    }
    if (!count) return "";
    std::string names;
    for (size_t k = 0; k < fields.size(); ++k) names += (k ? ", " : "") + fields[k].name;
    return std::string(", and with key") + (count == 1 ? " " : "s ") + unknown + ", which struct " + struct_name +
           " does not have (its fields: " + names + ")";
}

/// A dict for a vector parameter (SlangPy's `{"x": 1, "y": 2}`): each component once, by name;
/// `_type`, when given, names the parameter's vector type.
ValueNode bind_dict_vector(BindContext& c, const BindRequest& r) {
    const ArgInfo& a = c.args[r.arg];
    const Type* t = r.type;
    const std::string type_name = lang::type_name(t);
    if (a.struct_name && std::string(a.struct_name, a.struct_name_size) != type_name)
        throw_type_error(r.where(c) + " got a dict with _type '" + std::string(a.struct_name, a.struct_name_size) + "'");
    ValueNode node;
    node.type = t;
    std::vector<bool> used(size_t(a.child_count), false);
    for (int k = 0; k < t->rows; ++k) {
        const char* name = kComponents[k] + 1;
        int found = -1;
        for (int i = 0; i < a.child_count; ++i) {
            const ArgInfo& child = c.args[a.first_child + i];
            if (child.name_size == 1 && child.name[0] == name[0]) found = i;
        }
        if (found < 0)
            throw_type_error(r.where(c) + " got a dict without component '" + name + "' (a dict for " + type_name +
                             " has the keys " + std::string("x, y, z, w").substr(0, size_t(3 * t->rows - 2)) + ", one each)");
        used[size_t(found)] = true;
        node.children.push_back(c.bind_child(a.first_child + found, scalar_type(c, t->scalar), kComponents[k],
                                             r.name + kComponents[k], r.differentiable));
    }
    for (int i = 0; i < a.child_count; ++i)
        if (!used[size_t(i)]) {
            const ArgInfo& child = c.args[a.first_child + i];
            throw_type_error(r.where(c) + " got a dict with key '" + std::string(child.name, child.name_size) + "', which " +
                             type_name + " does not have (its components: " +
                             std::string("x, y, z, w").substr(0, size_t(3 * t->rows - 2)) + ")");
        }
    return node;
}

ValueNode bind_dict(BindContext& c, const BindRequest& r) {
    const ArgInfo& a = c.args[r.arg];
    const Type* t = r.type;
    if (t->is_vector()) {
        check_composite_dir(c, r, describe_dict(a));
        return bind_dict_vector(c, r);
    }
    // An out / inout struct from a dict: its fields are written back one by one (each must be
    // a tensor or a ValueRef: the scalars' binding says so).
    if (!t->is_struct())
        throw_type_error(r.where(c) + " cannot take " + describe_dict(a) + " (a dict binds to a struct or a vector)");
    const std::string struct_name = t->decl->name;
    if (a.struct_name && std::string(a.struct_name, a.struct_name_size) != struct_name)
        throw_type_error(r.where(c) + " got a dict with _type '" + std::string(a.struct_name, a.struct_name_size) + "'");
    const std::vector<lang::FieldInfo>& fields = c.module->types().fields(t);
    std::vector<bool> used(size_t(a.child_count), false);
    ValueNode node;
    node.type = t;
    for (const lang::FieldInfo& f : fields) {
        int found = -1;
        for (int i = 0; i < a.child_count; ++i) {
            const ArgInfo& child = c.args[a.first_child + i];
            if (child.name_size == f.name.size() && std::memcmp(child.name, f.name.data(), f.name.size()) == 0) found = i;
        }
        if (found < 0) [[unlikely]]
            throw_type_error(r.where(c) + " got a dict without field '" + f.name + "' of struct " + struct_name +
                             unknown_keys_text(c, a, fields, struct_name));
        used[size_t(found)] = true;
        node.children.push_back(c.bind_child(a.first_child + found, f.type, "." + f.name, r.name + "." + f.name,
                                             r.differentiable && !f.no_diff));
    }
    for (int i = 0; i < a.child_count; ++i)
        if (!used[size_t(i)]) {
            const ArgInfo& child = c.args[a.first_child + i];
            throw_type_error(r.where(c) + " got a dict with field '" + std::string(child.name, child.name_size) +
                             "', which struct " + struct_name + " does not have");
        }
    return node;
}

// ---------------------------------------------------------------- value types (sg.float3, ...)

void key_value(const ArgInfo& a, std::string& s) {
    put<uint8_t>(s, a.scalar);
    put<uint8_t>(s, a.rows);
    put<uint8_t>(s, a.cols);
}

void render_value(const std::string& s, size_t& pos, std::string& out) {
    ScalarKind k = ScalarKind(take<uint8_t>(s, pos));
    int rows = take<uint8_t>(s, pos);
    int cols = take<uint8_t>(s, pos);
    out += std::string(" ") + lang::scalar_name(k) + std::to_string(rows) + (cols ? "x" + std::to_string(cols) : "");
}

std::string describe_value(const ArgInfo& a) {
    return with_article(lang::scalar_name(ScalarKind(a.scalar)) + std::to_string(a.rows) +
                        (a.cols ? "x" + std::to_string(a.cols) : ""));
}

/// Whether components of kind `from` may fill a parameter of kind `to` (float → float/half/double,
/// int → any integer, bool → bool).
bool components_fit(ScalarKind from, ScalarKind to) {
    if (lang::is_floating(from)) return lang::is_floating(to);
    if (from == ScalarKind::Bool) return to == ScalarKind::Bool;
    return lang::is_integer(to);
}

ValueNode bind_value(BindContext& c, const BindRequest& r) {
    const ArgInfo& a = c.args[r.arg];
    const Type* t = r.type;
    check_composite_dir(c, r, describe_value(a));
    bool shape_ok = a.cols == 0 ? t->is_vector() && t->rows == a.rows : t->is_matrix() && t->rows == a.rows && t->cols == a.cols;
    if (a.cols == 0 && t->is_scalar() && !t->enumeration && ScalarKind(a.scalar) == t->scalar && r.dir == lang::ParamDir::In)
        throw ValueOverScalar(r.arg, r.where(c) + " cannot take " + describe_value(a));  // one call dim of its components
    if (!shape_ok || !components_fit(ScalarKind(a.scalar), t->scalar))
        throw_type_error(r.where(c) + " cannot take " + describe_value(a));
    ValueNode node;
    node.type = t;
    const Type* scalar = scalar_type(c, t->scalar);
    for (int i = 0; i < a.child_count; ++i) {
        std::string access = a.cols == 0 ? kComponents[i]
                                         : "[" + std::to_string(i / a.cols) + "][" + std::to_string(i % a.cols) + "]";
        node.children.push_back(c.bind_child(a.first_child + i, scalar, access, r.name + access, r.differentiable));
    }
    return node;
}

/// Row i is ArgKind i's: a new kind adds its enumerator (arg_info.h) and its row here, in order.
constexpr ValueKind kRows[] = {
    {ArgKind::None, "none", no_key, no_render, describe_none, bind_none},
    {ArgKind::Tensor, "tensor", key_tensor, render_tensor, describe_tensor, bind_tensor},
    {ArgKind::Float, "float", no_key, no_render, describe_scalar, bind_scalar},
    {ArgKind::Int, "int", no_key, no_render, describe_scalar, bind_scalar},
    {ArgKind::Bool, "bool", no_key, no_render, describe_scalar, bind_scalar},
    {ArgKind::Grid, "grid", key_grid, render_grid, describe_grid, bind_grid},
    {ArgKind::CallId, "call_id", key_generator, render_generator, describe_generator, bind_generator, &kCallIdGenerator},
    {ArgKind::ThreadId, "thread_id", key_generator, render_generator, describe_generator, bind_generator, &kThreadIdGenerator},
    {ArgKind::WangHash, "wang_hash", key_generator, render_generator, describe_generator, bind_generator, &kWangHashGenerator},
    {ArgKind::RandFloat, "rand_float", key_generator, render_generator, describe_generator, bind_generator, &kRandFloatGenerator},
    {ArgKind::List, "list", key_composite, render_composite, describe_list, bind_list},
    {ArgKind::Dict, "dict", key_dict, render_dict, describe_dict, bind_dict},
    {ArgKind::Value, "value", key_value, render_value, describe_value, bind_value},
};

constexpr bool rows_complete() {
    for (int i = 0; i < kArgKindCount; ++i) {
        const ValueKind& row = kRows[i];
        if (int(row.kind) != i || !row.name || !row.key || !row.render || !row.describe || !row.bind) return false;
        if ((row.bind == bind_generator) != (row.generator != nullptr)) return false;
    }
    return true;
}
static_assert(std::size(kRows) == size_t(kArgKindCount), "one row per ArgKind (kArgKindCount in arg_info.h)");
static_assert(rows_complete(), "row i is ArgKind i's, names every function, and a generator's names its Generator");

}  // namespace

const ValueKind& value_kind(ArgKind k) {
    size_t i = size_t(k);
    return i < size_t(kArgKindCount) ? kRows[i] : kRows[0];
}

const char* arg_kind_name(ArgKind k) { return value_kind(k).name; }

}  // namespace sg::call
