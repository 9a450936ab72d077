// src/lang/types.h — the type system shared by sema, IR, autodiff and codegen.
//
// Types are interned by a TypeContext: two equal types are the same pointer, so comparing
// pointers compares types. Tensor types carry their concrete kind (access, differentiable
// family, whether a gradient buffer is bound): an interface type (`IDiffTensor<float,2>`) in a
// signature is specialized to a concrete one per call (the grad mask decides `has_grad`).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sg::lang {

struct StructDecl;
struct EnumDecl;

enum class ScalarKind : uint8_t { Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Half, Float, Double };

bool is_integer(ScalarKind k);
bool is_signed_integer(ScalarKind k);
bool is_floating(ScalarKind k);
int scalar_bits(ScalarKind k);
const char* scalar_name(ScalarKind k);  ///< kernel-language spelling ("float", "uint", "int64_t")

enum class TypeKind : uint8_t { Void, Scalar, Vector, Matrix, Array, Struct, Tensor, DiffPair, Error };

/// Read / write / read-write access of a tensor built-in.
enum class TensorAccess : uint8_t { Read, Write, ReadWrite };

struct Type;

/// What a tensor type is: the language's 18 tensor names map onto these fields.
struct TensorKind {
    TensorAccess access = TensorAccess::Read;
    bool differentiable = false;  ///< IDiffTensor family (a gradient may be bound)
    bool interface = false;       ///< ITensor/IDiffTensor/...: generic over the concrete kind
    bool has_grad = false;        ///< concrete differentiable tensor with a gradient buffer bound
    bool atomic = false;          ///< AtomicTensor (supports add)
    /// StructuredBuffer<T> / RWStructuredBuffer<T>: a rank-1 view with `buf[i]` and
    /// GetDimensions, whose element may also be an array or a struct (tensor_layout.h).
    bool buffer = false;
    /// slangtorch's TensorView<T> (cooperative kernels): a strided view whose rank is known only
    /// at launch (Type::rank is 0); indexed with any number of indices, `size(d)`, `dims()`.
    bool view = false;
    /// A `groupshared` variable's storage (IR only, never written by users): rank = the
    /// variable's array dimensions, element = what remains; one copy per block.
    bool shared = false;
    bool operator<(const TensorKind& o) const;
    bool operator==(const TensorKind& o) const = default;
};

struct Type {
    TypeKind kind = TypeKind::Error;
    ScalarKind scalar = ScalarKind::Float;  ///< Scalar; element scalar of Vector/Matrix
    int rows = 0;            ///< Vector: N; Matrix: R
    int cols = 0;            ///< Matrix: C
    int64_t count = 0;       ///< Array: element count
    int rank = 0;            ///< Tensor: D
    TensorKind tensor;       ///< Tensor
    const Type* element = nullptr;  ///< Array/Tensor element; DiffPair primal type
    const StructDecl* decl = nullptr;  ///< Struct
    /// An enum type is a Scalar of its underlying integer kind that remembers its declaration:
    /// it computes as that integer (binary_operand_type decays it), converts to integers
    /// implicitly, but takes no integer without a cast.
    const EnumDecl* enumeration = nullptr;

    bool is_void() const { return kind == TypeKind::Void; }
    bool is_error() const { return kind == TypeKind::Error; }
    bool is_scalar() const { return kind == TypeKind::Scalar; }
    bool is_vector() const { return kind == TypeKind::Vector; }
    bool is_matrix() const { return kind == TypeKind::Matrix; }
    bool is_array() const { return kind == TypeKind::Array; }
    bool is_struct() const { return kind == TypeKind::Struct; }
    bool is_tensor() const { return kind == TypeKind::Tensor; }
    bool is_pair() const { return kind == TypeKind::DiffPair; }
    bool is_enum() const { return enumeration != nullptr; }
    bool is_bool() const { return kind == TypeKind::Scalar && scalar == ScalarKind::Bool; }
    /// Scalar, vector or matrix: arithmetic applies elementwise.
    bool is_numeric() const { return is_scalar() || is_vector() || is_matrix(); }
    /// Number of scalar components of a scalar/vector/matrix (1, N, R*C).
    int components() const;
};

