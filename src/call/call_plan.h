// src/call/call_plan.h — a cached call plan: the binding, the forward kernel, the backward
// kernel for the key's grad mask (compiled on first backward), and the packing of a parameter
// block from one call's tensors.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "call/binder.h"
#include "call/call_key.h"
#include "call/compile_kernel.h"
#include "call/glue.h"
#include "call/kernel_upgrade.h"

namespace sg::call {

/// The tensors of one launch, as described by the bridge.
struct LaunchData {
    const ArgInfo* args = nullptr;           ///< the call's arguments (bindings index into them)
    const int64_t* call_shape = nullptr;     ///< call_rank extents
    const TensorInfo* result = nullptr;      ///< result tensors, one per Binding::result_leaves entry (forward)
    const TensorInfo* result_grad = nullptr; ///< incoming gradients of the result leaves (backward)
    /// Per binding: gradient buffer of an input in the mask, or incoming gradient of an output
    /// tensor (backward); nullptr otherwise.
    const TensorInfo* const* binding_grads = nullptr;
    /// Per binding: the incoming gradient of an inout parameter's written value (backward), whose
    /// binding_grads entry is the gradient of its old value; nullptr otherwise.
    const TensorInfo* const* binding_out_grads = nullptr;
    /// Deterministic CUDA kernels with reduced gradients, ordered or fixed-point tables:
    /// scratch_bytes() of device memory whose first scratch_prefix() + 16 bytes are zero, the
    /// header's pointer scratch_prefix() bytes in (CallHeader::scratch; or set_scratch() after
    /// packing); nullptr otherwise.
    void* scratch = nullptr;
};

/// The codegen options of one glue's kernel from the call's: which of its parameters are
/// call-shaped views (accessed at the call index without a bounds check), reduced gradients
/// (GradStrategy::Reduce) and privatizable gradient tables (GradStrategy::Collide).
codegen::CodegenOptions kernel_options(codegen::CodegenOptions options, const Glue& glue);

/// The user's name for kernel parameter `param` of `glue` ("'table'", or "a gradient").
std::string glue_param_name(const Binding& b, const Glue& glue, int param);

/// Deterministic CUDA (deterministic_launch.cpp): `fixed` plus every gradient of `glue`'s kernel that codegen cannot order
/// (OrderingUnsupported: added to in a loop, a batch of tables) — the CodegenOptions::fixed_params
/// to compile it with. Runs the generator only (no backend). Rethrows OrderingUnsupported for an
/// add that neither scheme takes.
uint64_t fixed_point_params(const UserModule& module, const Glue& glue, codegen::CodegenOptions options, uint64_t fixed);

class CallPlan {
public:
    /// `owner` (the module's owner, when the caller has one) lets a cold plan start with a kernel
    /// quick to compile and take its full kernel from the background (kernel_upgrade.h).
    CallPlan(const UserModule& module, Binding binding, const CallKey& key, const codegen::CodegenOptions& options,
             std::shared_ptr<const UserModule> owner = nullptr);

    const Binding& binding() const { return binding_; }
    const Glue& forward_glue() const { return forward_glue_; }
    /// The forward kernel: the full one once a background compile has loaded it (kernel_upgrade.h).
    /// Both take the same parameter block, so one packed for either launches either.
    const CompiledKernel& forward() const {
        if (upgrade_ != nullptr) [[unlikely]]
            if (const CompiledKernel* full = upgrade_->ready()) return *full;
        return forward_;
    }
    /// The background compile of the full forward kernel; null when the plan started with it.
    const KernelUpgrade* forward_upgrade() const { return upgrade_.get(); }
    /// The grad mask of this plan: bit i set when binding i requires grad.
    uint64_t grad_mask() const { return grad_mask_; }
    struct Backward {
        Binding binding;   ///< the plan's binding with requires_grad set per mask
        Glue glue;
        /// Deterministic CUDA: the ordered tables wherever they fit the kernel (fixed-point tables
        /// for the gradients added to in a loop, of a batch of tables, with matrix elements).
        CompiledKernel kernel;
        uint64_t fixed = 0;  ///< CodegenOptions::fixed_params of `kernel`
        /// Variants with more fixed-point tables (ordered tables too large for shared memory at a
        /// launch: the size is not in the call key), by fixed_params; compiled on first use.
        std::mutex variants_mutex;
        std::map<uint64_t, std::unique_ptr<CompiledKernel>> variants;
    };
    /// The backward kernel for `mask` (normally grad_mask(); a subset when backward needs fewer
    /// gradients than forward promised), compiled on first use. Thread-safe.
    Backward& backward(uint64_t mask);
    /// The backward kernel for `mask` when it is compiled already, else nullptr. Thread-safe.
    Backward* find_backward(uint64_t mask);
    /// The kernel of `bw` for a launch packed in `block`: bw.kernel, or (deterministic CUDA) the
    /// variant that sums in fixed point the ordered tables too large for shared memory, compiled
    /// on first use (refused inside a CUDA graph capture on `stream`). Thread-safe.
    const CompiledKernel& backward_kernel(Backward& bw, const std::vector<uint8_t>& block, void* stream);
    const std::string& key_text() const { return key_text_; }

private:
    /// Compiles the backward kernel of `bw` with `fixed` as CodegenOptions::fixed_params, adding
    /// the gradients codegen cannot order (OrderingUnsupported) to `fixed`; with fixed-point
    /// tables, their scan variant too.
    CompiledKernel compile_backward(const Backward& bw, uint64_t& fixed) const;

    const UserModule& module_;
    Binding binding_;
    codegen::CodegenOptions options_;
    std::string key_text_;
    Glue forward_glue_;
    CompiledKernel forward_;
    std::shared_ptr<KernelUpgrade> upgrade_;
    uint64_t grad_mask_ = 0;
    std::mutex backward_mutex_;
    std::map<uint64_t, std::unique_ptr<Backward>> backwards_;
};

}  // namespace sg::call
