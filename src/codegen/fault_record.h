// src/codegen/fault_record.h — the kernel fault record: where a generated kernel writes the first
// fault of a launch (an index out of bounds, a loop past its [MaxIters] bound, an integer
// division by zero), and the fault kinds. Part of the kernel ABI: the device prelude declares the
// same struct (prelude_tensor.inc: sg_fault), and CallHeader::fault points at one.
//
// Protocol (both targets): a faulting thread claims the record (compare-and-swap of `claim`
// from 0 to 1), writes the details, makes them visible (CUDA: __threadfence_system, the record
// may live in mapped host memory) and only then publishes `code`. A reader that sees a non-zero
// `code` therefore sees complete details; it clears the record by zeroing `code` and then
// `claim`. Later faults of the same launch find the record claimed and are dropped: the first
// fault wins.
#pragma once

#include <cstdint>

namespace sg::codegen {

/// What went wrong (FaultRecord::code). Values are ABI: the prelude spells them SG_FAULT_*.
enum class FaultKind : uint32_t {
    None = 0,
    /// A tensor index outside its dimension's extent (param, dim, index, extent), or a dynamic
    /// index into a local array, vector or matrix (param = -1, extent = its length). The access
    /// was skipped (a load yields zero).
    IndexOutOfBounds = 1,
    /// A loop whose reverse pass keeps a tape ran more iterations than its [MaxIters(extent)]
    /// (index = the iteration that exceeded it). The thread stopped there.
    LoopPastMaxIters = 2,
    /// An integer division or remainder by zero (the result was 0).
    DivisionByZero = 3,
};

struct FaultRecord {
    uint32_t code;      ///< FaultKind, published last; 0: no fault
    uint32_t claim;     ///< 1 once a thread owns the record
    int32_t site;       ///< the launch site (CallHeader::site) of the faulting kernel
    int32_t param;      ///< kernel parameter (parameter-block field) of the tensor; -1: none
    int32_t dim;        ///< tensor dimension of an out-of-bounds index; -1: none
    int32_t line;       ///< source line of the faulting operation in the user module; 0: unknown
    int32_t column;     ///< its column (1-based); 0: unknown
    int32_t reserved;
    int64_t index;      ///< the offending index, or the iteration past the bound
    int64_t extent;     ///< the extent of that dimension, the array length, or the MaxIters bound
};
static_assert(sizeof(FaultRecord) == 48, "FaultRecord is part of the kernel ABI");

}  // namespace sg::codegen
