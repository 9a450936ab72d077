// src/call/call_key.h — the call-plan cache key: the bytes of every fact that changes the
// generated kernels or the autograd wiring. Built in one place (here) from ArgInfo, whichever
// torch bridge filled it, so the two bridges cannot drift.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "call/arg_info.h"

namespace sg::call {

/// Extent classes: 1..4 are their own class (they decide broadcasting and small-vector element
/// shapes); every other extent, 0 included, is class 0 ("many").
inline uint8_t extent_class(int64_t extent) { return extent >= 1 && extent <= 4 ? uint8_t(extent) : 0; }

/// An element extent a plan's binding depends on that the extent classes do not tell apart (a
/// (N, 5) tensor read as float[5]): tensor argument `arg`'s dim `dim` must be `extent`.
struct ExtentCheck {
    int arg = -1;
    int dim = 0;
    int64_t extent = 0;
};

struct CallKey {
    std::string bytes;  ///< compared and hashed as a whole
    bool operator==(const CallKey& o) const { return bytes == o.bytes; }
};

struct CallKeyHash {
    size_t operator()(const CallKey& k) const noexcept;
};

/// Builds the key of a call of function `function_id` with `args`: `count` top-level arguments,
/// `total` argument nodes in all (composites' children follow them). `keyword_names` names the
/// keyword arguments (args past the positional ones), in order; `modifiers` is the bytes of the
/// function object's kernel-changing modifiers (fn.map(...)).
void build_call_key(CallKey& key, uint32_t function_id, const ArgInfo* args, size_t count, size_t total,
                    const std::vector<std::string>& keyword_names, bool grad_mode, uint32_t options,
                    const std::string& modifiers = {});

/// Appends what the function's module depends on besides the call (its link-time constants and
/// the content of its files: UserModule::link_key) to a built key. Nothing when `link` is empty.
void append_link_key(CallKey& key, const std::string& link);

/// Whether the call's arguments have the extents `checks` name (true when there are none).
inline bool extents_match(const std::vector<ExtentCheck>& checks, const ArgInfo* args) {
    for (const ExtentCheck& c : checks)
        if (args[c.arg].tensor.shape[c.dim] != c.extent) return false;
    return true;
}

/// Appends the call's exact extents at the dims `checks` name: the key of a call whose plan
/// under the built key was made for other element extents (such plans are looked up there).
void append_extent_key(CallKey& key, const std::vector<ExtentCheck>& checks, const ArgInfo* args);

/// A readable rendering of a key, e.g. `fn#3 grad=1 opt=0 (grid[*,*], tensor f32 cpu [*,*] g1, float)`.
std::string render_call_key(const CallKey& key);

}  // namespace sg::call
