// src/call/call_plan.cpp — plan construction, parameter-block packing, and launches and zero
// fills through the kernel's backend (runtime/backend.h; the faults it reports are raised by
// kernel_faults.h). Deterministic CUDA launches' variants, grids and scratch:
// deterministic_launch.cpp.
#include "call/call_plan.h"
#include "call/call_group.h"
#include "call/launch.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>

#include "call/errors.h"
#include "call/kernel_faults.h"
#include "call/kernel_index.h"
#include "call/scalar_store.h"
#include "runtime/backend.h"
#include "runtime/module_cache.h"  // ms_since

namespace sg::call {

codegen::CodegenOptions kernel_options(codegen::CodegenOptions options, const Glue& glue) {
    options.call_shaped_params = 0;
    for (size_t k = 0; k < glue.params.size() && k < 64; ++k) {
        const GlueParam& g = glue.params[k];
        const bool call_shaped = g.source == ParamSource::Result || g.source == ParamSource::ResultGrad ||
                                 g.source == ParamSource::ArgGrad || g.source == ParamSource::ArgOutGrad ||
                                 (g.source == ParamSource::ArgTensor && !g.whole);
        if (call_shaped) options.call_shaped_params |= uint64_t(1) << k;
        if (g.source == ParamSource::ArgGrad && g.grad == GradStrategy::Reduce)
            options.reduced_params |= uint64_t(1) << k;
        // A whole tensor with a gradient view (its type is the tensor type) of scalar or vector elements.
        const bool small_element = g.source == ParamSource::ArgTensor && g.grad_view && g.type && g.type->is_tensor() &&
                                   g.type->element && (g.type->element->is_scalar() || g.type->element->is_vector());
        if (options.deterministic) {
            // Colliding gradients in a fixed order (CUDA; the CPU runs a deterministic launch in order).
            if ((g.source == ParamSource::ArgGrad && g.grad == GradStrategy::Atomic) ||
                (g.source == ParamSource::ArgTensor && g.grad == GradStrategy::Collide && g.grad_view && small_element &&
                 lang::is_floating(g.type->element->scalar)))
                options.ordered_params |= uint64_t(1) << k;
            continue;
        }
        const bool float_element = g.type && g.type->is_tensor() && g.type->element &&
                                   (g.type->element->is_scalar() || g.type->element->is_vector()) &&
                                   (g.type->element->scalar == lang::ScalarKind::Float ||
                                    g.type->element->scalar == lang::ScalarKind::Double);
        // A table read only at the call element's own index stores its gradient (codegen decides:
        // stored_grads.cpp; autograd_node.cpp then skips the fill where the buffer is the call's shape).
        if (g.source == ParamSource::ArgTensor && g.grad == GradStrategy::Collide && g.grad_view)
            options.stored_table_params |= uint64_t(1) << k;
        if (g.source == ParamSource::ArgTensor && g.grad == GradStrategy::Collide && g.grad_view && float_element) {
            options.privatized_params |= uint64_t(1) << k;   // CUDA: a shared-memory copy per block
            options.chunk_table_params |= uint64_t(1) << k;  // CPU: a double copy per chunk
        }
        // A partially broadcast gradient buffer: its entries collide too (CPU: a copy per chunk,
        // where codegen finds float or double scalar or vector elements).
        if (g.source == ParamSource::ArgGrad && g.grad == GradStrategy::Atomic)
            options.chunk_table_params |= uint64_t(1) << k;
    }
    return options;
}

/// The user's name for kernel parameter `param` of `glue` (a gradient or a table).
std::string glue_param_name(const Binding& b, const Glue& glue, int param) {
    if (param < 0 || size_t(param) >= glue.params.size()) return "a gradient";
    const int i = glue.params[size_t(param)].binding;
    return i >= 0 && size_t(i) < b.params.size() ? "'" + b.params[size_t(i)].name + "'" : "a gradient";
}

namespace {

/// Deterministic mode on CUDA: reduced gradients are summed in a fixed order, and colliding ones
/// (Atomic, Collide) go through ordered tables (prelude_ordered.inc) of scalar or vector float
/// elements, or through fixed-point tables (prelude_fixed.inc) where those cannot be (matrix
/// elements, a batch of tables, adds in a loop, too large for shared memory). Other elements
/// (structs, integers) have no fixed-order scheme yet and are refused; the CPU backend runs a
/// deterministic backward's threads in order.
void check_deterministic(const Binding& b) {
    if (!b.deterministic || b.device != DeviceType::CUDA) return;
    for (const ParamBinding& p : b.params) {
        if (!p.requires_grad || (p.grad_strategy != GradStrategy::Atomic && p.grad_strategy != GradStrategy::Collide))
            continue;
        const bool whole = p.kind == BindingKind::WholeTensor;
        const lang::Type* e = whole ? p.type->element : array_inner(p.type);
        if ((e->is_scalar() || e->is_vector() || e->is_matrix()) && lang::is_floating(e->scalar)) continue;
        throw_value_error(b.function + "(): deterministic mode on CUDA does not support the gradient of '" + p.name +
                          "' yet (its elements are " + lang::type_name(e) +
                          "; fixed-order sums take scalar, vector and matrix float elements); call without "
                          "deterministic mode, or on the CPU");
    }
}

/// What a fault of the kernel of `glue` names: the function and, per kernel parameter, the user's.
int32_t register_site(const UserModule& module, const Binding& b, const Glue& glue, bool backward) {
    LaunchSite site;
    site.function = b.function;
    site.backward = backward;
    site.file = module.name().find('.') == std::string::npos ? module.name() + ".slang" : module.name();
    for (const GlueParam& g : glue.params) {
        // `binding` indexes Binding::params except for results (a result leaf) and extents.
        const bool names_param = g.source == ParamSource::ArgTensor || g.source == ParamSource::ArgGrad ||
                                 g.source == ParamSource::ArgOutGrad || g.source == ParamSource::Uniform;
        const std::string name = names_param && g.binding >= 0 && size_t(g.binding) < b.params.size()
                                     ? b.params[size_t(g.binding)].name
                                     : std::string();
        switch (g.source) {
        case ParamSource::CallExtent: site.params.push_back("the call shape"); break;
        case ParamSource::Result: site.params.push_back("the result"); break;
        case ParamSource::ResultGrad: site.params.push_back("the gradient of the result"); break;
        case ParamSource::ArgGrad: site.params.push_back("the gradient of parameter '" + name + "'"); break;
        case ParamSource::ArgOutGrad: site.params.push_back("the gradient of the written parameter '" + name + "'"); break;
        case ParamSource::ArgTensor:
        case ParamSource::Uniform: {
            const int slot = names_param && g.binding >= 0 ? b.params[size_t(g.binding)].param : -1;
            const bool global = slot >= 0 && size_t(slot) < b.slots.size() && !b.slots[size_t(slot)].global.empty();
            site.params.push_back((global ? "global '" : "parameter '") + name + "'");  // global_bindings.h
            break;
        }
        }
    }
    return register_launch_site(std::move(site));
}

}  // namespace

CallPlan::CallPlan(const UserModule& module, Binding binding, const CallKey& key, const codegen::CodegenOptions& options,
                   std::shared_ptr<const UserModule> owner)
    : module_(module), binding_(std::move(binding)), options_(options), key_text_(render_call_key(key)) {
    options_.call_rank = binding_.call_rank;  // fixed by the key
    options_.deterministic = binding_.deterministic;
    options_.fast_math = binding_.fast_math;
    if (binding_.autograd) check_deterministic(binding_);
    for (size_t i = 0; i < binding_.params.size(); ++i)
        if (binding_.params[i].requires_grad) grad_mask_ |= uint64_t(1) << i;
    const auto glue_start = std::chrono::steady_clock::now();
    forward_glue_ = make_forward_glue(binding_, options_.index_64bit);
    add_plan_stats(PlanStats{.glue_ms = runtime::ms_since(glue_start)});
    const codegen::CodegenOptions full = kernel_options(options_, forward_glue_);
    const DeviceType device = binding_.device;
    const int index = binding_.device_index;
    if (owner == nullptr || !quick_first_kernel(device, full)) {
        forward_ = cached_kernel(module_, forward_glue_, full, device, index);
    } else if (std::optional<CompiledKernel> k = indexed_kernel(module_, forward_glue_, full, device, index)) {
        forward_ = *std::move(k);  // a later process: the full kernel is on disk
    } else {
        forward_ = cached_kernel(module_, forward_glue_, quick_kernel_options(full), device, index);
        forward_.site = register_site(module_, binding_, forward_glue_, false);
        upgrade_ = KernelUpgrade::start(std::move(owner), forward_glue_, full, device, index, forward_);
        return;
    }
    forward_.site = register_site(module_, binding_, forward_glue_, false);
}

static Binding masked(const Binding& b, uint64_t mask) {
    Binding out = b;
    for (size_t i = 0; i < out.params.size(); ++i) out.params[i].requires_grad = (mask >> i) & 1;
    return out;
}

CallPlan::Backward* CallPlan::find_backward(uint64_t mask) {
    std::lock_guard<std::mutex> lock(backward_mutex_);
    auto it = backwards_.find(mask);
    return it != backwards_.end() ? it->second.get() : nullptr;
}

CallPlan::Backward& CallPlan::backward(uint64_t mask) {
    std::lock_guard<std::mutex> lock(backward_mutex_);
    auto it = backwards_.find(mask);
    if (it != backwards_.end()) return *it->second;
    auto bw = std::make_unique<Backward>();
    bw->binding = masked(binding_, mask);
    const auto glue_start = std::chrono::steady_clock::now();
    bw->glue = make_backward_glue(bw->binding, options_.index_64bit);
    add_plan_stats(PlanStats{.glue_ms = runtime::ms_since(glue_start)});
    bw->kernel = compile_backward(*bw, bw->fixed);
    return *backwards_.emplace(mask, std::move(bw)).first->second;
}

CompiledKernel CallPlan::compile_backward(const Backward& bw, uint64_t& fixed) const {
    codegen::CodegenOptions options = kernel_options(options_, bw.glue);
    options.fixed_params = fixed;
    options.fixed_phase = codegen::CodegenOptions::FixedPhase::Accumulate;
    CompiledKernel kernel;
    try {
        try {
            kernel = cached_kernel(module_, bw.glue, options, binding_.device, binding_.device_index);
        } catch (const codegen::OrderingUnsupported&) {
            if (!options.deterministic || binding_.device != DeviceType::CUDA) throw;
            fixed = fixed_point_params(module_, bw.glue, options, fixed);
            options.fixed_params = fixed;
            kernel = cached_kernel(module_, bw.glue, options, binding_.device, binding_.device_index);
        }
    } catch (const codegen::OrderingUnsupported& e) {
        throw_value_error(binding_.function + "(): deterministic mode on CUDA does not support the gradient of " +
                          glue_param_name(bw.binding, bw.glue, e.param) + " yet: " + e.what() +
                          "; call without deterministic mode, or on the CPU");
    }
    kernel.site = register_site(module_, bw.binding, bw.glue, true);
    kernel.sequential = binding_.deterministic;
    if (!kernel.generated.fixed.empty()) {
        options.fixed_phase = codegen::CodegenOptions::FixedPhase::Scan;
        auto scan = std::make_shared<CompiledKernel>(
            cached_kernel(module_, bw.glue, options, binding_.device, binding_.device_index));
        SG_INTERNAL_ASSERT(scan->generated.layout.size == kernel.generated.layout.size &&
                               scan->generated.fixed.size() == kernel.generated.fixed.size(),
                           "fixed-point scan variant does not match its kernel");
        // The scan keeps per-entry counts exactly where the accumulate kernel reads them.
        for (size_t j = 0; j < scan->generated.fixed.size(); ++j)
            SG_INTERNAL_ASSERT(scan->generated.fixed[j].param == kernel.generated.fixed[j].param &&
                                   scan->generated.fixed[j].adds == kernel.generated.fixed[j].adds,
                               "fixed-point scan variant does not match its kernel");
        scan->site = kernel.site;
        kernel.fixed_scan = std::move(scan);
    }
    return kernel;
}

namespace {

template <class T>
void put(std::vector<uint8_t>& block, size_t offset, T value) {
    std::memcpy(block.data() + offset, &value, sizeof(T));
}

/// Writes a tensor view: `dims` leading dims of `t`, plus the inner strides of the element's
/// trailing dims. With `call_extent` (an argument read at the call index), an extent-1 dim is
/// broadcast: stride 0, and the call's extent as the view's extent so that bounds checks pass.
/// `broadcast_dims`: how many of the leading dims are call dims (array dims after them never broadcast).
void put_view(std::vector<uint8_t>& block, size_t data, size_t shape, size_t strides, size_t inner, const TensorInfo& t,
              int dims, int elem_dims, const int64_t* call_extent, int broadcast_dims = kMaxTensorRank) {
    put<const void*>(block, data, t.data);
    for (int d = 0; d < dims; ++d) {
        bool broadcast = call_extent && d < broadcast_dims && t.shape[d] == 1;
        if (shape) put<int64_t>(block, shape + size_t(d) * 8, broadcast ? call_extent[d] : t.shape[d]);
        int64_t stride = broadcast ? 0 : t.strides[d];
        put<int64_t>(block, strides + size_t(d) * 8, stride);
    }
    int64_t in0 = elem_dims >= 1 ? t.strides[t.ndim - 1] : 0;
    int64_t in1 = elem_dims >= 2 ? t.strides[t.ndim - 2] : 0;
    put<int64_t>(block, inner, in0);
    put<int64_t>(block, inner + 8, in1);
}

/// Packs `a`'s number `component` (see UniformComponent) as a scalar of kind `t->scalar`.
void put_uniform(std::vector<uint8_t>& block, size_t offset, const codegen::FieldShape* t, const ArgInfo& a, int component) {
    double v = a.kind == ArgKind::Int ? double(a.integer) : a.number;
    int64_t i = a.kind == ArgKind::Int || a.kind == ArgKind::Bool ? a.integer : int64_t(v);
    if (component == kUniformMax) v = a.number2;
    if (component == kUniformSeed) v = double(i = a.integer);
    if (component == kUniformWarmup) v = double(i = a.offset[0]);
    if (component >= kUniformGridStride && component < kUniformGridStride + kMaxTensorRank)
        v = double(i = a.tensor.strides[component - kUniformGridStride]);
    if (component >= kUniformGridOffset && component < kUniformGridOffset + kMaxTensorRank)
        v = double(i = a.offset[component - kUniformGridOffset]);
    store_scalar(block.data() + offset, t->scalar, v, i);
}

/// A tensor view over the call dims for an argument mapped by fn.map(): call dim d of the view
/// reads the argument dim mapped there (stride 0 where none is, or where the extent is 1).
void put_mapped_view(std::vector<uint8_t>& block, size_t data, size_t shape, size_t strides, size_t inner,
                     const TensorInfo& t, const ParamBinding& p, const int64_t* call_extent) {
    put<const void*>(block, data, t.data);
    for (int d = 0; d < p.call_dims; ++d) {
        int64_t stride = 0;
        for (size_t i = 0; i < p.dim_map.size(); ++i)
            if (p.dim_map[i] == d && t.shape[i] != 1) stride = t.strides[i];
        if (shape) put<int64_t>(block, shape + size_t(d) * 8, call_extent[d]);
        put<int64_t>(block, strides + size_t(d) * 8, stride);
    }
    int64_t in0 = p.elem_dims >= 1 ? t.strides[t.ndim - 1] : 0;
    int64_t in1 = p.elem_dims >= 2 ? t.strides[t.ndim - 2] : 0;
    put<int64_t>(block, inner, in0);
    put<int64_t>(block, inner + 8, in1);
}

}  // namespace

void launch::pack(const CompiledKernel& kernel, const Glue& glue, const Binding& b, const LaunchData& data,
                    std::vector<uint8_t>& block) {
    const codegen::ParamLayout& layout = kernel.generated.layout;
    block.assign(layout.size, 0);
    codegen::CallHeader header{};
    int64_t total = 1;
    for (int d = 0; d < 8; ++d) header.shape[d] = d < b.call_rank ? data.call_shape[d] : 1;
    for (int d = 0; d < b.call_rank; ++d) total *= data.call_shape[d];
    header.total = total;
    header.rank = b.call_rank;
    header.scratch = data.scratch;
    std::memcpy(block.data(), &header, sizeof(header));
    SG_INTERNAL_ASSERT(layout.fields.size() == glue.params.size(), "glue/layout parameter count mismatch");
    for (size_t k = 0; k < glue.params.size(); ++k) {
        const GlueParam& g = glue.params[k];
        const codegen::ParamField& f = layout.fields[k];
        const codegen::TensorFieldLayout& tl = f.tensor;
        switch (g.source) {
        case ParamSource::Uniform:
            put_uniform(block, f.offset, &f.shape, data.args[b.params[size_t(g.binding)].arg], g.component);
            break;
        case ParamSource::CallExtent:
            if (f.shape.scalar == lang::ScalarKind::Int64) put<int64_t>(block, f.offset, data.call_shape[g.component]);
            else put<int32_t>(block, f.offset, int32_t(data.call_shape[g.component]));
            break;
        case ParamSource::Result:
        {
            const ResultLeaf& leaf = b.result_leaves[size_t(g.binding)];
            put_view(block, tl.data, tl.shape, tl.strides, tl.inner, data.result[g.binding], b.call_rank + leaf.array_dims,
                     int(leaf.elem_shape.size()) - leaf.array_dims, nullptr);
        }
            break;
        case ParamSource::ResultGrad:
        {
            const int k = g.binding < 0 ? 0 : g.binding;
            const ResultLeaf& leaf = b.result_leaves[size_t(k)];
            put_view(block, tl.data, tl.shape, tl.strides, tl.inner, data.result_grad[k], b.call_rank + leaf.array_dims,
                     int(leaf.elem_shape.size()) - leaf.array_dims, nullptr);
        }
            break;
        case ParamSource::ArgTensor: {
            const ParamBinding& p = b.params[size_t(g.binding)];
            const TensorInfo& t = data.args[p.arg].tensor;
            int dims = g.whole ? t.ndim - p.elem_dims : p.call_dims + p.array_dims;
            int elem = p.elem_dims - (g.whole ? 0 : p.array_dims);
            // A batch of whole tensors is read at the call index in its leading dims too.
            const int64_t* extents = g.whole && p.call_dims == 0 ? nullptr : data.call_shape + (b.call_rank - p.call_dims);
            if (!p.dim_map.empty()) put_mapped_view(block, tl.data, tl.shape, tl.strides, tl.inner, t, p, extents);
            else put_view(block, tl.data, tl.shape, tl.strides, tl.inner, t, dims, elem, extents, p.call_dims);
            if (g.grad_view) {
                const TensorInfo* grad = data.binding_grads ? data.binding_grads[g.binding] : nullptr;
                SG_INTERNAL_ASSERT(grad != nullptr, "missing gradient buffer for '" + p.name + "'");
                put_view(block, tl.grad_data, 0, tl.grad_strides, tl.grad_inner, *grad, dims, elem, extents, p.call_dims);
            }
            break;
        }
        case ParamSource::ArgGrad:
        case ParamSource::ArgOutGrad: {
            const ParamBinding& p = b.params[size_t(g.binding)];
            const TensorInfo* const* grads = g.source == ParamSource::ArgGrad ? data.binding_grads : data.binding_out_grads;
            const TensorInfo* grad = grads ? grads[g.binding] : nullptr;
            SG_INTERNAL_ASSERT(grad != nullptr, "missing gradient buffer for '" + p.name + "'");
            const int64_t* extents = data.call_shape + (b.call_rank - p.call_dims);
            if (!p.dim_map.empty()) put_mapped_view(block, tl.data, tl.shape, tl.strides, tl.inner, *grad, p, extents);
            else
                put_view(block, tl.data, tl.shape, tl.strides, tl.inner, *grad, p.call_dims + p.array_dims,
                         p.elem_dims - p.array_dims, extents, p.call_dims);
            break;
        }
        }
    }
}

void launch::run(const CompiledKernel& kernel, std::vector<uint8_t>& block, void* stream, const std::string& function) {
    codegen::CallHeader header;
    std::memcpy(&header, block.data(), sizeof(header));
    if (header.total == 0) return;
    const runtime::Backend& backend = runtime::backend(kernel.device_type);
    const codegen::GeneratedKernel& g = kernel.generated;
    SG_INTERNAL_ASSERT(header.scratch != nullptr || !backend.needs_scratch() ||
                           (g.reduced_slots == 0 && g.ordered.empty() && g.fixed.empty() && g.tree_tables.empty()),
                       "missing scratch for a deterministic kernel");
    runtime::LaunchRequest request;
    request.kernel = kernel.loaded.get();
    request.block = block.data();
    request.block_size = block.size();
    request.total = header.total;
    request.stream = stream;
    request.site = kernel.site;
    request.elements_per_thread = g.elements_per_thread;
    if (kernel.fixed_scan) {
        request.scan = kernel.fixed_scan->loaded.get();
        request.scan_site = kernel.fixed_scan->site;
        request.scan_elements_per_thread = kernel.fixed_scan->generated.elements_per_thread;
    }
    if (!g.ordered.empty()) request.grid_blocks = ordered_blocks(kernel, header.total);
    if (!g.final_entry.empty())
        for (const codegen::GeneratedKernel::OrderedTable& t : g.ordered)
            request.final_extent = std::max(request.final_extent, ordered_extent(kernel, block, t.param));
    if (!g.fixed_entry.empty())
        for (const codegen::GeneratedKernel::FixedTable& t : g.fixed)
            request.fixed_extent = std::max(request.fixed_extent, ordered_extent(kernel, block, t.param));
    request.sequential = kernel.sequential;
    if (g.call_group_block > 0) call_group_launch(kernel, header, request);  // call_group.h
    request.wait = debug_mode();
    const runtime::LaunchResult result = backend.launch(request);
    if (result.origin != runtime::FaultOrigin::None) [[unlikely]]
        raise_launch_fault(result, backend);
    (void)function;
}

void launch::set_scratch(std::vector<uint8_t>& block, void* scratch) {
    std::memcpy(block.data() + offsetof(codegen::CallHeader, scratch), &scratch, sizeof(scratch));
}

void launch::zero(const CompiledKernel& kernel, void* data, size_t bytes, void* stream) {
    runtime::backend(kernel.device_type).zero(*kernel.loaded, data, bytes, stream);
}

}  // namespace sg::call
