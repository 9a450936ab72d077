// src/codegen/emit_function.cpp — the emitter's core: output lines and value names, blocks and
// the dispatch over instructions, structured control flow (If, Loop) and user functions.
#include "codegen/emitter.h"

namespace sg::codegen::detail {

namespace {

/// `v12_hint`: the value id keeps names unique, the hint keeps them readable.
std::string value_name(const Value* v, const std::string& hint) {
    std::string name = "v" + std::to_string(v->id);
    std::string clean;
    for (char c : hint) {
        if (clean.size() >= 24) break;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (ok) clean += c;
        else if (!clean.empty() && clean.back() != '_') clean += '_';
    }
    while (!clean.empty() && clean.back() == '_') clean.pop_back();
    return clean.empty() ? name : name + "_" + clean;
}

void collect_callees(const Block& block, std::vector<const Function*>& out) {
    for (const auto& inst : block.insts) {
        if (inst->op == OpKind::Call) out.push_back(inst->callee);
        for (const auto& region : inst->regions) collect_callees(*region, out);
    }
}

}  // namespace

Emitter::Emitter(const ir::Program& program, DeviceType target, const CodegenOptions& options)
    : program_(program), target_(target), options_(options), names_(*program.types) {}

std::string Emitter::local_name(const Value* v) const { return value_name(v, v->hint); }

std::string Emitter::local_name(const Value* v, const std::string& fallback_hint) const {
    return value_name(v, v->hint.empty() ? fallback_hint : v->hint);
}

std::string Emitter::ref(const Value* v) const {
    auto it = exprs_.find(v);
    SG_INTERNAL_ASSERT(it != exprs_.end(), "codegen: value %" + std::to_string(v->id) + " used before its definition in @" +
                                               (current_ ? current_->name : std::string("?")));
    return it->second;
}

void Emitter::define(const Value* v, const std::string& expr) {
    line(type(v->type) + " " + local_name(v) + " = " + expr + ";");
    bind(v, local_name(v));
}

void Emitter::line(const std::string& text) {
    body_.append(size_t(indent_) * 4, ' ');
    body_ += text;
    body_ += '\n';
}

void Emitter::open(const std::string& head) {
    line(head + " {");
    ++indent_;
}

void Emitter::close(const std::string& tail) {
    --indent_;
    line(tail);
}

void Emitter::reopen(const std::string& text) {
    --indent_;
    line(text);
    ++indent_;
}

void Emitter::location_comment(const Inst& inst) {
    // One comment per source line that produced code: the generated code is shown to users
    // (fn.debug_code()), who read it next to their source.
    if (!inst.loc.valid()) return;
    // Preprocessed text: the comment shows the line of the file the code was written in.
    const lang::SourceLoc at = lang::original_location(inst.loc);
    const auto [line_no, col] = at.file->line_col(at.offset);
    if (at.file == last_file_ && line_no == last_line_) return;
    last_file_ = at.file;
    last_line_ = line_no;
    std::string text(at.file->line_text(line_no));
    for (char& c : text)
        if (c == '\t' || c == '\r' || c == '\n') c = ' ';
    size_t begin = text.find_first_not_of(' ');
    text = begin == std::string::npos ? "" : text.substr(begin);
    if (text.size() > 100) text = text.substr(0, 97) + "...";
    while (!text.empty() && (text.back() == ' ' || text.back() == '\\')) text.pop_back();  // no line splice
    line("// " + at.file->name + ":" + std::to_string(line_no) + ": " + text);
}

void Emitter::emit_block(const Block& block) {
    for (const auto& inst : block.insts)
        if (inst->op != OpKind::Yield && inst->op != OpKind::Return) emit_inst(*inst);
}

void Emitter::emit_inst(const Inst& inst) {
    if (inst.op != OpKind::ConstInt && inst.op != OpKind::ConstFloat) location_comment(inst);
    switch (inst.op) {
    case OpKind::ConstInt: case OpKind::ConstFloat: case OpKind::Undef:
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
    case OpKind::Neg: case OpKind::BitAnd: case OpKind::BitOr: case OpKind::BitXor: case OpKind::BitNot:
    case OpKind::Shl: case OpKind::Shr: case OpKind::Eq: case OpKind::Ne: case OpKind::Lt: case OpKind::Le:
    case OpKind::Gt: case OpKind::Ge: case OpKind::LogicAnd: case OpKind::LogicOr: case OpKind::LogicNot:
    case OpKind::Select: case OpKind::Convert: case OpKind::Detach: case OpKind::KeepDerivative:
        emit_arith(inst);
        return;
    case OpKind::Splat: case OpKind::Construct: case OpKind::Extract: case OpKind::Insert:
    case OpKind::ExtractDyn: case OpKind::InsertDyn: case OpKind::Swizzle: emit_composite(inst); return;
    case OpKind::Intrinsic: emit_intrinsic(inst); return;
    case OpKind::SinCos: emit_sincos(inst); return;
    case OpKind::Call: emit_call(inst); return;
    case OpKind::TensorLoad: case OpKind::TensorStore: case OpKind::TensorAtomicAdd: case OpKind::TensorGradAdd:
    case OpKind::TensorGradLoad: case OpKind::TensorGradStore: case OpKind::TensorShape: case OpKind::TensorSlice:
        emit_tensor(inst);
        return;
    case OpKind::CallIndex: emit_call_index(inst); return;
    case OpKind::CoopId: case OpKind::Barrier: case OpKind::SharedView: case OpKind::TensorAtomic:
    case OpKind::ViewQuery: case OpKind::ViewPart: emit_coop(inst); return;
    case OpKind::Wave: emit_wave(inst); return;
    case OpKind::LocalAlloc: case OpKind::LocalLoad: case OpKind::LocalStore: emit_local(inst); return;
    case OpKind::If: emit_if(inst); return;
    case OpKind::Loop: emit_loop(inst); return;
    case OpKind::Trap: emit_trap(inst); return;
    case OpKind::Yield: case OpKind::Return: case OpKind::Count: break;
    }
    SG_INTERNAL_ASSERT(false, std::string("codegen: unexpected op ") + ir::op_name(inst.op));
}

static const Inst& region_yield(const Block& region) {
    const Inst* y = region.terminator();
    SG_INTERNAL_ASSERT(y && y->op == OpKind::Yield, "codegen: region does not end with yield");
    return *y;
}

void Emitter::emit_if(const Inst& inst) {
    // Results are declared first and assigned at the end of each branch.
    for (const Value* r : inst.results) {
        line(type(r->type) + " " + local_name(r) + ";");
        bind(r, local_name(r));
    }
    auto emit_branch = [&](const Block& region) {
        emit_block(region);
        const Inst& y = region_yield(region);
        for (size_t k = 0; k < inst.results.size(); ++k) line(local_name(inst.results[k]) + " = " + ref(y.operands[k]) + ";");
    };
    open("if (" + ref(inst.operands[0]) + ")");
    emit_branch(*inst.regions[0]);
    const Block& other = *inst.regions[1];
    if (other.insts.size() > 1 || !inst.results.empty()) {
        reopen("} else {");
        emit_branch(other);
    }
    close();
}

void Emitter::emit_loop(const Inst& inst) {
    const Block& body = *inst.regions[0];
    SG_INTERNAL_ASSERT(body.params.size() == inst.operands.size() && inst.results.size() == inst.operands.size(),
                       "codegen: loop arity");
    line(inst.imm_int ? "// loop, at most " + std::to_string(inst.imm_int) + " iterations" : "// loop");
    // The carried values are mutable locals; the body's params and the loop's results are
    // names for them.
    std::vector<std::string> carried;
    for (size_t k = 0; k < body.params.size(); ++k) {
        const Value* p = body.params[k];
        carried.push_back(local_name(p));
        line(type(p->type) + " " + carried[k] + " = " + ref(inst.operands[k]) + ";");
        bind(p, carried[k]);
        bind(inst.results[k], carried[k]);
    }
    open("for (;;)");
    ++loop_depth_;
    emit_block(body);
    --loop_depth_;
    const Inst& y = region_yield(body);
    SG_INTERNAL_ASSERT(y.operands.size() == body.params.size() + 1, "codegen: loop yield arity");

    // Parallel assignment: a yielded value that is itself a carried value (of another slot) is
    // copied first, so that updating the slots in order never reads an already-updated local.
    // (Compared by name: any alias of a carried local counts.)
    auto is_carried = [&](const std::string& expr) {
        for (const std::string& c : carried)
            if (c == expr) return true;
        return false;
    };
    std::string cont = ref(y.operands[0]);
    if (is_carried(cont)) {
        const std::string tmp = "cont" + std::to_string(temp_counter_++);
        line("bool " + tmp + " = " + cont + ";");
        cont = tmp;
    }
    std::vector<std::string> next(body.params.size());
    for (size_t k = 0; k < body.params.size(); ++k) {
        next[k] = ref(y.operands[k + 1]);
        if (next[k] != carried[k] && is_carried(next[k])) {
            const std::string tmp = "next" + std::to_string(temp_counter_++);
            line(type(body.params[k]->type) + " " + tmp + " = " + next[k] + ";");
            next[k] = tmp;
        }
    }
    for (size_t k = 0; k < body.params.size(); ++k)
        if (next[k] != carried[k]) line(carried[k] + " = " + next[k] + ";");
    line("if (!" + cont + ") break;");
    close();
}

void Emitter::emit_return(const std::vector<Value*>* values) {
    if (in_kernel_) {
        line("return;");
        return;
    }
    const FunctionInfo& info = function_info(*current_);
    const size_t n = current_->result_types.size();
    if (n == 0) line("return;");
    else if (!values) line("return {};");
    else if (n == 1) line("return " + ref((*values)[0]) + ";");
    else {
        std::string members;
        for (size_t k = 0; k < n; ++k) members += (k ? ", " : "") + ref((*values)[k]);
        line("return " + info.result_struct + "{" + members + "};");
    }
}

const Emitter::FunctionInfo& Emitter::function_info(const Function& fn) {
    auto it = functions_.find(&fn);
    if (it != functions_.end()) return it->second;
    FunctionInfo info;
    info.name = names_.reserve_name(fn.name);
    if (fn.result_types.size() > 1) {
        // Several results (the return value, then out/inout parameters) return as one struct
        // whose fields are named after them.
        info.result_struct = names_.reserve_name(fn.name + "_results");
        std::vector<std::string> labels;
        if (fn.return_type && !fn.return_type->is_void()) labels.push_back("result");
        for (const auto& p : fn.params)
            if (p.dir != ir::ParamDir::In) labels.push_back(p.name);
        SG_INTERNAL_ASSERT(labels.size() == fn.result_types.size(), "codegen: result count of @" + fn.name);
        std::string def = "struct " + info.result_struct + " {  // results of " + fn.name + "\n";
        std::set<std::string> taken;
        for (size_t k = 0; k < labels.size(); ++k) {
            std::string field = sanitize_identifier(labels[k]);
            for (int n = 2; taken.count(field); ++n) field = sanitize_identifier(labels[k]) + "_" + std::to_string(n);
            taken.insert(field);
            info.result_fields.push_back(field);
            def += "    " + type(fn.result_types[k]) + " " + field + ";\n";
        }
        result_structs_ += def + "};\n\n";
    }
    return functions_.emplace(&fn, std::move(info)).first->second;
}

void Emitter::begin_function(const Function& fn, bool is_kernel) {
    body_.clear();
    indent_ = 1;
    temp_counter_ = 0;
    exprs_.clear();
    last_file_ = nullptr;
    last_line_ = 0;
    current_ = &fn;
    in_kernel_ = is_kernel;
}

std::string Emitter::emit_function_tree(const Function& fn) {
    if (!emitted_.insert(&fn).second) return function_info(fn).name;
    // Callees first (the IR has no recursion): C++ needs a definition before the call, and this
    // emitter has one body in progress at a time.
    std::vector<const Function*> callees;
    collect_callees(*fn.body, callees);
    for (const Function* callee : callees) emit_function_tree(*callee);
    emit_function(fn);
    return function_info(fn).name;
}

void Emitter::emit_function(const Function& fn) {
    SG_INTERNAL_ASSERT(!fn.is_kernel, "codegen: kernel @" + fn.name + " called as a function");
    const FunctionInfo& info = function_info(fn);
    begin_function(fn, false);
    std::string ret = fn.result_types.empty() ? "void"
                      : fn.result_types.size() == 1 ? type(fn.result_types[0])
                                                    : info.result_struct;
    std::string signature = "SG_FN " + ret + " " + info.name + "([[maybe_unused]] sg_fault_sink sg_faults";
    std::string source = "// " + fn.name + "(";
    for (size_t k = 0; k < fn.params.size(); ++k) {
        const ir::Param& p = fn.params[k];
        source += std::string(k ? ", " : "") + (p.dir == ir::ParamDir::Out ? "out " : p.dir == ir::ParamDir::InOut ? "inout " : "") +
                  lang::type_name(p.type) + " " + p.name;
        const int entry = fn.entry_param_index(k);
        if (entry < 0) continue;
        const Value* v = fn.body->params.at(size_t(entry));
        const std::string name = local_name(v, p.name);
        signature += ", " + type(v->type) + " " + name;
        bind(v, name);
    }
    std::string code = source + ")" + (fn.differentiable ? " [Differentiable]" : "") + "\n" + signature + ") {\n";
    emit_block(*fn.body);
    const Inst* term = fn.body->terminator();
    SG_INTERNAL_ASSERT(term && term->op == OpKind::Return, "codegen: function @" + fn.name + " does not end with return");
    if (!term->operands.empty()) emit_return(&term->operands);
    code += body_ + "}\n\n";
    function_code_ += code;
}

}  // namespace sg::codegen::detail
