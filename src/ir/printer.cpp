// src/ir/printer.cpp — textual IR for debugging, tests and `shadegradc --emit ir`.
#include <cstdio>
#include <string>

#include "ir/passes.h"

namespace sg::ir {

namespace {

/// A string builder with stream syntax (the core uses no iostreams: their locale state is
/// shared with whatever else is loaded in the process).
struct Text {
    std::string s;
    Text& operator<<(const std::string& v) { s += v; return *this; }
    Text& operator<<(const char* v) { s += v; return *this; }
    Text& operator<<(char v) { s += v; return *this; }
    Text& operator<<(int64_t v) { s += std::to_string(v); return *this; }
    Text& operator<<(double v) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.9g", v);
        s += buf;
        return *this;
    }
};

std::string name(const Value* v) { return "%" + std::to_string(v->id) + (v->hint.empty() ? "" : "." + v->hint); }

void print_block(Text& os, const Block& b, int indent);

void print_inst(Text& os, const Inst& inst, int indent) {
    os << std::string(size_t(indent) * 2, ' ');
    for (size_t k = 0; k < inst.results.size(); ++k)
        os << (k ? ", " : "") << name(inst.results[k]) << ":" << lang::type_name(inst.results[k]->type);
    if (!inst.results.empty()) os << " = ";
    os << op_name(inst.op);
    switch (inst.op) {
    case OpKind::ConstInt: os << " " << inst.imm_int; break;
    case OpKind::ConstFloat: os << " " << inst.imm_float; break;
    case OpKind::Intrinsic: os << " " << lang::intrinsic_info(inst.intrinsic()).name; break;
    case OpKind::Call: os << " @" << inst.callee->name; break;
    case OpKind::Extract:
    case OpKind::Insert:
    case OpKind::TensorShape:
    case OpKind::CallIndex:
    case OpKind::CoopId:
    case OpKind::Wave:
    case OpKind::Barrier:
    case OpKind::SharedView:
    case OpKind::TensorAtomic:
    case OpKind::ViewQuery:
    case OpKind::ViewPart:
    case OpKind::LocalAlloc:
    case OpKind::Trap: os << " #" << inst.imm_int; break;
    case OpKind::Loop: if (inst.imm_int) os << " max_iters=" << inst.imm_int; break;
    case OpKind::Swizzle:
        os << " .";
        for (int c : inst.imm_list) os << "xyzw"[c];
        break;
    default: break;
    }
    for (size_t k = 0; k < inst.operands.size(); ++k) os << (k ? ", " : " ") << name(inst.operands[k]);
    os << "\n";
    for (size_t r = 0; r < inst.regions.size(); ++r) {
        os << std::string(size_t(indent) * 2, ' ') << (inst.op == OpKind::If ? (r ? "else" : "then") : "body");
        const Block& b = *inst.regions[r];
        if (!b.params.empty()) {
            os << "(";
            for (size_t k = 0; k < b.params.size(); ++k) os << (k ? ", " : "") << name(b.params[k]);
            os << ")";
        }
        os << ":\n";
        print_block(os, b, indent + 1);
    }
}

void print_block(Text& os, const Block& b, int indent) {
    for (const auto& inst : b.insts) print_inst(os, *inst, indent);
}

}  // namespace

std::string print_function(const Function& fn) {
    Text os;
    os << "func @" << fn.name << "(";
    size_t entry = 0;
    for (size_t k = 0; k < fn.params.size(); ++k) {
        const Param& p = fn.params[k];
        os << (k ? ", " : "");
        if (p.dir == ParamDir::Out) os << "out ";
        if (p.dir == ParamDir::InOut) os << "inout ";
        if (p.no_diff) os << "no_diff ";
        os << lang::type_name(p.type) << " " << p.name;
        if (p.dir != ParamDir::Out && entry < fn.body->params.size()) os << " " << name(fn.body->params[entry++]);
    }
    os << ") -> (";
    for (size_t k = 0; k < fn.result_types.size(); ++k) os << (k ? ", " : "") << lang::type_name(fn.result_types[k]);
    os << ")" << (fn.differentiable ? " [differentiable]" : "") << (fn.is_kernel ? " [kernel]" : "") << "\n";
    print_block(os, *fn.body, 1);
    return os.s;
}

std::string print_program(const Program& program) {
    std::string out;
    for (const auto& f : program.functions) out += print_function(*f) + "\n";
    return out;
}

}  // namespace sg::ir
