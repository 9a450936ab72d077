// src/runtime/disk_cache.cpp — content-addressed disk cache entries: layout, atomic publication,
// verification on read (see disk_cache.h).
#include "runtime/disk_cache.h"

#include "runtime/content_hash.h"
#include "runtime/cpu_module.h"
#include "runtime/file_util.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <pthread.h>
#include <pwd.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace sg::runtime {
namespace {

// Header layout, all integers little-endian so an entry means the same on every host:
//   0  magic "SGKCACHE"        8  u32 format version    12 u32 header size (64)
//   16 key (16 bytes, binary)  32 u64 payload size     40 payload hash (16 bytes)
//   56 u64 reserved, zero
constexpr char kMagic[8] = {'S', 'G', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr size_t kHeaderSize = 64;
// A sanity bound, so a corrupted size field cannot make us trust an absurd length.
constexpr uint64_t kMaxPayloadSize = uint64_t(1) << 32;

void put_u32(unsigned char* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_u64(unsigned char* p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
uint32_t get_u32(const unsigned char* p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
    return v;
}
uint64_t get_u64(const unsigned char* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
    return v;
}
void put_hash(unsigned char* p, const Hash128& h) {
    put_u64(p, h.high);
    put_u64(p + 8, h.low);
}
Hash128 get_hash(const unsigned char* p) { return Hash128{get_u64(p), get_u64(p + 8)}; }

std::string encode_header(const Hash128& key, std::string_view payload) {
    std::string header(kHeaderSize, '\0');
    auto* p = reinterpret_cast<unsigned char*>(header.data());
    std::memcpy(p, kMagic, sizeof kMagic);
    put_u32(p + 8, kDiskCacheFormatVersion);
    put_u32(p + 12, static_cast<uint32_t>(kHeaderSize));
    put_hash(p + 16, key);
    put_u64(p + 32, payload.size());
    put_hash(p + 40, content_hash_128(payload));
    return header;
}

// Every field is checked against what it must be; the payload hash covers the rest.
bool entry_is_valid(std::string_view entry, const Hash128& key) {
    if (entry.size() < kHeaderSize) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(entry.data());
    if (std::memcmp(p, kMagic, sizeof kMagic) != 0) return false;
    if (get_u32(p + 8) != kDiskCacheFormatVersion) return false;
    if (get_u32(p + 12) != kHeaderSize) return false;
    if (get_hash(p + 16) != key) return false;
    const uint64_t payload_size = get_u64(p + 32);
    if (payload_size > kMaxPayloadSize || payload_size != entry.size() - kHeaderSize) return false;
    if (get_u64(p + 56) != 0) return false;
    return get_hash(p + 40) == content_hash_128(entry.substr(kHeaderSize));
}

Hash128 checked_key(std::string_view kind, std::string_view key) {
    const bool kind_ok = !kind.empty() && kind.size() <= 32 &&
                         kind.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") ==
                             std::string_view::npos;
    Hash128 parsed;
    if (!kind_ok || !parse_hex(key, parsed))
        throw std::invalid_argument("disk cache: bad kind '" + std::string(kind) + "' or key '" +
                                    std::string(key) + "' (expected [a-z0-9_]+ and 32 hex digits)");
    return parsed;
}

// ---- the cache directory ----------------------------------------------------------------------

std::mutex g_directory_mutex;
std::string g_directory;  // empty until resolved

std::string home_directory() {
    if (const char* home = std::getenv("HOME"); home && *home) return home;
    // No $HOME (daemons, some containers): ask the password database.
    struct passwd entry {};
    struct passwd* result = nullptr;
    char buffer[4096];
    if (::getpwuid_r(::getuid(), &entry, buffer, sizeof buffer, &result) == 0 && result &&
        result->pw_dir && *result->pw_dir)
        return result->pw_dir;
    return {};
}

std::string default_directory() {
    if (const char* dir = std::getenv("SHADEGRAD_CACHE_DIR"); dir && *dir) return dir;
    if (std::string home = home_directory(); !home.empty()) return home + "/.cache/shadegrad";
    // Last resort: a per-user directory under the system temporary directory.
    std::error_code ec;
    std::string tmp = std::filesystem::temp_directory_path(ec).string();
    if (tmp.empty()) tmp = "/tmp";
    return tmp + "/shadegrad-cache-" + std::to_string(::getuid());
}

// A fork() while another thread holds the mutex would leave it locked forever in the child;
// holding it across fork() (prepare/parent/child) makes the child's copy unlocked and consistent.
void register_fork_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        ::pthread_atfork([] { g_directory_mutex.lock(); }, [] { g_directory_mutex.unlock(); },
                         [] { g_directory_mutex.unlock(); });
    });
}

}  // namespace

