// src/runtime/cpu_module.cpp — the CPU backend's module loader: content-addressed keys, the
// disk cache's payload (kind "cpu": the shared object's bytes), the host compiler as the last
// resort, and dlopen. The memory and disk caching steps are module_cache.h's.
#include "runtime/cpu_module.h"

#include "runtime/content_hash.h"
#include "runtime/disk_cache.h"
#include "runtime/file_util.h"
#include "runtime/host_compiler.h"
#include "runtime/module_cache.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <dlfcn.h>
#include <filesystem>

namespace sg::runtime {
namespace {

// Part of every key: bump when the calling convention of generated kernels or anything else a
// cached object silently depends on changes, so old objects stop matching instead of misbehaving.
constexpr int kCpuRuntimeAbiVersion = 1;
constexpr std::string_view kCacheKind = "cpu";
// How much compiler output goes into an exception message (the full log is kept on disk).
constexpr size_t kMessageOutputLimit = 4000;

// One dlopen'd shared object. Shared by every CpuModule handle for the same key; dlclose'd
// when the last handle goes (the memory cache only holds it weakly).
class CpuLibrary {
public:
    CpuLibrary(void* handle, std::string hash, std::vector<std::string> kept_files)
        : handle_(handle), hash_(std::move(hash)), kept_files_(std::move(kept_files)) {}
    ~CpuLibrary() {
        ::dlclose(handle_);
        for (const std::string& path : kept_files_) remove_quietly(path);
    }
    CpuLibrary(const CpuLibrary&) = delete;
    CpuLibrary& operator=(const CpuLibrary&) = delete;

    void* handle() const { return handle_; }
    const std::string& hash() const { return hash_; }

private:
    void* handle_;
    std::string hash_;
    std::vector<std::string> kept_files_;  // debug builds: the .so debuggers read
};

// What load_cpu_module returns: the library plus how this particular load was satisfied.
class LoadedCpuModule final : public CpuModule {
public:
    LoadedCpuModule(std::shared_ptr<CpuLibrary> library, bool compiled)
        : library_(std::move(library)), compiled_(compiled) {}

