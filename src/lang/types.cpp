// src/lang/types.cpp — type interning, names and differentiability rules.
#include "lang/types.h"

#include "syntax/ast.h"
#include "syntax/diagnostics.h"

namespace sg::lang {

bool is_integer(ScalarKind k) { return k >= ScalarKind::Int8 && k <= ScalarKind::UInt64; }
bool is_signed_integer(ScalarKind k) { return k >= ScalarKind::Int8 && k <= ScalarKind::Int64; }
bool is_floating(ScalarKind k) { return k >= ScalarKind::Half; }

int scalar_bits(ScalarKind k) {
    switch (k) {
    case ScalarKind::Bool: return 8;
    case ScalarKind::Int8: case ScalarKind::UInt8: return 8;
    case ScalarKind::Int16: case ScalarKind::UInt16: case ScalarKind::Half: return 16;
    case ScalarKind::Int32: case ScalarKind::UInt32: case ScalarKind::Float: return 32;
    case ScalarKind::Int64: case ScalarKind::UInt64: case ScalarKind::Double: return 64;
    }
    return 0;
}

const char* scalar_name(ScalarKind k) {
    switch (k) {
    case ScalarKind::Bool: return "bool";
    case ScalarKind::Int8: return "int8_t";
    case ScalarKind::Int16: return "int16_t";
    case ScalarKind::Int32: return "int";
    case ScalarKind::Int64: return "int64_t";
    case ScalarKind::UInt8: return "uint8_t";
    case ScalarKind::UInt16: return "uint16_t";
    case ScalarKind::UInt32: return "uint";
    case ScalarKind::UInt64: return "uint64_t";
    case ScalarKind::Half: return "half";
    case ScalarKind::Float: return "float";
    case ScalarKind::Double: return "double";
    }
    return "?";
}

bool TensorKind::operator<(const TensorKind& o) const {
    auto key = [](const TensorKind& k) {
        return (k.shared << 8) | (k.view << 7) | (k.buffer << 6) | (int(k.access) << 4) | (k.differentiable << 3) | (k.interface << 2) | (k.has_grad << 1) |
               k.atomic;
    };
    return key(*this) < key(o);
}

int Type::components() const {
    switch (kind) {
    case TypeKind::Scalar: return 1;
    case TypeKind::Vector: return rows;
    case TypeKind::Matrix: return rows * cols;
    default: return 0;
    }
}

TypeContext::TypeContext() {
    Type v;
    v.kind = TypeKind::Void;
    void_ = intern(v);
    Type e;
    e.kind = TypeKind::Error;
    error_ = intern(e);
}

static std::string type_key(const Type& t) {
    std::string k = std::to_string(int(t.kind)) + ":" + std::to_string(int(t.scalar)) + ":" +
                    std::to_string(t.rows) + ":" + std::to_string(t.cols) + ":" + std::to_string(t.count) +
                    ":" + std::to_string(t.rank) + ":" + std::to_string(int(t.tensor.access)) +
                    std::to_string(t.tensor.differentiable) + std::to_string(t.tensor.interface) +
                    std::to_string(t.tensor.has_grad) + std::to_string(t.tensor.atomic) + std::to_string(t.tensor.buffer) +
                    std::to_string(t.tensor.view) + std::to_string(t.tensor.shared) + ":" +
                    std::to_string(reinterpret_cast<uintptr_t>(t.element)) + ":" +
                    std::to_string(reinterpret_cast<uintptr_t>(t.decl)) + ":" +
                    std::to_string(reinterpret_cast<uintptr_t>(t.enumeration));
    return k;
}

const Type* TypeContext::intern(const Type& t) {
    std::string key = type_key(t);
    auto it = by_key_.find(key);
    if (it != by_key_.end()) return it->second;
    owned_.push_back(std::make_unique<Type>(t));
    by_key_.emplace(key, owned_.back().get());
    return owned_.back().get();
}

const Type* TypeContext::scalar(ScalarKind k) {
    Type t;
    t.kind = TypeKind::Scalar;
    t.scalar = k;
    return intern(t);
}

const Type* TypeContext::vector(ScalarKind k, int n) {
    if (n == 1) return scalar(k);
    Type t;
    t.kind = TypeKind::Vector;
    t.scalar = k;
    t.rows = n;
    return intern(t);
}

const Type* TypeContext::matrix(ScalarKind k, int rows, int cols) {
    Type t;
    t.kind = TypeKind::Matrix;
    t.scalar = k;
    t.rows = rows;
    t.cols = cols;
    return intern(t);
}

const Type* TypeContext::array(const Type* element, int64_t count) {
    Type t;
    t.kind = TypeKind::Array;
    t.element = element;
    t.count = count;
    const Type* a = intern(t);
    // The Differential of an array is the array of its element's Differential. It differs from
    // the array only for elements such as structs with no_diff fields; it is interned here,
    // where interning is possible, for the const differential() to find.
    if (!array_differentials_.count(a) && is_differentiable(element)) {
        const Type* d = differential(element);
        if (d != element) array_differentials_[a] = array(d, count);
    }
    return a;
}

const Type* TypeContext::tensor(const Type* element, int rank, TensorKind kind) {
    Type t;
    t.kind = TypeKind::Tensor;
    t.element = element;
    t.rank = rank;
    t.tensor = kind;
    return intern(t);
}

const Type* TypeContext::pair(const Type* primal) {
    Type t;
    t.kind = TypeKind::DiffPair;
    t.element = primal;
    const Type* p = intern(t);
    // DifferentialPair<T>.Differential is DifferentialPair<T.Differential> (a pair is
    // differentiable: forward mode over forward mode). Interned here for the const differential().
    if (is_differentiable(primal)) {
        const Type* d = differential(primal);
        if (d != primal) pair(d);
    }
    return p;
}

const Type* TypeContext::structure(const StructDecl* decl) {
    Type t;
    t.kind = TypeKind::Struct;
    t.decl = decl;
    return intern(t);
}

const Type* TypeContext::enumeration(const EnumDecl* decl, ScalarKind underlying) {
    Type t;
    t.kind = TypeKind::Scalar;
    t.scalar = underlying;
    t.enumeration = decl;
    return intern(t);
}

const Type* TypeContext::with_scalar(const Type* t, ScalarKind k) {
    switch (t->kind) {
    case TypeKind::Scalar: return scalar(k);
    case TypeKind::Vector: return vector(k, t->rows);
    case TypeKind::Matrix: return matrix(k, t->rows, t->cols);
    case TypeKind::Array: return array(with_scalar(t->element, k), t->count);
    default: return t;
    }
}

void TypeContext::set_fields(const StructDecl* decl, std::vector<FieldInfo> fields, bool differentiable,
                             const Type* differential) {
    auto& info = structs_[decl];
    info.fields = std::move(fields);
    info.differentiable = differentiable;
    info.differential = differential;
}

const std::vector<FieldInfo>& TypeContext::fields(const Type* struct_type) const {
    SG_INTERNAL_ASSERT(struct_type->is_struct(), "fields() of a non-struct type");
    auto it = structs_.find(struct_type->decl);
    SG_INTERNAL_ASSERT(it != structs_.end(), "struct without resolved fields");
    return it->second.fields;
}

bool TypeContext::struct_is_differentiable(const Type* struct_type) const {
    auto it = structs_.find(struct_type->decl);
    return it != structs_.end() && it->second.differentiable;
}

bool TypeContext::is_differentiable(const Type* t) const {
    switch (t->kind) {
    case TypeKind::Scalar:
    case TypeKind::Vector:
    case TypeKind::Matrix: return is_floating(t->scalar);
    case TypeKind::Array: return is_differentiable(t->element);
    case TypeKind::Struct: return struct_is_differentiable(t);
    case TypeKind::DiffPair: return is_differentiable(t->element);
    default: return false;
    }
}

const Type* TypeContext::differential(const Type* t) const {
    if (!is_differentiable(t)) return nullptr;
    if (t->is_struct()) return structs_.at(t->decl).differential;
    if (t->is_pair()) {
        const Type* d = differential(t->element);
        if (d == t->element) return t;
        Type key;
        key.kind = TypeKind::DiffPair;
        key.element = d;
        auto it = by_key_.find(type_key(key));
        SG_INTERNAL_ASSERT(it != by_key_.end(), "the Differential of " + type_name(t) + " was not interned");
        return it->second;
    }
    if (t->is_array()) {
        auto it = array_differentials_.find(t);
        return it != array_differentials_.end() ? it->second : t;
    }
    return t;
}

namespace {

int64_t flatten_count(const TypeContext& types, const Type* t, ScalarKind* scalar, bool* uniform, bool* seen, int depth) {
    auto leaf = [&](ScalarKind k) {
        if (*seen && *scalar != k) *uniform = false;
        if (!*seen) *scalar = k;
        *seen = true;
    };
    if (depth > 64) return 0;  // struct nesting is bounded by sema; this only guards the recursion
    switch (t->kind) {
    case TypeKind::Scalar:
    case TypeKind::Vector:
    case TypeKind::Matrix: leaf(t->scalar); return t->components();
    case TypeKind::Array: return t->count * flatten_count(types, t->element, scalar, uniform, seen, depth + 1);
    case TypeKind::Struct: {
        int64_t n = 0;
        for (const FieldInfo& f : types.fields(t)) n += flatten_count(types, f.type, scalar, uniform, seen, depth + 1);
        return n;
    }
    default: return 0;
    }
}

}  // namespace

int64_t flat_components(const TypeContext& types, const Type* t, ScalarKind* scalar, bool* uniform) {
    ScalarKind k = ScalarKind::Float;
    bool u = true, seen = false;
    int64_t n = flatten_count(types, t, &k, &u, &seen, 0);
    if (scalar) *scalar = k;
    if (uniform) *uniform = u;
    return n;
}

std::string type_name(const Type* t) {
    switch (t->kind) {
    case TypeKind::Void: return "void";
    case TypeKind::Error: return "<error>";
    case TypeKind::Scalar: return t->enumeration ? t->enumeration->name : scalar_name(t->scalar);
    case TypeKind::Vector: return std::string(scalar_name(t->scalar)) + std::to_string(t->rows);
    case TypeKind::Matrix:
        return std::string(scalar_name(t->scalar)) + std::to_string(t->rows) + "x" + std::to_string(t->cols);
    case TypeKind::Array: {
        // float[5][3]: the outermost count is written first.
        const Type* e = t;
        std::string dims;
        while (e->is_array()) {
            dims += "[" + std::to_string(e->count) + "]";
            e = e->element;
        }
        return type_name(e) + dims;
    }
    case TypeKind::Struct: return t->decl ? t->decl->name : "<struct>";
    case TypeKind::DiffPair: return "DifferentialPair<" + type_name(t->element) + ">";
    case TypeKind::Tensor: {
        const TensorKind& k = t->tensor;
        if (k.view) return (k.has_grad ? "DiffTensorView<" : "TensorView<") + type_name(t->element) + ">";
        if (k.shared) return "groupshared " + type_name(t->element) + "[" + std::to_string(t->rank) + "-D]";
        if (k.buffer)
            return std::string(k.access == TensorAccess::Read ? "" : "RW") + "StructuredBuffer<" + type_name(t->element) + ">";
        std::string base;
        if (k.atomic) base = "AtomicTensor";
        else {
            const char* prefix = k.access == TensorAccess::Read ? "" : k.access == TensorAccess::Write ? "W" : "RW";
            if (k.interface) base = std::string("I") + prefix + (k.differentiable ? "DiffTensor" : "Tensor");
            else if (!k.differentiable) base = std::string(prefix) + "Tensor";
            else base = std::string(prefix) + (k.has_grad ? "DiffTensor" : "PrimalTensor");
        }
        return base + "<" + type_name(t->element) + ", " + std::to_string(t->rank) + ">";
    }
    }
    return "?";
}

}  // namespace sg::lang
