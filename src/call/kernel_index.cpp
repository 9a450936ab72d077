// src/call/kernel_index.cpp — the kernel index (kernel_index.h): its key, its entry's encoding and
// the lookup in front of compile_kernel.
#include "call/kernel_index.h"

#include <chrono>
#include <cstring>
#include <optional>

#include "call/kernel_faults.h"
#include "driver/build_id.h"
#include "runtime/backend.h"
#include "runtime/content_hash.h"
#include "runtime/disk_cache.h"
#include "runtime/module_cache.h"

namespace sg::call {

namespace {

constexpr std::string_view kIndexKind = "index";
/// Bump when the entry's encoding or the meaning of a field changes.
constexpr uint64_t kIndexFormat = 4;  // 2: a DiffTensorView's grad_view; 3: call_group_block; 4: stored_grads, tree_tables

// Every codegen option is part of the key: a new one must be added to options_text, and then
// this size updated.
static_assert(sizeof(codegen::CodegenOptions) == 120, "a new codegen option must be keyed in options_text");

std::string options_text(const codegen::CodegenOptions& o) {
    std::string out;
    auto field = [&](const char* name, uint64_t value) { out += std::string(name) + "=" + std::to_string(value) + "\n"; };
    field("index_64bit", o.index_64bit);
    field("debug_checks", o.debug_checks);
    field("readonly_loads", o.readonly_loads);
    field("elements_per_thread", uint64_t(int64_t(o.elements_per_thread)));
    field("call_rank", uint64_t(int64_t(o.call_rank)));
    field("call_shaped_params", o.call_shaped_params);
    field("reduced_params", o.reduced_params);
    field("privatized_params", o.privatized_params);
    field("chunk_table_params", o.chunk_table_params);
    field("stored_table_params", o.stored_table_params);
    field("ordered_params", o.ordered_params);
    field("fixed_params", o.fixed_params);
    field("fixed_phase", uint64_t(o.fixed_phase));
    field("deterministic", o.deterministic);
    field("fast_math", o.fast_math);
    field("call_group_rank", uint64_t(int64_t(o.call_group_rank)));
    for (int d = 0; d < 8; ++d) field("call_group", uint64_t(int64_t(o.call_group[d])));
    return out;
}

// ---- the entry: a flat little-endian record ---------------------------------------------------

class Writer {
public:
    void u64(uint64_t v) {
        for (int i = 0; i < 8; ++i) out_.push_back(char(uint8_t(v >> (8 * i))));
    }
    void i64(int64_t v) { u64(uint64_t(v)); }
    void str(const std::string& s) {
        u64(s.size());
        out_ += s;
    }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

class Reader {
public:
    explicit Reader(const std::string& in) : in_(in) {}
    bool u64(uint64_t& v) {
        if (in_.size() - at_ < 8) return ok_ = false;
        v = 0;
        for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(in_[at_ + size_t(i)])) << (8 * i);
        at_ += 8;
        return true;
    }
    template <class T>
    bool num(T& v) {
        uint64_t raw = 0;
        if (!u64(raw)) return false;
        v = T(int64_t(raw));
        return true;
    }
    bool str(std::string& s) {
        uint64_t n = 0;
        if (!u64(n) || n > in_.size() - at_) return ok_ = false;
        s.assign(in_, at_, size_t(n));
        at_ += size_t(n);
        return true;
    }
    /// A count of records of at least `min_bytes` each that the rest of the input can hold.
    bool count(size_t& n, size_t min_bytes) {
        uint64_t raw = 0;
        if (!u64(raw) || raw > (in_.size() - at_) / min_bytes) return ok_ = false;
        n = size_t(raw);
        return true;
    }
    bool ok() const { return ok_; }
    bool done() const { return ok_ && at_ == in_.size(); }

private:
    const std::string& in_;
    size_t at_ = 0;
    bool ok_ = true;
};

// Every member of a tensor field's layout is written and read back below: a new one must be added
// to both, then this size updated (a member left out reads back as 0 from a warm index).
static_assert(sizeof(codegen::TensorFieldLayout) == 9 * sizeof(size_t),
              "a new TensorFieldLayout member must be encoded and decoded in the kernel index");

std::string encode(const codegen::GeneratedKernel& g, const std::string& module_key) {
    Writer w;
    w.u64(kIndexFormat);
    w.str(module_key);
    w.str(g.entry);
    w.str(g.final_entry);
    w.str(g.fixed_entry);
    w.i64(g.elements_per_thread);
    w.i64(g.reduced_slots);
    w.i64(g.call_group_block);
    w.u64(g.ordered.size());
    for (const auto& t : g.ordered) {
        w.i64(t.param);
        w.i64(t.accum_bytes);
        w.i64(t.capacity);
    }
    w.u64(g.fixed.size());
    for (const auto& t : g.fixed) {
        w.i64(t.param);
        w.i64(t.wide);
        w.i64(t.adds);
    }
    w.u64(g.stored_grads.size());
    for (const auto& t : g.stored_grads) {
        w.i64(t.param);
        w.i64(t.rank);
        for (int d = 0; d < 8; ++d) w.i64(t.dims[d]);
    }
    w.u64(g.tree_tables.size());
    for (const auto& t : g.tree_tables) w.i64(t.param);
    w.u64(g.layout.size);
    w.u64(g.layout.fields.size());
    for (const codegen::ParamField& f : g.layout.fields) {
        w.str(f.name);
        w.u64(f.offset);
        w.u64(f.size);
        const codegen::TensorFieldLayout& t = f.tensor;
        for (size_t v : {t.data, t.shape, t.strides, t.inner, t.grad_data, t.grad_strides, t.grad_inner, t.view_rank,
                          t.grad_view})
            w.u64(v);
        const codegen::FieldShape& s = f.shape;
        for (int64_t v : {int64_t(s.form), int64_t(s.scalar), int64_t(s.rows), int64_t(s.cols), int64_t(s.element),
                          int64_t(s.rank), int64_t(s.has_grad)})
            w.i64(v);
    }
    return w.take();
}

bool decode(const std::string& payload, codegen::GeneratedKernel& g, std::string& module_key) {
    Reader r(payload);
    uint64_t format = 0;
    if (!r.u64(format) || format != kIndexFormat) return false;
    r.str(module_key);
    r.str(g.entry);
    r.str(g.final_entry);
    r.str(g.fixed_entry);
    r.num(g.elements_per_thread);
    r.num(g.reduced_slots);
    r.num(g.call_group_block);
    size_t n = 0;
    if (!r.count(n, 24)) return false;
    g.ordered.resize(n);
    for (auto& t : g.ordered) r.num(t.param), r.num(t.accum_bytes), r.num(t.capacity);
    if (!r.count(n, 24)) return false;
    g.fixed.resize(n);
    for (auto& t : g.fixed) r.num(t.param), r.num(t.wide), r.num(t.adds);
    if (!r.count(n, 80)) return false;
    g.stored_grads.resize(n);
    for (auto& t : g.stored_grads) {
        r.num(t.param), r.num(t.rank);
        for (int d = 0; d < 8; ++d) r.num(t.dims[d]);
        if (t.rank < 0 || t.rank > 8) return false;
        for (int d = 0; d < t.rank; ++d)
            if (t.dims[d] < 0 || t.dims[d] >= 8) return false;
    }
    if (!r.count(n, 8)) return false;
    g.tree_tables.resize(n);
    for (auto& t : g.tree_tables) r.num(t.param);
    r.num(g.layout.size);
    if (!r.count(n, 8 * 19)) return false;
    g.layout.fields.resize(n);
    for (codegen::ParamField& f : g.layout.fields) {
        r.str(f.name);
        r.num(f.offset);
        r.num(f.size);
        codegen::TensorFieldLayout& t = f.tensor;
        for (size_t* v : {&t.data, &t.shape, &t.strides, &t.inner, &t.grad_data, &t.grad_strides, &t.grad_inner,
                          &t.view_rank, &t.grad_view})
            r.num(*v);
        codegen::FieldShape& s = f.shape;
        int64_t form = 0, scalar = 0, element = 0, has_grad = 0;
        r.num(form), r.num(scalar), r.num(s.rows), r.num(s.cols), r.num(element), r.num(s.rank), r.num(has_grad);
        using Form = codegen::FieldShape::Form;
        if (form < 0 || form > int64_t(Form::Other) || element < 0 || element > int64_t(Form::Other) || scalar < 0 ||
            scalar > int64_t(lang::ScalarKind::Double))
            return false;
        s.form = Form(form);
        s.element = Form(element);
        s.scalar = lang::ScalarKind(scalar);
        s.has_grad = has_grad != 0;
    }
    // A block smaller than its header or a field outside it is not an entry this build wrote.
    if (!r.done() || g.entry.empty() || g.layout.size < sizeof(codegen::CallHeader)) return false;
    for (const codegen::ParamField& f : g.layout.fields)
        if (f.offset + f.size > g.layout.size) return false;
    for (const codegen::StoredGrad& t : g.stored_grads)
        if (t.param < 0 || size_t(t.param) >= g.layout.fields.size()) return false;
    for (const auto& t : g.tree_tables)
        if (t.param < 0 || size_t(t.param) >= g.layout.fields.size()) return false;
    return true;
}

}  // namespace

std::string kernel_index_key(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                             DeviceType device, int device_index) {
    const runtime::Backend& backend = runtime::backend(device);
    std::string material = "shadegrad kernel index\n";
    runtime::append_key_field(material, "format", std::to_string(kIndexFormat));
    runtime::append_key_field(material, "build", driver::compiler_build_id());
    runtime::append_key_field(material, "module", module.content_key());
    runtime::append_key_field(material, "target", std::to_string(int(backend.device_type())));
    runtime::append_key_field(material, "compiler",
                              backend.compiler_fingerprint(device_index < 0 ? 0 : device_index, debug_mode(),
                                                           options.fast_math));
    runtime::append_key_field(material, "options", options_text(options));
    runtime::append_key_field(material, "entry", glue.entry);
    runtime::append_key_field(material, "glue", glue.source);
    return runtime::content_hash(material);
}

std::optional<CompiledKernel> indexed_kernel(const UserModule& module, const Glue& glue,
                                             const codegen::CodegenOptions& options, DeviceType device,
                                             int device_index) {
    const runtime::Backend& backend = runtime::backend(device);
    const auto start = std::chrono::steady_clock::now();
    const std::string key = kernel_index_key(module, glue, options, device, device_index);
    add_plan_stats(PlanStats{.index_key_ms = runtime::ms_since(start)});
    if (std::optional<std::string> payload = runtime::disk_cache_load(kIndexKind, key)) {
        CompiledKernel k;
        std::string module_key;
        if (decode(*payload, k.generated, module_key)) {
            runtime::KernelSpec spec = kernel_spec(k.generated, options, device_index);
            spec.source = nullptr;
            if ((k.loaded = backend.load_cached(spec, module_key))) {
                k.device_type = backend.device_type();
                k.options = options;
                k.from_index = true;
                add_plan_stats(PlanStats{.index_hits = 1, .index_ms = runtime::ms_since(start)});
                return k;
            }
        }
    }
    add_plan_stats(PlanStats{.index_misses = 1, .index_ms = runtime::ms_since(start)});
    return std::nullopt;
}

CompiledKernel compile_and_index(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                                 DeviceType device, int device_index) {
    const runtime::Backend& backend = runtime::backend(device);
    backend.prepare_compiler();  // opening the compiler overlaps the front end and codegen
    CompiledKernel k = compile_kernel(module, glue, options, device, device_index);
    const auto start = std::chrono::steady_clock::now();
    // A failed store costs only a front end and codegen run in a later process.
    (void)runtime::disk_cache_store(kIndexKind, kernel_index_key(module, glue, options, device, device_index),
                                    encode(k.generated, k.loaded->module_key()));
    add_plan_stats(PlanStats{.index_ms = runtime::ms_since(start)});
    return k;
}

CompiledKernel cached_kernel(const UserModule& module, const Glue& glue, const codegen::CodegenOptions& options,
                             DeviceType device, int device_index) {
    if (std::optional<CompiledKernel> k = indexed_kernel(module, glue, options, device, device_index)) return *std::move(k);
    return compile_and_index(module, glue, options, device, device_index);
}

std::string kernel_body(const UserModule& module, const Glue& glue, const CompiledKernel& k) {
    if (!k.from_index) return k.generated.source.substr(k.generated.body_begin);
    const CompiledKernel again = generate(module, glue, k.device_type, k.options);
    return again.generated.source.substr(again.generated.body_begin);
}

}  // namespace sg::call
