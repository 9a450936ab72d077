// tests/cpp/test_call_groups.cpp — SlangPy's call groups in codegen: a function that reads its
// call-group ids (CallShapeInfo, import slangpy), shares groupshared memory and meets its group
// at a barrier, compiled through a call's glue with a call group shape (CodegenOptions::
// call_group_rank) for the CPU (host compiler) and for CUDA (NVRTC); the entry of each target is
// the call-group entry (a block of whole groups), and a kernel that reads its ids without a call
// group gets one too (groups of one). The values are checked from Python
// (tests/python/test_call_groups.py); here every construct must compile for both targets.
#include "test_programs_harness.h"

namespace sg::test {
namespace {

const char* kGrouped = R"(
import slangpy;
groupshared float tile[4][8];
groupshared int live;
float neighbour(float x)
{
    CallShapeInfo t = CallShapeInfo::get_call_group_thread_id();
    tile[t.shape[0]][t.shape[1]] = x;
    if (t.shape[0] == 0 && t.shape[1] == 0) live = 0;
    GroupMemoryBarrierWithGroupSync();
    InterlockedAdd(live, 1);
    GroupMemoryBarrierWithGroupSync();
    int g = CallShapeInfo::get_call_group_id().shape[1];
    return tile[(t.shape[0] + 1) % 4][t.shape[1]] + float(live + g + CallShapeInfo::get_call_id().dimensionality);
}
float test() { return neighbour(2.0); }
)";

codegen::CodegenOptions grouped_options() {
    codegen::CodegenOptions o;
    o.debug_checks = true;
    o.call_group_rank = 2;
    o.call_group[0] = 4;
    o.call_group[1] = 8;
    return o;
}

TEST(CallGroups, AGroupedKernelCompilesForTheCpuWithItsCallGroupEntry) {
    TestProgram p = prepare_test_program("grouped.slang", kGrouped);
    call::CompiledKernel k = call::compile_kernel(*p.module, p.glue, grouped_options(), DeviceType::CPU, -1);
    EXPECT_EQ(k.generated.call_group_block, 32);  // one group a block: its elements meet
    EXPECT_NE(k.generated.source.find("sg_coop_run("), std::string::npos);
    EXPECT_NE(k.generated.source.find("sg_cg_index("), std::string::npos);
}

TEST(CallGroups, AGroupedKernelCompilesForCudaWithNvrtc) {
    TestProgram p = prepare_test_program("grouped.slang", kGrouped);
    call::CompiledKernel k = call::generate(*p.module, p.glue, DeviceType::CUDA, grouped_options());
    EXPECT_EQ(k.generated.call_group_block, 32);
    EXPECT_NE(k.generated.source.find("__syncthreads();  // every thread of the block"), std::string::npos);
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped));
    if (skipped) GTEST_SKIP() << "neither NVRTC nor nvcc found (pip install nvidia-cuda-nvrtc)";
}

const char* kIdsOnly = R"(
import slangpy;
int test() { return CallShapeInfo::get_call_id().dimensionality + CallShapeInfo::get_call_group_id().dimensionality; }
)";

TEST(CallGroups, IdsWithoutACallGroupRunGroupsOfOneManyABlock) {
    TestProgram p = prepare_test_program("ids.slang", kIdsOnly);
    for (DeviceType target : {DeviceType::CPU, DeviceType::CUDA}) {
        call::CompiledKernel k = call::generate(*p.module, p.glue, target, codegen::CodegenOptions{});
        EXPECT_EQ(k.generated.call_group_block, 256) << int(target);
        if (target == DeviceType::CUDA) {
            bool skipped = false;
            EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped));
        }
    }
}

TEST(CallGroups, AGroupedKernelWithoutBarriersPacksGroupsIntoBlocks) {
    TestProgram p = prepare_test_program("plain.slang", "float test() { return 1.0; }\n");
    codegen::CodegenOptions o;
    o.call_group_rank = 1;
    o.call_group[0] = 3;
    call::CompiledKernel k = call::generate(*p.module, p.glue, DeviceType::CUDA, o);
    EXPECT_EQ(k.generated.call_group_block, 255);  // 85 groups of 3
    bool skipped = false;
    EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped));
}

TEST(CallGroups, TheBlockCountCoversEveryGroup) {
    const int64_t shape[2] = {9, 7};
    const int32_t group[2] = {2, 3};
    // 5 x 3 groups of 6 = 90 threads: 1 block of 256, or 15 blocks of one group.
    EXPECT_EQ(codegen::call_group_blocks(shape, 2, group, 256), 1);
    EXPECT_EQ(codegen::call_group_blocks(shape, 2, group, 6), 15);
}

}  // namespace
}  // namespace sg::test
