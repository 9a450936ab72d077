// src/codegen/emit_call_group.cpp — the entry point of a kernel whose calls run in SlangPy's
// call groups (CodegenOptions::call_group_rank, prelude_call_group.inc): each launch block
// holds whole groups of call elements — one group when its elements share groupshared memory or
// meet at barriers or wave operations, else as many as fit 256 threads — and each thread finds
// its element from its group and its place in it, and runs the thread function when that lies
// inside the call's shape. CUDA: thread 0 of a block writes the call's geometry to shared memory
// and the block meets once before any thread can leave. CPU: the blocks run as the blocks of a
// [CUDAKernel] launch (prelude_fiber.inc: one after another, or as fibers when they meet).
#include <algorithm>

#include "codegen/emitter.h"
#include "lang/coop.h"

namespace sg::codegen::detail {

namespace {

constexpr int kGroupedBlockThreads = 256;

}  // namespace

bool reads_call_shape_ids(const ir::Block& block) {
    for (const auto& inst : block.insts) {
        if (inst->op == OpKind::CoopId && lang::is_call_shape_id(lang::CoopId(inst->imm_int))) return true;
        if (inst->op == OpKind::Call && inst->callee->body && reads_call_shape_ids(*inst->callee->body)) return true;
        for (const auto& region : inst->regions)
            if (reads_call_shape_ids(*region)) return true;
    }
    return false;
}

std::string call_group_entry(const CallGroupEntry& e) {
    // The group's extents: the call group shape, or (a kernel that reads its ids without one)
    // groups of one element over the call's run-time rank.
    const bool given = e.options.call_group_rank >= 0;
    int64_t size = 1;
    std::string extents;
    for (int d = 0; d < 8; ++d) {
        const int32_t g = given && d < e.options.call_group_rank ? e.options.call_group[d] : 1;
        size *= g;
        extents += (d ? ", " : "") + std::to_string(g);
    }
    const bool alone = e.meets || e.shares;
    e.out.call_group_block = int(alone ? size : size * std::max<int64_t>(1, kGroupedBlockThreads / size));
    const std::string rank = given ? std::to_string(e.options.call_group_rank) : "H.rank";
    const std::string init = "sg_cg_init(H, sg_group, " + rank + ");";
    const std::string group = "const int32_t sg_group[8] = {" + extents + "};";
    if (e.target == DeviceType::CUDA)
        return "SG_EXPORT __global__ void " + e.out.entry + "(const __grid_constant__ sg_user::" + e.params +
               " params) {\n" +
               "    const sg_call_header& H = params.header;\n" +
               "    if (threadIdx.x == 0) {\n" +
               "        " + group + "\n" +
               "        " + init + "\n" +
               "    }\n" +
               "    __syncthreads();  // every thread of the block is here: none has left yet\n" +
               "    " + e.idx + " idx[8];\n" +
               "    int64_t tid;\n" +
               "    if (!sg_cg_index(idx, tid)) return;  // past the call's shape\n" +
               "    sg_user::" + e.thread + "(params, tid, idx);\n}\n";
    const std::string body = "sg_body_" + e.out.entry;
    return "static void " + body + "(const void* params) {\n" +
           "    " + e.idx + " idx[8];\n" +
           "    int64_t tid;\n" +
           "    if (!sg_cg_index(idx, tid)) return;  // past the call's shape\n" +
           "    sg_user::" + e.thread + "(*static_cast<const sg_user::" + e.params + "*>(params), tid, idx);\n}\n" +
           "SG_EXPORT void " + e.out.entry + "(const void* params, int64_t begin, int64_t end) {\n" +
           "    const sg_call_header& H = static_cast<const sg_user::" + e.params + "*>(params)->header;\n" +
           "    " + group + "\n" +
           "    " + init + "\n" +
           "    int64_t sg_threads = 1;\n" +
           "    for (int d = 0; d < sg_cg_now.rank; ++d)\n" +
           "        sg_threads *= (sg_cg_now.shape[d] + sg_cg_now.group[d] - 1) / sg_cg_now.group[d] * sg_cg_now.group[d];\n" +
           "    const int64_t sg_blocks = (sg_threads + " + std::to_string(e.out.call_group_block) + " - 1) / " +
           std::to_string(e.out.call_group_block) + ";\n" +
           "    if (end > sg_blocks) end = sg_blocks;\n" +
           "    if (begin >= end) return;\n" +
           "    const int64_t sg_launch[7] = {" + std::to_string(e.out.call_group_block) + ", 1, 1, sg_blocks, 1, 1, 0};\n" +
           "    sg_coop_run(sg_launch, begin, end, " + (e.meets ? "true" : "false") + ", " + body + ", params);\n}\n";
}

}  // namespace sg::codegen::detail
