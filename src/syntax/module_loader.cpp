// src/syntax/module_loader.cpp — load_modules: import resolution with cycle detection.
#include "syntax/module_loader.h"

#include <map>

#include "syntax/parser.h"
#include "syntax/preprocessor.h"
#include "syntax/slangpy_module.h"

namespace sg::lang {

namespace {

enum class State : uint8_t { Loading, Done };

class ModuleLoader {
public:
    ModuleLoader(SourceManager& s, SourceLoader& l, AstContext& a, Diagnostics& d)
        : sources_(s), loader_(l), ast_(a), diags_(d) {}

    void load(const SourceFile* file, const std::string& key, int depth);
    std::vector<ModuleAst*> take() { return std::move(out_); }

private:
    void resolve(const SourceFile* from, const ModuleAst* module, const Decl* d, int depth);

    SourceManager& sources_;
    SourceLoader& loader_;
    AstContext& ast_;
    Diagnostics& diags_;
    std::map<std::string, State> state_;  ///< by file key
    std::vector<ModuleAst*> out_;
};

/// The file names an import may mean, in the order Slang tries them.
std::vector<std::string> candidate_names(const Decl* d) {
    if (d->import_is_path) {
        std::vector<std::string> names{d->import_name};
        if (d->import_name.find('.') == std::string::npos) names.push_back(d->import_name + ".slang");
        return names;
    }
    std::string path = d->import_name;
    for (char& c : path)
        if (c == '.') c = '/';
    std::string dashed = path;
    for (char& c : dashed)
        if (c == '_') c = '-';
    std::vector<std::string> names{path + ".slang"};
    if (dashed != path) names.push_back(dashed + ".slang");
    return names;
}

void ModuleLoader::load(const SourceFile* file, const std::string& key, int depth) {
    state_[key] = State::Loading;
    const SourceFile* text = preprocess(file, sources_, loader_, diags_);
    ModuleAst* module = parse_module(text, ast_, diags_);
    for (const Decl* d : module->decls)
        if (d->kind == DeclKind::Import) resolve(file, module, d, depth);
    out_.push_back(module);
    state_[key] = State::Done;
}

void ModuleLoader::resolve(const SourceFile* from, const ModuleAst* module, const Decl* d, int depth) {
    if (d->import_kind == ImportKind::ModuleName || d->import_kind == ImportKind::Implementing) return;
    if (d->import_kind == ImportKind::Import && d->import_name == "slangpy") {
        // The built-in slangpy module (slangpy_module.h), loaded once.
        if (!state_.count(kSlangpyModuleName))
            load(sources_.add(kSlangpyModuleName, slangpy_module_source()), kSlangpyModuleName, depth + 1);
        return;
    }
    SourceLoc at = d->import_loc.valid() ? d->import_loc : d->loc;
    std::vector<std::string> names = candidate_names(d);
    // Lookups start beside the file the declaration was written in (an `#include`d file's own
    // folder), as the preprocessor's do.
    SourceLoc written = original_location(at);
    const SourceFile* asking = written.valid() ? written.file : from;
    std::optional<FoundSource> found;
    for (const std::string& n : names)
        if (!found) found = loader_.find(n, asking->path, asking->name);
    if (!found) {
        diags_.error(at, "cannot open file '" + names[0] + "'", 1);
        return;
    }
    auto it = state_.find(found->key);
    if (it != state_.end()) {
        // A module file that `__include`s the file that included it is one module, not a cycle.
        if (it->second == State::Loading && d->import_kind == ImportKind::Import)
            diags_.error(at, "recursive module import: module `" + d->import_name + "` recursively imports itself",
                         38200);
        return;
    }
    if (depth + 1 >= kMaxImportDepth) {
        diags_.error(at, "imports nested too deeply (limit " + std::to_string(kMaxImportDepth) + ")");
        return;
    }
    SourceFile* file = sources_.add(found->display, *found->text);
    file->path = found->path;
    file->included_from = written.valid() ? written.file : module->file;
    file->included_at = written.offset;
    file->imported = d->import_kind == ImportKind::Import;
    load(file, found->key, depth + 1);
}

}  // namespace

std::vector<ModuleAst*> load_modules(const SourceFile* root, SourceManager& sources, SourceLoader& loader,
                                     AstContext& ast, Diagnostics& diags) {
    ModuleLoader l(sources, loader, ast, diags);
    std::string key = root->path;
    if (key.empty()) key = "<memory>/" + root->name;
    else if (std::optional<FoundSource> f = loader.find(root->path, ""); f) key = f->key;
    l.load(root, key, 0);
    return l.take();
}

}  // namespace sg::lang
