// src/runtime/cuda_module.cpp — the CUDA backend's module loader: compile plans and keys, the
// disk cache's payload (kind "cuda"), NVRTC as the last resort, and per-device loading of the
// image with its functions' launch settings (see cuda_module.h). The memory and disk caching
// steps are module_cache.h's.
#include "runtime/cuda_module.h"

#include "runtime/content_hash.h"
#include "runtime/cpu_module.h"  // BackendError, cache_directory
#include "runtime/cuda_nvrtc.h"
#include "runtime/module_cache.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace sg::runtime {
namespace {

// Part of every key: bump when the launch convention of generated kernels (one by-value Params
// parameter, 1-D grid) or anything else a cached binary silently depends on changes.
constexpr int kCudaRuntimeAbiVersion = 1;
constexpr std::string_view kCacheKind = "cuda";
// How much NVRTC log goes into an exception message (the full log is kept on disk).
constexpr size_t kMessageLogLimit = 4000;
// Smaller blocks give finer-grained tails and spread small launches over more SMs; used
// whenever it reaches the occupancy of the block size the occupancy API prefers.
constexpr int kPreferredBlockSize = 256;
constexpr size_t kJitLogSize = 8192;

// What to compile: the NVRTC options (architecture included), the output form, and the key.
struct CompilePlan {
    const Nvrtc* compiler = nullptr;
    std::vector<std::string> flags;
    bool is_ptx = false;
    int arch = 0;
    std::string hash;
};

// The architecture to compile for: `wanted` itself when NVRTC knows it, else (as PTX) the
// newest one it knows below `wanted` — the driver JIT-compiles that PTX for the device.
int target_arch(const Nvrtc& compiler, int wanted, bool& is_ptx) {
    if (compiler.supports_arch(wanted)) return wanted;
    int best = 0;
    for (int arch : compiler.supported_archs)
        if (arch <= wanted) best = arch;
    if (best == 0)
        throw BackendError("NVRTC " + std::to_string(compiler.major) + "." +
                           std::to_string(compiler.minor) + " (" + compiler.path +
                           ") cannot compile for sm_" + std::to_string(wanted) +
                           ": it supports sm_" +
                           std::to_string(compiler.supported_archs.front()) + " to sm_" +
                           std::to_string(compiler.supported_archs.back()));
    is_ptx = true;
    return best;
}

CompilePlan plan_compile(const std::string& source, const CudaCompileOptions& options) {
    if (options.arch <= 0)
        throw BackendError("CUDA compile options need the target architecture (arch = 10 * "
                           "major + minor of the device's compute capability, e.g. 90)");
    CompilePlan plan;
    plan.compiler = &nvrtc();
    plan.is_ptx = options.ptx;
    plan.arch = target_arch(*plan.compiler, options.arch, plan.is_ptx);
    const std::string arch = std::to_string(plan.arch);
    plan.flags = {
        std::string("--gpu-architecture=") + (plan.is_ptx ? "compute_" : "sm_") + arch,
        "-std=c++17",
        "-DSG_TARGET_CUDA=1",  // the generated source defines it too (identically)
        "-default-device",     // helper functions without __device__ are device functions
        // IEEE float semantics, spelled out so that a change of NVRTC's defaults cannot change
        // results silently: no fast math, no flush-to-zero, correctly rounded / and sqrt. FMA
        // contraction stays on, as in torch's own kernels (it rounds once instead of twice).
        // Fast math makes only float division approximate (denormals and sqrt stay exact).
        "--ftz=false",
        options.fast_math ? "--prec-div=false" : "--prec-div=true",
        "--prec-sqrt=true",
        "--fmad=true",
    };
    // Generated code uses no textures, device-side runtime calls or launches: NVRTC 12.4 and
    // later can leave their declarations out, a few milliseconds of every compile.
    if (plan.compiler->version() >= 12040) plan.flags.push_back("--minimal");
    if (options.debug) plan.flags.push_back("-lineinfo");
    plan.flags.insert(plan.flags.end(), options.flags.begin(), options.flags.end());

    std::string material = "shadegrad cuda module\n";
    append_key_field(material, "abi", std::to_string(kCudaRuntimeAbiVersion));
    append_key_field(material, "compiler", plan.compiler->identity);
    append_key_field(material, "output", plan.is_ptx ? "ptx" : "cubin");
    append_key_field(material, "debug", options.debug ? "1" : "0");
    for (const std::string& flag : plan.flags) append_key_field(material, "flag", flag);
    append_key_field(material, "source", source);
    plan.hash = content_hash(material);
    return plan;
}

// Disk payload: a one-line header "<cubin|ptx> <arch>\n", then the bytes. The disk cache
// verifies integrity; the header guards against reading one form as the other.
std::string encode_payload(const CompiledCuda& image) {
    return std::string(image.is_ptx ? "ptx " : "cubin ") + std::to_string(image.arch) + "\n" +
           image.bytes;
}

bool looks_valid(const CompiledCuda& image) {
    if (image.bytes.empty()) return false;
    return image.is_ptx || image.bytes.compare(0, 4, "\x7f" "ELF") == 0;
}

// A verified entry's image; nullopt when it is intact but not what this key must hold (another
// writer's bug), so that it is rebuilt, never trusted.
std::optional<CompiledCuda> decode_payload(const CompilePlan& plan, const std::string& payload) {
    const std::string header = std::string(plan.is_ptx ? "ptx " : "cubin ") +
                               std::to_string(plan.arch) + "\n";
    CompiledCuda image;
    image.is_ptx = plan.is_ptx;
    image.arch = plan.arch;
    image.hash = plan.hash;
    if (payload.compare(0, header.size(), header) == 0) image.bytes = payload.substr(header.size());
    if (!looks_valid(image)) return std::nullopt;
    return image;
}

[[noreturn, gnu::noinline]] void throw_compile_error(const CompilePlan& plan,
                                                     const std::string& source,
                                                     const NvrtcOutput& output) {
    std::string options;
    for (const std::string& flag : plan.flags) options += (options.empty() ? "" : " ") + flag;
    const std::string kept = publish_cache_file("failed", plan.hash + ".cu", source);
    publish_cache_file("failed", plan.hash + ".log",
                       "NVRTC " + plan.compiler->identity + " at " + plan.compiler->path +
                           "\noptions: " + options + "\n" + output.error + "\n" + output.log +
                           "\n");
    std::string message = "NVRTC failed on generated CUDA code (" + output.error + ")\n";
    message += "  options: " + options + "\n";
    message += "  source kept at: " + (kept.empty() ? std::string("(not kept)") : kept) + "\n";
    message.append(output.log, 0, kMessageLogLimit);
    if (output.log.size() > kMessageLogLimit)
        message += "\n  ... (" + std::to_string(output.log.size() - kMessageLogLimit) +
                   " more bytes of log)";
    throw BackendError(message);
}

// Runs NVRTC; the result's payload is the image with its header, for the disk cache.
CompileResult<CompiledCuda> compile_with_nvrtc(const CompilePlan& plan, const std::string& source,
                                               bool debug) {
    // Debug: NVRTC's line info names the program; make that a file that exists afterwards.
    std::string program_name = "shadegrad_" + plan.hash + ".cu";
    if (debug) {
        const std::string kept = publish_cache_file("debug", plan.hash + ".cu", source);
        if (!kept.empty()) program_name = kept;
    }
    const NvrtcOutput output =
        nvrtc_compile(*plan.compiler, source, program_name, plan.flags, plan.is_ptx);
    if (!output.ok) throw_compile_error(plan, source, output);

    CompiledCuda image;
    image.bytes = output.binary;
    image.is_ptx = plan.is_ptx;
    image.arch = plan.arch;
    image.hash = plan.hash;
    if (!looks_valid(image))
        throw BackendError(std::string("NVRTC returned a malformed ") +
                           (plan.is_ptx ? "PTX" : "CUBIN") + " for module " + plan.hash);
    std::string payload = encode_payload(image);
    return {std::move(image), std::move(payload)};
}

CompiledCuda compile_planned(const CompilePlan& plan, const std::string& source, bool debug) {
    bool compiled = false;
    CompiledCuda image = load_or_compile<CompiledCuda>(
        kCacheKind, plan.hash,
        [&](const std::string& payload) { return decode_payload(plan, payload); },
        [&] { return compile_with_nvrtc(plan, source, debug); }, compiled);
    image.compiled = compiled;
    return image;
}

// ---- per-device loading ---------------------------------------------------------------------

[[noreturn, gnu::noinline]] void throw_load_error(const CompiledCuda& image, int device,
                                                  CuResult result, const char* log) {
    std::string message = "cannot load CUDA module " + image.hash + " (" +
                          (image.is_ptx ? "PTX for compute_" : "CUBIN for sm_") +
                          std::to_string(image.arch) + ") on device " + std::to_string(device);
    try {
        message += " (" + cuda_device_name(device) + ", sm_" +
                   std::to_string(cuda_device_arch(device)) + ")";
    } catch (const BackendError&) {
    }
    message += ": cuModuleLoadDataEx failed: " + cuda_error_text(result);
    if (log && *log) message += "\n" + std::string(log);
    throw BackendError(message);
}

// The block size: what the occupancy API finds best for this kernel, unless 256 threads reach
// the same number of resident threads per SM.
int choose_block_size(const CudaDriver& d, CuFunction function) {
    int max_threads = 0;
    check_cuda(d.cuFuncGetAttribute(&max_threads, kCuFuncAttrMaxThreadsPerBlock, function),
               "cuFuncGetAttribute");
    int min_grid = 0, best = 0;
    if (d.cuOccupancyMaxPotentialBlockSize(&min_grid, &best, function, nullptr, 0, 0) !=
            kCudaSuccess ||
        best <= 0)
        best = std::min(kPreferredBlockSize, max_threads);
    if (best > kPreferredBlockSize && kPreferredBlockSize <= max_threads) {
        int blocks_preferred = 0, blocks_best = 0;
        if (d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_preferred, function,
                                                          kPreferredBlockSize, 0) == kCudaSuccess &&
            d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_best, function, best, 0) ==
                kCudaSuccess &&
            blocks_preferred * kPreferredBlockSize >= blocks_best * best)
            best = kPreferredBlockSize;
    }
    // Whole warps: block reductions (prelude_reduce.inc) shuffle over full warps.
    return std::max(best / 32 * 32, std::min(32, max_threads));
}

