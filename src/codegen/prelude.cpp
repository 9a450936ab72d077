// src/codegen/prelude.cpp — the device prelude text, embedded in the library (never read from
// disk at run time). Its parts live in prelude_*.inc as raw string literals so that they read
// like the C++ they are; adjacent literals concatenate into one string per part.
//
// A generated kernel carries only the parts its code needs: the core and tensor parts always,
// each other one when the kernel (or a part it needs) names something that part defines (the
// math part's intrinsics, the half type, the atomics: a kernel that multiplies two float tensors
// parses none of them). Which part defines a name is read off the texts themselves (the first
// part whose code, comments aside, names it), once per process, so a new prelude function needs
// no list kept by hand. Two things are said by hand, per part: another part it brings although
// it names nothing of it (`brings`), and the names it calls only from templates that another
// part instantiates (`deferred`: they neither make it own those names nor need their part).
// NVRTC's time grows with the prelude it parses (about 5 ms of a first call's compile on the
// H200's host for the cooperative, reduction and table parts a plain call never uses; 2.2 ms of
// 25 on the development machine for the half type and the atomics).
#include <array>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "codegen/codegen.h"
#include "syntax/diagnostics.h"  // SG_INTERNAL_ASSERT

namespace sg::codegen {

namespace {

struct Part {
    const char* name;
    const char* text;
    bool always;  ///< in every kernel (the core: vectors, tensor access)
    /// A part this one brings although it names nothing of it: one that defines, for the
    /// CPU, what this one declares for both targets (the cooperative part's ids and barriers, in
    /// the fiber part), or one whose functions this one's templates reach through another part's
    /// templates (the tensor atomics reach the atomics through the element accessors).
    const char* brings = nullptr;
    /// Names, space-separated, that this part calls only from templates which another part
    /// instantiates (the element accessors' sg_atomic_add): they make no need and no owner here.
    const char* deferred = nullptr;
};

const Part kParts[] = {
    {"core",
#include "codegen/prelude_core.inc"
     , true},
    {"half",
#include "codegen/prelude_half.inc"
     , false},
    {"math",
#include "codegen/prelude_math.inc"
     , false},
    {"atomic",
#include "codegen/prelude_atomic.inc"
     , false},
    {"tensor",
#include "codegen/prelude_tensor.inc"
     , true, nullptr, "sg_atomic_add"},
    {"tensor_atomic",
#include "codegen/prelude_tensor_atomic.inc"
     , false, "atomic"},
    {"column_major",
#include "codegen/prelude_column_major.inc"
     , false},
    {"coop",
#include "codegen/prelude_coop.inc"
     , false, "fiber"},
    {"fiber",
#include "codegen/prelude_fiber.inc"
     , false},
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

/// Calls `f(name)` for every identifier of `text` spelled sg_... or SG_..., and for the type
/// `half` (generated code spells half values and vectors with it: half, sg_vec<half, 3>), outside
/// // and /* */ comments (string and character literals are rare in the prelude and harmless here).
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
            const std::string_view name = text.substr(b, i - b);
            if ((name.size() > 3 && (name[0] == 's' || name[0] == 'S') && (name[1] == 'g' || name[1] == 'G') &&
                 name[2] == '_') ||
                name == "half")
                f(name);
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
            for_each_part_name(p, [&](std::string_view name) { owner.emplace(name, p); });
        for (size_t p = 0; p < kPartCount; ++p) {
            always[p] = kParts[p].always;
            if (kParts[p].brings != nullptr) needs[p][part_named(kParts[p].brings)] = true;
            for_each_part_name(p, [&](std::string_view name) {
                const size_t q = owner.at(name);
                if (q != p) needs[p][q] = true;
            });
        }
        // A part the core itself names is part of every kernel too.
        for (size_t p = 0; p < kPartCount; ++p)
            if (always[p]) close_over(p, always);
    }

    /// The names part `p` mentions, its deferred ones aside.
    template <class F>
    static void for_each_part_name(size_t p, F&& f) {
        const std::string_view deferred = kParts[p].deferred ? kParts[p].deferred : "";
        for_each_prelude_name(kParts[p].text, [&](std::string_view name) {
            for (size_t b = 0; b < deferred.size();) {
                size_t e = deferred.find(' ', b);
                if (e == std::string_view::npos) e = deferred.size();
                if (deferred.substr(b, e - b) == name) return;
                b = e + 1;
            }
            f(name);
        });
    }

    static size_t part_named(std::string_view name) {
        for (size_t q = 0; q < kPartCount; ++q)
            if (name == kParts[q].name) return q;
        SG_INTERNAL_ASSERT(false, "prelude: kParts names no part '" + std::string(name) + "'");
        return 0;
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
