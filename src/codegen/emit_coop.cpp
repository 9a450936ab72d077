// src/codegen/emit_coop.cpp — code of the cooperative-kernel instructions: thread and block
// ids, barriers, groupshared storage (one byte array per variable, at namespace scope: CUDA
// __shared__, CPU thread_local since a block's threads share one OS thread), TensorView element
// access and queries, and Interlocked atomics. Every TensorView and groupshared index is
// checked (a fault names the parameter, dimension, index and extent, as tensor faults do): a
// faulting access reads zero and writes nothing.
#include "codegen/emitter.h"
#include "lang/coop.h"

namespace sg::codegen::detail {

std::string Emitter::shared_storage() {
    std::string out;
    for (size_t k = 0; k < program_.shared.size(); ++k) {
        const ir::SharedVar& v = program_.shared[k];
        int64_t count = 1;
        for (int64_t d : v.dims) count *= d;
        out += "// groupshared " + lang::type_name(v.element) + " " + v.name;
        for (int64_t d : v.dims) out += "[" + std::to_string(d) + "]";
        out += "\nSG_GROUPSHARED(sg_gs_" + std::to_string(k) + ", sizeof(" + type(v.element) + ") * " +
               std::to_string(count > 0 ? count : 1) + ");\n";
    }
    return out;
}

namespace {
/// Whether a view's element is a half (a DiffTensorView<half>'s gradient is float).
bool half_element(const Type* view) {
    return view->element && view->element->is_scalar() && view->element->scalar == lang::ScalarKind::Half;
}
}  // namespace

std::string Emitter::coop_element_pointer(const Inst& inst, size_t index_end, bool grad) {
    const Value* tensor = inst.operands[0];
    const Type* tt = tensor->type;
    // A DiffTensorView<half>'s gradient is float (as Slang's): its element pointer is a float's.
    const std::string elem = grad && half_element(tt) ? std::string("float") : type(tt->element);
    const std::string n = std::to_string(coop_temps_++);
    const size_t k = index_end - 1;  // indices: operands [1, index_end)
    const std::string p = "sg_p" + n;
    std::string indices;
    for (size_t j = 1; j < index_end; ++j) indices += (j > 1 ? ", " : "") + std::string("(int64_t)") + ref(inst.operands[j]);
    if (tt->tensor.shared) {
        const ir::SharedVar& v = program_.shared.at(size_t(tensor->def->imm_int));
        const std::string base = "(void*)sg_gs_" + std::to_string(tensor->def->imm_int);
        if (k == 0) {
            line(elem + "* " + p + " = (" + elem + "*)" + base + ";");
            return p;
        }
        std::string dims;
        for (size_t j = 0; j < v.dims.size(); ++j) dims += (j ? ", " : "") + std::to_string(v.dims[j]);
        line("const int64_t sg_ix" + n + "[" + std::to_string(k) + "] = {" + indices + "};");
        line("const int64_t sg_dx" + n + "[" + std::to_string(k) + "] = {" + dims + "};");
        line(elem + "* " + p + " = (" + elem + "*)sg_shared_ptr(sg_faults, " + base + ", (int64_t)sizeof(" + elem +
             "), sg_ix" + n + ", sg_dx" + n + ", " + std::to_string(k) + ", " + fault_location(inst) + ");");
        return p;
    }
    auto param = tensor_params_.find(tensor);
    const std::string param_index = param == tensor_params_.end() ? "-1" : std::to_string(param->second);
    // A DiffTensorView's element is its primal's, or its gradient's.
    const std::string t = ref(tensor) + (tt->tensor.has_grad && tt->tensor.view ? (grad ? ".diff" : ".primal") : "");
    if (!tt->tensor.view) {
        // A tensor or RWStructuredBuffer parameter (Interlocked on its element, or a field or
        // component of it): the element at its strides (in scalars: stride units), each index
        // checked.
        if (k == 0) {
            line(elem + "* " + p + " = (" + elem + "*)" + t + ".data;");
            return p;
        }
        line("const int64_t sg_ix" + n + "[" + std::to_string(k) + "] = {" + indices + "};");
        line(elem + "* " + p + " = (" + elem + "*)sg_strided_ptr(sg_faults, " + t + ".data, (int64_t)sizeof(typename sg_stride_unit<" + elem +
             ">::type), " + t + ".shape, " + t + ".strides, sg_ix" + n + ", " + std::to_string(k) + ", " + param_index + ", " +
             fault_location(inst) + ");");
        return p;
    }
    // A TensorView: components of a vector element lie inner[0] apart; the pointer is the first.
    line("const int64_t sg_ix" + n + "[" + std::to_string(k > 0 ? k : 1) + "] = {" + (k > 0 ? indices : "0") + "};");
    line("int64_t sg_off" + n + " = 0;");
    line("const bool sg_ok" + n + " = " + (grad ? t + ".data && " : std::string()) + "sg_view_offset(sg_faults, " + t +
         ", sg_ix" + n + ", " + std::to_string(k) + ", sg_off" + n + ", " + param_index + ", " + fault_location(inst) +
         ");");
    line(elem + "* " + p + " = sg_ok" + n + " ? (" + elem + "*)((typename sg_stride_unit<" + elem + ">::type*)" + t +
         ".data + sg_off" + n + ") : (" + elem + "*)0;");
    return p;
}

void Emitter::emit_coop(const Inst& inst) {
    const Value* r = inst.result();
    switch (inst.op) {
    case OpKind::CoopId:
        if (const auto id = lang::CoopId(inst.imm_int); lang::is_call_shape_id(id)) {  // SlangPy's call groups
            if (id == lang::CoopId::CallRank) define(r, "sg_call_shape_rank()");
            else
                define(r, "sg_call_shape_id(sg_faults, " + std::to_string(inst.imm_int) + ", (int64_t)" +
                              ref(inst.operands[0]) + ", " + fault_location(inst) + ")");
            return;
        }
        define(r, "sg_coop_id(" + std::to_string(inst.imm_int) + ")");
        return;
    case OpKind::Barrier: line("sg_coop_barrier(" + std::to_string(inst.imm_int) + ");"); return;
    case OpKind::SharedView: return;  // its accesses name the storage (coop_element_pointer)
    case OpKind::ViewQuery: {
        const std::string dim = inst.operands.size() > 1 ? "(int64_t)" + ref(inst.operands[1]) : "0";
        const std::string view = ref(inst.operands[0]) + (inst.operands[0]->type->tensor.has_grad ? ".primal" : "");
        define(r, "sg_view_query(" + view + ", " + std::to_string(inst.imm_int) + ", " + dim + ")");
        return;
    }
    case OpKind::ViewPart: {
        const std::string part = ref(inst.operands[0]) + (inst.imm_int ? ".diff" : ".primal");
        // A DiffTensorView<half>'s gradient: its float elements in the values' view record.
        if (inst.imm_int && half_element(inst.operands[0]->type)) define(r, "sg_view_as<float>(" + part + ")");
        else define(r, part);
        return;
    }
    // A DiffTensorView's gradient: load's backward adds (atomically: threads may collide),
    // store's takes (reads and clears, atomically), storeOnce's reads; fwd_diff stores a tangent.
    // A DiffTensorView<half> holds its gradient in float: converted on the way in and out.
    case OpKind::TensorGradAdd: {
        const std::string p = coop_element_pointer(inst, inst.operands.size() - 1, true);
        const std::string to = half_element(inst.operands[0]->type) ? "(float)" : "";
        line("sg_view_grad_add(" + p + ", " + to + ref(inst.operands.back()) + ");");
        return;
    }
    case OpKind::TensorGradLoad: {
        const std::string p = coop_element_pointer(inst, inst.operands.size(), true);
        const std::string g = std::string(inst.imm_int ? "sg_view_grad_take(" : "sg_view_grad_read(") + p + ")";
        define(r, half_element(inst.operands[0]->type) ? type(r->type) + "(" + g + ")" : g);
        return;
    }
    case OpKind::TensorGradStore: {
        const std::string p = coop_element_pointer(inst, inst.operands.size() - 1, true);
        const std::string to = half_element(inst.operands[0]->type) ? "(float)" : "";
        line("if (" + p + ") *" + p + " = " + to + ref(inst.operands.back()) + ";");
        return;
    }
    case OpKind::TensorLoad: {
        const Type* tt = inst.operands[0]->type;
        const std::string p = coop_element_pointer(inst, inst.operands.size());
        if (tt->tensor.shared) define(r, "(" + p + " ? *" + p + " : " + type(r->type) + "{})");
        else
            define(r, "(" + p + " ? sg_element<" + type(r->type) + ">::load((const void*)" + p + ", 0, " +
                          ref(inst.operands[0]) + (tt->tensor.has_grad ? ".primal" : "") + ".inner) : " +
                          type(r->type) + "{})");
        return;
    }
    case OpKind::TensorStore: {
        const Type* tt = inst.operands[0]->type;
        const std::string p = coop_element_pointer(inst, inst.operands.size() - 1);
        const std::string v = ref(inst.operands.back());
        if (tt->tensor.shared) line("if (" + p + ") *" + p + " = " + v + ";");
        else
            line("if (" + p + ") sg_element<" + type(tt->element) + ">::store((void*)" + p + ", 0, " +
                 ref(inst.operands[0]) + (tt->tensor.has_grad ? ".primal" : "") + ".inner, " + v + ");");
        return;
    }
    case OpKind::TensorAtomic: {
        const auto op = lang::AtomicOp(inst.imm_int);
        const bool cas = op == lang::AtomicOp::CompareExchange;
        const size_t values = cas ? 2 : 1;
        std::string p = coop_element_pointer(inst, inst.operands.size() - values);
        const Type* tt = inst.operands[0]->type;
        if (!inst.imm_list.empty() && !tt->tensor.shared) {
            // A field or component of a tensor's, view's or buffer's element: its scalars lie
            // flattened (struct fields in order, a vector's components), scalar k at k * inner[0]
            // stride units from the element's first.
            const Type* c = tt->element;
            int64_t flat = 0;
            for (int k : inst.imm_list) {
                if (c->is_vector()) {
                    flat += k;
                    break;  // a scalar: the path ends
                } else {
                    const auto& fields = names_.types().fields(c);
                    for (int j = 0; j < k; ++j) flat += lang::flat_components(names_.types(), fields[size_t(j)].type);
                    c = fields.at(size_t(k)).type;
                }
            }
            const std::string unit = "typename sg_stride_unit<" + type(tt->element) + ">::type";
            const std::string inner = ref(inst.operands[0]) + (tt->tensor.has_grad && tt->tensor.view ? ".primal" : "") +
                                      ".inner[0]";
            const std::string q = "sg_pf" + std::to_string(coop_temps_++);
            line(type(r->type) + "* " + q + " = " + p + " ? (" + type(r->type) + "*)((" + unit + "*)" + p + " + (int64_t)" +
                 std::to_string(flat) + " * " + inner + ") : (" + type(r->type) + "*)0;");
            p = q;
        } else if (!inst.imm_list.empty()) {
            // A field or component of a groupshared element (a struct's, a vector's).
            const Type* c = tt->element;
            std::string access = "(*" + p + ")";
            for (int k : inst.imm_list) {
                if (c->is_vector()) {
                    static const char* kXyzw[] = {"x", "y", "z", "w"};
                    access += std::string(".") + kXyzw[k & 3];
                    c = nullptr;  // a scalar: the path ends
                } else {
                    access += "." + names_.field_names(c).at(size_t(k));
                    c = names_.types().fields(c).at(size_t(k)).type;
                }
                if (!c) break;
            }
            const std::string q = "sg_pf" + std::to_string(coop_temps_++);
            line(type(r->type) + "* " + q + " = " + p + " ? &" + access + " : (" + type(r->type) + "*)0;");
            p = q;
        }
        const std::string v = ref(inst.operands.back());
        if (cas) define(r, "sg_atomic_cas(" + p + ", " + ref(inst.operands[inst.operands.size() - 2]) + ", " + v + ")");
        else define(r, "sg_atomic<" + std::to_string(inst.imm_int) + ">(" + p + ", " + v + ")");
        return;
    }
    default: break;
    }
    SG_INTERNAL_ASSERT(false, std::string("codegen: unexpected cooperative op ") + ir::op_name(inst.op));
}

}  // namespace sg::codegen::detail