// The grid limit and multiprocessor count of a device, asked once per process (every kernel's
// functions share them).
struct DeviceLimits {
    int64_t max_blocks = 0;
    int multiprocessors = 0;
};
DeviceLimits device_limits(int device) {
    static std::mutex mutex;
    static std::unordered_map<int, DeviceLimits>* known = new std::unordered_map<int, DeviceLimits>();  // kept until exit
    std::lock_guard<std::mutex> lock(mutex);
    auto it = known->find(device);
    if (it != known->end()) return it->second;
    DeviceLimits limits;
    limits.max_blocks = cuda_device_attribute(device, kCuDeviceAttrMaxGridDimX);
    limits.multiprocessors = cuda_device_attribute(device, kCuDeviceAttrMultiprocessorCount);
    known->emplace(device, limits);
    return limits;
}

// The compiled image shared by every CudaModule handle of one key, with its per-device state.
class CudaImage {
public:
    explicit CudaImage(CompiledCuda image) : image_(std::move(image)) {}
    CudaImage(const CudaImage&) = delete;
    CudaImage& operator=(const CudaImage&) = delete;

    ~CudaImage() {
        for (auto& [device, state] : devices_) {
            try {
                CudaContextGuard guard(state.context);
                (void)cuda_driver().cuModuleUnload(state.module);
            } catch (const BackendError&) {
                // The driver is shutting down (process exit); it frees modules itself.
            }
        }
    }

