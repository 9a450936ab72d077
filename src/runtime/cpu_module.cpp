// src/runtime/cpu_module.cpp — the CPU backend's module loader: content-addressed keys, the
// in-memory cache, the disk cache (kind "cpu", payload = the shared object's bytes), the host
// compiler as the last resort, and dlopen.
#include "runtime/cpu_module.h"

#include "runtime/content_hash.h"
#include "runtime/disk_cache.h"
#include "runtime/file_util.h"
#include "runtime/host_compiler.h"

#include <atomic>
#include <chrono>
#include <algorithm>
#include <cerrno>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <pthread.h>
#include <unordered_map>

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

// The memory cache. One slot per key, with its own mutex: loads of the same key serialize (the
// second finds the first's library), loads of different keys compile in parallel.
struct CacheSlot {
    std::mutex mutex;
    std::weak_ptr<CpuLibrary> library;
};

struct ModuleCache {
    std::mutex mutex;  // guards `slots` only; never held while compiling
    std::unordered_map<std::string, std::shared_ptr<CacheSlot>> slots;
    size_t prune_threshold = 64;
};

// Heap-allocated and never destroyed: a module may be loaded from another static destructor,
// and a fork() child replaces it (below) because slot mutexes held by the parent's other
// threads would stay locked forever in the child.
std::atomic<ModuleCache*> g_cache{nullptr};

ModuleCache& module_cache() {
    static std::once_flag once;
    std::call_once(once, [] {
        g_cache.store(new ModuleCache);
        ::pthread_atfork([] { g_cache.load()->mutex.lock(); },
                         [] { g_cache.load()->mutex.unlock(); },
                         [] {
                             g_cache.load()->mutex.unlock();
                             g_cache.store(new ModuleCache);  // the old one leaks, by design
                         });
    });
    return *g_cache.load();
}

std::shared_ptr<CacheSlot> cache_slot(const std::string& hash) {
    ModuleCache& cache = module_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto [it, inserted] = cache.slots.try_emplace(hash);
    if (inserted) {
        it->second = std::make_shared<CacheSlot>();
        // Drop slots of unloaded modules now and then, so a long process that loads many
        // distinct kernels does not accumulate empty slots. Amortized O(1) per insertion.
        if (cache.slots.size() >= cache.prune_threshold) {
            std::erase_if(cache.slots, [&](const auto& entry) {
                return entry.first != hash && entry.second.use_count() == 1 &&
                       entry.second->library.expired();
            });
            cache.prune_threshold = std::max<size_t>(64, 2 * cache.slots.size());
        }
    }
    return it->second;
}

// Length-prefixed fields: no choice of flags or source can make two different inputs produce
// the same key material.
void append_field(std::string& out, std::string_view name, std::string_view value) {
    out += name;
    out += ' ';
    out += std::to_string(value.size());
    out += ':';
    out += value;
    out += '\n';
}

