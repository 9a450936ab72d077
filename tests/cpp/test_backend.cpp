// tests/cpp/test_backend.cpp — the backend interface (runtime/backend.h): which backend a device
// type gets; on the CPU, a generated kernel loaded through backend(DeviceType::CPU), launched over
// a packed parameter block (on the pool and in order), a zero fill, and the fault a launch
// reports; for CUDA, the load path reached from a generated kernel (its source compiled by NVRTC
// on machines without a GPU, the loaded kernel's facts on machines with one).
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/bound_calls.h"
#include "../support/cuda_compile_check.h"
#include "call/call_plan.h"
#include "call/launch.h"
#include "call/compile_kernel.h"
#include "call/errors.h"
#include "call/kernel_faults.h"
#include "runtime/backend.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_launch.h"

namespace sg::test {
namespace {

const char* kModule = R"(import slangpy;
float scaled(float x, float s) { return x * s; }
float lookup(float x, ITensor<float, 1> lut)
{
    int i = int(x);
    return lut[i];
}
)";

/// The forward kernel of `c` generated for `device` (not loaded).
call::CompiledKernel forward_kernel(const call::UserModule& m, const Call& c, const call::Glue& glue,
                                    DeviceType device) {
    codegen::CodegenOptions options;
    options.call_rank = c.binding.call_rank;
    options.debug_checks = true;  // as call::codegen_options: both backends check indices
    call::CompiledKernel k = call::generate(m, glue, device, call::kernel_options(options, glue));
    k.device_type = device;
    return k;
}

runtime::KernelSpec spec_of(const call::CompiledKernel& k, int device = 0) {
    runtime::KernelSpec spec;
    spec.source = &k.generated.source;
    spec.entry = k.generated.entry;
    spec.final_entry = k.generated.final_entry;
    spec.fixed_entry = k.generated.fixed_entry;
    spec.device = device;
    return spec;
}

TEST(Backend, OneBackendPerDeviceType) {
    const runtime::Backend& cpu = runtime::backend(DeviceType::CPU);
    const runtime::Backend& cuda = runtime::backend(DeviceType::CUDA);
    EXPECT_EQ(cpu.device_type(), DeviceType::CPU);
    EXPECT_EQ(cuda.device_type(), DeviceType::CUDA);
    EXPECT_EQ(&runtime::backend(DeviceType::Other), &cpu);  // no backend of its own
    EXPECT_FALSE(cpu.needs_scratch());
    EXPECT_TRUE(cuda.needs_scratch());
    ASSERT_EQ(runtime::backends().size(), 2u);
    EXPECT_EQ(runtime::backends()[0], &cpu);
    EXPECT_EQ(runtime::backends()[1], &cuda);
    EXPECT_EQ(cpu.device_name(-1), "cpu");
    EXPECT_EQ(cuda.device_name(1), "cuda:1");
    EXPECT_FALSE(cpu.capturing(-1, nullptr));
    codegen::FaultRecord record{};
    int device = -7;
    EXPECT_FALSE(cpu.take_fault(record, device));  // CPU faults are reported by their launch
    EXPECT_EQ(device, -7);
    EXPECT_NO_THROW(cpu.synchronize());
}

TEST(Backend, CpuLoadsLaunchesAndZeroFills) {
    call::UserModule m("backend", kModule);
    std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8}, out(8, -1.0f);
    Call c = bind(m, "scaled", {tensor_arg(tensor_info({8}, x.data(), DType::Float32, false)), float_arg(2.5)});
    const call::Glue glue = call::make_forward_glue(c.binding);
    call::CompiledKernel k = forward_kernel(m, c, glue, DeviceType::CPU);
    const runtime::Backend& cpu = runtime::backend(DeviceType::CPU);
    k.loaded = cpu.load(spec_of(k));
    ASSERT_NE(k.loaded, nullptr);
    EXPECT_EQ(k.loaded->device_type(), DeviceType::CPU);
    EXPECT_EQ(k.loaded->device_index(), -1);
    EXPECT_EQ(k.loaded->block_size(), 1);
    EXPECT_EQ(k.loaded->multiprocessors(), 1);
    EXPECT_NE(runtime::cpu_kernel_entry(*k.loaded), nullptr);
    EXPECT_THROW(runtime::cuda_kernel_entry(*k.loaded), runtime::BackendError);

    const TensorInfo result = tensor_info({8}, out.data(), DType::Float32, false);
    const int64_t shape[1] = {8};
    call::LaunchData data;
    data.args = c.args.data();
    data.call_shape = shape;
    data.result = &result;
    std::vector<uint8_t> block;
    call::launch::pack(k, glue, c.binding, data, block);
    for (bool sequential : {false, true}) {
        std::fill(out.begin(), out.end(), -1.0f);
        runtime::LaunchRequest request;
        request.kernel = k.loaded.get();
        request.block = block.data();
        request.block_size = block.size();
        request.total = 8;
        request.site = 42;
        request.sequential = sequential;
        const runtime::LaunchResult r = cpu.launch(request);
        EXPECT_EQ(r.origin, runtime::FaultOrigin::None);
        for (size_t i = 0; i < x.size(); ++i)
            EXPECT_FLOAT_EQ(out[i], x[i] * 2.5f) << i << (sequential ? " in order" : " on the pool");
        codegen::CallHeader header;
        std::memcpy(&header, block.data(), sizeof(header));
        EXPECT_EQ(header.site, 42);  // the backend writes the launch site
        EXPECT_NE(header.fault, nullptr);
    }
    cpu.zero(*k.loaded, out.data(), 5 * sizeof(float), nullptr);
    for (size_t i = 0; i < out.size(); ++i) EXPECT_FLOAT_EQ(out[i], i < 5 ? 0.0f : x[i] * 2.5f) << i;

