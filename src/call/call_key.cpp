// src/call/call_key.cpp — encoding, hashing and rendering of call keys. What each argument
// contributes is its marshalling-table row's (value_kind.h); the layout around it is here.
#include "call/call_key.h"

#include <cstring>

#include "call/key_bytes.h"
#include "call/value_kind.h"

namespace sg::call {

// Layout: 'S' u32 function_id, u8 grad_mode, u32 options, u8 count (top-level arguments),
// u16 total (every argument node, children included), then per node in array order: u8 kind,
// u8 name size + name (a dict child's key), u8 child-run flag, the row's bytes. Then the
// keyword names as u8 count + length-prefixed strings, then u16 size + the modifiers' bytes.

size_t CallKeyHash::operator()(const CallKey& k) const noexcept {
    // Keys are short and this runs on every call: eight bytes a step (FNV-1a's offset basis, a
    // multiply and a fold per word), the tail zero-padded, the length mixed in last.
    const char* p = k.bytes.data();
    size_t n = k.bytes.size();
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t w) {
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    };
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        mix(w);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, p, n);
    mix(tail ^ (uint64_t(k.bytes.size()) << 56));
    return size_t(h);
}

void build_call_key(CallKey& key, uint32_t function_id, const ArgInfo* args, size_t count, size_t total,
                    const std::vector<std::string>& keyword_names, bool grad_mode, uint32_t options,
                    const std::string& modifiers) {
    std::string& s = key.bytes;
    s.clear();
    s.reserve(128);  // once per thread: clear() keeps the capacity
    s.push_back('S');
    put<uint32_t>(s, function_id);
    put<uint8_t>(s, grad_mode ? 1 : 0);
    put<uint32_t>(s, options);
    put<uint8_t>(s, uint8_t(count));
    put<uint16_t>(s, uint16_t(total));
    for (size_t i = 0; i < total; ++i) {
        const ArgInfo& a = args[i];
        put<uint8_t>(s, uint8_t(a.kind));
        put<uint8_t>(s, uint8_t(a.name_size));
        if (a.name_size) s.append(a.name, a.name_size);
        if (!grad_mode && a.tensor.requires_grad) [[unlikely]] {
            // Outside grad mode requires_grad changes nothing the plan does (the binder reads it
            // only in grad mode): one plan for both, so that a call warmed up with tensors that
            // require grad is found again for the same tensors without (a CUDA graph capture,
            // torch.compile's no-grad forward).
            ArgInfo plain = a;
            plain.tensor.requires_grad = 0;
            value_kind(a.kind).key(plain, s);
            continue;
        }
        value_kind(a.kind).key(a, s);
    }
    put<uint8_t>(s, uint8_t(keyword_names.size()));
    for (const std::string& k : keyword_names) {
        put<uint8_t>(s, uint8_t(k.size()));
        s += k;
    }
    put<uint16_t>(s, uint16_t(modifiers.size()));
    s += modifiers;
}

void append_link_key(CallKey& key, const std::string& link) {
    if (link.empty()) return;
    // Last in the key, after the modifiers: a marker byte, then u32 length and the text.
    key.bytes.push_back(char(0xFF));
    put<uint32_t>(key.bytes, uint32_t(link.size()));
    key.bytes += link;
}

void append_extent_key(CallKey& key, const std::vector<ExtentCheck>& checks, const ArgInfo* args) {
    // After everything else: a marker byte, then per check its dim and the call's extent.
    key.bytes.push_back(char(0xFE));
    put<uint16_t>(key.bytes, uint16_t(checks.size()));
    for (const ExtentCheck& c : checks) {
        put<uint16_t>(key.bytes, uint16_t(c.arg));
        put<uint8_t>(key.bytes, uint8_t(c.dim));
        put<int64_t>(key.bytes, args[c.arg].tensor.shape[c.dim]);
    }
}

std::string render_call_key(const CallKey& key) {
    const std::string& s = key.bytes;
    size_t pos = 1;
    uint32_t fn = take<uint32_t>(s, pos);
    uint8_t grad = take<uint8_t>(s, pos);
    uint32_t options = take<uint32_t>(s, pos);
    uint8_t count = take<uint8_t>(s, pos);
    uint16_t total = take<uint16_t>(s, pos);
    std::string out = "fn#" + std::to_string(fn) + " grad=" + std::to_string(grad) + " opt=" + std::to_string(options) + " (";
    for (uint16_t i = 0; i < total && pos < s.size(); ++i) {
        ArgKind kind = ArgKind(take<uint8_t>(s, pos));
        out += i == 0 ? "" : i == count ? " | " : ", ";
        uint8_t n = take<uint8_t>(s, pos);
        if (n) out += s.substr(pos, n) + ":";
        pos += n;
        out += arg_kind_name(kind);
        value_kind(kind).render(s, pos, out);
    }
    out += ")";
    uint8_t keywords = take<uint8_t>(s, pos);
    for (uint8_t k = 0; k < keywords && pos < s.size(); ++k) {
        uint8_t n = take<uint8_t>(s, pos);
        out += " " + s.substr(pos, n) + "=";
        pos += n;
    }
    uint16_t m = take<uint16_t>(s, pos);
    if (m) out += " modifiers[" + std::to_string(m) + "]";
    pos += m;
    if (pos < s.size() && uint8_t(s[pos]) == 0xFF) {
        ++pos;
        uint32_t len = take<uint32_t>(s, pos);
        out += " link{" + s.substr(pos, len) + "}";
    }
    return out;
}

}  // namespace sg::call
