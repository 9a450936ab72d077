// src/call/key_bytes.h — reading and writing fixed-size fields of a call key's byte string
// (call_key.cpp writes the frame, value_kind.cpp each value kind's bytes).
#pragma once

#include <cstring>
#include <string>

namespace sg::call {

/// Appends the bytes of `v` (host byte order: keys never leave the process). Most fields are
/// one byte: those take push_back, which inlines to a capacity check and a store (a key is built
/// on every call; append() is an out-of-line call per byte).
template <class T>
void put(std::string& s, T v) {
    if constexpr (sizeof(T) == 1) {
        char c;
        std::memcpy(&c, &v, 1);
        s.push_back(c);
    } else {
        char buf[sizeof(T)];
        std::memcpy(buf, &v, sizeof(T));
        s.append(buf, sizeof(T));
    }
}

/// Reads a `T` at `pos` and advances past it; a read past the end gives T{} (renderers only).
template <class T>
T take(const std::string& s, size_t& pos) {
    T v{};
    if (pos + sizeof(T) <= s.size()) std::memcpy(&v, s.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
}

}  // namespace sg::call
