// src/autodiff/reverse_context.h — the recomputation context of reverse mode (reverse.cpp):
// which primal value each value of the primal function has at the current point of the
// backward function, and the tapes of the loops emitted so far. A region's values are visible
// only while the region is emitted; scopes record what they add and roll it back on exit.
#pragma once

#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace sg::autodiff {

/// The per-iteration storage of a loop whose body needs reversing.
struct LoopTape {
    std::vector<ir::Value*> slots;  ///< one LocalAlloc per carried value
    ir::Value* count = nullptr;     ///< iterations recorded (int)
};

/// Primal values (and loop tapes) of the current recomputation context. A region's values are
/// visible only while the region is emitted: scopes record what they add and roll it back on
/// exit (copying the maps per region instead made deep nests cubic).
class ReverseContext {
public:
    ir::Value* find(const ir::Value* v) const {
        auto it = primal_.find(v);
        return it == primal_.end() ? nullptr : it->second;
    }
    void set(const ir::Value* v, ir::Value* p) {
        auto it = primal_.find(v);
        undo_.push_back({v, it == primal_.end() ? nullptr : it->second});
        primal_[v] = p;
    }
    const LoopTape* tape(const ir::Inst* loop) const {
        auto it = tapes_.find(loop);
        return it == tapes_.end() ? nullptr : &it->second;
    }
    void set_tape(const ir::Inst* loop, LoopTape tape) {
        auto it = tapes_.find(loop);
        tape_undo_.push_back({loop, it == tapes_.end() ? std::nullopt : std::optional<LoopTape>(it->second)});
        tapes_[loop] = std::move(tape);
    }

    /// A nested scope: what it sets is undone when it ends.
    class Scope {
    public:
        explicit Scope(ReverseContext& ctx) : ctx_(ctx), values_(ctx.undo_.size()), tapes_(ctx.tape_undo_.size()) {}
        ~Scope() {
            while (ctx_.undo_.size() > values_) {
                auto [v, previous] = ctx_.undo_.back();
                ctx_.undo_.pop_back();
                if (previous) ctx_.primal_[v] = previous;
                else ctx_.primal_.erase(v);
            }
            while (ctx_.tape_undo_.size() > tapes_) {
                auto& [loop, previous] = ctx_.tape_undo_.back();
                if (previous) ctx_.tapes_[loop] = *previous;
                else ctx_.tapes_.erase(loop);
                ctx_.tape_undo_.pop_back();
            }
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        ReverseContext& ctx_;
        size_t values_, tapes_;
    };

private:
    std::unordered_map<const ir::Value*, ir::Value*> primal_;
    std::unordered_map<const ir::Inst*, LoopTape> tapes_;
    std::vector<std::pair<const ir::Value*, ir::Value*>> undo_;  ///< (value, its previous mapping or nullptr)
    std::vector<std::pair<const ir::Inst*, std::optional<LoopTape>>> tape_undo_;
};

}  // namespace sg::autodiff