/// One field of a struct type, resolved.
struct FieldInfo {
    std::string name;
    const Type* type;
    bool no_diff;
    /// The field of the struct's Differential that holds this one's derivative, when a
    /// `[DerivativeMember]` names another than `name` ("" : the field of the same name).
    std::string differential_name = {};
    /// A `column_major` matrix field (or array of them): in a buffer's or tensor's element it is
    /// stored column by column (codegen's flattened layout); as a value it is a matrix like any.
    bool column_major = false;
};

/// Interns types. One per compilation (types of different compilations never mix).
class TypeContext {
public:
    TypeContext();

    const Type* void_type() const { return void_; }
    const Type* error_type() const { return error_; }
    const Type* scalar(ScalarKind k);
    const Type* boolean() { return scalar(ScalarKind::Bool); }
    const Type* int32() { return scalar(ScalarKind::Int32); }
    const Type* uint32() { return scalar(ScalarKind::UInt32); }
    const Type* float32() { return scalar(ScalarKind::Float); }
    const Type* vector(ScalarKind k, int n);
    const Type* matrix(ScalarKind k, int rows, int cols);
    const Type* array(const Type* element, int64_t count);
    const Type* tensor(const Type* element, int rank, TensorKind kind);
    const Type* pair(const Type* primal);
    const Type* structure(const StructDecl* decl);
    const Type* enumeration(const EnumDecl* decl, ScalarKind underlying);

    /// Same shape (scalar/vector/matrix/array) with another scalar kind.
    const Type* with_scalar(const Type* t, ScalarKind k);
    /// The scalar type of a scalar/vector/matrix.
    const Type* scalar_of(const Type* t) { return scalar(t->scalar); }

    /// Struct field table (filled by sema when it resolves the struct). `differential` is the
    /// struct's Differential type (itself when every field is differentiable), or nullptr.
    void set_fields(const StructDecl* decl, std::vector<FieldInfo> fields, bool differentiable,
                    const Type* differential);
    const std::vector<FieldInfo>& fields(const Type* struct_type) const;
    bool struct_is_differentiable(const Type* struct_type) const;

    /// Whether a value of this type carries a derivative (float types, vectors/matrices/arrays
    /// of them, IDifferentiable structs).
    bool is_differentiable(const Type* t) const;
    /// T.Differential: the type of a derivative of T (a struct's Differential keeps only its
    /// differentiable, non-no_diff fields; an array's is the array of its element's
    /// Differential). nullptr for non-differentiable types.
    const Type* differential(const Type* t) const;

private:
    const Type* intern(const Type& t);
    std::vector<std::unique_ptr<Type>> owned_;
    std::map<std::string, const Type*> by_key_;
    const Type* void_;
    const Type* error_;
    struct StructInfo {
        std::vector<FieldInfo> fields;
        bool differentiable = false;
        const Type* differential = nullptr;
    };
    std::map<const StructDecl*, StructInfo> structs_;
    std::map<const Type*, const Type*> array_differentials_;  ///< arrays whose Differential differs
};

/// The scalar components of a value of type `t`, flattened: struct fields in declaration order,
/// array elements in order, matrices row by row (a buffer or tensor element's layout in memory).
/// `scalar` gets the components' scalar kind; `uniform` whether every component has that kind.
/// 0 for types without components (void, tensors).
int64_t flat_components(const TypeContext& types, const Type* t, ScalarKind* scalar = nullptr, bool* uniform = nullptr);

/// Kernel-language spelling of a type ("float3", "float[5]", "IDiffTensor<float,2>").
std::string type_name(const Type* t);

}  // namespace sg::lang
