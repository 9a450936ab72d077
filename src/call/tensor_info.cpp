// src/call/tensor_info.cpp — names and sizes of the bridge's element types.
#include "call/tensor_info.h"

namespace sg {

const char* dtype_name(DType d) {
    switch (d) {
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::UInt16: return "uint16";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Unknown: break;
    }
    return "unsupported dtype";
}

int dtype_size(DType d) {
    switch (d) {
    case DType::Bool: case DType::UInt8: case DType::Int8: return 1;
    case DType::Int16: case DType::Float16: case DType::BFloat16: case DType::UInt16: return 2;
    case DType::Int32: case DType::Float32: case DType::UInt32: return 4;
    case DType::Int64: case DType::Float64: case DType::UInt64: return 8;
    case DType::Unknown: break;
    }
    return 0;
}

}  // namespace sg
