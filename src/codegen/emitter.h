// src/codegen/emitter.h — internal to src/codegen: the C++ emitter shared by the CPU and CUDA
// backends. One Emitter turns IR functions into C++ on top of the device prelude; the targets
// differ only in the entry point (emit_cpp.cpp) and inside the prelude.
//
// Emission rules (see codegen.h for the contract):
//   * every SSA value is a C++ local `T vN_hint = ...;` (constants are inlined as literals);
//   * If results are declared before the `if` and assigned from each region's Yield;
//   * Loop carried values are mutable locals; the body's params and the Loop's results are
//     names for them; the Yield updates them in parallel (through temporaries where needed);
//   * user structs, user functions and the kernel live in `namespace sg_user`, so that user
//     names cannot collide with the C library on the CPU side.
// Files: emit_names.cpp (identifiers, literals, type spellings, struct definitions),
// emit_inst.cpp (values: arithmetic, composites, intrinsics, calls), emit_memory.cpp (tensors,
// tapes, call index, traps), emit_function.cpp (blocks, control flow, functions), emit_cpp.cpp
// (translation units and entry points).
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/codegen.h"

namespace sg::codegen::detail {

using ir::Block;
using ir::Function;
using ir::Inst;
using ir::OpKind;
using ir::Value;
using lang::Type;

/// A valid C++ identifier for `name` that cannot clash with a keyword, a prelude name (sg_*),
/// a reserved name (_X, __x) or a macro of the C headers (all-uppercase names): such names get
/// a `u_` prefix. Characters outside [A-Za-z0-9_] become '_'.
std::string sanitize_identifier(const std::string& name);
/// A C++ literal of scalar kind `kind` (int-like kinds, bool) for value.
std::string int_literal(int64_t value, lang::ScalarKind kind);
/// A C++ literal that round-trips `value` as float or double (shortest form; inf/nan via the
/// prelude's SG_INF_F / SG_NAN_F / SG_INF / SG_NAN).
std::string float_literal(double value, lang::ScalarKind kind);

/// C++ spellings of types; registers user structs (and everything their fields need) as it
/// meets them, so that their definitions can be emitted in dependency order afterwards.
class TypeNames {
public:
    explicit TypeNames(const lang::TypeContext& types) : types_(types) {}

    std::string name(const Type* t);
    /// A sanitized name for a user-level entity (struct, function) that no other one has.
    std::string reserve_name(const std::string& base);
    /// Field names of a registered struct type, in order (sanitized, unique).
    const std::vector<std::string>& field_names(const Type* t);
    /// Definitions of every struct met so far, each after the structs it contains.
    std::string struct_definitions() const;
    const lang::TypeContext& types() const { return types_; }

private:
    struct StructInfo {
        std::string name;
        std::vector<std::string> fields;
        std::string definition;
    };
    const StructInfo& register_struct(const Type* t);

    const lang::TypeContext& types_;
    std::map<const Type*, StructInfo> structs_;
    std::vector<const Type*> order_;  // definition order (dependencies first)
    std::set<std::string> used_names_;
};

class Emitter {
public:
    Emitter(const ir::Program& program, DeviceType target, const CodegenOptions& options);

    /// Emits `fn` and every function it calls (callees first). Returns the C++ name of `fn`.
    std::string emit_function_tree(const Function& fn);
    /// Emits the kernel's parameter struct (with layout static_asserts) and thread function.
    /// Returns the names {params struct, thread function}.
    std::pair<std::string, std::string> emit_kernel_body(const Function& kernel, const ParamLayout& layout);
    /// Everything emitted so far inside `namespace sg_user`: structs, then functions.
    std::string namespace_contents() const;

