// src/ir/cse.cpp — common-subexpression elimination of pure instructions: a later instruction
// that computes what an earlier, dominating one already computed (same op, result type, operands
// and immediates) uses the earlier result instead.
//
// Dominance in structured SSA: an instruction dominates the instructions after it in its block
// and everything inside the regions of those instructions. One walk in program order with a
// scoped table (a region's entries are dropped when the walk leaves it) sees exactly the
// dominating candidates: an If's then-region never reuses a value of its else-region, and a
// region never leaks its values to the code after its instruction. Operands are rewritten
// through the replacements as the walk reaches them, so chains of duplicates collapse at once
// (the backward of a chain recomputes the primal: each duplicate's operands are duplicates).
// The duplicates themselves stay, unused, for dead_code to remove.
//
// Only pure value ops take part: arithmetic, comparisons, logic, select, conversions, composites,
// intrinsics (every math intrinsic is a pure function), tensor shapes and call indices. Never
// loads (a store may come between), local storage, calls, Undef (each stands for its own
// unspecified value), or anything with side effects or regions.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ir/passes.h"
#include "ir/scoped_walk.h"

namespace sg::ir {

namespace {

bool pure_value_op(OpKind op) {
    switch (op) {
    case OpKind::ConstInt:
    case OpKind::ConstFloat:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Rem:
    case OpKind::Neg:
    case OpKind::BitAnd:
    case OpKind::BitOr:
    case OpKind::BitXor:
    case OpKind::BitNot:
    case OpKind::Shl:
    case OpKind::Shr:
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::LogicAnd:
    case OpKind::LogicOr:
    case OpKind::LogicNot:
    case OpKind::Select:
    case OpKind::Convert:
    case OpKind::Splat:
    case OpKind::Construct:
    case OpKind::Extract:
    case OpKind::Insert:
    case OpKind::ExtractDyn:
    case OpKind::InsertDyn:
    case OpKind::Swizzle:
    case OpKind::Intrinsic:
    case OpKind::TensorShape:
    case OpKind::CallIndex: return true;
    default: return false;
    }
}

/// Ops whose two operands may swap without changing the result (IEEE + and * included: a + b
/// and b + a round alike). min/max are not among them: fmin(-0, +0) may give either zero.
bool commutative(OpKind op) {
    switch (op) {
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::BitAnd:
    case OpKind::BitOr:
    case OpKind::BitXor:
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::LogicAnd:
    case OpKind::LogicOr: return true;
    default: return false;
    }
}

template <class T>
void append_bytes(std::string& key, const T& v) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    key.append(bytes, sizeof(T));
}

class Cse {
public:
    explicit Cse(Function& fn) : replaced_(fn) {}

    void walk(Block& b) {
        const size_t scope = table_.mark();
        for (auto& owned : b.insts) {
            Inst& inst = *owned;
            replaced_.rewrite(inst);
            for (auto& region : inst.regions) walk(*region);
            if (!pure_value_op(inst.op) || inst.results.size() != 1 || !inst.regions.empty()) continue;
            auto [first, inserted] = table_.find_or_insert(key_of(inst), inst.result());
            if (!inserted) replaced_.replace(inst.result(), *first);
        }
        // Leaving the block: its values do not dominate what follows its owning instruction.
        table_.leave(scope);
    }

private:
    static std::string key_of(const Inst& inst) {
        std::string key;
        key.reserve(64);
        append_bytes(key, uint16_t(inst.op));
        append_bytes(key, inst.result()->type);
        append_bytes(key, inst.imm_int);
        // Bits, not values: -0.0 and 0.0 are different constants, and NaN equals itself.
        append_bytes(key, inst.imm_float);
        append_bytes(key, uint32_t(inst.imm_list.size()));
        for (int c : inst.imm_list) append_bytes(key, c);
        std::vector<uint32_t> ids;
        ids.reserve(inst.operands.size());
        for (const Value* o : inst.operands) ids.push_back(o->id);
        if (commutative(inst.op) && ids.size() == 2 && ids[1] < ids[0]) std::swap(ids[0], ids[1]);
        append_bytes(key, uint32_t(ids.size()));
        for (uint32_t id : ids) append_bytes(key, id);
        return key;
    }

    ScopedTable<std::string, Value*> table_;  ///< key of a pure instruction -> its first result
    ValueReplacements replaced_;              ///< a duplicate -> the earlier value
};

}  // namespace

void cse(Function& fn) {
    Cse(fn).walk(*fn.body);
    dead_code(fn);
    after_pass(fn, "cse");
}

}  // namespace sg::ir
