// src/runtime/cuda_nvrtc.cpp — finding and loading NVRTC with dlopen, and compiling one program
// (see cuda_nvrtc.h).
#include "runtime/cuda_nvrtc.h"

#include "runtime/cpu_module.h"  // BackendError
#include "runtime/cuda_driver.h"
#include "runtime/module_cache.h"  // LoadStats

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

namespace sg::runtime {
namespace {

namespace fs = std::filesystem;

// The wheels' library folders relative to a site-packages directory: nvidia-cuda-nvrtc for
// CUDA 13 installs into nvidia/cu13, the CUDA 12 wheel (nvidia-cuda-nvrtc-cu12) into
// nvidia/cuda_nvrtc. The newer layout first.
constexpr const char* kWheelLibDirs[] = {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"};
// Last resort: whatever the dynamic loader finds (LD_LIBRARY_PATH, ldconfig's cache).
constexpr const char* kLoaderNames[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};

// "libnvrtc.so.13.0.88" -> {13, 0, 88}; "libnvrtc.so" -> {}. Used to put newer sonames first.
std::vector<int> soname_version(const std::string& name) {
    std::vector<int> parts;
    const std::string prefix = "libnvrtc.so";
    for (size_t pos = prefix.size(); pos < name.size() && name[pos] == '.';) {
        size_t end = name.find('.', pos + 1);
        if (end == std::string::npos) end = name.size();
        parts.push_back(std::atoi(name.substr(pos + 1, end - pos - 1).c_str()));
        pos = end;
    }
    return parts;
}

// libnvrtc.so* files directly in `dir` (not libnvrtc-builtins, not libnvrtc.alt), newest first.
void append_libraries_in(const std::string& dir, std::vector<std::string>& out) {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name == "libnvrtc.so" || name.rfind("libnvrtc.so.", 0) == 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return soname_version(a) > soname_version(b);
    });
    for (const std::string& name : names) out.push_back(dir + "/" + name);
}

// /usr/local/cuda-12.4, /usr/local/cuda-13.0, ...: newest version first.
std::vector<std::string> versioned_toolkits() {
    std::vector<std::pair<std::vector<int>, std::string>> found;
    std::error_code ec;
    for (fs::directory_iterator it("/usr/local", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("cuda-", 0) != 0) continue;
        std::vector<int> version;
        for (size_t pos = 4; pos < name.size() && (name[pos] == '-' || name[pos] == '.');) {
            size_t end = name.find('.', pos + 1);
            if (end == std::string::npos) end = name.size();
            version.push_back(std::atoi(name.substr(pos + 1, end - pos - 1).c_str()));
            pos = end;
        }
        found.emplace_back(version, it->path().string());
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a > b; });
    std::vector<std::string> dirs;
    for (auto& entry : found) dirs.push_back(entry.second);
    return dirs;
}

