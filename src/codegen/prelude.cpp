// src/codegen/prelude.cpp — the device prelude text, embedded in the library (never read from
// disk at run time). Its parts live in prelude_*.inc as raw string literals so that they read
// like the C++ they are; adjacent literals concatenate into one string per part.
//
// A generated kernel carries only the parts its code needs: the core, half and tensor parts
// always, each other one when the kernel (or a part it needs) names something that part defines
// (the math part's intrinsics too: a kernel that multiplies two tensors parses none of them).
// Which part defines a name is read off the texts themselves (the first part whose code,
// comments aside, names it), once per process, so a new prelude function needs no list kept by
// hand; a part that completes another one's declarations for the CPU says so (`completes`).
// NVRTC's time grows with the prelude it parses (about 5 ms of a first call's compile on the
// H200's host for the cooperative, reduction and table parts a plain call never uses).
#include <array>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "codegen/codegen.h"

namespace sg::codegen {

namespace {

struct Part {
    const char* name;
    const char* text;
    bool always;  ///< in every kernel (the core: vectors, half, tensor access)
    /// A part that defines, for the CPU, names an earlier part declares for both targets (the
    /// fiber scheduler's ids and barriers of cooperative kernels): it comes with that part.
    const char* completes = nullptr;
};

const Part kParts[] = {
    {"core",
#include "codegen/prelude_core.inc"
     , true},
    {"half",
#include "codegen/prelude_half.inc"
     , true},
    {"math",
#include "codegen/prelude_math.inc"
     , false},
    {"tensor",
#include "codegen/prelude_tensor.inc"
     , true},
    {"column_major",
#include "codegen/prelude_column_major.inc"
     , false},
    {"coop",
#include "codegen/prelude_coop.inc"
     , false},
    {"fiber",
#include "codegen/prelude_fiber.inc"
     , false, "coop"},
    {"call_group",
#include "codegen/prelude_call_group.inc"
     , false},
    {"wave",
#include "codegen/prelude_wave.inc"
     , false},
    {"reduce",
#include "codegen/prelude_reduce.inc"
     , false},
    {"ordered",
#include "codegen/prelude_ordered.inc"
     , false},
    {"fixed",
#include "codegen/prelude_fixed.inc"
     , false},
};
constexpr size_t kPartCount = sizeof(kParts) / sizeof(kParts[0]);
using PartSet = std::array<bool, kPartCount>;

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

/// Calls `f(name)` for every identifier of `text` spelled sg_... or SG_..., outside // and /* */
/// comments (string and character literals are rare in the prelude and harmless here).
template <class F>
void for_each_prelude_name(std::string_view text, F&& f) {
    size_t i = 0;
    const size_t n = text.size();
    while (i < n) {
        const char c = text[i];
        if (c == '/' && i + 1 < n && text[i + 1] == '/') {
            while (i < n && text[i] != '\n') ++i;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
            const size_t end = text.find("*/", i + 2);
            i = end == std::string_view::npos ? n : end + 2;
        } else if (ident_start(c)) {
            const size_t b = i;
            while (i < n && ident_char(text[i])) ++i;
            if (i - b > 3 && (text[b] == 's' || text[b] == 'S') && (text[b + 1] == 'g' || text[b + 1] == 'G') &&
                text[b + 2] == '_')
                f(text.substr(b, i - b));
        } else {
            ++i;
        }
    }
}

/// Which part defines each prelude name, and which optional parts each part needs.
struct PartIndex {
    std::unordered_map<std::string_view, size_t> owner;
    std::array<PartSet, kPartCount> needs{};
    PartSet always{};

    PartIndex() {
        for (size_t p = 0; p < kPartCount; ++p)
            for_each_prelude_name(kParts[p].text, [&](std::string_view name) { owner.emplace(name, p); });
        for (size_t p = 0; p < kPartCount; ++p) {
            always[p] = kParts[p].always;
            if (kParts[p].completes != nullptr)
                for (size_t q = 0; q < kPartCount; ++q)
                    if (std::string_view(kParts[q].name) == kParts[p].completes) needs[q][p] = true;
            for_each_prelude_name(kParts[p].text, [&](std::string_view name) {
                const size_t q = owner.at(name);
                if (q != p) needs[p][q] = true;
            });
        }
        // A part the core itself names is part of every kernel too.
        for (size_t p = 0; p < kPartCount; ++p)
            if (always[p]) close_over(p, always);
    }

    void close_over(size_t p, PartSet& set) const {
        std::vector<size_t> work{p};
        set[p] = true;
        while (!work.empty()) {
            const size_t q = work.back();
            work.pop_back();
            for (size_t r = 0; r < kPartCount; ++r)
                if (needs[q][r] && !set[r]) {
                    set[r] = true;
                    work.push_back(r);
                }
        }
    }
};

const PartIndex& part_index() {
    static const PartIndex index;
    return index;
}

const std::string& whole_prelude() {
    static const std::string text = [] {
        std::string all;
        for (const Part& part : kParts) all += part.text;
        return all + "// ==== end of the shadegrad device prelude ====\n";
    }();
    return text;
}

}  // namespace

const char* device_prelude() { return whole_prelude().c_str(); }

std::string device_prelude_for(std::string_view code) {
    const PartIndex& index = part_index();
    PartSet used = index.always;
    for_each_prelude_name(code, [&](std::string_view name) {
        const auto it = index.owner.find(name);
        if (it != index.owner.end() && !used[it->second]) index.close_over(it->second, used);
    });
    std::string text;
    for (size_t p = 0; p < kPartCount; ++p)
        if (used[p]) text += kParts[p].text;
    return text + "// ==== end of the shadegrad device prelude ====\n";
}

}  // namespace sg::codegen
