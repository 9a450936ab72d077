// src/python/device_check.cpp — create_device's checks of a CUDA device (device_check.h).
#include "python/device_check.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "runtime/cpu_module.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_nvrtc.h"

namespace sg::py {

namespace nb = nanobind;

std::string cuda_device_problems(const std::string& caller, int index) {
    std::string problems;
    auto add = [&](const std::string& reason, const std::string& fix) {
        problems += "\n  - " + reason + (fix.empty() ? "" : "; " + fix);
    };
    // torch allocates the tensors and owns the context and streams a CUDA module runs on.
    nb::module_ torch = nb::module_::import_("torch");
    if (torch.attr("version").attr("cuda").is_none()) {
        const std::string version = nb::cast<std::string>(nb::str(torch.attr("__version__")));
        add("torch " + version + " is a CPU-only build",
            "install a CUDA build of torch (https://pytorch.org/get-started/locally/)");
    }
    if (!runtime::cuda_available()) {
        add(runtime::cuda_driver_status(),
            "CUDA needs an NVIDIA GPU with its driver installed (nvidia-smi must list the GPU)");
    } else if (index < 0 || index >= runtime::cuda_device_count()) {
        add("CUDA device index " + std::to_string(index) + " does not exist (this process sees " +
                std::to_string(runtime::cuda_device_count()) + " device" +
                (runtime::cuda_device_count() == 1 ? "" : "s") + ")",
            "pass index=0 .. " + std::to_string(runtime::cuda_device_count() - 1) +
                " (CUDA_VISIBLE_DEVICES limits what is visible)");
    }
    try {
        (void)runtime::nvrtc();
    } catch (const runtime::BackendError& e) {
        // The search's own message says what to install; a bad SHADEGRAD_NVRTC is never replaced.
        const std::string what = e.what();
        add(what, what.find("SHADEGRAD_NVRTC names") != std::string::npos
                      ? "point SHADEGRAD_NVRTC at a usable libnvrtc.so, or unset it to search the usual places"
                      : "");
    }
    if (problems.empty()) return problems;
    return caller + "(type=DeviceType.cuda, index=" + std::to_string(index) +
           "): CUDA kernels cannot run in this process:" + problems +
           "\nUse type=DeviceType.cpu to run the same kernels on the CPU.";
}

}  // namespace sg::py