std::string getenv_string(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

std::string dl_error_message() {
    const char* message = ::dlerror();
    return message ? message : "unknown dynamic loader error";
}

// The process-wide search state. `loaded` is published once and never cleared, so nvrtc()'s
// fast path is one atomic load.
struct NvrtcState {
    std::mutex mutex;
    std::vector<std::string> search_dirs;
    bool searched = false;  // a search has run since search_dirs last changed
    std::string fingerprint;  // nvrtc_fingerprint() for search_dirs; empty: not computed
    std::string error;      // why that search failed
    std::shared_ptr<const Nvrtc> keep_alive;
    std::atomic<const Nvrtc*> loaded{nullptr};
};

NvrtcState& nvrtc_state() {
    static NvrtcState* const state = new NvrtcState;  // never destroyed (used at exit)
    return *state;
}

// Runs the search; called with the state's mutex held.
void search(NvrtcState& state) {
    state.searched = true;
    const auto start = std::chrono::steady_clock::now();
    struct AddTime {
        std::chrono::steady_clock::time_point start;
        ~AddTime() { add_load_stats(LoadStats{.identity_ms = ms_since(start)}); }
    } add_time{start};
    const std::vector<std::string> candidates = nvrtc_candidates(state.search_dirs);
    // The driver's major version, read without cuInit; 0 without a driver (CI): any NVRTC will do.
    const int driver_major = cuda_driver_version_without_init() / 1000;
    std::shared_ptr<const Nvrtc> too_new;  // used only when nothing the driver accepts exists
    std::string tried;
    for (const std::string& candidate : candidates) {
        std::string error;
        std::shared_ptr<const Nvrtc> library = load_nvrtc_library(candidate, error);
        if (!library) {
            tried += "\n  " + error;
            continue;
        }
        if (driver_major > 0 && library->major > driver_major) {
            tried += "\n  " + library->path + ": NVRTC " + std::to_string(library->major) + "." +
                     std::to_string(library->minor) + " is newer than the driver (CUDA " +
                     std::to_string(driver_major) + ")";
            if (!too_new) too_new = std::move(library);
            continue;
        }
        state.keep_alive = std::move(library);
        break;
    }
    if (!state.keep_alive) state.keep_alive = std::move(too_new);
    if (state.keep_alive) {
        state.loaded.store(state.keep_alive.get(), std::memory_order_release);
        return;
    }
    if (!getenv_string("SHADEGRAD_NVRTC").empty()) {
        state.error =
            "NVRTC not found: SHADEGRAD_NVRTC names a library that cannot be used:" + tried;
        return;
    }
    state.error =
        "NVRTC not found (it compiles kernels for CUDA devices). Install the pip package "
        "nvidia-cuda-nvrtc (CUDA 13; nvidia-cuda-nvrtc-cu12 for CUDA 12), or set SHADEGRAD_NVRTC "
        "to the full path of libnvrtc.so. Searched " +
        std::to_string(state.search_dirs.size()) + " site director" +
        (state.search_dirs.size() == 1 ? "y" : "ies") + ", $CUDA_HOME, /usr/local/cuda*, and "
        "the loader path; tried:" + tried;
}

[[noreturn, gnu::noinline]] void throw_not_found(const std::string& error) {
    throw BackendError(error);
}

const char* result_name(const Nvrtc& compiler, NvrtcResult result) {
    const char* name =
        compiler.nvrtcGetErrorString ? compiler.nvrtcGetErrorString(result) : nullptr;
    return name ? name : "NVRTC_ERROR (unknown)";
}

[[noreturn, gnu::noinline]] void throw_api_error(const Nvrtc& compiler, NvrtcResult result,
                                                 const char* what) {
    throw BackendError(std::string(what) + " failed: " + result_name(compiler, result) +
                       " (NVRTC at " + compiler.path + ")");
}

void check_nvrtc(const Nvrtc& compiler, NvrtcResult result, const char* what) {
    if (result != kNvrtcSuccess) [[unlikely]]
        throw_api_error(compiler, result, what);
}

}  // namespace

bool Nvrtc::supports_arch(int arch) const {
    return supported_archs.empty() ||
           std::find(supported_archs.begin(), supported_archs.end(), arch) !=
               supported_archs.end();
}

void set_nvrtc_search_dirs(std::vector<std::string> dirs) {
    NvrtcState& state = nvrtc_state();
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.loaded.load(std::memory_order_relaxed)) return;
    state.search_dirs = std::move(dirs);
    state.searched = false;
    state.fingerprint.clear();
}

std::string nvrtc_fingerprint() {
    NvrtcState& state = nvrtc_state();
    std::lock_guard<std::mutex> lock(state.mutex);
    if (!state.fingerprint.empty()) return state.fingerprint;
    const auto start = std::chrono::steady_clock::now();
    std::string out = "driver " + std::to_string(cuda_driver_version_without_init()) + "\n";
    // Without listing a directory (a toolkit's lib64 holds hundreds of files, and this runs on a
    // warm first call): each directory nvrtc_candidates would list, by identity and modification
    // time (adding, removing or renaming a library changes it), and the sonames it would find
    // there, by size and modification time (a file overwritten in place changes those).
    auto stamp = [&out](const std::string& path) {
        struct stat file {};
        if (::stat(path.c_str(), &file) != 0) return false;
        out += path + " " + std::to_string(file.st_ino) + " " + std::to_string(file.st_size) + " " +
               std::to_string(file.st_mtim.tv_sec) + "." + std::to_string(file.st_mtim.tv_nsec) + "\n";
        return true;
    };
    if (std::string explicit_path = getenv_string("SHADEGRAD_NVRTC"); !explicit_path.empty()) {
        if (!stamp(explicit_path)) out += explicit_path + "\n";
    } else {
        for (const std::string& dir : nvrtc_search_locations(state.search_dirs)) {
            if (!stamp(dir)) continue;
            for (const char* name : kLoaderNames) stamp(dir + "/" + name);
        }
        // The loader's own search: by name, and what steers it.
        for (const char* name : kLoaderNames) out += std::string(name) + "\n";
        out += "LD_LIBRARY_PATH=" + getenv_string("LD_LIBRARY_PATH") + "\n";
    }
    add_load_stats(LoadStats{.identity_ms = ms_since(start)});
    state.fingerprint = out;
    return out;
}