    const CompiledCuda& image() const { return image_; }

    const CudaFunction& function(int device, const std::string& entry) {
        std::lock_guard<std::mutex> lock(mutex_);
        DeviceState& state = device_state(device);
        std::unique_ptr<CudaFunction>& slot = state.functions[entry];
        if (!slot) slot = make_function(state, device, entry);
        return *slot;
    }

private:
    struct DeviceState {
        CuContext context = nullptr;
        CuModule module = nullptr;
        std::unordered_map<std::string, std::unique_ptr<CudaFunction>> functions;
    };

    DeviceState& device_state(int device) {
        if (auto it = devices_.find(device); it != devices_.end()) return it->second;
        const CudaDriver& d = cuda_driver();
        const CuContext context = cuda_primary_context(device);
        CudaContextGuard guard(context);
        // The JIT's error log says why a PTX failed to compile or a CUBIN does not fit.
        char log[kJitLogSize] = {};
        int option_keys[] = {kCuJitErrorLogBuffer, kCuJitErrorLogBufferSizeBytes};
        void* option_values[] = {log, reinterpret_cast<void*>(kJitLogSize)};
        CuModule module = nullptr;
        const auto start = std::chrono::steady_clock::now();
        const CuResult result =
            d.cuModuleLoadDataEx(&module, image_.bytes.c_str(), 2, option_keys, option_values);
        add_load_stats(LoadStats{.device_load_ms = ms_since(start)});
        if (result != kCudaSuccess) throw_load_error(image_, device, result, log);
        DeviceState& state = devices_[device];
        state.context = context;
        state.module = module;
        return state;
    }

