// src/syntax/source_loader.cpp — include-path lookup and the per-loader file cache.
#include "syntax/source_loader.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sg::lang {

namespace fs = std::filesystem;

SourceLoader::SourceLoader(std::vector<std::string> include_paths) : include_paths_(std::move(include_paths)) {}

void SourceLoader::use_virtual_files(std::map<std::string, std::string> files) {
    std::lock_guard<std::mutex> lock(mutex_);
    virtual_only_ = true;
    texts_.clear();
    for (auto& [name, text] : files) texts_.emplace("<virtual>/" + name, std::make_unique<std::string>(std::move(text)));
}

std::optional<FoundSource> SourceLoader::find(const std::string& name, const std::string& from_path,
                                              const std::string& from_display) {
    if (name.empty() || name.find('\0') != std::string::npos) return std::nullopt;
    if (virtual_only_) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = texts_.find("<virtual>/" + name);
        if (it == texts_.end()) return std::nullopt;
        return FoundSource{it->first, name, "", it->second.get()};
    }
    std::vector<fs::path> folders;
    fs::path asked(name);
    if (asked.is_absolute()) {
        folders.push_back("");
    } else {
        folders.push_back(from_path.empty() ? fs::path() : fs::path(from_path).parent_path());
        for (const std::string& dir : include_paths_) folders.push_back(dir);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t k = 0; k < folders.size(); ++k) {
        const fs::path& folder = folders[k];
        fs::path candidate = (folder / asked).lexically_normal();
        std::error_code ec;
        if (!fs::is_regular_file(candidate.empty() ? fs::path(".") : candidate, ec)) continue;
        fs::path canonical = fs::weakly_canonical(candidate, ec);
        std::string key = ec ? candidate.string() : canonical.string();
        auto it = texts_.find(key);
        if (it == texts_.end()) {
            if (fs::file_size(candidate, ec) > kMaxFileBytes || ec) continue;
            std::ifstream in(candidate, std::ios::binary);
            if (!in) continue;
            std::stringstream s;
            s << in.rdbuf();
            it = texts_.emplace(key, std::make_unique<std::string>(s.str())).first;
        }
        std::string display = candidate.string();
        if (k == 0 && !asked.is_absolute() && !from_display.empty())
            display = (fs::path(from_display).parent_path() / asked).lexically_normal().string();
        return FoundSource{key, display, candidate.string(), it->second.get()};
    }
    return std::nullopt;
}

}  // namespace sg::lang
