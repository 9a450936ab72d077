// src/call/arg_info.h — the description of one call argument, filled from Python objects by the
// module layer (src/python) and read by the key builder, the binder and the launcher.
#pragma once

#include <cstdint>
#include <string>

#include "call/tensor_info.h"

namespace sg::call {

enum class ArgKind : uint8_t {
    None = 0,
    Tensor = 1,   ///< a torch tensor (TensorInfo filled)
    Float = 2,    ///< a Python float (value in number)
    Int = 3,      ///< a Python int
    Bool = 4,     ///< a Python bool
    Grid = 5,     ///< sg.grid(shape): shape in tensor.shape / tensor.ndim
    CallId = 6,   ///< sg.call_id(): follows the call shape
};

const char* arg_kind_name(ArgKind k);

struct ArgInfo {
    ArgKind kind = ArgKind::None;
    double number = 0;      ///< Float / Bool / Int (exact for |i| < 2^53)
    int64_t integer = 0;    ///< Int, exactly
    TensorInfo tensor{};    ///< Tensor; Grid uses shape/ndim only
    void* object = nullptr; ///< the Python object (borrowed) for tensors
    const char* type_name = nullptr;  ///< Python type name of an unsupported argument (None kind)
};

}  // namespace sg::call
