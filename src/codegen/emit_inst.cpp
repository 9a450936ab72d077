// src/codegen/emit_inst.cpp — value instructions: constants, elementwise arithmetic and logic,
// conversions, composites (vectors, matrices, arrays, structs, pairs), intrinsics and calls.
#include "codegen/emitter.h"

namespace sg::codegen::detail {

using lang::IntrinsicRule;
using lang::ScalarKind;
using lang::TypeKind;

namespace {

const char* infix_operator(OpKind op) {
    switch (op) {
    case OpKind::Add: return "+";
    case OpKind::Sub: return "-";
    case OpKind::Mul: return "*";
    case OpKind::BitAnd: return "&";
    case OpKind::BitOr: return "|";
    case OpKind::BitXor: return "^";
    case OpKind::Eq: return "==";
    case OpKind::Ne: return "!=";
    case OpKind::Lt: return "<";
    case OpKind::Le: return "<=";
    case OpKind::Gt: return ">";
    case OpKind::Ge: return ">=";
    default: return nullptr;
    }
}

const char* vector_component(int index) {
    static const char* kNames[] = {"x", "y", "z", "w"};
    SG_INTERNAL_ASSERT(index >= 0 && index < 4, "vector component index");
    return kNames[index];
}

}  // namespace

void Emitter::emit_arith(const Inst& inst) {
    const Value* r = inst.result();
    const Type* t = r->type;
    auto arg = [&](size_t k) { return ref(inst.operands[k]); };
    switch (inst.op) {
    case OpKind::ConstInt: bind(r, int_literal(inst.imm_int, t->scalar)); return;
    case OpKind::ConstFloat: bind(r, float_literal(inst.imm_float, t->scalar)); return;
    case OpKind::Detach:  // derivative markers only; normally gone by now
    case OpKind::KeepDerivative: bind(r, arg(0)); return;
    case OpKind::Undef:  // deterministic zero rather than an uninitialized read
        line(type(t) + " " + local_name(r) + "{};");
        bind(r, local_name(r));
        return;
    case OpKind::Select:
        define(r, inst.operands[0]->type->is_scalar() ? arg(0) + " ? " + arg(1) + " : " + arg(2)
                                                      : "sg_select(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ")");
        return;
    case OpKind::Convert: {
        const ScalarKind to = t->scalar;
        if (!t->is_scalar()) define(r, std::string("sg_convert<") + lang::scalar_name(to) + ">(" + arg(0) + ")");
        else if (to == ScalarKind::Bool) define(r, arg(0) + " != 0");
        else define(r, "(" + type(t) + ")" + arg(0));
        return;
    }
    default: break;
    }

    const Type* operand_type = inst.operands[0]->type;
    const bool is_float = lang::is_floating(operand_type->scalar);
    const bool is_bool = operand_type->scalar == ScalarKind::Bool;
    const bool scalar = operand_type->is_scalar();
    switch (inst.op) {
    // Integer division and remainder go through the prelude (x / 0 == 0, no INT_MIN / -1 trap);
    // float % is C fmod.
    // Debug checks record a zero divisor as a fault (the result is still 0).
    case OpKind::Div:
        if (!is_float && options_.debug_checks) line("sg_check_divisor(sg_faults, " + arg(1) + ", " + fault_location(inst) + ");");
        define(r, is_float ? arg(0) + " / " + arg(1) : "sg_div(" + arg(0) + ", " + arg(1) + ")");
        return;
    case OpKind::Rem:
        if (!is_float && options_.debug_checks) line("sg_check_divisor(sg_faults, " + arg(1) + ", " + fault_location(inst) + ");");
        define(r, std::string(is_float ? "sg_fmod(" : "sg_rem(") + arg(0) + ", " + arg(1) + ")");
        return;
    case OpKind::Shl: define(r, "sg_shl(" + arg(0) + ", " + arg(1) + ")"); return;  // count masked
    case OpKind::Shr: define(r, "sg_shr(" + arg(0) + ", " + arg(1) + ")"); return;
    case OpKind::LogicAnd: define(r, scalar ? arg(0) + " && " + arg(1) : "sg_and(" + arg(0) + ", " + arg(1) + ")"); return;
    case OpKind::LogicOr: define(r, scalar ? arg(0) + " || " + arg(1) : "sg_or(" + arg(0) + ", " + arg(1) + ")"); return;
    case OpKind::LogicNot: define(r, scalar ? "!" + arg(0) : "sg_not(" + arg(0) + ")"); return;
    case OpKind::Neg: define(r, "-" + arg(0)); return;
    case OpKind::BitNot:  // ~ on a bool would give -2 (true): bools flip logically
        if (is_bool) define(r, scalar ? "!" + arg(0) : "sg_not(" + arg(0) + ")");
        else define(r, "~" + arg(0));
        return;
    default: break;
    }
    const char* op = infix_operator(inst.op);
    SG_INTERNAL_ASSERT(op != nullptr, std::string("codegen: unexpected op ") + ir::op_name(inst.op));
    define(r, arg(0) + " " + op + " " + arg(1));
}

void Emitter::emit_composite(const Inst& inst) {
    const Value* r = inst.result();
    const Type* t = r->type;
    auto arg = [&](size_t k) { return ref(inst.operands[k]); };
    auto joined_operands = [&]() {
        std::string s;
        for (size_t k = 0; k < inst.operands.size(); ++k) s += (k ? ", " : "") + arg(k);
        return s;
    };
    // The C++ member access of component `index` of a composite of type `c`.
    auto member = [&](const Type* c, int index) -> std::string {
        switch (c->kind) {
        case TypeKind::Vector: return std::string(".") + vector_component(index);
        case TypeKind::Matrix: return ".rows[" + std::to_string(index) + "]";
        case TypeKind::Array: return ".data[" + std::to_string(index) + "]";
        case TypeKind::Struct: return "." + names_.field_names(c).at(size_t(index));
        case TypeKind::DiffPair: return index == 0 ? ".p" : ".d";
        default: SG_INTERNAL_ASSERT(false, "member of " + lang::type_name(c));
        }
        return {};
    };
    // Composite length for the debug checks of dynamic indexing.
    auto length = [](const Type* c) -> int64_t { return c->is_array() ? c->count : c->rows; };

    switch (inst.op) {
    case OpKind::Splat: define(r, "sg_splat<" + type(t) + ">(" + arg(0) + ")"); return;
    case OpKind::Construct:
        // Aggregates: vectors and structs take their members directly, matrices (rows[R]) and
        // arrays (data[N]) one more level of braces.
        if (t->is_matrix() || t->is_array()) define(r, type(t) + "{{" + joined_operands() + "}}");
        else define(r, type(t) + "{" + joined_operands() + "}");
        return;
    case OpKind::Extract: define(r, arg(0) + member(inst.operands[0]->type, int(inst.imm_int))); return;
    case OpKind::Insert:
        line(type(t) + " " + local_name(r) + " = " + arg(0) + ";");
        line(local_name(r) + member(t, int(inst.imm_int)) + " = " + arg(1) + ";");
        bind(r, local_name(r));
        return;
    case OpKind::ExtractDyn:
        if (options_.debug_checks)
            line("sg_check_index(sg_faults, " + arg(1) + ", " + std::to_string(length(inst.operands[0]->type)) + ");");
        define(r, "sg_get(" + arg(0) + ", " + arg(1) + ")");
        return;
    case OpKind::InsertDyn:
        if (options_.debug_checks)
            line("sg_check_index(sg_faults, " + arg(1) + ", " + std::to_string(length(t)) + ");");
        define(r, "sg_set(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ")");
        return;
    case OpKind::Swizzle: {
        const Value* src = inst.operands[0];
        auto component = [&](int c) { return src->type->is_scalar() ? arg(0) : arg(0) + "." + vector_component(c); };
        if (t->is_scalar()) {
            define(r, component(inst.imm_list.at(0)));
            return;
        }
        std::string members;
        for (size_t k = 0; k < inst.imm_list.size(); ++k) members += (k ? ", " : "") + component(inst.imm_list[k]);
        define(r, type(t) + "{" + members + "}");
        return;
    }
    default: SG_INTERNAL_ASSERT(false, std::string("codegen: unexpected op ") + ir::op_name(inst.op));
    }
}

void Emitter::emit_intrinsic(const Inst& inst) {
    const Value* r = inst.result();
    const lang::IntrinsicInfo& info = lang::intrinsic_info(inst.intrinsic());
    // Same/SameAny/Select rules broadcast: an operand that is not of the result type (a scalar
    // next to vectors, or an int next to floats) is converted and splatted to it here, so that
    // the prelude only needs same-type overloads.
    const bool broadcasts = info.rule == IntrinsicRule::Same || info.rule == IntrinsicRule::SameAny ||
                            info.rule == IntrinsicRule::Select;
    std::string args;
    for (size_t k = 0; k < inst.operands.size(); ++k) {
        const Value* a = inst.operands[k];
        std::string text = ref(a);
        const bool is_condition = info.rule == IntrinsicRule::Select && k == 0;
        if (broadcasts && !is_condition && a->type != r->type) {
            SG_INTERNAL_ASSERT(a->type->is_scalar() || a->type->components() == r->type->components(),
                               std::string("operand of ") + info.name + " of type " + lang::type_name(a->type) +
                                   " does not broadcast to " + lang::type_name(r->type));
            if (a->type->scalar != r->type->scalar)
                text = a->type->is_scalar() ? "(" + std::string(lang::scalar_name(r->type->scalar)) + ")" + text
                                            : std::string("sg_convert<") + lang::scalar_name(r->type->scalar) + ">(" + text + ")";
            if (a->type->is_scalar() && !r->type->is_scalar()) text = "sg_splat<" + type(r->type) + ">(" + text + ")";
        }
        args += (k ? ", " : "") + text;
    }
    define(r, std::string("sg_") + info.name + "(" + args + ")");
}

// Both results of one sg_sincos call (prelude: sincosf/sincos on CUDA, sinf and cosf on the CPU).
void Emitter::emit_sincos(const Inst& inst) {
    const Value* s = inst.results[0];
    const Value* c = inst.results[1];
    line(type(s->type) + " " + local_name(s) + ", " + local_name(c) + ";");
    line("sg_sincos(" + ref(inst.operands[0]) + ", &" + local_name(s) + ", &" + local_name(c) + ");");
    bind(s, local_name(s));
    bind(c, local_name(c));
}

void Emitter::emit_call(const Inst& inst) {
    const Function& callee = *inst.callee;
    // emit_function_tree defines every callee before its caller's body is emitted.
    SG_INTERNAL_ASSERT(emitted_.count(&callee), "callee @" + callee.name + " not emitted before its caller");
    const FunctionInfo& info = function_info(callee);
    std::string call = info.name + "(sg_faults";
    for (const Value* a : inst.operands) call += ", " + ref(a);
    call += ")";
    if (inst.results.empty()) {
        line(call + ";");
    } else if (inst.results.size() == 1) {
        define(inst.results[0], call);
    } else {
        // Several results come back as one struct; each result names one of its fields.
        const std::string tmp = "c" + std::to_string(inst.results[0]->id) + "_" + info.name;
        line(info.result_struct + " " + tmp + " = " + call + ";");
        for (size_t k = 0; k < inst.results.size(); ++k) bind(inst.results[k], tmp + "." + info.result_fields[k]);
    }
}

}  // namespace sg::codegen::detail