std::vector<std::string> nvrtc_search_locations(const std::vector<std::string>& extra_dirs) {
    std::vector<std::string> out;
    for (const std::string& dir : extra_dirs)
        for (const char* lib_dir : kWheelLibDirs) out.push_back(dir + "/" + lib_dir);
    if (std::string cuda_home = getenv_string("CUDA_HOME"); !cuda_home.empty()) out.push_back(cuda_home + "/lib64");
    out.push_back("/usr/local/cuda/lib64");
    for (const std::string& toolkit : versioned_toolkits()) out.push_back(toolkit + "/lib64");
    return out;
}

std::vector<std::string> nvrtc_candidates(const std::vector<std::string>& extra_dirs) {
    if (std::string explicit_path = getenv_string("SHADEGRAD_NVRTC"); !explicit_path.empty())
        return {explicit_path};
    std::vector<std::string> out;
    for (const std::string& dir : nvrtc_search_locations(extra_dirs)) append_libraries_in(dir, out);
    for (const char* name : kLoaderNames) out.push_back(name);
    // The same file can be reached twice (CUDA_HOME=/usr/local/cuda); try it once.
    std::vector<std::string> unique;
    for (std::string& path : out)
        if (std::find(unique.begin(), unique.end(), path) == unique.end())
            unique.push_back(std::move(path));
    return unique;
}

