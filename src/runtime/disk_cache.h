// src/runtime/disk_cache.h — the content-addressed on-disk cache shared by the backends (CPU
// shared objects under kind "cpu", CUDA cubins under kind "cuda").
//
// An entry is `<cache>/<kind>/<key[0:2]>/<key>.bin`: a 64-byte header (magic, format version,
// the key, payload size, payload content hash) followed by the payload. Entries are published
// with rename() of a fully written temporary in the same directory, so a reader sees a complete
// old entry, a complete new one, or none — from any number of threads and processes. Every read
// re-verifies the header and the payload hash; an entry that fails (corrupt, truncated, written
// by another format version) is deleted and reported as absent, never returned.
//
// The cache directory is $SHADEGRAD_CACHE_DIR, else ~/.cache/shadegrad, resolved on first use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sg::runtime {

/// Bump when the entry layout changes; entries of another version are treated as stale.
inline constexpr uint32_t kDiskCacheFormatVersion = 1;

enum class DiskCacheLookup {
    Hit,      ///< a verified entry was returned
    Missing,  ///< no entry (or it could not be opened)
    Invalid,  ///< an entry existed but failed verification; it was removed
};

/// The verified payload stored under (kind, key), or nullopt. `kind` is a short lowercase name
/// ([a-z0-9_]+), `key` a content_hash() result (32 lowercase hex characters); anything else
/// throws std::invalid_argument, which keeps both usable as path components.
std::optional<std::string> disk_cache_load(std::string_view kind, std::string_view key,
                                           DiskCacheLookup* lookup = nullptr);

/// Stores `payload` under (kind, key), replacing any entry atomically. Returns false when it
/// could not (read-only or full disk): the cache is an optimization, callers carry on without.
bool disk_cache_store(std::string_view kind, std::string_view key, std::string_view payload);

/// Where the entry for (kind, key) lives (whether or not it exists). Tests use it to damage it.
std::string disk_cache_entry_path(std::string_view kind, std::string_view key);

/// `<cache>/<name>`, created with its parents; throws BackendError naming the directory and the
/// reason when it cannot be created. Backends keep temporaries there (same filesystem as the
/// entries, and not /tmp, which is often mounted noexec).
std::string cache_subdirectory(std::string_view name);

/// Replaces the cache directory for the rest of the process (tests). An empty string goes back
/// to $SHADEGRAD_CACHE_DIR / ~/.cache/shadegrad. Does not touch loaded modules.
void set_cache_directory_for_testing(const std::string& directory);

}  // namespace sg::runtime
