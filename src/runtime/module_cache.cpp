// src/runtime/module_cache.cpp — the module loaders' shared caching: key fields, kept files, and
// the slot table of the in-memory caches with its pruning and fork handling.
#include "runtime/module_cache.h"

#include "runtime/cpu_module.h"  // BackendError

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <pthread.h>
#include <unordered_map>
#include <vector>

namespace sg::runtime {

namespace {
std::mutex g_stats_mutex;
LoadStats g_stats;
}  // namespace

LoadStats load_stats() {
    std::lock_guard<std::mutex> lock(g_stats_mutex);
    return g_stats;
}

void add_load_stats(const LoadStats& d) {
    std::lock_guard<std::mutex> lock(g_stats_mutex);
    g_stats.memory_hits += d.memory_hits;
    g_stats.disk_hits += d.disk_hits;
    g_stats.compiles += d.compiles;
    g_stats.disk_read_ms += d.disk_read_ms;
    g_stats.decode_ms += d.decode_ms;
    g_stats.compile_ms += d.compile_ms;
    g_stats.identity_ms += d.identity_ms;
    g_stats.device_load_ms += d.device_load_ms;
    g_stats.context_ms += d.context_ms;
    g_stats.fault_record_ms += d.fault_record_ms;
    g_stats.function_ms += d.function_ms;
    g_stats.first_launch_ms += d.first_launch_ms;
}

void append_key_field(std::string& material, std::string_view name, std::string_view value) {
    material += name;
    material += ' ';
    material += std::to_string(value.size());
    material += ':';
    material += value;
    material += '\n';
}

std::string publish_cache_file(std::string_view dir_name, const std::string& name,
                               std::string_view content) {
    std::string dir;
    try {
        dir = cache_subdirectory(dir_name);
    } catch (const BackendError&) {
        return "";  // no cache directory: callers report the file as not kept
    }
    std::string temporary;
    ScopedFd fd = create_unique_file(dir, name, ".tmp", temporary);
    bool written = fd.valid() && write_all(fd.get(), content);
    written = fd.reset() && written;
    const std::string path = dir + "/" + name;
    if (written && ::rename(temporary.c_str(), path.c_str()) == 0) return path;
    const int error = errno;  // callers put it in their messages; the cleanup must not change it
    remove_quietly(temporary);
    errno = error;
    return "";
}

// ---- the slot table ---------------------------------------------------------------------------

struct ModuleCacheSlots::Table {
    std::mutex mutex;  // guards `slots` only; never held while loading
    std::unordered_map<std::string, std::shared_ptr<Slot>> slots;
    size_t prune_threshold = 64;
};

// Every slot table of the process, for pthread_atfork (whose handlers take no argument).
struct ModuleCacheSlots::ForkHandlers {
    std::mutex mutex;  // guards `caches`; held across fork() so none is added meanwhile
    std::vector<ModuleCacheSlots*> caches;

    static ForkHandlers& get() {
        static ForkHandlers* const handlers = [] {
            auto* created = new ForkHandlers;  // never destroyed, like the caches
            ::pthread_atfork(prepare, parent, child);
            return created;
        }();
        return *handlers;
    }

    // Holding every table's lock across fork() means the child never inherits one locked
    // halfway through an update; the child then starts from empty tables.
    static void prepare() {
        ForkHandlers& self = get();
        self.mutex.lock();
        for (ModuleCacheSlots* cache : self.caches) cache->table_.load()->mutex.lock();
    }
    static void parent() {
        ForkHandlers& self = get();
        for (ModuleCacheSlots* cache : self.caches) cache->table_.load()->mutex.unlock();
        self.mutex.unlock();
    }
    static void child() {
        ForkHandlers& self = get();
        for (ModuleCacheSlots* cache : self.caches) {
            cache->table_.load()->mutex.unlock();
            cache->table_.store(new Table);  // the old one leaks, by design
        }
        self.mutex.unlock();
    }
};

ModuleCacheSlots::ModuleCacheSlots() : table_(new Table) {
    ForkHandlers& handlers = ForkHandlers::get();
    std::lock_guard<std::mutex> lock(handlers.mutex);
    handlers.caches.push_back(this);
}

std::shared_ptr<ModuleCacheSlots::Slot> ModuleCacheSlots::slot(const std::string& key) {
    Table& table = *table_.load();
    std::lock_guard<std::mutex> lock(table.mutex);
    auto [it, inserted] = table.slots.try_emplace(key);
    if (inserted) {
        it->second = std::make_shared<Slot>();
        // Drop slots of unloaded modules now and then, so a long process that loads many
        // distinct kernels does not accumulate empty slots. Amortized O(1) per insertion.
        if (table.slots.size() >= table.prune_threshold) {
            std::erase_if(table.slots, [&](const auto& entry) {
                return entry.first != key && entry.second.use_count() == 1 &&
                       entry.second->value.expired();
            });
            table.prune_threshold = std::max<size_t>(64, 2 * table.slots.size());
        }
    }
    return it->second;
}

void ModuleCacheSlots::clear() {
    Table& table = *table_.load();
    std::lock_guard<std::mutex> lock(table.mutex);
    table.slots.clear();  // loads in flight keep their slot alive until they finish
}

}  // namespace sg::runtime
