// src/runtime/module_cache.h — the caching shared by the CPU and CUDA module loaders: key
// material, the in-memory cache (one slot per key), the disk cache in front of the compiler, and
// files kept for the user (failed sources and logs, debug copies).
//
// A load goes key -> memory (ModuleCache) -> disk (load_or_compile: decode a verified entry) ->
// compile (then store). Backends supply the key material, the decoding and the compiling; what
// a value is (a dlopen'd library, a CUBIN) stays theirs.
#pragma once

#include "runtime/disk_cache.h"
#include "runtime/file_util.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sg::runtime {

/// What the kernel caches of this process did so far (all backends and threads): loads served by
/// the memory cache, by the disk cache and by the compiler, and the wall time of each step —
/// reading and verifying an entry, turning its payload into a module (CPU: write and dlopen),
/// compiling (CPU: the host compiler and dlopen; CUDA: NVRTC), identifying the compiler (CPU:
/// `--version`; CUDA: finding and opening NVRTC) and loading a CUDA image into a device. The
/// first-call profile reads them (docs/performance.md); none of it is on the path of a cached call.
struct LoadStats {
    uint64_t memory_hits = 0, disk_hits = 0, compiles = 0;
    double disk_read_ms = 0, decode_ms = 0, compile_ms = 0, identity_ms = 0, device_load_ms = 0;
    /// CUDA, what a warm first call pays beside the module load: the primary context's first
    /// retain per device, the mapped fault record per device, each entry's function lookup and
    /// launch configuration (cuModuleGetFunction, occupancy), and each entry's first launch
    /// (cuLaunchKernel's host time; where the driver loads modules lazily, the load is here).
    double context_ms = 0, fault_record_ms = 0, function_ms = 0, first_launch_ms = 0;
};
LoadStats load_stats();
/// Adds `delta` to the totals.
void add_load_stats(const LoadStats& delta);

/// Milliseconds since `start` (steady clock).
inline double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/// Appends one field "<name> <size>:<value>\n" to a cache key's material. Length-prefixed, so no
/// choice of options or source can make two different inputs produce the same material. Keys on
/// disk depend on this exact format.
void append_key_field(std::string& material, std::string_view name, std::string_view value);

/// Writes `content` to <cache>/<dir_name>/<name> through a temporary in the same directory and
/// rename(), so readers (a debugger, a user, a second process) never see a partial file. Returns
/// the path, or "" (errno set) when the directory or the file could not be written: I/O
/// failures do not throw, since callers only report such a file as not kept.
std::string publish_cache_file(std::string_view dir_name, const std::string& name,
                               std::string_view content);

/// The slots behind ModuleCache, without the value type: the pruning and fork handling are
/// compiled once, in module_cache.cpp.
class ModuleCacheSlots {
public:
    struct Slot {
        std::mutex mutex;           // held while the key's value is loaded
        std::weak_ptr<void> value;  // weak: a module nobody uses is unloaded
    };

    /// Must live until the process ends (see ModuleCache::instance).
    ModuleCacheSlots();
    ModuleCacheSlots(const ModuleCacheSlots&) = delete;
    ModuleCacheSlots& operator=(const ModuleCacheSlots&) = delete;

    /// The slot for `key`, created when absent.
    std::shared_ptr<Slot> slot(const std::string& key);
    /// Forgets every slot; loads in flight keep theirs alive until they finish.
    void clear();

private:
    struct Table;
    struct ForkHandlers;
    // Replaced (the old one leaked) in a fork() child: mutexes held by the parent's other threads
    // at the fork would stay locked forever there.
    std::atomic<Table*> table_;
};

/// A backend's in-memory module cache: values of type T by content key, held weakly. Loads of
/// one key serialize (the second finds the first's value), loads of different keys run in
/// parallel; no global lock is held while loading. A fork() child starts with an empty cache.
template <class T>
class ModuleCache {
public:
    /// The process's cache of T values (each backend has its own T). Never destroyed: a module
    /// may be loaded from another static object's destructor, and the fork handlers keep a
    /// pointer to it.
    static ModuleCache& instance() {
        static ModuleCache* const cache = new ModuleCache;
        return *cache;
    }

    /// The live value for `key`, else the one `load()` returns (a std::shared_ptr<T>), which is
    /// then remembered (a null one is not: the next load of the key tries again). load() runs
    /// with the key's slot locked; when it throws, the exception passes through and the next
    /// load of the key tries again.
    template <class Load>
    std::shared_ptr<T> get_or_load(const std::string& key, Load&& load) {
        const std::shared_ptr<ModuleCacheSlots::Slot> slot = slots_.slot(key);
        std::lock_guard<std::mutex> lock(slot->mutex);
        if (std::shared_ptr<void> value = slot->value.lock()) {
            add_load_stats(LoadStats{.memory_hits = 1});
            return std::static_pointer_cast<T>(std::move(value));
        }
        std::shared_ptr<T> value = std::forward<Load>(load)();
        if (value) slot->value = value;
        return value;
    }

    /// Forgets every value (tests). Values already handed out stay alive.
    void clear() { slots_.clear(); }

private:
    ModuleCache() = default;

    ModuleCacheSlots slots_;
};

/// What a backend's compile step returns: the value, and the bytes the disk cache keeps for it.
template <class T>
struct CompileResult {
    T value;
    std::string payload;
};

/// The value for `key`: from the disk cache (`kind`, see disk_cache.h), else compiled and stored.
///   decode(std::string payload) -> std::optional<T>: the value a verified entry holds; nullopt
///       when the entry is intact but unusable here (the wrong form, does not load), which
///       removes it so that it is rebuilt, never trusted.
///   compile() -> CompileResult<T>: its payload is stored afterwards; a failed store only costs
///       a recompile later.
/// `compiled` is set to whether compile() ran. Exceptions from either step pass through.
template <class T, class Decode, class Compile>
T load_or_compile(std::string_view kind, const std::string& key, Decode&& decode,
                  Compile&& compile, bool& compiled) {
    auto start = std::chrono::steady_clock::now();
    std::optional<std::string> payload = disk_cache_load(kind, key);
    add_load_stats(LoadStats{.disk_read_ms = ms_since(start)});
    if (payload) {
        start = std::chrono::steady_clock::now();
        std::optional<T> value = decode(std::move(*payload));
        add_load_stats(LoadStats{.disk_hits = value ? 1u : 0u, .decode_ms = ms_since(start)});
        if (value) {
            compiled = false;
            return std::move(*value);
        }
        remove_quietly(disk_cache_entry_path(kind, key));
    }
    start = std::chrono::steady_clock::now();
    CompileResult<T> result = compile();
    add_load_stats(LoadStats{.compiles = 1, .compile_ms = ms_since(start)});
    disk_cache_store(kind, key, result.payload);
    compiled = true;
    return std::move(result.value);
}

}  // namespace sg::runtime
