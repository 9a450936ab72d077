// tests/cpp/test_program_inputs.h — buffer arguments of test programs: a program may declare
// `T test(StructuredBuffer<E> a, RWStructuredBuffer<E> b, ...)` and give each buffer its
// contents with a header
//   // input: a = (1, 2), (3, 4)       the buffer's scalar components in order (nesting for
//                                     reading only): elements flattened, struct fields in
//                                     declaration order, matrices row by row
// The harness stores them densely (element k at scalar offset k * components), binds each as
// a tensor view (shape N, stride = components, inner strides 1 and the matrix row length) and
// passes the buffers to test() from the generated entry.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "call/scalar_store.h"
#include "lang/types.h"

namespace sg::test {

/// One buffer argument of test(): its parameter, element layout and contents.
struct BufferInput {
    std::string name;
    std::string global;  ///< a global buffer the entry binds (its parameter: `name`), else ""
    const lang::Type* type = nullptr;  ///< the buffer type
    lang::ScalarKind scalar = lang::ScalarKind::Float;
    int64_t components = 0;  ///< scalars per element
    int64_t count = 0;       ///< elements
    int64_t inner1 = 0;      ///< matrix elements: the row length
    std::vector<uint8_t> bytes;
};

inline size_t scalar_bytes(lang::ScalarKind k) { return size_t(lang::scalar_bits(k) / 8); }

/// Stores `v` as one scalar of kind `k` at `p` (the call layer's writer: integers from `v`
/// truncated toward zero).
inline void store_scalar(uint8_t* p, lang::ScalarKind k, double v) { call::store_scalar(p, k, v, int64_t(v)); }

/// The values of the `// input: NAME = VALUES` header named `name` into `values` (`parse`
/// flattens VALUES); false when there is none.
template <class Parse>
bool input_values(const std::vector<std::string>& headers, const std::string& name, Parse&& parse,
                  std::vector<double>& values) {
    bool found = false;
    for (const std::string& h : headers) {
        size_t eq = h.find('=');
        std::string key = h.substr(0, eq);
        while (!key.empty() && key.back() == ' ') key.pop_back();
        if (eq == std::string::npos || key != name) continue;
        values = parse(h.substr(eq + 1));
        found = true;
    }
    return found;
}

/// The `// input: NAME = VALUES` header of parameter `name`, parsed (`parse` flattens VALUES).
template <class Parse>
BufferInput buffer_input(const lang::TypeContext& types, const std::string& name, const lang::Type* type,
                         const std::vector<std::string>& headers, Parse&& parse) {
    if (!type->is_tensor() || !type->tensor.buffer)
        throw std::runtime_error("test() parameter '" + name + "' must be a StructuredBuffer or RWStructuredBuffer");
    BufferInput in;
    in.name = name;
    in.type = type;
    in.components = lang::flat_components(types, type->element, &in.scalar);
    if (type->element->is_matrix()) in.inner1 = type->element->cols;
    std::vector<double> values;
    if (!input_values(headers, name, parse, values)) throw std::runtime_error("test() parameter '" + name + "' needs an `// input: " + name + " = ...` header");
    if (in.components == 0 || values.size() % size_t(in.components) != 0)
        throw std::runtime_error("input '" + name + "': " + std::to_string(values.size()) +
                                 " values are not whole elements of " + std::to_string(in.components) + " components");
    in.count = int64_t(values.size()) / in.components;
    const size_t w = scalar_bytes(in.scalar);
    in.bytes.assign(std::max<size_t>(values.size() * w, 8), 0);  // never empty: a valid pointer
    for (size_t k = 0; k < values.size(); ++k) store_scalar(in.bytes.data() + k * w, in.scalar, values[k]);
    return in;
}

/// `, StructuredBuffer<float> a, ...` for the entry's signature and `a, ...` for the call.
inline void buffer_entry_parts(const std::vector<BufferInput>& inputs, std::string& params, std::string& args) {
    for (const BufferInput& in : inputs) {
        params += ", " + lang::type_name(in.type) + " " + in.name;
        if (in.global.empty()) args += (args.empty() ? "" : ", ") + in.name;
    }
}

}  // namespace sg::test
