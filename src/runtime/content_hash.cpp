// src/runtime/content_hash.cpp — a 128-bit non-cryptographic content hash built from two
// independent 64-bit multiply-rotate lanes.
//
// Each lane consumes every 8-byte word of the input with its own constants and rotation, so a
// collision of the 128-bit value needs a simultaneous collision of two differently-mixed 64-bit
// states. The length seeds both lanes (so "" and "\0" differ), the tail is zero-padded into one
// more word, and a final avalanche spreads every input bit over every output bit. Words are read
// little-endian on every host, which keeps the value identical across machines.
#include "runtime/content_hash.h"

#include <bit>
#include <cstring>

namespace sg::runtime {
namespace {

// Odd 64-bit constants with well-spread bits (fractional parts of irrational numbers and
// primes); any odd multiplier is a bijection mod 2^64, so no lane step loses information.
constexpr uint64_t kMulA = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kMulB = 0xc2b2ae3d27d4eb4full;
constexpr uint64_t kMulC = 0x165667b19e3779f9ull;
constexpr uint64_t kMulD = 0xd6e8feb86659fd93ull;
constexpr uint64_t kMulE = 0xff51afd7ed558ccdull;
constexpr uint64_t kMulF = 0xc4ceb9fe1a85ec53ull;
constexpr uint64_t kSeedA = 0x243f6a8885a308d3ull;
constexpr uint64_t kSeedB = 0x13198a2e03707344ull;

inline uint64_t load_le64(const unsigned char* p) noexcept {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
    return v;
}

// Two rounds of xor-shift / multiply: every input bit reaches every output bit.
inline uint64_t avalanche(uint64_t x) noexcept {
    x ^= x >> 31;
    x *= kMulE;
    x ^= x >> 29;
    x *= kMulF;
    x ^= x >> 32;
    return x;
}

// The two lanes differ in how the word enters (xor vs add), the multipliers and the rotation,
// so a difference that cancels in one lane is not cancelled in the other.
inline uint64_t lane_a(uint64_t state, uint64_t word) noexcept {
    return std::rotl(state ^ (word * kMulA), 29) * kMulB;
}
inline uint64_t lane_b(uint64_t state, uint64_t word) noexcept {
    return std::rotl(state + (word * kMulC), 37) * kMulD ^ (state >> 17);
}

}  // namespace

Hash128 content_hash_128(const void* data, size_t size) noexcept {
    const auto* p = static_cast<const unsigned char*>(data);
    const uint64_t length = static_cast<uint64_t>(size);
    uint64_t a = kSeedA ^ (length * kMulC);
    uint64_t b = kSeedB ^ (length * kMulA);

    size_t offset = 0;
    for (; offset + 8 <= size; offset += 8) {
        const uint64_t word = load_le64(p + offset);
        a = lane_a(a, word);
        b = lane_b(b, word);
    }
    // The tail (0..7 bytes) zero-padded; the length in the seeds tells "ab" from "ab\0".
    unsigned char tail[8] = {};
    if (offset < size) std::memcpy(tail, p + offset, size - offset);
    const uint64_t last = load_le64(tail) ^ (length << 56);
    a = lane_a(a, last);
    b = lane_b(b, last);

    Hash128 out;
    out.high = avalanche(a + std::rotl(b, 23));
    out.low = avalanche(b ^ out.high ^ kMulE);
    return out;
}

std::string to_hex(const Hash128& hash) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string hex(32, '0');
    for (int i = 0; i < 16; ++i) {
        hex[15 - i] = kDigits[(hash.high >> (4 * i)) & 0xf];
        hex[31 - i] = kDigits[(hash.low >> (4 * i)) & 0xf];
    }
    return hex;
}

bool parse_hex(std::string_view hex, Hash128& out) noexcept {
    if (hex.size() != 32) return false;
    uint64_t words[2] = {0, 0};
    for (size_t i = 0; i < 32; ++i) {
        const char c = hex[i];
        uint64_t digit;
        if (c >= '0' && c <= '9') digit = static_cast<uint64_t>(c - '0');
        else if (c >= 'a' && c <= 'f') digit = static_cast<uint64_t>(c - 'a' + 10);
        else return false;  // uppercase is rejected too: one spelling per hash
        words[i / 16] = (words[i / 16] << 4) | digit;
    }
    out.high = words[0];
    out.low = words[1];
    return true;
}

std::string content_hash(const std::string& data) { return to_hex(content_hash_128(data)); }

}  // namespace sg::runtime