    /// A reduced gradient parameter (CodegenOptions::reduced_params) of the kernel: its thread
    /// function takes `accum sg_acc_<param>[components]` by reference.
    struct ReducedParam {
        int param = -1;
        std::string field;       ///< the parameter block member
        std::string accum;       ///< accumulator scalar type (float or double)
        int components = 1;      ///< scalar components of the element (1 or the vector size)
    };
    /// The kernel's reduced parameters, in parameter order (after emit_kernel_body).
    const std::vector<ReducedParam>& reduced_params() const { return reduced_; }
    /// A privatized gradient table (CodegenOptions::privatized_params, CUDA): its thread
    /// function takes `scalar* sg_priv_<param>` (null when the table does not fit).
    struct PrivateParam {
        int param = -1;
        std::string field;
        std::string scalar;      ///< float or double
    };
    const std::vector<PrivateParam>& privatized_params() const { return privatized_; }
    /// A CPU chunk table (CodegenOptions::chunk_table_params): its thread function takes
    /// `double* sg_ct_<param>` (null when the gradient does not fit or the launch has no scratch).
    struct ChunkTableParam {
        int param = -1;
        std::string field;
        bool grad = false;  ///< a table's gradient view (grad_add), else a gradient buffer (tensor_atomic_add)
    };
    const std::vector<ChunkTableParam>& chunk_tables() const { return chunk_tables_; }
    /// A CUDA tree table (CodegenOptions::chunk_table_params on CUDA): its thread function takes
    /// `double* sg_tt_<param>` (the block's double copy, null when the gradient does not fit) and
    /// `float* sg_tp_<param>` (a table's block-private float copy where the double one does not fit).
    struct TreeTableParam {
        int param = -1;
        std::string field;
        bool grad = false;  ///< a table's gradient view (grad_add), else a gradient buffer (tensor_atomic_add)
        bool copy = false;  ///< a table of float elements: the float copy where the double one does not fit
    };
    const std::vector<TreeTableParam>& tree_tables() const { return tree_tables_; }
    /// An ordered gradient table (CodegenOptions::ordered_params, CUDA): its thread function takes
    /// `sg_ordered_rec<elem> (&sg_or_<param>)[sites]`, one record per add site.
    struct OrderedParam {
        int param = -1;
        std::string field;
        std::string elem;        ///< the element's C++ type
        std::string accum;       ///< accumulator scalar type (float or double)
        int sites = 0;           ///< add sites in the kernel body (each runs at most once per element)
    };
    const std::vector<OrderedParam>& ordered_params() const { return ordered_; }
    /// A fixed-point gradient table (CodegenOptions::fixed_params, CUDA): its adds record
    /// (Scan) or add integers (Accumulate) into the records that `sg_fx_<kernel>(P, index)` finds.
    struct FixedParam {
        int param = -1;
        std::string field;
        int wide = 1;            ///< accumulator words per entry (2: double)
        int sites = 0;           ///< add sites in the kernel body
        int adds = 0;            ///< scalar adds of the sites (a vector or matrix site: one a component)
        bool in_loop = false;    ///< some site lies inside a loop (entries count their adds)
    };
    const std::vector<FixedParam>& fixed_params() const { return fixed_; }
    /// The kernel's fixed-table accessor (`sg_fx_<kernel>`; after emit_kernel_body).
    const std::string& fixed_accessor() const { return fixed_accessor_; }
    /// Asks emit_kernel_body for a two-phase thread function (emit_prefetch.cpp); call before it.
    void enable_prefetch() { prefetch_enabled_ = true; }
    /// After emit_kernel_body: the name of the struct of prefetched values, empty when the thread
    /// function is the plain one (nothing to prefetch, or not asked for).
    const std::string& prefetch_struct() const { return prefetch_struct_; }
    /// Asks emit_kernel_body for dense launches (emit_dense.cpp); call before it. `elements`: the
    /// entry's call elements per thread (only four-element kernels qualify).
    void enable_dense(int elements) {
        dense_enabled_ = true;
        vector_elements_ = elements;
    }
    /// After emit_kernel_body, for a kernel with dense launches (empty otherwise): its layout test
    /// (`sg_dense_<kernel>(params)`: 2 dense and aligned, 0 not), the entry's vector load and store
    /// functions, and the struct of a thread's deferred stores (`sg_post`).
    const std::string& dense_check() const { return dense_check_; }
    const std::string& vector_load_fn() const { return vector_load_fn_; }
    const std::string& vector_store_fn() const { return vector_store_fn_; }
    const std::string& post_struct() const { return post_struct_; }

