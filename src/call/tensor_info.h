// src/call/tensor_info.h — TensorInfo: everything the core needs to know about one tensor.
//
// Both torch bridges (the native one in src/bridge, the Python fallback in
// python/shadegrad/_torch_fallback.py) only fill this struct; the call key and the launch are
// built from it in C++ (call_key.h). The layout is part of the bridge ABI: the bridge reports
// sizeof(TensorInfo) and the core refuses a bridge whose size differs. Plain C layout, no
// padding holes (every byte is defined, so two fills of the same tensor compare equal bytewise).
#pragma once

#include <cstdint>

#include "base/device_type.h"  // DeviceType, part of this record

namespace sg {

inline constexpr int kMaxTensorRank = 8;

/// Element types, numbered as in the bridge ABI (stable: never renumber).
enum class DType : int32_t {
    Unknown = 0,
    Bool = 1,
    UInt8 = 2,
    Int8 = 3,
    Int16 = 4,
    Int32 = 5,
    Int64 = 6,
    Float16 = 7,
    BFloat16 = 8,
    Float32 = 9,
    Float64 = 10,
    UInt16 = 11,
    UInt32 = 12,
    UInt64 = 13,
};

const char* dtype_name(DType d);   ///< torch spelling: "float32", "int64", ...
int dtype_size(DType d);           ///< bytes per element (0 for Unknown)

struct TensorInfo {
    void* data;                       ///< address of element [0, ..., 0] (storage + offset)
    int64_t shape[kMaxTensorRank];    ///< extents; entries past ndim are 0
    int64_t strides[kMaxTensorRank];  ///< in elements; entries past ndim are 0
    int32_t ndim;
    DType dtype;
    DeviceType device_type;
    int32_t device_index;             ///< -1 for CPU
    uint8_t requires_grad;
    uint8_t is_leaf;
    uint8_t reserved[6];              ///< zero
    int64_t numel;
    uint64_t version;                 ///< torch's version counter (in-place modification check)
};
static_assert(sizeof(TensorInfo) == 176, "TensorInfo layout is part of the bridge ABI");

}  // namespace sg