    void* symbol(const char* name) const override {
        void* address = name ? ::dlsym(library_->handle(), name) : nullptr;
        if (!address)
            throw BackendError("CPU module " + library_->hash() + " has no exported symbol '" +
                               std::string(name ? name : "(null)") + "'");
        return address;
    }
    const std::string& hash() const override { return library_->hash(); }
    bool compiled() const override { return compiled_; }

private:
    std::shared_ptr<CpuLibrary> library_;
    bool compiled_;
};

// The cache key. Flags are kept in order rather than sorted: order is meaningful to a compiler
// (`-O3 -O0` is not `-O0 -O3`, nor `-DX -UX` `-UX -DX`), and the generator emits them in a fixed
// order anyway, so sorting could only alias different objects.
std::string module_key(const std::string& source, const std::vector<std::string>& compiler,
                       const std::vector<std::string>& flags) {
    std::string material = "shadegrad cpu module\n";
    append_key_field(material, "abi", std::to_string(kCpuRuntimeAbiVersion));
    append_key_field(material, "compiler", join_command(compiler));
    append_key_field(material, "identity", host_compiler_identity(compiler));
    for (const std::string& flag : flags) append_key_field(material, "flag", flag);
    append_key_field(material, "source", source);
    return content_hash(material);
}

[[noreturn, gnu::noinline]] void throw_load_error(const std::string& path,
                                                  const std::string& hash) {
    const char* reason = ::dlerror();
    throw BackendError("cannot load CPU module " + hash + " from " + path + ": " +
                       (reason ? reason : "unknown dlopen error"));
}

// Temporaries older than a day in <cache>/tmp were left by crashed processes (or by debug
// modules of very long sessions); removing them once per process bounds the litter.
void sweep_stale_temporaries(const std::string& tmp_dir) {
    static std::atomic<bool> swept{false};
    if (swept.exchange(true)) return;
    namespace fs = std::filesystem;
    const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24);
    std::error_code ec;
    for (fs::directory_iterator it(tmp_dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code entry_ec;
        if (it->is_regular_file(entry_ec) && it->last_write_time(entry_ec) < cutoff && !entry_ec)
            fs::remove(it->path(), entry_ec);
    }
}

// Loading a verified payload. The disk entry itself is never handed to dlopen: it starts with
// our header (not an ELF file), and even a headerless entry checked and then opened by path
// could be replaced or damaged between the check and the load (by another process's rename or
// a bad disk). Instead the bytes we hashed are written to a private file (exclusively created,
// random name, on the cache's filesystem because /tmp is often noexec), and that file is loaded
// and unlinked: the mapping outlives the name, so nothing is left behind, and what runs is
// exactly what was verified. Debug modules keep the file until unloaded, for debuggers.
std::optional<std::shared_ptr<CpuLibrary>> open_verified(const std::string& hash,
                                                         const std::string& payload, bool debug) {
    const std::string tmp_dir = cache_subdirectory("tmp");
    std::string path;
    ScopedFd fd = create_unique_file(tmp_dir, hash, ".so", path);
    bool written = fd.valid() && write_all(fd.get(), payload);
    written = fd.reset() && written;
    if (!written) {
        const int error = errno;
        remove_quietly(path);
        throw BackendError("cannot write a temporary CPU module in " + tmp_dir + ": " +
                           errno_message(error));
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!debug || !handle) remove_quietly(path);
    // Verified but unloadable (e.g. a runtime library the object needs is gone): the entry is
    // useless here, so it is dropped and rebuilt; a rebuilt object that fails too reports the
    // loader's error.
    if (!handle) return std::nullopt;
    return std::make_shared<CpuLibrary>(handle, hash, debug ? std::vector<std::string>{path}
                                                            : std::vector<std::string>{});
}

// Moves a failing source (and the full compiler log) to <cache>/failed, where the user can find
// them; returns the source's final path. When that fails, the source stays at `source_path`.
std::string keep_failed_source(const std::string& source, const std::string& source_path,
                               const std::string& hash, const std::string& command,
                               const ProcessResult& result) {
    const std::string kept = publish_cache_file("failed", hash + ".cpp", source);
    if (kept.empty()) return source_path;
    remove_quietly(source_path);
    publish_cache_file("failed", hash + ".log", command + "\n" + result.output);
    return kept;
}

[[noreturn, gnu::noinline]] void throw_compile_error(const std::string& source,
                                                     const std::string& source_path,
                                                     const std::string& hash,
                                                     const std::vector<std::string>& argv,
                                                     const ProcessResult& result) {
    const std::string command = join_command(argv);
    const std::string kept = keep_failed_source(source, source_path, hash, command, result);
    std::string message = "host C++ compiler failed on generated CPU code (";
    message += result.signal ? "killed by signal " + std::to_string(result.signal)
                             : "exit status " + std::to_string(result.exit_code);
    message += ")\n  command: " + command + "\n  source kept at: " + kept + "\n";
    message.append(result.output, 0, kMessageOutputLimit);
    const size_t shown = std::min(result.output.size(), kMessageOutputLimit);
    const size_t omitted = result.output.size() - shown + result.dropped_bytes;
    if (omitted > 0) message += "\n  ... (" + std::to_string(omitted) + " more bytes of output)";
    throw BackendError(message);
}

// Writes `source` for the compiler. Normally a private temporary; for debug builds a stable,
// content-addressed copy (<cache>/debug/<hash>.cpp) so the debug info keeps naming a file that
// exists — also when the module is later loaded from the disk cache by another process.
// Returns false (errno set) on failure.
bool write_source(const std::string& tmp_dir, const std::string& hash, const std::string& source,
                  bool debug, std::string& path) {
    if (debug) {
        path = publish_cache_file("debug", hash + ".cpp", source);
        return !path.empty();
    }
    ScopedFd fd = create_unique_file(tmp_dir, hash, ".cpp", path);
    const bool written = fd.valid() && write_all(fd.get(), source);
    return fd.reset() && written;
}

// Runs the host compiler; the result's payload is the object's bytes, for the disk cache.
CompileResult<std::shared_ptr<CpuLibrary>> compile(const std::string& hash,
                                                   const std::string& source,
                                                   const std::vector<std::string>& compiler,
                                                   const std::vector<std::string>& flags,
                                                   bool debug) {
    const std::string tmp_dir = cache_subdirectory("tmp");
    sweep_stale_temporaries(tmp_dir);

    // Removes the temporaries on every exit path, unless handed over.
    std::string source_path, object_path;
    struct Cleanup {
        std::string* source;
        std::string* object;
        bool keep_source, keep_object = false;
        ~Cleanup() {
            if (!keep_source) remove_quietly(*source);
            if (!keep_object) remove_quietly(*object);
        }
    } cleanup{&source_path, &object_path, debug};

    // Exclusively created names: no other process or thread can be handed either one.
    bool written = write_source(tmp_dir, hash, source, debug, source_path);
    ScopedFd object_fd = create_unique_file(tmp_dir, hash, ".so", object_path);
    written = written && object_fd.valid();
    object_fd.reset();  // the linker replaces the (empty) file
    if (!written)
        throw BackendError("cannot write temporary files in " + cache_directory() + ": " +
                           errno_message(errno));

    const std::vector<std::string> argv =
        host_compile_arguments(compiler, flags, source_path, object_path);
    const ProcessResult result = run_process(argv);
    if (!result.succeeded()) {
        cleanup.keep_source = true;  // moved to <cache>/failed when possible
        throw_compile_error(source, source_path, hash, argv, result);
    }

    std::optional<std::string> object = read_file(object_path);
    if (!object || object->empty())
        throw BackendError("host compiler reported success but wrote no object at " + object_path);

    void* handle = ::dlopen(object_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw_load_error(object_path, hash);
    std::vector<std::string> kept_files;
    if (debug) {
        cleanup.keep_object = true;  // debug: removed when the library is unloaded
        kept_files.push_back(object_path);
    }
    return {std::make_shared<CpuLibrary>(handle, hash, std::move(kept_files)), std::move(*object)};
}

}  // namespace

std::shared_ptr<CpuModule> load_cpu_module(const std::string& source,
                                           const CpuCompileOptions& options) {
    const std::vector<std::string> compiler = host_compiler_command(options.compiler);
    const std::vector<std::string> flags = host_compile_flags(options.flags, options.debug);
    const std::string hash = module_key(source, compiler, flags);

    bool compiled = false;  // stays false when the memory cache has the library
    ModuleCache<CpuLibrary>& memory = ModuleCache<CpuLibrary>::instance();
    std::shared_ptr<CpuLibrary> library = memory.get_or_load(hash, [&] {
        return load_or_compile<std::shared_ptr<CpuLibrary>>(
            kCacheKind, hash,
            [&](const std::string& payload) { return open_verified(hash, payload, options.debug); },
            [&] { return compile(hash, source, compiler, flags, options.debug); }, compiled);
    });
    return std::make_shared<LoadedCpuModule>(std::move(library), compiled);
}

std::shared_ptr<CpuModule> find_cpu_module(const std::string& key, const CpuCompileOptions& options) {
    ModuleCache<CpuLibrary>& memory = ModuleCache<CpuLibrary>::instance();
    std::shared_ptr<CpuLibrary> library = memory.get_or_load(key, [&]() -> std::shared_ptr<CpuLibrary> {
        auto start = std::chrono::steady_clock::now();
        std::optional<std::string> payload = disk_cache_load(kCacheKind, key);
        add_load_stats(LoadStats{.disk_read_ms = ms_since(start)});
        if (!payload) return nullptr;
        start = std::chrono::steady_clock::now();
        std::optional<std::shared_ptr<CpuLibrary>> opened = open_verified(key, *payload, options.debug);
        add_load_stats(LoadStats{.disk_hits = opened ? 1u : 0u, .decode_ms = ms_since(start)});
        return opened ? std::move(*opened) : nullptr;
    });
    return library ? std::make_shared<LoadedCpuModule>(std::move(library), false) : nullptr;
}

std::string cpu_compiler_fingerprint(const CpuCompileOptions& options) {
    const std::vector<std::string> compiler = host_compiler_command(options.compiler);
    std::string out = "cpu abi " + std::to_string(kCpuRuntimeAbiVersion) + "\n" + host_compiler_fingerprint(compiler);
    for (const std::string& flag : host_compile_flags(options.flags, options.debug)) out += flag + "\n";
    return out;
}

void clear_cpu_module_cache() { ModuleCache<CpuLibrary>::instance().clear(); }

}  // namespace sg::runtime
