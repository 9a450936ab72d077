// src/call/call_options.cpp — the option bits of a call (see call_options.h).
#include "call/call_options.h"

namespace sg::call {
namespace {

/// Whether some tensor's element offsets or the call's thread count may reach 2^31.
bool needs_64bit_index(const ArgInfo* args, size_t count) {
    constexpr int64_t kLimit = int64_t(1) << 31;
    for (size_t i = 0; i < count; ++i) {
        const ArgInfo& a = args[i];
        if (a.kind != ArgKind::Tensor && a.kind != ArgKind::Grid) continue;
        int64_t span = 1, total = 1;
        for (int d = 0; d < a.tensor.ndim; ++d) {
            int64_t e = a.tensor.shape[d];
            if (e == 0) return false;
            int64_t s = a.tensor.strides[d] < 0 ? -a.tensor.strides[d] : a.tensor.strides[d];
            span += (e - 1) * s;
            total = total > kLimit / e ? kLimit : total * e;
            if (span >= kLimit || total >= kLimit) return true;
        }
    }
    return false;
}

struct ByteRange {
    uintptr_t begin = 0, end = 0;  ///< [begin, end); empty for a tensor without elements
};

/// The bytes a tensor's elements occupy, from its lowest to one past its highest element.
ByteRange byte_range(const TensorInfo& t) {
    const auto base = reinterpret_cast<uintptr_t>(t.data);
    const auto size = uintptr_t(dtype_size(t.dtype) > 0 ? dtype_size(t.dtype) : 1);
    intptr_t low = 0, high = 0;
    for (int d = 0; d < t.ndim; ++d) {
        if (t.shape[d] == 0) return {};
        const intptr_t step = intptr_t(t.strides[d]) * intptr_t(t.shape[d] - 1) * intptr_t(size);
        (step < 0 ? low : high) += step;
    }
    return {base + uintptr_t(low), base + uintptr_t(high) + size};
}

/// Whether two tensor arguments share bytes. Conservative: ranges, not exact element sets.
bool tensors_overlap(const ArgInfo* args, size_t count) {
    ByteRange ranges[16];
    size_t n = 0;
    for (size_t i = 0; i < count; ++i) {
        if (args[i].kind != ArgKind::Tensor || !args[i].tensor.data) continue;
        const ByteRange r = byte_range(args[i].tensor);
        if (r.begin == r.end) continue;
        if (n == sizeof ranges / sizeof ranges[0]) return true;  // too many to compare cheaply
        for (size_t j = 0; j < n; ++j)
            if (r.begin < ranges[j].end && ranges[j].begin < r.end) return true;
        ranges[n++] = r;
    }
    return false;
}

}  // namespace

uint32_t call_options(const ArgInfo* args, size_t count) {
    uint32_t options = 0;
    if (needs_64bit_index(args, count)) options |= kOption64BitIndex;
    if (tensors_overlap(args, count)) options |= kOptionTensorsOverlap;
    return options;
}

codegen::CodegenOptions codegen_options(uint32_t options, DeviceType device, bool /*debug*/) {
    codegen::CodegenOptions out;
    out.index_64bit = (options & kOption64BitIndex) != 0;
    // Both backends check: a bad index must neither crash the process (CPU) nor corrupt memory or
    // the context (CUDA); faults reach Python as errors (kernel_faults.h). Debug mode only adds
    // waiting for each launch, which the call layer does.
    out.debug_checks = true;
    out.readonly_loads = device == DeviceType::CUDA && (options & kOptionTensorsOverlap) == 0;
    return out;
}

}  // namespace sg::call
