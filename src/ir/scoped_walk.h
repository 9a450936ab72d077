// src/ir/scoped_walk.h — the two pieces of a walk in program order over structured SSA that
// reuses dominating values (cse.cpp, sincos.cpp): the values replaced so far, by Value::id, and a
// table whose entries are dropped when the walk leaves the block that made them (a block's
// values dominate only what follows them in it and inside their regions).
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/ir.h"

namespace sg::ir {

/// Values that stand for others (a later duplicate -> the earlier value).
class ValueReplacements {
public:
    explicit ValueReplacements(const Function& fn) : by_(fn.next_value_id, nullptr) {}
    Value* operator()(Value* v) const {
        Value* r = v->id < by_.size() ? by_[v->id] : nullptr;
        return r ? r : v;
    }
    void replace(const Value* v, Value* by) {
        if (v->id >= by_.size()) by_.resize(size_t(v->id) + 1, nullptr);
        by_[v->id] = by;
    }
    /// Rewrites `inst`'s operands through the replacements.
    void rewrite(Inst& inst) const {
        for (Value*& o : inst.operands) o = (*this)(o);
    }

private:
    std::vector<Value*> by_;
};

/// A map whose entries are undone in blocks: mark() at a block's start, leave(mark) at its end.
template <class K, class V, class Hash = std::hash<K>>
class ScopedTable {
public:
    size_t mark() const { return undo_.size(); }
    /// The entry of `key` (found: false) or a new one holding `value` (true).
    std::pair<V*, bool> find_or_insert(K key, V value) {
        auto [it, inserted] = table_.try_emplace(std::move(key), std::move(value));
        if (inserted) undo_.push_back(&it->first);
        return {&it->second, inserted};
    }
    void leave(size_t mark) {
        while (undo_.size() > mark) {
            table_.erase(table_.find(*undo_.back()));  // keys stay put as the table grows
            undo_.pop_back();
        }
    }

private:
    std::unordered_map<K, V, Hash> table_;
    std::vector<const K*> undo_;  ///< keys in insertion order
};

}  // namespace sg::ir
