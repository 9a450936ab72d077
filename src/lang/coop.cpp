// src/lang/coop.cpp — the tables of cooperative-kernel built-ins (coop.h).
#include "lang/coop.h"

namespace sg::lang {

namespace {

constexpr const char* kIdNames[] = {"cudaThreadIdx",           "cudaBlockIdx",
                                    "cudaBlockDim",            "cudaGridDim",
                                    "__slangpy_call_id",       "__slangpy_call_group_id",
                                    "__slangpy_call_group_thread_id", "__slangpy_call_rank"};
static_assert(sizeof kIdNames / sizeof kIdNames[0] == kCoopIdCount);

// HLSL's six barriers: the memory a fence covers, and whether the block's threads also meet.
constexpr BarrierInfo kBarriers[] = {
    {"GroupMemoryBarrier", false, false},  {"GroupMemoryBarrierWithGroupSync", true, false},
    {"DeviceMemoryBarrier", false, true},  {"DeviceMemoryBarrierWithGroupSync", true, true},
    {"AllMemoryBarrier", false, true},     {"AllMemoryBarrierWithGroupSync", true, true},
};

constexpr const char* kAtomicNames[] = {"InterlockedAdd", "InterlockedMin", "InterlockedMax",
                                        "InterlockedAnd", "InterlockedOr",  "InterlockedXor",
                                        "InterlockedExchange", "InterlockedCompareExchange"};

}  // namespace

bool find_coop_id(std::string_view name, CoopId& out) {
    for (int k = 0; k < kCoopIdCount; ++k)
        if (name == kIdNames[k]) {
            out = CoopId(k);
            return true;
        }
    return false;
}

const BarrierInfo* find_barrier(std::string_view name) {
    for (const BarrierInfo& b : kBarriers)
        if (name == b.name) return &b;
    return nullptr;
}

bool find_atomic(std::string_view name, AtomicOp& out) {
    for (int k = 0; k < 8; ++k)
        if (name == kAtomicNames[k]) {
            out = AtomicOp(k);
            return true;
        }
    return false;
}

bool is_view_method_name(std::string_view name) {
    AtomicOp op;
    return name == "load" || name == "store" || name == "storeOnce" || name == "loadOnce" || name == "size" ||
           name == "stride" || name == "dims" || find_atomic(name, op);
}

const char* atomic_name(AtomicOp op) { return kAtomicNames[int(op)]; }
const char* coop_id_name(CoopId id) { return kIdNames[int(id)]; }

}  // namespace sg::lang
