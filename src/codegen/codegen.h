// src/codegen/codegen.h — CPU C++ and CUDA C++ emission from the IR, and the parameter-block
// layout of a kernel (the ABI between the call layer, which packs the block, and the generated
// code, which reads it).
//
// In: a Program and one kernel Function (is_kernel: its params are the parameter-block fields,
// it has no results, its body runs once per thread with CallIndex giving the thread's call
// index), after inlining and autodiff. Out: self-contained source (the device prelude included,
// no system headers for CUDA) exporting one entry point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/device_type.h"
#include "codegen/call_header.h"
#include "codegen/fault_record.h"
#include "ir/ir.h"

namespace sg::codegen {

/// Bytes of CallHeader::scratch a deterministic CUDA kernel with `reduced_slots` reduced scalar
/// components needs for a launch of `blocks` blocks: a 16-byte block counter, then one double
/// per component and block.
inline size_t reduce_scratch_bytes(int reduced_slots, int64_t blocks) {
    return 16 + size_t(reduced_slots) * size_t(blocks) * sizeof(double);
}

/// Where the pieces of one tensor parameter live inside the parameter block (byte offsets from
/// the start of the block). A tensor view is {data pointer, shape[D], strides[D] (in scalar
/// elements), inner[2] (scalar-element strides between vector components / matrix columns and
/// between matrix rows of one element)}; a tensor with a gradient has a second view (grad_*)
/// of the same shape.
struct TensorFieldLayout {
    size_t data = 0, shape = 0, strides = 0, inner = 0;
    size_t grad_data = 0, grad_strides = 0, grad_inner = 0;  ///< valid when has_grad
    /// A TensorView (TensorKind::view): laid out as a rank-8 view, then the bound rank (int64).
    size_t view_rank = 0;
    /// A DiffTensorView (view and has_grad): its gradient's rank-8 view record, laid out as the
    /// primal's (data, shape, strides, inner, rank at the same distances from it).
    size_t grad_view = 0;
};

/// What the call layer reads of a field's type, as plain values: it packs parameter blocks from
/// this, never from `type`, so that a layout read back from the kernel index (call/kernel_index.h),
/// where `type` is null, serves as well as a freshly generated one.
struct FieldShape {
    enum class Form : uint8_t { Scalar, Vector, Matrix, Tensor, Other };
    Form form = Form::Other;
    lang::ScalarKind scalar = lang::ScalarKind::Float;  ///< of the value, or of a tensor's element
    int rows = 1, cols = 1;       ///< vector: rows components; matrix: rows x cols (a tensor's element's)
    Form element = Form::Other;   ///< Tensor: its element's form
    int rank = 0;                 ///< Tensor: its rank
    bool has_grad = false;        ///< Tensor: it has a gradient view
};

/// The FieldShape of a kernel parameter of type `t`.
FieldShape field_shape(const lang::Type* t);

struct ParamField {
    std::string name;
    /// The parameter's type in the compilation that generated the kernel; null in a layout read
    /// back from the kernel index. Codegen reads it; the call layer reads `shape`.
    const lang::Type* type = nullptr;
    FieldShape shape;
    size_t offset = 0;    ///< byte offset of the field in the block
    size_t size = 0;
    TensorFieldLayout tensor;  ///< for tensor-typed fields
};

struct ParamLayout {
    std::vector<ParamField> fields;  ///< one per kernel parameter, in order
    size_t size = 0;                 ///< total block size (multiple of 8)
};

/// Computes the parameter-block layout of a kernel. The generated code declares the same layout
/// (and static_asserts the offsets), so the two cannot disagree. Layout: CallHeader at offset 0,
/// the first field at 96 (88 rounded up to 16), then each field at its value_align; a tensor
/// field is its view followed, when type->tensor.has_grad, by its gradient view.
/// This overload has no TypeContext: it throws InternalError for struct- or pair-typed fields;
/// use the overload below (generate_kernel does) when the kernel may have them.
ParamLayout compute_param_layout(const ir::Function& kernel);
ParamLayout compute_param_layout(const ir::Function& kernel, const lang::TypeContext& types);

/// Byte size and alignment of a plain value type (scalar, vector, matrix, array, struct) as
/// stored in the parameter block and in generated code: C layout with vectors and matrices
/// aligned to their scalar (float3: 12 bytes, align 4; bool: 1 byte); tensor views align 8.
size_t value_size(const lang::Type* t, const lang::TypeContext& types);
size_t value_align(const lang::Type* t, const lang::TypeContext& types);

struct CodegenOptions {
    bool index_64bit = false;   ///< 64-bit offset arithmetic (needed when a tensor has >= 2^31 elements)
    /// Bounds-check every tensor index the kernel computes (call-index accesses of the glue are
    /// in bounds by construction), check integer divisors and the [MaxIters] bounds of taped
    /// loops; report the first fault through CallHeader::fault.
    bool debug_checks = false;
    /// CUDA: loads from read-only tensors (access Read) take the read-only path. Only valid when
    /// no tensor the kernel writes overlaps one it reads in memory (the caller checks).
    bool readonly_loads = false;
    /// CUDA: call elements per thread; 0 lets the generator choose (see GeneratedKernel).
    int elements_per_thread = 0;
    /// The rank of the calls the kernel runs, when the caller knows it (the call layer does: it
    /// is part of the call key): the call index is then decomposed without a loop over the
    /// run-time rank. -1: read the rank from the call header.
    int call_rank = -1;
    /// Bit k: kernel parameter k is a view over the call's trailing dimensions whose extents the
    /// launcher sets to the call's (the glue's elementwise arguments, result and gradient
    /// buffers). With call_rank known, its accesses at the call index need no bounds check.
    uint64_t call_shaped_params = 0;
    /// Bit k: kernel parameter k is a gradient buffer broadcast along every call dimension
    /// (every thread adds to the same element; call layer: GradStrategy::Reduce), of scalar or
    /// vector elements. Its `tensor_atomic_add`s accumulate into a register of the thread; the
    /// entry point sums the registers of a CUDA block (warp shuffles, then shared memory) or of a
    /// CPU chunk of threads and adds the sum to the buffer once.
    uint64_t reduced_params = 0;
    /// CUDA, bit k: kernel parameter k is a differentiable tensor of float or double scalar or
    /// vector elements whose gradient threads add to at computed indices (GradStrategy::Collide).
    /// When its gradient buffer fits kPrivateTableBytes, a block accumulates into a copy in
    /// shared memory and adds it to the buffer once at the end; otherwise the adds go to the
    /// buffer (warp-aggregated atomics). At most two parameters.
    uint64_t privatized_params = 0;
    /// CUDA, deterministic mode, bit k: kernel parameter k is a gradient whose adds collide: a
    /// partially broadcast gradient buffer (its `tensor_atomic_add`s; GradStrategy::Atomic) or a
    /// differentiable tensor of scalar or vector float elements read at computed indices (its
    /// gradient view's `grad_add`s; GradStrategy::Collide). Its adds are summed in a fixed order
    /// (prelude_ordered.inc): recorded per call element, folded per warp into shared memory,
    /// summed per block into scratch, and the blocks' partials added in block order by a second
    /// kernel (GeneratedKernel::final_entry). An add site inside a loop cannot be recorded, nor an
    /// add to a slice of a batch of tables: generate_kernel throws OrderingUnsupported (the call
    /// layer then makes the parameter one of fixed_params).
    uint64_t ordered_params = 0;
    /// CUDA, deterministic mode, bit k: kernel parameter k is a colliding gradient summed in
    /// fixed point (prelude_fixed.inc) instead of an ordered table: a gradient buffer or a table's
    /// gradient view of float scalar, vector or matrix elements. The call layer picks them where
    /// an ordered table cannot be (too large for shared memory, added to in a loop, a batch of
    /// tables); an ordered parameter with matrix elements is one whatever this says. Its adds
    /// record (FixedPhase::Scan) or add integers (FixedPhase::Accumulate), and the accumulate
    /// kernel has a third entry (GeneratedKernel::fixed_entry) that writes the sums.
    uint64_t fixed_params = 0;
    /// The fixed-point variant of a kernel with fixed_params: Scan drops every other write
    /// (stores, gradient adds, reductions and ordered tables) and records the fixed tables'
    /// exponents and counts; Accumulate is the backward kernel itself.
    enum class FixedPhase : uint8_t { Accumulate, Scan };
    FixedPhase fixed_phase = FixedPhase::Accumulate;
    /// Bit k: kernel parameter k is a colliding gradient — a partially broadcast gradient buffer (its `tensor_atomic_add`s; call layer:
    /// GradStrategy::Atomic) or a table's gradient view (its `grad_add`s; GradStrategy::Collide).
    /// When its elements are float or double scalars or vectors (others are left as they are) and
    /// the gradient spans at most kChunkTableEntries scalars, each chunk of a launch adds
    /// into a double table of its own (in the backend's chunk scratch, as the reduced sums), and
    /// the final entry sums the chunks' tables pairwise and adds each entry once: a tree instead
    /// of a chain of float adds per entry. Larger gradients add to the buffer as before. Fast mode
    /// only (a deterministic launch keeps its order of float adds). CUDA (at most two parameters):
    /// a gradient of at most kTreeTableEntries scalars is a *tree table* — each block adds into a
    /// double copy in shared memory, adds the copy into a double table in scratch memory (double
    /// atomics, GeneratedKernel::tree_tables), and the last block rounds each entry once into the
    /// gradient; a table's gradient of up to twice that keeps a block-private float copy (as
    /// privatized_params), larger ones add to the buffer.
    uint64_t chunk_table_params = 0;
    /// Fast mode, bit k: kernel parameter k is a differentiable tensor read at computed indices
    /// whose gradient buffer is fresh (call layer: GradStrategy::Collide). Where every gradient
    /// add to it is at this call element's own entry (stored_grads.cpp: one add site, in the
    /// kernel body's top level, its index a permutation of the call index), the add is a plain
    /// store and GeneratedKernel::stored_grads says so; such a parameter is then neither
    /// privatized nor a chunk table. Other parameters keep their adds.
    uint64_t stored_table_params = 0;
    /// Deterministic mode: the same inputs give bitwise the same results on every run. CPU: a
    /// launch runs its threads in order on one thread. CUDA: a reduced parameter's block sums go
    /// to a scratch buffer (CallHeader::scratch) and the last block to finish adds them in block
    /// order; colliding gradients are ordered_params; the kernel has no other float atomics on
    /// gradients (generate_kernel throws OrderingUnsupported where it would need one).
    bool deterministic = false;
    /// Fast math (module option or fn.fast_math()). CUDA: float sin, cos, tan, exp, log, log2,
    /// log10, pow and tanh use the approximate hardware intrinsics (__sinf, ..., tanh.approx.f32;
    /// the generated source defines SG_FAST_MATH) and float division is approximate (NVRTC
    /// --prec-div=false, compile_kernel.cpp); sqrt, double and integer math stay exact. CPU: no
    /// effect (the same precise code). Error bounds: docs/performance.md.
    bool fast_math = false;
    /// SlangPy's call groups (fn.call_group_shape): the extent of a group in each of the call's
    /// call_group_rank dimensions (outermost first, padded with leading 1s to the call's rank);
    /// -1: none. The kernel then runs a CUDA block (a CPU block of fibers when it meets at
    /// barriers) per group, and its ids (lang::CoopId::CallId ...) come from the group's
    /// position; groupshared memory, barriers and wave operations are allowed.
    int32_t call_group_rank = -1;
    int32_t call_group[8] = {1, 1, 1, 1, 1, 1, 1, 1};
};

/// Shared memory of the ordered gradient tables of one kernel (CodegenOptions::ordered_params),
/// split evenly between them: one copy per warp, so with 8 warps (256 threads) a single float
/// table may have up to 1408 elements, two double tables 352 each. (Static shared memory stops
/// at 48 KiB a block; the block sums of reductions need a little of it too.)
inline constexpr int kOrderedTableBytes = 45056;
/// Ordered kernels run at most this many blocks per multiprocessor (grid-stride over the call):
/// the partials the final kernel sums grow with the grid.
inline constexpr int kOrderedBlocksPerSm = 4;
/// The grid of an ordered kernel: enough blocks for the call, at most kOrderedBlocksPerSm per
/// multiprocessor. The same on every run on one device (and so are the sums).
inline int64_t ordered_grid_blocks(int64_t needed_blocks, int multiprocessors) {
    const int64_t cap = int64_t(multiprocessors > 0 ? multiprocessors : 1) * kOrderedBlocksPerSm;
    return needed_blocks < cap ? needed_blocks : cap;
}

/// Bytes of one fixed-point table's records for a gradient spanning `extent` scalar entries (as
/// sg_fixed_bytes in prelude_fixed.inc): exponents, counts, flags and accumulators.
inline size_t fixed_table_bytes(int64_t extent, int wide) {
    const size_t e = extent > 0 ? size_t(extent) : 0;
    auto round = [](size_t n) { return (n + 15) & ~size_t(15); };
    return round(e * 4) + round(e * 8) + round(e * 4) + round(e * 8 * size_t(wide));
}

/// Thrown by generate_kernel when deterministic mode cannot sum a gradient's adds in a fixed
/// order (an add site inside a loop, an add the generator cannot attribute to a parameter).
/// `param` is the kernel parameter (-1: unknown); the call layer names the user's parameter.
struct OrderingUnsupported : std::runtime_error {
    OrderingUnsupported(int param_index, const std::string& why) : std::runtime_error(why), param(param_index) {}
    int param;
};

/// Scalar entries of one CPU chunk table (CodegenOptions::chunk_table_params): 4096 doubles.
inline constexpr int kChunkTableEntries = 4096;

/// Scalar entries of one CUDA tree table (CodegenOptions::chunk_table_params on CUDA): a block's
/// double copy of 16 KiB in shared memory.
inline constexpr int kTreeTableEntries = 2048;
/// Scratch bytes of one CUDA tree table spanning `extent` scalars (as sg_tree_bytes in
/// prelude_reduce.inc): a double per entry, rounded up to 16; 0 when it takes no table.
inline size_t tree_table_bytes(int64_t extent) {
    return extent > 0 && extent <= kTreeTableEntries ? (size_t(extent) * 8 + 15) & ~size_t(15) : 0;
}

/// Shared memory for one block-private gradient table (CodegenOptions::privatized_params): 4K
/// floats or 2K doubles.
inline constexpr int kPrivateTableBytes = 16384;

/// FaultKind::IndexOutOfBounds as a plain code (tests compare FaultRecord::code with it).
inline constexpr uint32_t kErrorIndexOutOfBounds = uint32_t(FaultKind::IndexOutOfBounds);

/// A table whose gradient the kernel stores at the call index (CodegenOptions::stored_table_params):
/// each call element writes its own entry once, the entry whose index in tensor dimension d is
/// the call index of dimension dims[d]. A gradient buffer whose extents are the call's there
/// (shape[d] == call_shape[dims[d]] for every d) has every entry written: it needs no zero fill.
struct StoredGrad {
    int param = -1;   ///< kernel parameter index
    int rank = 0;     ///< the tensor's rank (the call's)
    int dims[8] = {};
};

struct GeneratedKernel {
    std::string source;      ///< complete translation unit
    std::string entry;       ///< exported symbol name
    ParamLayout layout;
    size_t body_begin = 0;   ///< offset in `source` where the kernel's own code starts (after the
                             ///< prelude): what a user wants to read in debug output
    /// Call elements each thread runs (CUDA; 1 on the CPU): the launch has ceil(total / this)
    /// threads. Small kernels run several, so that their loads overlap (bandwidth-bound calls).
    int elements_per_thread = 1;
    /// The scalar components of the reduced gradient parameters (CodegenOptions::reduced_params).
    /// CUDA: a launch needs reduce_scratch_bytes(reduced_slots, blocks) of scratch. CPU: the
    /// backend gives each chunk of the launch this many double sums (CallHeader::scratch) and
    /// then runs final_entry, which sums the chunks pairwise and adds once. 0 without reductions.
    int reduced_slots = 0;
    /// Ordered gradient tables (CodegenOptions::ordered_params that the kernel adds to), in
    /// parameter order. The scratch holds, after the 16-byte header and the reduced sums, per
    /// table sg_ordered_bytes(blocks, extent, accum_bytes) of per-block partials.
    struct OrderedTable {
        int param = -1;          ///< kernel parameter index
        int accum_bytes = 4;     ///< accumulator size (float for half and float, double for double)
        int64_t capacity = 0;    ///< accumulators of shared memory per block (all warps' copies)
    };
    std::vector<OrderedTable> ordered;
    /// Fixed-point gradient tables (CodegenOptions::fixed_params and ordered matrix elements that
    /// the kernel adds to), in parameter order. Their records lie below CallHeader::scratch:
    /// fixed_table_bytes(extent, wide) per table, the first at scratch minus the sum of them all.
    struct FixedTable {
        int param = -1;   ///< kernel parameter index
        int wide = 1;     ///< accumulator words per scalar entry: 2 (128 bits) for double, else 1
        int adds = -1;    ///< scalar adds per call element bounding an entry's (-1: counted per entry)
    };
    std::vector<FixedTable> fixed;
    /// With fixed tables (Accumulate phase): the entry that writes their sums into the gradient
    /// buffers, run after the main entry (and its `_final`) with the same parameter block,
    /// grid-stride (any grid; one thread per entry of the largest table is enough). Empty otherwise.
    std::string fixed_entry;
    /// With ordered tables: the second entry point, run after the main one with the same
    /// parameter block (grid-stride: any grid; one block per 32 elements of the largest table
    /// is enough). CPU kernels with reduced gradients: `void(const void* params)`, run once after
    /// the main entry's chunks, that adds their sums (reduced_slots). Empty otherwise.
    std::string final_entry;
    /// A kernel whose calls run in call groups (CodegenOptions::call_group_rank, or a kernel that
    /// reads its call-group ids without one: groups of one element): the threads of each launch
    /// block, a multiple of the group's size; the launch has a block per this many threads of
    /// the call's groups laid end to end (call_group_blocks). 0: an ordinary call kernel.
    int call_group_block = 0;
    /// The tables whose gradients are stored at the call index instead of added to, in
    /// parameter order (CodegenOptions::stored_table_params).
    std::vector<StoredGrad> stored_grads;
    /// CUDA tree tables (CodegenOptions::chunk_table_params on CUDA), in parameter order: a
    /// launch's scratch holds, below CallHeader::scratch, tree_table_bytes(extent) per table (the
    /// extent of its gradient view, or of the buffer), zeroed, and at least its 16-byte counter.
    struct TreeTable {
        int param = -1;  ///< kernel parameter index
    };
    std::vector<TreeTable> tree_tables;
};

/// The blocks of a call-group launch (GeneratedKernel::call_group_block `block`) over a call of
/// `rank` extents `shape`, in groups of `group` (rank extents): every group's threads, the
/// groups of each dimension rounded up, `block` threads a block.
inline int64_t call_group_blocks(const int64_t* shape, int rank, const int32_t* group, int block) {
    int64_t threads = 1;
    for (int d = 0; d < rank; ++d) threads *= (shape[d] + group[d] - 1) / group[d] * group[d];
    return block > 0 ? (threads + block - 1) / block : 0;
}

/// Emits the kernel and every function it still calls (after inlining, only functions with a
/// custom derivative remain). CPU entry: `extern "C" void ENTRY(const void* params, int64_t
/// begin, int64_t end)` runs threads [begin, end). CUDA entry: `extern "C" __global__ void
/// ENTRY(const __grid_constant__ Params params)` with one thread per call element (1-D grid).
GeneratedKernel generate_kernel(const ir::Program& program, const ir::Function& kernel, DeviceType target,
                                const CodegenOptions& options);

/// The device prelude shared by both targets (vectors, matrices, arrays, math, tensor views,
/// atomics), guarded by SG_TARGET_CUDA. Compiles on its own under NVRTC (no system headers).
/// Semantics fixed here for both targets: integer x / 0 and x % 0 are 0 (and INT_MIN / -1 wraps)
/// instead of trapping; shift counts are masked to the bit width; float % is C fmod; a tensor
/// stride of a struct-element tensor counts whole elements (scalar elements otherwise).
const char* device_prelude();

/// The parts of the device prelude that `code` (a kernel's own text) needs, in prelude order:
/// the core and tensor parts always, each optional one (half, atomics, math, cooperative
/// kernels, waves, gradient reductions and tables) when `code` or a needed part names what it
/// defines. What generated kernels carry.
std::string device_prelude_for(std::string_view code);

/// Emits a non-kernel function (for `shadegradc --emit cpp|cuda` on a plain function): the
/// prelude plus the function and its callees as `SG_FN` functions.
std::string generate_functions(const ir::Program& program, DeviceType target);

}  // namespace sg::codegen