    // ---- used by the per-concept emit_*.cpp files
    std::string type(const Type* t) { return names_.name(t); }
    std::string ref(const Value* v) const;              ///< expression naming a defined value
    std::string local_name(const Value* v) const;       ///< `v12_hint`
    /// As above, with `fallback_hint` when the value has no hint (parameters).
    std::string local_name(const Value* v, const std::string& fallback_hint) const;
    void bind(const Value* v, std::string expr) { exprs_[v] = std::move(expr); }
    /// Declares `T name = expr;` for `v` and binds it.
    void define(const Value* v, const std::string& expr);
    void line(const std::string& text);                 ///< one indented line of the body
    void open(const std::string& head);                 ///< `head {` and indent
    void close(const std::string& tail = "}");          ///< dedent and `tail`
    void reopen(const std::string& text);               ///< `} else {`: dedent, text, indent
    const CodegenOptions& options() const { return options_; }
    DeviceType target() const { return target_; }
    /// The C++ type of tensor offset arithmetic (CodegenOptions::index_64bit).
    std::string index_type_name() const { return options_.index_64bit ? "int64_t" : "int"; }

    void emit_block(const Block& block);  ///< every instruction but the terminator
    void emit_inst(const Inst& inst);

    // emit_inst.cpp
    void emit_arith(const Inst& inst);
    void emit_composite(const Inst& inst);
    void emit_intrinsic(const Inst& inst);
    void emit_sincos(const Inst& inst);
    void emit_call(const Inst& inst);
    // emit_memory.cpp
    void emit_tensor(const Inst& inst);
    void emit_local(const Inst& inst);
    void emit_call_index(const Inst& inst);
    void emit_trap(const Inst& inst);
    /// Cooperative kernels (emit_coop.cpp): ids, barriers, groupshared storage, TensorView
    /// access and queries, Interlocked atomics.
    void emit_coop(const Inst& inst);
    /// The definitions of the groupshared storage of the program (namespace scope).
    std::string shared_storage();
    /// The address of a shared element or a view element (a `T*`, null after a fault): emits
    /// the index computation and returns the pointer's name.
    /// `grad`: the element of a DiffTensorView's gradient view (null, without a fault, when the
    /// launch bound no gradient).
    std::string coop_element_pointer(const Inst& inst, size_t index_end, bool grad = false);
    int coop_temps_ = 0;
    /// A wave intrinsic (emit_wave.cpp): a prelude call (prelude_wave.inc) with its site, the
    /// instruction's number in emission order (the CPU runs the earliest waiting site first).
    void emit_wave(const Inst& inst);
    int wave_sites_ = 0;
    // emit_dense.cpp
    /// Whether `inst` accesses a call-shaped kernel parameter of the call's rank at the call index.
    bool dense_access(const Inst& inst) const;
    /// Decides whether the kernel has dense launches (after plan_prefetch): every dense access a
    /// prefetched load or a deferrable store of a vector-sized scalar; chooses the deferred stores.
    void plan_dense(const Function& kernel);
    /// Adds the layout of a dense access's view (in a dense kernel) to the kernel's layout test.
    void note_dense_view(const Inst& inst, const std::string& view);
    bool dense_kernel() const { return dense_; }
    /// Records a dense prefetched load, which layout 2's vector load fills.
    void note_vector_load(const Inst& inst, const std::string& view);
    /// Emits a deferred store: to the sg_post struct in layout 2, else `call`.
    void emit_deferred_store(const Inst& inst, const std::string& view, const std::string& call);
    /// The layout test and the vector load and store functions of a dense kernel ("" otherwise).
    std::string dense_functions(const std::string& params, const std::string& base);

    // emit_prefetch.cpp
    /// Chooses the kernel's prefetched loads (read-only, unchecked, before any effect).
    void plan_prefetch(const Function& kernel);
    bool prefetched(const Inst& inst) const { return prefetch_.count(&inst) != 0; }
    /// Emits a prefetched load: from `call` in phases 0 and 2, from the sg_pre struct in phase 1
    /// (and in the vector mode of a dense launch, SG_DENSE == 2, with `vector`: the entry's
    /// vector load filled it).
    void emit_prefetched_load(const Inst& inst, const std::string& call, bool vector = false);
    /// Whether a tensor access is a glue access at the call index of a call-shaped view (no check).
    bool index_in_bounds_by_construction(const Inst& inst) const;
    /// "line, column" of `inst` in the user's module for a fault record ("0, 0": unknown).
    std::string fault_location(const Inst& inst) const;
    // emit_function.cpp
    void emit_if(const Inst& inst);
    void emit_loop(const Inst& inst);
    /// `return ...;` leaving the current function (Trap uses it with no values: a zero result).
    void emit_return(const std::vector<Value*>* values);

private:
    struct FunctionInfo {
        std::string name;
        std::string result_struct;  ///< empty unless several results
        std::vector<std::string> result_fields;
    };
    const FunctionInfo& function_info(const Function& fn);
    void emit_function(const Function& fn);
    void begin_function(const Function& fn, bool is_kernel);
    void location_comment(const Inst& inst);

