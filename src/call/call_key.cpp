// src/call/call_key.cpp — encoding, hashing and rendering of call keys.
#include "call/call_key.h"

#include <cstring>

namespace sg::call {

const char* arg_kind_name(ArgKind k) {
    switch (k) {
    case ArgKind::None: return "none";
    case ArgKind::Tensor: return "tensor";
    case ArgKind::Float: return "float";
    case ArgKind::Int: return "int";
    case ArgKind::Bool: return "bool";
    case ArgKind::Grid: return "grid";
    case ArgKind::CallId: return "call_id";
    }
    return "?";
}

namespace {

// Layout: 'S' u32 function_id, u8 grad_mode, u32 options, u8 count, then per argument:
// u8 kind; tensors: u8 dtype, u8 ndim, u8 requires_grad, u8 device_type, u8 device_index,
// ndim x u8 extent class; grids: u8 ndim, ndim x u8 extent class. Keyword names follow as
// length-prefixed strings.
template <class T>
void put(std::string& s, T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    s.append(buf, sizeof(T));
}

template <class T>
T take(const std::string& s, size_t& pos) {
    T v{};
    if (pos + sizeof(T) <= s.size()) std::memcpy(&v, s.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
}

}  // namespace

size_t CallKeyHash::operator()(const CallKey& k) const noexcept {
    // FNV-1a: keys are short and this runs on every call.
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : k.bytes) h = (h ^ c) * 1099511628211ull;
    return size_t(h);
}

void build_call_key(CallKey& key, uint32_t function_id, const ArgInfo* args, size_t count,
                    const std::vector<std::string>& keyword_names, bool grad_mode, uint32_t options) {
    std::string& s = key.bytes;
    s.clear();
    s.push_back('S');
    put<uint32_t>(s, function_id);
    put<uint8_t>(s, grad_mode ? 1 : 0);
    put<uint32_t>(s, options);
    put<uint8_t>(s, uint8_t(count));
    for (size_t i = 0; i < count; ++i) {
        const ArgInfo& a = args[i];
        put<uint8_t>(s, uint8_t(a.kind));
        if (a.kind == ArgKind::Tensor) {
            const TensorInfo& t = a.tensor;
            put<uint8_t>(s, uint8_t(t.dtype));
            put<uint8_t>(s, uint8_t(t.ndim));
            put<uint8_t>(s, t.requires_grad);
            put<uint8_t>(s, uint8_t(t.device_type));
            put<uint8_t>(s, uint8_t(t.device_index + 1));
            for (int d = 0; d < t.ndim; ++d) put<uint8_t>(s, extent_class(t.shape[d]));
        } else if (a.kind == ArgKind::Grid) {
            put<uint8_t>(s, uint8_t(a.tensor.ndim));
            for (int d = 0; d < a.tensor.ndim; ++d) put<uint8_t>(s, extent_class(a.tensor.shape[d]));
        }
    }
    for (const std::string& k : keyword_names) {
        put<uint8_t>(s, uint8_t(k.size()));
        s += k;
    }
}

void append_link_key(CallKey& key, const std::string& link) {
    if (link.empty()) return;
    // After the keyword names, marked by a length no keyword name has (0xFF), then u32 length.
    key.bytes.push_back(char(0xFF));
    put<uint32_t>(key.bytes, uint32_t(link.size()));
    key.bytes += link;
}

static std::string extents(const std::string& s, size_t& pos, int ndim) {
    std::string out = "[";
    for (int d = 0; d < ndim; ++d) {
        uint8_t c = take<uint8_t>(s, pos);
        out += (d ? "," : "") + (c ? std::to_string(c) : std::string("*"));
    }
    return out + "]";
}

std::string render_call_key(const CallKey& key) {
    const std::string& s = key.bytes;
    size_t pos = 1;
    uint32_t fn = take<uint32_t>(s, pos);
    uint8_t grad = take<uint8_t>(s, pos);
    uint32_t options = take<uint32_t>(s, pos);
    uint8_t count = take<uint8_t>(s, pos);
    std::string out = "fn#" + std::to_string(fn) + " grad=" + std::to_string(grad) + " opt=" + std::to_string(options) + " (";
    for (uint8_t i = 0; i < count && pos < s.size(); ++i) {
        ArgKind kind = ArgKind(take<uint8_t>(s, pos));
        out += i ? ", " : "";
        out += arg_kind_name(kind);
        if (kind == ArgKind::Tensor) {
            DType dtype = DType(take<uint8_t>(s, pos));
            int ndim = take<uint8_t>(s, pos);
            uint8_t rg = take<uint8_t>(s, pos);
            uint8_t dev = take<uint8_t>(s, pos);
            int index = int(take<uint8_t>(s, pos)) - 1;
            out += std::string(" ") + dtype_name(dtype) + " " + (dev == 0 ? "cpu" : "cuda:" + std::to_string(index)) + " " +
                   extents(s, pos, ndim) + " g" + std::to_string(rg);
        } else if (kind == ArgKind::Grid) {
            int ndim = take<uint8_t>(s, pos);
            out += extents(s, pos, ndim);
        }
    }
    out += ")";
    while (pos < s.size()) {
        uint8_t n = take<uint8_t>(s, pos);
        if (n == 0xFF) {
            uint32_t len = take<uint32_t>(s, pos);
            out += " link{" + s.substr(pos, len) + "}";
            pos += len;
            continue;
        }
        out += " " + s.substr(pos, n) + "=";
        pos += n;
    }
    return out;
}

}  // namespace sg::call
