// src/call/arg_info.h — the description of one call argument, filled from Python objects by the
// module layer (src/python) and read by the key builder, the binder and the launcher.
//
// Arguments form a tree stored flat: the call's top-level arguments are args[0..n), and a
// composite value (list, tuple, dict, value type) names its children as a contiguous run
// args[first_child .. first_child + child_count) further on in the same array. Leaves are
// tensors, scalars and generators; the binder binds each leaf to one field, element or
// component of the parameter's value.
#pragma once

#include <cstdint>
#include <string>

#include "call/tensor_info.h"

namespace sg::call {

/// One entry per Python value kind; the marshalling table (value_kind.h) has a row for each.
enum class ArgKind : uint8_t {
    None = 0,
    Tensor = 1,    ///< a torch tensor (TensorInfo filled); numpy arrays and refs arrive as tensors
    Float = 2,     ///< a Python float (value in number)
    Int = 3,       ///< a Python int
    Bool = 4,      ///< a Python bool
    Grid = 5,      ///< sg.grid(shape): shape in tensor.shape / ndim; number = 1 with a stride or offset
    CallId = 6,    ///< sg.call_id(dims): follows the call shape; `rows` = dims (0: any)
    ThreadId = 7,  ///< sg.thread_id(dims): the linear thread index; `rows` = dims (0: any)
    WangHash = 8,  ///< sg.wang_hash(dim, seed, warmup): the seed the kernel gets in `integer`,
                   ///< `rows` = dim (0: any), offset[0] = warmup
    RandFloat = 9, ///< sg.rand_float(min, max, dim, seed, warmup): number, number2, and as WangHash
    List = 10,     ///< list / tuple: children are the elements
    Dict = 11,     ///< dict: children are the values, `name` the keys (`_type` dropped)
    Value = 12,    ///< sg.float3(...) etc.: children are the components (row-major); rows/cols
};
inline constexpr int kArgKindCount = 13;

/// Where a tensor-kind argument came from: decides what is written back and what is returned.
enum class ArgOrigin : uint8_t {
    Torch = 0,  ///< a torch tensor or nn.Parameter
    NumPy = 1,  ///< a numpy array (wrapped zero-copy on CPU, copied for CUDA)
    Ref = 2,    ///< sg.ValueRef / floatRef / intRef (a small tensor holding the value)
};

const char* arg_kind_name(ArgKind k);

struct ArgInfo {
    ArgKind kind = ArgKind::None;
    ArgOrigin origin = ArgOrigin::Torch;
    uint8_t scalar = 0;     ///< Value: lang::ScalarKind of the components
    uint8_t rows = 0;       ///< Value: vector length or matrix rows; Tensor: a shadegrad Tensor's element dims
    uint8_t cols = 0;       ///< Value: matrix columns (0 for vectors)
    double number = 0;      ///< Float / Bool / Int (exact for |i| < 2^53); RandFloat: min
    double number2 = 0;     ///< RandFloat: max
    int64_t integer = 0;    ///< Int, exactly; WangHash / RandFloat: seed
    int32_t first_child = -1;  ///< List / Dict / Value: index of the first child in the array
    int32_t child_count = 0;
    const char* name = nullptr;  ///< a Dict child: its key (UTF-8, borrowed from the dict)
    uint32_t name_size = 0;
    uint32_t struct_name_size = 0;
    const char* struct_name = nullptr;  ///< Dict: its `_type` value (borrowed), nullptr when absent
    TensorInfo tensor{};    ///< Tensor; Grid uses shape/ndim, and strides for its stride
    int64_t offset[kMaxTensorRank] = {};  ///< Grid: the offset per dimension
    void* object = nullptr; ///< the Python object (borrowed) for tensors
    /// Python type name of an unsupported argument (None kind); for a Tensor on a device other
    /// than the CPU and CUDA, that device's type ("meta", "mps"; nullptr when unknown).
    const char* type_name = nullptr;
};

}  // namespace sg::call
