// src/runtime/content_hash.h — the 128-bit content hash that names cache entries (kernel cache
// keys, payload checksums).
//
// In: bytes. Out: 128 bits, or their 32-character lowercase hex form. The value depends only on
// the bytes (not on the process, the machine's byte order or word size), so keys computed on one
// machine name the same disk entries on another. Not cryptographic: it guards against accidents
// (changed inputs, torn or corrupted files), not against an adversary who can write to the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sg::runtime {

struct Hash128 {
    uint64_t high = 0;
    uint64_t low = 0;

    friend bool operator==(const Hash128&, const Hash128&) = default;
};

/// The hash of `size` bytes at `data`.
Hash128 content_hash_128(const void* data, size_t size) noexcept;

inline Hash128 content_hash_128(std::string_view bytes) noexcept {
    return content_hash_128(bytes.data(), bytes.size());
}

/// 32 lowercase hex characters, high word first.
std::string to_hex(const Hash128& hash);

/// Parses the form to_hex() writes; false (and `out` untouched) for anything else.
bool parse_hex(std::string_view hex, Hash128& out) noexcept;

/// to_hex(content_hash_128(data)); also declared in cpu_module.h.
std::string content_hash(const std::string& data);

}  // namespace sg::runtime
