// tests/cpp/test_kernel_faults.cpp — kernel fault records as user errors: launch sites name the
// function and parameters, each fault kind's message, and the CPU launch raising at the call.
#include <gtest/gtest.h>

#include "call/errors.h"
#include "call/kernel_faults.h"

using namespace sg;
using codegen::FaultKind;
using codegen::FaultRecord;

namespace {

int32_t lut_site() {
    static const int32_t site = call::register_launch_site(
        {"f", false, "m.slang", {"the result", "parameter 'x'", "parameter 'lut'"}});
    return site;
}

FaultRecord record(FaultKind kind, int32_t site) {
    FaultRecord r{};
    r.code = uint32_t(kind);
    r.claim = 1;
    r.site = site;
    r.param = -1;
    r.dim = -1;
    return r;
}

}  // namespace

TEST(KernelFaults, IndexOutOfBoundsNamesTheParameterIndexAndExtent) {
    FaultRecord r = record(FaultKind::IndexOutOfBounds, lut_site());
    r.param = 2;
    r.dim = 0;
    r.index = 300;
    r.extent = 256;
    r.line = 4;
    r.column = 12;
    EXPECT_EQ(call::describe_fault(r),
              "f(): parameter 'lut': index 300 out of bounds for dimension 0 of extent 256 at m.slang:4:12; the "
              "access was skipped; the results of that call are not valid");
    const std::string later = call::describe_fault(r, "cuda:1");
    EXPECT_NE(later.find("(a kernel launched earlier on cuda:1, reported at the next shadegrad call"),
              std::string::npos)
        << later;
}

TEST(KernelFaults, EveryKindHasItsMessage) {
    const int32_t backward =
        call::register_launch_site({"g", true, "m.slang", {"the gradient of the result", "parameter 'x'"}});
    FaultRecord loop = record(FaultKind::LoopPastMaxIters, backward);
    loop.index = 9;
    loop.extent = 8;
    loop.line = 7;
    loop.column = 5;
    EXPECT_EQ(call::describe_fault(loop),
              "g() backward: a loop at m.slang:7:5 ran past its [MaxIters(8)] bound (iteration 9): its reverse "
              "pass cannot replay it; raise the bound; the results of that call are not valid");
    FaultRecord div = record(FaultKind::DivisionByZero, lut_site());
    div.line = 3;
    div.column = 14;
    EXPECT_EQ(call::describe_fault(div),
              "f(): integer division or remainder by zero at m.slang:3:14; the results of that call are not valid");
    FaultRecord local = record(FaultKind::IndexOutOfBounds, lut_site());
    local.index = 7;
    local.extent = 4;
    EXPECT_EQ(call::describe_fault(local),
              "f(): index 7 out of range of a local array, vector or matrix of 4 elements; the access was skipped; "
              "the results of that call are not valid");
    // A gradient buffer of the backward kernel, and a parameter index the site does not know.
    FaultRecord grad = record(FaultKind::IndexOutOfBounds, backward);
    grad.param = 0;
    grad.dim = 1;
    grad.index = -1;
    grad.extent = 3;
    EXPECT_EQ(call::describe_fault(grad).rfind("g() backward: the gradient of the result: index -1 out of bounds for "
                                               "dimension 1 of extent 3; ",
                                               0),
              0u);
    grad.param = 5;
    EXPECT_NE(call::describe_fault(grad).find("tensor parameter #5: index -1"), std::string::npos);
    FaultRecord odd = record(FaultKind(77), 1 << 30);  // an unknown site and code
    EXPECT_EQ(call::describe_fault(odd).rfind("<unknown function>(): the kernel reported fault code 77", 0), 0u);
}

TEST(KernelFaults, RaiseIsARuntimeCallError) {
    FaultRecord r = record(FaultKind::DivisionByZero, lut_site());
    try {
        call::raise_fault(r);
        FAIL() << "raise_fault returned";
    } catch (const call::CallError& e) {
        EXPECT_EQ(e.kind, call::ErrorKind::Runtime);
        EXPECT_EQ(std::string(e.what()).rfind("f(): integer division or remainder by zero", 0), 0u);
    }
}

TEST(KernelFaults, DebugModeIsAProcessSetting) {
    const bool was = call::debug_mode();
    call::set_debug_mode(true);
    EXPECT_TRUE(call::debug_mode());
    call::set_debug_mode(false);
    EXPECT_FALSE(call::debug_mode());
    call::set_debug_mode(was);
}

TEST(KernelFaults, NoDeviceRecordsMeansNothingToCheck) {
    // Without a CUDA launch no device record exists: synchronize and check have nothing to do.
    EXPECT_NO_THROW(call::check_all_device_faults());
    EXPECT_NO_THROW(call::synchronize_devices());
}