std::shared_ptr<const Nvrtc> load_nvrtc_library(const std::string& path_or_name,
                                                std::string& error) {
    // RTLD_LOCAL: another NVRTC (torch's, cupy's) may be loaded too; ours must not replace its
    // symbols. NVRTC finds its libnvrtc-builtins beside itself.
    void* handle = ::dlopen(path_or_name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        error = dl_error_message();  // glibc's message names the file; others may not
        if (error.find(path_or_name) == std::string::npos) error = path_or_name + ": " + error;
        return nullptr;
    }
    auto library = std::make_shared<Nvrtc>();
    Nvrtc& n = *library;
    const char* missing = nullptr;
    auto get = [&](auto& slot, const char* name, bool required) {
        slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(::dlsym(handle, name));
        if (!slot && required && !missing) missing = name;
    };
    get(n.nvrtcGetErrorString, "nvrtcGetErrorString", true);
    get(n.nvrtcVersion, "nvrtcVersion", true);
    get(n.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", false);
    get(n.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", false);
    get(n.nvrtcCreateProgram, "nvrtcCreateProgram", true);
    get(n.nvrtcDestroyProgram, "nvrtcDestroyProgram", true);
    get(n.nvrtcCompileProgram, "nvrtcCompileProgram", true);
    get(n.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", true);
    get(n.nvrtcGetProgramLog, "nvrtcGetProgramLog", true);
    get(n.nvrtcGetPTXSize, "nvrtcGetPTXSize", true);
    get(n.nvrtcGetPTX, "nvrtcGetPTX", true);
    get(n.nvrtcGetCUBINSize, "nvrtcGetCUBINSize", false);
    get(n.nvrtcGetCUBIN, "nvrtcGetCUBIN", false);
    if (missing || n.nvrtcVersion(&n.major, &n.minor) != kNvrtcSuccess) {
        error = path_or_name + ": not a usable NVRTC (" +
                (missing ? std::string("no ") + missing : std::string("nvrtcVersion failed")) + ")";
        ::dlclose(handle);
        return nullptr;
    }
    int count = 0;
    if (n.nvrtcGetNumSupportedArchs && n.nvrtcGetSupportedArchs &&
        n.nvrtcGetNumSupportedArchs(&count) == kNvrtcSuccess && count > 0) {
        n.supported_archs.resize(size_t(count));
        if (n.nvrtcGetSupportedArchs(n.supported_archs.data()) != kNvrtcSuccess)
            n.supported_archs.clear();
        std::sort(n.supported_archs.begin(), n.supported_archs.end());
    }
    // The file actually mapped (a bare soname says nothing about which toolkit answered).
    Dl_info info{};
    n.path = ::dladdr(reinterpret_cast<void*>(n.nvrtcVersion), &info) && info.dli_fname
                 ? info.dli_fname
                 : path_or_name;
    // NVRTC opens its builtins library by soname, found through its own RUNPATH ($ORIGIN). A
    // dlopen interposer (AddressSanitizer, some profilers) makes the lookup use the caller's
    // RUNPATH instead and it fails; loaded here by full path, the soname is already resolved.
    const std::string builtins = fs::path(n.path).parent_path().string() +
                                 "/libnvrtc-builtins.so." + std::to_string(n.major) + "." +
                                 std::to_string(n.minor);
    if (::access(builtins.c_str(), R_OK) == 0)
        (void)::dlopen(builtins.c_str(), RTLD_NOW | RTLD_LOCAL);
    struct stat file{};
    const long long size = ::stat(n.path.c_str(), &file) == 0 ? (long long)file.st_size : -1;
    n.identity = "nvrtc " + std::to_string(n.major) + "." + std::to_string(n.minor) + ", " +
                 std::to_string(size) + " bytes";
    return library;  // the handle stays open for the process: see Nvrtc
}

const Nvrtc& nvrtc() {
    NvrtcState& state = nvrtc_state();
    if (const Nvrtc* loaded = state.loaded.load(std::memory_order_acquire)) [[likely]]
        return *loaded;
    std::lock_guard<std::mutex> lock(state.mutex);
    if (!state.searched) search(state);
    if (const Nvrtc* loaded = state.loaded.load(std::memory_order_relaxed)) return *loaded;
    throw_not_found(state.error);
}

bool nvrtc_loaded() noexcept { return nvrtc_state().loaded.load(std::memory_order_acquire) != nullptr; }

void nvrtc_prefetch() {
    if (nvrtc_loaded()) return;
    static std::once_flag started;
    std::call_once(started, [] {
        try {
            std::thread([] {
                try {
                    (void)nvrtc();
                } catch (...) {  // reported by the nvrtc() of the compile that needs it
                }
            }).detach();
        } catch (const std::system_error&) {  // no thread: the compile opens NVRTC itself
        }
    });
}

std::string nvrtc_status() {
    try {
        const Nvrtc& n = nvrtc();
        return n.path + " (" + n.identity + ")";
    } catch (const BackendError& error) {
        return error.what();
    }
}

NvrtcOutput nvrtc_compile(const Nvrtc& compiler, const std::string& source,
                          const std::string& program_name,
                          const std::vector<std::string>& options, bool want_ptx) {
    if (!want_ptx && !compiler.nvrtcGetCUBIN)
        throw BackendError("NVRTC " + std::to_string(compiler.major) + "." +
                           std::to_string(compiler.minor) + " at " + compiler.path +
                           " cannot emit CUBINs (NVRTC 11.1 or newer is needed)");
    NvrtcProgram program = nullptr;
    check_nvrtc(compiler,
                compiler.nvrtcCreateProgram(&program, source.c_str(), program_name.c_str(), 0,
                                            nullptr, nullptr),
                "nvrtcCreateProgram");
    // Destroys the program on every path out, exceptions included.
    struct ProgramOwner {
        const Nvrtc& compiler;
        NvrtcProgram program;
        ~ProgramOwner() { compiler.nvrtcDestroyProgram(&program); }
    } owner{compiler, program};

    std::vector<const char*> argv;
    argv.reserve(options.size());
    for (const std::string& option : options) argv.push_back(option.c_str());
    const NvrtcResult compiled =
        compiler.nvrtcCompileProgram(program, int(argv.size()), argv.data());

    NvrtcOutput out;
    size_t log_size = 0;
    if (compiler.nvrtcGetProgramLogSize(program, &log_size) == kNvrtcSuccess && log_size > 1) {
        out.log.resize(log_size);
        if (compiler.nvrtcGetProgramLog(program, out.log.data()) != kNvrtcSuccess) out.log.clear();
        while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n'))
            out.log.pop_back();
    }
    if (compiled != kNvrtcSuccess) {
        out.error = result_name(compiler, compiled);
        return out;
    }
    size_t size = 0;
    if (want_ptx) {
        check_nvrtc(compiler, compiler.nvrtcGetPTXSize(program, &size), "nvrtcGetPTXSize");
        out.binary.resize(size);
        check_nvrtc(compiler, compiler.nvrtcGetPTX(program, out.binary.data()), "nvrtcGetPTX");
        // The size counts the terminating NUL; std::string keeps its own after the text.
        while (!out.binary.empty() && out.binary.back() == '\0') out.binary.pop_back();
    } else {
        check_nvrtc(compiler, compiler.nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
        out.binary.resize(size);
        check_nvrtc(compiler, compiler.nvrtcGetCUBIN(program, out.binary.data()), "nvrtcGetCUBIN");
    }
    out.ok = !out.binary.empty();
    if (!out.ok) out.error = "NVRTC produced no output";
    return out;
}

}  // namespace sg::runtime