    std::unique_ptr<CudaFunction> make_function(DeviceState& state, int device,
                                                const std::string& entry) {
        const auto start = std::chrono::steady_clock::now();
        std::unique_ptr<CudaFunction> function = lookup_function(state, device, entry);
        add_load_stats(LoadStats{.function_ms = ms_since(start)});
        return function;
    }

    std::unique_ptr<CudaFunction> lookup_function(DeviceState& state, int device, const std::string& entry) {
        const CudaDriver& d = cuda_driver();
        CudaContextGuard guard(state.context);
        auto function = std::make_unique<CudaFunction>();
        function->context = state.context;
        function->driver = &d;
        function->device = device;
        function->name = entry;
        const CuResult found =
            d.cuModuleGetFunction(&function->handle, state.module, entry.c_str());
        if (found == kCudaErrorNotFound)
            throw BackendError("CUDA module " + image_.hash + " has no kernel '" + entry + "'");
        check_cuda(found, "cuModuleGetFunction");

        // The size of the first (only) parameter, which the launch checks against the block it
        // is given (drivers >= 12.4 can tell; older ones leave param_size 0 and the check off).
        // No probe for a second parameter: the failing call it takes would show up as an error
        // in every compute-sanitizer run of a user's program.
        if (d.cuFuncGetParamInfo) {
            size_t offset = 0, size = 0;
            if (d.cuFuncGetParamInfo(function->handle, 0, &offset, &size) == kCudaSuccess)
                function->param_size = size;
        }
        function->block_size = choose_block_size(d, function->handle);
        const DeviceLimits limits = device_limits(device);
        function->max_blocks = limits.max_blocks;
        function->multiprocessors = limits.multiprocessors;
        check_cuda(d.cuFuncGetAttribute(&function->registers, kCuFuncAttrNumRegs,
                                        function->handle),
                   "cuFuncGetAttribute");
        return function;
    }

    CompiledCuda image_;
    std::mutex mutex_;
    std::unordered_map<int, DeviceState> devices_;
};

