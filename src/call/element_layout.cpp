// src/call/element_layout.cpp — element layouts of tensor and buffer parameters (see the header).
#include "call/element_layout.h"

#include "call/binder.h"

namespace sg::call {

bool element_layout(const lang::TypeContext& types, const lang::Type* element, ElementLayout& out, std::string& why) {
    out = ElementLayout{};
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
