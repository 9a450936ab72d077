// src/call/element_layout.cpp — element layouts of tensor and buffer parameters (see the header).
#include "call/element_layout.h"

#include "call/binder.h"

namespace sg::call {

namespace {

/// A field of a struct element that holds no scalar components of its own (a buffer or tensor):
/// its dotted path and type; an empty path when every field is made of scalars.
struct ResourceField {
    std::string path;
    const lang::Type* type = nullptr;
};

ResourceField resource_field(const lang::TypeContext& types, const lang::Type* t, int depth = 0) {
    if (depth > 64) return {};  // struct nesting is bounded by sema; this only guards the recursion
    if (t->is_array()) return resource_field(types, t->element, depth + 1);
    if (!t->is_struct()) return {};
    for (const lang::FieldInfo& f : types.fields(t)) {
        if (f.type->is_struct() || f.type->is_array()) {
            ResourceField inner = resource_field(types, f.type, depth + 1);
            if (!inner.path.empty()) return {f.name + "." + inner.path, inner.type};
        } else if (!f.type->is_numeric()) {
            return {f.name, f.type};
        }
    }
    return {};
}

/// False (with `why`) when a struct element holds a buffer or tensor: a tensor of such structs
/// has nothing to give that field.
bool no_resource_fields(const lang::TypeContext& types, const lang::Type* element, std::string& why) {
    const ResourceField field = resource_field(types, element);
    if (field.path.empty()) return true;
    const lang::Type* s = element;
    while (s->is_array()) s = s->element;
    why = "struct " + lang::type_name(s) + " holds a buffer or tensor (field '" + field.path + "' of type " +
          lang::type_name(field.type) + "), which a tensor of its values cannot give; pass the struct itself, a dict "
          "with a tensor for '" + field.path + "'";
    return false;
}

}  // namespace

bool element_layout(const lang::TypeContext& types, const lang::Type* element, ElementLayout& out, std::string& why) {
    out = ElementLayout{};
    if (!no_resource_fields(types, element, why)) return false;
    if (element->is_struct()) {
        bool uniform = true;
        int64_t n = lang::flat_components(types, element, &out.scalar, &uniform);
        if (!uniform) {
            why = "struct " + lang::type_name(element) +
                  " mixes scalar types; a tensor holds one dtype, so only structs whose fields are all of one scalar "
                  "type bind from a tensor";
            return false;
        }
        if (n == 0) {
            why = "struct " + lang::type_name(element) + " has no scalar components";
            return false;
        }
        out.shape = {n};
        out.flat = true;
        return true;
    }
    if (element->is_array()) {
        const lang::Type* inner = element;
        while (inner->is_array()) inner = inner->element;
        if (inner->is_struct()) {  // an array of structs: one dim of all their components
            bool uniform = true;
            int64_t n = lang::flat_components(types, element, &out.scalar, &uniform);
            if (!uniform || n == 0) {
                why = "struct " + lang::type_name(inner) + " mixes scalar types; a tensor holds one dtype";
                return false;
            }
            out.shape = {n};
            out.flat = true;
            return true;
        }
        out.flat = true;
    }
    if (!element_shape(element, out.shape, out.scalar)) {
        why = lang::type_name(element) + " cannot be read from a tensor";
        return false;
    }
    return true;
}

bool inner_dims_flat(const int64_t* shape, const int64_t* strides, int ndim, int dims) {
    for (int d = ndim - dims; d + 1 < ndim; ++d)
        if (shape[d] > 1 && strides[d] != strides[d + 1] * shape[d + 1]) return false;
    return true;
}

}  // namespace sg::call
