// src/ir/verify.cpp — structural invariants of the IR, checked after every pass in debug mode.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "ir/passes.h"

namespace sg::ir {

namespace {

class Verifier {
public:
    Verifier(const Function& fn, const char* after) : fn_(fn), after_(after) {}

    void run() {
        for (Value* p : fn_.body->params) visible_.insert(p);
        check_block(*fn_.body, /*is_body=*/true);
    }

private:
    [[noreturn]] void fail(const std::string& what) {
        throw lang::InternalError("IR verification failed after " + std::string(after_) + " in @" + fn_.name +
                                  ": " + what);
    }

    void check_block(const Block& b, bool is_body) {
        std::vector<const Value*> added;
        if (b.insts.empty()) fail("empty block");
        const Inst* term = b.terminator();
        OpKind want = is_body ? OpKind::Return : OpKind::Yield;
        if (term->op != want) fail(std::string("block does not end with ") + op_name(want));
        for (const auto& inst : b.insts) {
            if (inst.get() != term && (inst->op == OpKind::Yield || inst->op == OpKind::Return))
                fail("terminator in the middle of a block");
            for (Value* o : inst->operands)
                if (!visible_.count(o)) fail(std::string("operand %") + std::to_string(o->id) + " of " + op_name(inst->op) + " is not in scope");
            for (const auto& region : inst->regions) {
                for (Value* p : region->params) visible_.insert(p);
                check_block(*region, false);
                for (Value* p : region->params) visible_.erase(p);
            }
            for (Value* r : inst->results) {
                if (r->def != inst.get()) fail("result's def does not point at its instruction");
                visible_.insert(r);
                added.push_back(r);
            }
        }
        for (const Value* v : added) visible_.erase(v);
    }

    const Function& fn_;
    const char* after_;
    std::unordered_set<const Value*> visible_;
};

}  // namespace

void verify_function(const Function& fn, const char* after) { Verifier(fn, after).run(); }

void after_pass(const Function& fn, const char* pass) {
    static const char* dump = std::getenv("SHADEGRAD_DUMP_IR");
#ifdef NDEBUG
    static const bool verify = std::getenv("SHADEGRAD_VERIFY_IR") != nullptr;
#else
    static const bool verify = true;
#endif
    if (verify) verify_function(fn, pass);
    if (dump && (std::strcmp(dump, "1") == 0 || std::strcmp(dump, pass) == 0))
        std::fprintf(stderr, "--- IR after %s\n%s", pass, print_function(fn).c_str());
}

}  // namespace sg::ir