// What load_cuda_module returns: the shared image plus how this particular load was satisfied.
class LoadedCudaModule final : public CudaModule {
public:
    LoadedCudaModule(std::shared_ptr<CudaImage> image, bool compiled)
        : image_(std::move(image)), compiled_(compiled) {}

    const std::string& hash() const override { return image_->image().hash; }
    bool compiled() const override { return compiled_; }
    const CompiledCuda& image() const override { return image_->image(); }
    const CudaFunction& function(int device, const std::string& entry) const override {
        return image_->function(device, entry);
    }

private:
    std::shared_ptr<CudaImage> image_;
    bool compiled_;
};

}  // namespace

CompiledCuda compile_cuda(const std::string& source, const CudaCompileOptions& options) {
    return compile_planned(plan_compile(source, options), source, options.debug);
}

std::vector<std::string> cuda_compile_flags(const CudaCompileOptions& options) {
    return plan_compile("", options).flags;
}

std::shared_ptr<CudaModule> load_cuda_module(const std::string& source,
                                             const CudaCompileOptions& options) {
    const CompilePlan plan = plan_compile(source, options);
    bool compiled = false;  // stays false when the memory cache has the image
    // Held weakly there: an image nobody uses is unloaded from its devices.
    ModuleCache<CudaImage>& memory = ModuleCache<CudaImage>::instance();
    std::shared_ptr<CudaImage> image = memory.get_or_load(plan.hash, [&] {
        CompiledCuda loaded = compile_planned(plan, source, options.debug);
        compiled = loaded.compiled;
        return std::make_shared<CudaImage>(std::move(loaded));
    });
    return std::make_shared<LoadedCudaModule>(std::move(image), compiled);
}

std::shared_ptr<CudaModule> find_cuda_module(const std::string& key, const CudaCompileOptions& options) {
    ModuleCache<CudaImage>& memory = ModuleCache<CudaImage>::instance();
    std::shared_ptr<CudaImage> image = memory.get_or_load(key, [&]() -> std::shared_ptr<CudaImage> {
        auto start = std::chrono::steady_clock::now();
        std::optional<std::string> payload = disk_cache_load(kCacheKind, key);
        add_load_stats(LoadStats{.disk_read_ms = ms_since(start)});
        if (!payload) return nullptr;
        // The entry's own header says its form; a CUBIN must be for the device's architecture,
        // PTX for one at or below it (the driver compiles it on load).
        CompiledCuda image;
        const size_t newline = payload->find('\n');
        const std::string header = payload->substr(0, newline == std::string::npos ? 0 : newline);
        image.is_ptx = header.rfind("ptx ", 0) == 0;
        if (!image.is_ptx && header.rfind("cubin ", 0) != 0) return nullptr;
        image.arch = std::atoi(header.c_str() + (image.is_ptx ? 4 : 6));
        if (image.arch <= 0 || (image.is_ptx ? image.arch > options.arch : image.arch != options.arch)) return nullptr;
        image.hash = key;
        image.bytes = payload->substr(newline + 1);
        if (!looks_valid(image)) return nullptr;
        add_load_stats(LoadStats{.disk_hits = 1});
        return std::make_shared<CudaImage>(std::move(image));
    });
    return image ? std::make_shared<LoadedCudaModule>(std::move(image), false) : nullptr;
}

std::string cuda_compiler_fingerprint(const CudaCompileOptions& options) {
    std::string out = "cuda abi " + std::to_string(kCudaRuntimeAbiVersion) + "\narch " + std::to_string(options.arch) +
                      "\ndebug " + (options.debug ? "1" : "0") + "\nfast_math " + (options.fast_math ? "1" : "0") +
                      "\nptx " + (options.ptx ? "1" : "0") + "\n";
    for (const std::string& flag : options.flags) out += "flag " + flag + "\n";
    return out + nvrtc_fingerprint();
}

void clear_cuda_module_cache() { ModuleCache<CudaImage>::instance().clear(); }

}  // namespace sg::runtime