    // The same kernel through the call layer: compile_kernel picks this backend.
    codegen::CodegenOptions options;
    options.call_rank = c.binding.call_rank;
    const call::CompiledKernel through_call =
        call::compile_kernel(m, glue, call::kernel_options(options, glue), DeviceType::CPU, -1);
    EXPECT_EQ(through_call.device_type, DeviceType::CPU);
    ASSERT_NE(through_call.loaded, nullptr);
    EXPECT_EQ(through_call.loaded->device_type(), DeviceType::CPU);
}

TEST(Backend, CpuLaunchReportsItsFault) {
    call::UserModule m("backend", kModule);
    std::vector<float> x{0, 1, 9}, lut{10, 11, 12, 13}, out(3, -1.0f);
    Call c = bind(m, "lookup", {tensor_arg(tensor_info({3}, x.data(), DType::Float32, false)),
                                tensor_arg(tensor_info({4}, lut.data(), DType::Float32, false))});
    const call::Glue glue = call::make_forward_glue(c.binding);
    call::CompiledKernel k = forward_kernel(m, c, glue, DeviceType::CPU);
    const runtime::Backend& cpu = runtime::backend(DeviceType::CPU);
    k.loaded = cpu.load(spec_of(k));
    const TensorInfo result = tensor_info({3}, out.data(), DType::Float32, false);
    const int64_t shape[1] = {3};
    call::LaunchData data;
    data.args = c.args.data();
    data.call_shape = shape;
    data.result = &result;
    std::vector<uint8_t> block;
    call::launch::pack(k, glue, c.binding, data, block);
    runtime::LaunchRequest request;
    request.kernel = k.loaded.get();
    request.block = block.data();
    request.block_size = block.size();
    request.total = 3;
    request.site = 7;
    const runtime::LaunchResult r = cpu.launch(request);
    EXPECT_EQ(r.origin, runtime::FaultOrigin::Synchronous);
    EXPECT_EQ(r.record.code, codegen::kErrorIndexOutOfBounds);
    EXPECT_EQ(r.record.site, 7);
    EXPECT_EQ(r.record.index, 9);
    EXPECT_EQ(r.record.extent, 4);
    EXPECT_EQ(r.record.dim, 0);
    EXPECT_FLOAT_EQ(out[0], 10.0f);
    EXPECT_FLOAT_EQ(out[1], 11.0f);
    try {
        call::raise_launch_fault(r, cpu);
        FAIL() << "no error raised";
    } catch (const call::CallError& e) {
        EXPECT_EQ(e.kind, call::ErrorKind::Runtime);
        EXPECT_NE(std::string(e.what()).find("index 9 out of bounds for dimension 0 of extent 4"), std::string::npos)
            << e.what();
        EXPECT_EQ(std::string(e.what()).find("launched earlier"), std::string::npos) << e.what();
    }
}

TEST(Backend, CudaLoadPathIsReachedFromAGeneratedKernel) {
    call::UserModule m("backend", kModule);
    Call c = bind(m, "scaled", {tensor_arg(tensor_info({8}, nullptr, DType::Float32, false, DeviceType::CUDA)),
                                float_arg(2.5)},
                  false, DeviceType::CUDA);
    const call::Glue glue = call::make_forward_glue(c.binding);
    const call::CompiledKernel k = forward_kernel(m, c, glue, DeviceType::CUDA);
    const runtime::Backend& cuda = runtime::backend(DeviceType::CUDA);
    if (!runtime::cuda_available()) {
        // Without a device the load stops at the device's architecture: BackendError, no crash.
        EXPECT_THROW(cuda.load(spec_of(k)), runtime::BackendError);
        EXPECT_FALSE(cuda.capturing(0, nullptr));
        bool skipped = false;
        EXPECT_TRUE(cuda_compiles(k.generated.source, &skipped));  // what load() would compile
        if (skipped) GTEST_SKIP() << "neither NVRTC nor nvcc found (pip install nvidia-cuda-nvrtc)";
        return;
    }
    const std::shared_ptr<const runtime::LoadedKernel> loaded = cuda.load(spec_of(k));
    EXPECT_EQ(loaded->device_type(), DeviceType::CUDA);
    EXPECT_EQ(loaded->device_index(), 0);
    EXPECT_GT(loaded->block_size(), 0);
    EXPECT_GT(loaded->multiprocessors(), 0);
    EXPECT_EQ(runtime::cuda_kernel_entry(*loaded).name, k.generated.entry);
    EXPECT_EQ(runtime::cuda_kernel_entry(*loaded).block_size, loaded->block_size());
    EXPECT_THROW(runtime::cpu_kernel_entry(*loaded), runtime::BackendError);
    EXPECT_FALSE(cuda.capturing(0, nullptr));
    codegen::FaultRecord record{};
    int device = -1;
    EXPECT_FALSE(cuda.take_fault(record, device));  // its fault record exists and is clear
}

}  // namespace
}  // namespace sg::test