// The cache key. Flags are kept in order rather than sorted: order is meaningful to a compiler
// (`-O3 -O0` is not `-O0 -O3`, nor `-DX -UX` `-UX -DX`), and the generator emits them in a fixed
// order anyway, so sorting could only alias different objects.
std::string module_key(const std::string& source, const std::vector<std::string>& compiler,
                       const std::vector<std::string>& flags) {
    std::string material = "shadegrad cpu module\n";
    append_field(material, "abi", std::to_string(kCpuRuntimeAbiVersion));
    append_field(material, "compiler", join_command(compiler));
    append_field(material, "identity", host_compiler_identity(compiler));
    for (const std::string& flag : flags) append_field(material, "flag", flag);
    append_field(material, "source", source);
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
std::shared_ptr<CpuLibrary> load_from_disk(const std::string& hash, bool debug) {
    std::optional<std::string> payload = disk_cache_load(kCacheKind, hash);
    if (!payload) return nullptr;

    const std::string tmp_dir = cache_subdirectory("tmp");
    std::string path;
    ScopedFd fd = create_unique_file(tmp_dir, hash, ".so", path);
    bool written = fd.valid() && write_all(fd.get(), *payload);
    written = fd.reset() && written;
    if (!written) {
        const int error = errno;
        remove_quietly(path);
        throw BackendError("cannot write a temporary CPU module in " + tmp_dir + ": " +
                           errno_message(error));
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!debug || !handle) remove_quietly(path);
    if (!handle) {
        // Verified but unloadable (e.g. a runtime library the object needs is gone): the entry
        // is useless here, so drop it and let the caller rebuild; a rebuilt object that fails
        // too reports the loader's error.
        remove_quietly(disk_cache_entry_path(kCacheKind, hash));
        return nullptr;
    }
    return std::make_shared<CpuLibrary>(handle, hash, debug ? std::vector<std::string>{path}
                                                            : std::vector<std::string>{});
}

// Keeps a failing source (and the full compiler log) where the user can find them; returns the
// source's final path.
std::string keep_failed_source(const std::string& source_path, const std::string& hash,
                               const std::string& command, const ProcessResult& result) {
    try {
        const std::string dir = cache_subdirectory("failed");
        const std::string kept = dir + "/" + hash + ".cpp";
        if (::rename(source_path.c_str(), kept.c_str()) != 0) return source_path;
        ScopedFd log(::open((dir + "/" + hash + ".log").c_str(),
                            O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        if (log.valid()) write_all(log.get(), command + "\n" + result.output);
        return kept;
    } catch (const BackendError&) {
        return source_path;  // no "failed" directory: the temporary stays where it is
    }
}

[[noreturn, gnu::noinline]] void throw_compile_error(const std::string& source_path,
                                                     const std::string& hash,
                                                     const std::vector<std::string>& argv,
                                                     const ProcessResult& result) {
    const std::string command = join_command(argv);
    const std::string kept = keep_failed_source(source_path, hash, command, result);
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
// content-addressed copy (<cache>/debug/<hash>.cpp, published by rename like cache entries) so
// the debug info keeps naming a file that exists — also when the module is later loaded from
// the disk cache by another process. Returns false (errno set) on failure.
bool write_source(const std::string& tmp_dir, const std::string& hash, const std::string& source,
                  bool debug, std::string& path) {
    std::string temporary;
    const std::string dir = debug ? cache_subdirectory("debug") : tmp_dir;
    ScopedFd fd = create_unique_file(dir, hash, ".cpp", temporary);
    bool written = fd.valid() && write_all(fd.get(), source);
    written = fd.reset() && written;
    if (!debug || !written) {
        path = temporary;
        return written;
    }
    path = dir + "/" + hash + ".cpp";
    if (::rename(temporary.c_str(), path.c_str()) == 0) return true;
    remove_quietly(temporary);
    return false;
}

std::shared_ptr<CpuLibrary> compile(const std::string& hash, const std::string& source,
                                    const std::vector<std::string>& compiler,
                                    const std::vector<std::string>& flags, bool debug) {
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
        throw_compile_error(source_path, hash, argv, result);
    }

    std::optional<std::string> object = read_file(object_path);
    if (!object || object->empty())
        throw BackendError("host compiler reported success but wrote no object at " + object_path);
    disk_cache_store(kCacheKind, hash, *object);  // failure only costs a recompile later

    void* handle = ::dlopen(object_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw_load_error(object_path, hash);
    if (!debug) return std::make_shared<CpuLibrary>(handle, hash, std::vector<std::string>{});
    cleanup.keep_object = true;  // debug: removed when the library is unloaded
    return std::make_shared<CpuLibrary>(handle, hash, std::vector<std::string>{object_path});
}

}  // namespace

std::shared_ptr<CpuModule> load_cpu_module(const std::string& source,
                                           const CpuCompileOptions& options) {
    const std::vector<std::string> compiler = host_compiler_command(options.compiler);
    const std::vector<std::string> flags = host_compile_flags(options.flags, options.debug);
    const std::string hash = module_key(source, compiler, flags);

    const std::shared_ptr<CacheSlot> slot = cache_slot(hash);
    std::lock_guard<std::mutex> lock(slot->mutex);
    if (std::shared_ptr<CpuLibrary> library = slot->library.lock())
        return std::make_shared<LoadedCpuModule>(std::move(library), false);

    bool compiled = false;
    std::shared_ptr<CpuLibrary> library = load_from_disk(hash, options.debug);
    if (!library) {
        library = compile(hash, source, compiler, flags, options.debug);
        compiled = true;
    }
    slot->library = library;
    return std::make_shared<LoadedCpuModule>(std::move(library), compiled);
}

void clear_cpu_module_cache() {
    ModuleCache& cache = module_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.slots.clear();  // loads in flight keep their slot alive until they finish
}

}  // namespace sg::runtime
