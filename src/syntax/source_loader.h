// src/syntax/source_loader.h — finds and reads the files a module includes or imports.
//
// In: a name as written (`#include "defs.h"`, `import util;` → "util.slang") and the file that
// asks for it. Out: the file's text and the names it is shown and keyed by. Lookup order is
// Slang's: the asking file's folder, then each include path in order. Every file is read once
// per loader and kept, so a module's later kernel compilations see exactly the text its load saw.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sg::lang {

/// One file found by a SourceLoader. `text` is owned by the loader and never changes.
struct FoundSource {
    std::string key;      ///< canonical path: identity for `#pragma once` and import cycles
    std::string display;  ///< name in diagnostics: the path as found ("lib/defs.h")
    std::string path;     ///< file-system path (the folder of later lookups from it)
    const std::string* text = nullptr;
};

class SourceLoader {
public:
    explicit SourceLoader(std::vector<std::string> include_paths = {});

    /// Finds `name` beside `from_path` (a file path; "" looks in the current folder), then in the
    /// include paths. nullopt when no folder has it or it cannot be read. A file found beside
    /// the asking one is displayed relative to `from_display` (the asking file's name in
    /// diagnostics: "lib/defs.h" from "m.slang"), one from an include path by its path.
    std::optional<FoundSource> find(const std::string& name, const std::string& from_path,
                                    const std::string& from_display = "");

    const std::vector<std::string>& include_paths() const { return include_paths_; }

    /// Serves lookups from these files (name → text) instead of the file system, which is not
    /// touched at all then (the fuzzer: random input must not read random files).
    void use_virtual_files(std::map<std::string, std::string> files);

    /// Text preprocessed before every root file this loader serves (`#define NAME VALUE` lines:
    /// slangtorch's `defines={...}`); its macros are defined in every file, it emits nothing.
    void set_predefined(std::string text) { predefined_ = std::move(text); }
    const std::string& predefined() const { return predefined_; }

    /// Largest file read (a larger one reads as missing, and the caller says so).
    static constexpr size_t kMaxFileBytes = 2u << 20;

private:
    std::vector<std::string> include_paths_;
    mutable std::mutex mutex_;
    std::map<std::string, std::unique_ptr<std::string>> texts_;  ///< key → content
    bool virtual_only_ = false;
    std::string predefined_;
};

}  // namespace sg::lang
