// src/call/deterministic_launch.cpp — what a deterministic CUDA backward launch needs beyond the
// kernel: the fixed-point variant for gradients the ordered tables cannot take (chosen per
// launch: a table's size is not in the call key), the bounded grid of ordered kernels, the
// extents of ordered and fixed-point tables, and the scratch memory (fixed-point records below
// CallHeader::scratch; reduction sums and ordered partials above it).
#include <algorithm>
#include <cstring>

#include "call/call_plan.h"
#include "call/launch.h"
#include "call/errors.h"
#include "call/graph_capture.h"
#include "runtime/backend.h"

namespace sg::call {

uint64_t fixed_point_params(const UserModule& module, const Glue& glue, codegen::CodegenOptions options,
                            uint64_t fixed) {
    options.fixed_phase = codegen::CodegenOptions::FixedPhase::Accumulate;
    for (;;) {
        options.fixed_params = fixed;
        try {
            (void)generate(module, glue, DeviceType::CUDA, options);
            return fixed;
        } catch (const codegen::OrderingUnsupported& e) {
            // No ordered table for it (an add in a loop, a batch of tables): a fixed-point one.
            if (e.param < 0 || e.param >= 64 || ((fixed >> e.param) & 1) || !options.deterministic) throw;
            fixed |= uint64_t(1) << e.param;
        }
    }
}

const CompiledKernel& CallPlan::backward_kernel(Backward& bw, const std::vector<uint8_t>& block, void* stream) {
    const CompiledKernel& k = bw.kernel;
    if (!runtime::backend(k.device_type).needs_scratch() || k.generated.ordered.empty()) return k;
    // Ordered tables whose per-warp copies exceed shared memory at this launch: fixed point.
    const int64_t warps = std::max<int64_t>(1, (k.loaded ? k.loaded->block_size() : 256) / 32);
    uint64_t fixed = bw.fixed;
    for (const codegen::GeneratedKernel::OrderedTable& t : k.generated.ordered) {
        const int64_t extent = launch::ordered_extent(k, block, t.param);
        if (extent > 0 && extent * warps > t.capacity && t.param < 64) fixed |= uint64_t(1) << t.param;
    }
    if (fixed == bw.fixed) return k;
    std::lock_guard<std::mutex> lock(bw.variants_mutex);
    auto it = bw.variants.find(fixed);
    if (it != bw.variants.end()) return *it->second;
    refuse_during_capture(binding_.function, "deterministic fixed-point backward kernel", binding_.device,
                          binding_.device_index, stream);
    uint64_t compiled = fixed;
    auto variant = std::make_unique<CompiledKernel>(compile_backward(bw, compiled));
    return *bw.variants.emplace(fixed, std::move(variant)).first->second;
}

int64_t launch::ordered_blocks(const CompiledKernel& kernel, int64_t total) {
    const int64_t per_thread = kernel.generated.elements_per_thread;
    const int64_t threads = total / per_thread + (total % per_thread != 0);
    const int64_t block = kernel.loaded ? kernel.loaded->block_size() : 1;
    const int64_t needed = threads / block + (threads % block != 0);
    return codegen::ordered_grid_blocks(needed, kernel.loaded ? kernel.loaded->multiprocessors() : 1);
}

int64_t launch::ordered_extent(const CompiledKernel& kernel, const std::vector<uint8_t>& block, int param) {
    // As sg_ordered_extent (prelude_ordered.inc): the gradient view of a table, else the view.
    const codegen::ParamField& f = kernel.generated.layout.fields.at(size_t(param));
    const codegen::FieldShape& t = f.shape;
    const bool grad = t.has_grad;
    const size_t strides = grad ? f.tensor.grad_strides : f.tensor.strides;
    const size_t inner = grad ? f.tensor.grad_inner : f.tensor.inner;
    auto get = [&](size_t offset) {
        int64_t v;
        std::memcpy(&v, block.data() + offset, sizeof(v));
        return v;
    };
    int64_t last = 0;
    for (int d = 0; d < t.rank; ++d) {
        const int64_t extent = get(f.tensor.shape + size_t(d) * 8), stride = get(strides + size_t(d) * 8);
        if (extent <= 0) return 0;
        if (stride < 0) return -1;
        last += (extent - 1) * stride;
    }
    // The element's last scalar component: vectors inner[0] apart, matrix rows inner[1] apart.
    using Form = codegen::FieldShape::Form;
    const int columns = t.element == Form::Vector ? t.rows : t.element == Form::Matrix ? t.cols : 1;
    const int rows = t.element == Form::Matrix ? t.rows : 1;
    if ((columns > 1 && get(inner) < 0) || (rows > 1 && get(inner + 8) < 0)) return -1;
    return last + (columns > 1 ? (columns - 1) * get(inner) : 0) + (rows > 1 ? (rows - 1) * get(inner + 8) : 0) + 1;
}

size_t launch::scratch_prefix(const CompiledKernel& kernel, const std::vector<uint8_t>& block) {
    size_t bytes = 0;
    if (!runtime::backend(kernel.device_type).needs_scratch()) return 0;
    for (const codegen::GeneratedKernel::FixedTable& t : kernel.generated.fixed)
        bytes += codegen::fixed_table_bytes(ordered_extent(kernel, block, t.param), t.wide);
    // Fast mode's CUDA tree tables (never beside fixed-point ones): a double per entry.
    for (const codegen::GeneratedKernel::TreeTable& t : kernel.generated.tree_tables)
        bytes += codegen::tree_table_bytes(ordered_extent(kernel, block, t.param));
    return bytes;
}

size_t launch::scratch_bytes(const CompiledKernel& kernel, const Glue& glue, const Binding& b,
                               const std::vector<uint8_t>& block) {
    codegen::CallHeader header;
    std::memcpy(&header, block.data(), sizeof(header));
    const codegen::GeneratedKernel& g = kernel.generated;
    if (!runtime::backend(kernel.device_type).needs_scratch() ||
        (g.reduced_slots == 0 && g.ordered.empty() && g.fixed.empty() && g.tree_tables.empty()) ||
        header.total <= 0)
        return 0;
    for (const codegen::GeneratedKernel::FixedTable& t : g.fixed)
        if (ordered_extent(kernel, block, t.param) < 0)
            throw_value_error(b.function + "(): deterministic mode on CUDA does not support the gradient of " +
                              glue_param_name(b, glue, t.param) +
                              " through a view with negative strides; call without deterministic mode, or on the CPU");
    const size_t prefix = scratch_prefix(kernel, block);
    const int64_t per_thread = g.elements_per_thread;
    const int64_t threads = header.total / per_thread + (header.total % per_thread != 0);
    const int64_t block_size = kernel.loaded ? kernel.loaded->block_size() : 1;
    if (g.ordered.empty())
        return prefix + codegen::reduce_scratch_bytes(g.reduced_slots, threads / block_size + (threads % block_size != 0));
    const int64_t blocks = ordered_blocks(kernel, header.total);
    size_t bytes = codegen::reduce_scratch_bytes(g.reduced_slots, blocks);
    const int64_t warps = std::max<int64_t>(1, block_size / 32);
    for (const codegen::GeneratedKernel::OrderedTable& t : g.ordered) {
        const int64_t extent = ordered_extent(kernel, block, t.param);
        if (extent < 0 || extent * warps > t.capacity)
            throw_value_error(b.function + "(): deterministic mode on CUDA supports the gradient of " +
                              glue_param_name(b, glue, t.param) + " up to " + std::to_string(t.capacity / warps) +
                              " elements (a copy per warp in shared memory), but it spans " +
                              (extent < 0 ? std::string("a view with negative strides") : std::to_string(extent)) +
                              "; call without deterministic mode, or on the CPU");
        bytes += (size_t(blocks) * size_t(extent) * size_t(t.accum_bytes) + 15) & ~size_t(15);
    }
    return prefix + bytes;
}

}  // namespace sg::call