    const ir::Program& program_;
    DeviceType target_;
    CodegenOptions options_;
    TypeNames names_;

    std::map<const Function*, FunctionInfo> functions_;
    std::set<const Function*> emitted_;
    std::string result_structs_;
    std::string function_code_;
    std::string kernel_code_;
    std::string shared_code_;  ///< groupshared storage of a kernel (emit_kernel_body), before its functions

    // per-function state
    const Function* current_ = nullptr;
    bool in_kernel_ = false;
    std::string body_;  ///< the function body being emitted (plain string: no iostreams in the core)
    int indent_ = 0;
    int temp_counter_ = 0;  ///< numbers helper locals (tensor offsets, loop temporaries)
    std::unordered_map<const Value*, std::string> exprs_;
    /// Kernel parameters (body params) that are tensors -> their parameter index (fault records).
    std::unordered_map<const Value*, int> tensor_params_;
    std::vector<ReducedParam> reduced_;
    std::vector<PrivateParam> privatized_;
    std::vector<ChunkTableParam> chunk_tables_;
    std::vector<TreeTableParam> tree_tables_;
    std::vector<OrderedParam> ordered_;
    std::vector<FixedParam> fixed_;
    std::string fixed_accessor_;
    /// Slices of a batch of tensors (TensorSlice of a kernel parameter, or of a slice) -> the
    /// parameter (a fixed table's add through a slice is rebased to the whole buffer).
    std::unordered_map<const Value*, int> slice_params_;
    bool prefetch_enabled_ = false;
    std::set<const Inst*> prefetch_;       ///< the kernel's prefetched loads
    const Inst* prefetch_last_ = nullptr;  ///< phase 0 returns after it
    std::string prefetch_fields_;          ///< members of the sg_pre struct
    std::string prefetch_struct_;
    bool dense_enabled_ = false;
    int vector_elements_ = 1;
    bool dense_ = false;                     ///< the kernel has dense launches (plan_dense)
    std::set<const Inst*> deferred_;         ///< the stores layout 2 defers to the entry
    std::vector<std::string> dense_checks_;  ///< the layout tests of the dense views
    std::string dense_check_;
    struct VectorField {
        std::string field;   ///< member of sg_pre / sg_post
        std::string view;    ///< the tensor view expression (P.<field>)
        std::string scalar;  ///< C++ scalar type
        int bytes = 0;       ///< scalar size
    };
    std::vector<VectorField> vector_loads_, vector_stores_;
    std::string post_fields_, post_struct_, vector_load_fn_, vector_store_fn_;
    int loop_depth_ = 0;  ///< loops around the instruction being emitted (ordered add sites may not be in one)
    const lang::SourceFile* last_file_ = nullptr;
    uint32_t last_line_ = 0;
};

}  // namespace sg::codegen::detail

namespace sg::codegen::detail {

/// The tables of `kernel` among options.stored_table_params whose gradient it may store at the
/// call index instead of adding to (stored_grads.cpp), in parameter order.
std::vector<StoredGrad> find_stored_grads(const Function& kernel, const CodegenOptions& options);

/// SlangPy's call groups (emit_call_group.cpp).
/// Whether `block` or a function it calls reads a call element's call-group ids (CallShapeInfo).
bool reads_call_shape_ids(const ir::Block& block);
/// What the entry of a call-group kernel is made of: the kernel, the names of its parameter
/// struct and thread function, its index type, whether its threads meet at barriers or waves
/// (CPU: fibers) or it has groupshared memory (no other group may share its block).
struct CallGroupEntry {
    GeneratedKernel& out;
    const CodegenOptions& options;
    DeviceType target;
    const std::string &params, &thread, &idx;
    bool meets = false;
    bool shares = false;
};
/// The entry point (sets out.call_group_block): a block per group, or blocks of whole groups.
std::string call_group_entry(const CallGroupEntry& e);

}  // namespace sg::codegen::detail
