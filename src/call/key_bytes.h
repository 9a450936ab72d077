// src/call/key_bytes.h — reading and writing fixed-size fields of a call key's byte string
// (call_key.cpp writes the frame, value_kind.cpp each value kind's bytes).
#pragma once

#include <cstring>
#include <string>

namespace sg::call {

/// Appends the bytes of `v` (host byte order: keys never leave the process).
template <class T>
void put(std::string& s, T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    s.append(buf, sizeof(T));
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