std::string cache_directory() {
    register_fork_handlers();
    std::lock_guard<std::mutex> lock(g_directory_mutex);
    if (g_directory.empty()) g_directory = default_directory();
    return g_directory;
}

void set_cache_directory_for_testing(const std::string& directory) {
    register_fork_handlers();
    std::lock_guard<std::mutex> lock(g_directory_mutex);
    g_directory = directory;  // empty: resolved again on next use
}

std::string cache_subdirectory(std::string_view name) {
    std::string dir = cache_directory() + "/" + std::string(name);
    std::string error;
    if (!ensure_directory(dir, error))
        throw BackendError("shadegrad cache: " + error +
                           " (set SHADEGRAD_CACHE_DIR to a writable directory)");
    return dir;
}

std::string disk_cache_entry_path(std::string_view kind, std::string_view key) {
    checked_key(kind, key);
    std::string path = cache_directory();
    path += '/';
    path += kind;
    path += '/';
    path += key.substr(0, 2);  // fan out: no directory grows to hundreds of thousands of files
    path += '/';
    path += key;
    path += ".bin";
    return path;
}

std::optional<std::string> disk_cache_load(std::string_view kind, std::string_view key,
                                           DiskCacheLookup* lookup) {
    const Hash128 parsed_key = checked_key(kind, key);
    const std::string path = disk_cache_entry_path(kind, key);
    if (lookup) *lookup = DiskCacheLookup::Missing;

    ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return std::nullopt;
    std::optional<std::string> entry = read_all(fd.get());
    if (entry && entry_is_valid(*entry, parsed_key)) {
        if (lookup) *lookup = DiskCacheLookup::Hit;
        entry->erase(0, kHeaderSize);
        return entry;
    }

    // Remove the bad entry so the caller's rebuild replaces it — but only if the path still
    // names the file we read: another process may have renamed a fresh, valid entry over it
    // since we opened it, and deleting that would only cost everyone a rebuild.
    struct stat opened {}, current {};
    if (::fstat(fd.get(), &opened) == 0 && ::stat(path.c_str(), &current) == 0 &&
        opened.st_dev == current.st_dev && opened.st_ino == current.st_ino)
        ::unlink(path.c_str());
    if (lookup) *lookup = DiskCacheLookup::Invalid;
    return std::nullopt;
}

bool disk_cache_store(std::string_view kind, std::string_view key, std::string_view payload) {
    const Hash128 parsed_key = checked_key(kind, key);
    if (payload.size() > kMaxPayloadSize) return false;
    const std::string path = disk_cache_entry_path(kind, key);
    const std::string dir = path.substr(0, path.rfind('/'));
    std::string error;
    if (!ensure_directory(dir, error)) return false;

    // The temporary lives in the entry's own directory: rename() is atomic only within one
    // filesystem. No fsync: after a power loss the entry may be torn, and the read-side
    // verification rejects it — a rebuild is cheaper than an fsync on every store.
    std::string temporary;
    ScopedFd fd = create_unique_file(dir, key, ".tmp", temporary);
    if (!fd.valid()) return false;
    bool ok = write_all(fd.get(), encode_header(parsed_key, payload)) &&
              write_all(fd.get(), payload);
    ok = ok && ::fchmod(fd.get(), 0644) == 0;  // mkstemp gives 0600; entries are not secret
    ok = fd.reset() && ok;
    ok = ok && ::rename(temporary.c_str(), path.c_str()) == 0;
    if (!ok) remove_quietly(temporary);
    return ok;
}

}  // namespace sg::runtime
