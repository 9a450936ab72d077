// src/call/user_module.cpp — loading and reflecting a user module.
#include "call/user_module.h"

#include <algorithm>
#include <set>

#include "call/errors.h"
#include "runtime/content_hash.h"
#include "runtime/module_cache.h"  // append_key_field
#include "syntax/module_loader.h"
#include "syntax/slangpy_module.h"

namespace sg::call {

void throw_type_error(const std::string& message) { throw CallError(ErrorKind::Type, message); }
void throw_value_error(const std::string& message) { throw CallError(ErrorKind::Value, message); }

namespace {

lang::LinkConstants effective_constants(const ModuleSetup& setup) {
    lang::LinkConstants out;
    for (const lang::LinkConstants& exports : setup.linked)
        for (const auto& [name, value] : exports) out[name] = value;
    for (const auto& [name, value] : setup.overrides) out[name] = value;
    return out;
}

}  // namespace

UserModule::UserModule(std::string name, std::string source, ModuleSetup setup)
    : name_(std::move(name)), source_(std::move(source)), setup_(std::move(setup)) {
    if (!setup_.loader) {
        auto loader = std::make_shared<lang::SourceLoader>(setup_.include_paths);
        std::string defines;
        for (const auto& [name, value] : setup_.defines) defines += "#define " + name + " " + value + "\n";
        loader->set_predefined(std::move(defines));
        loader_ = std::move(loader);
    } else {
        loader_ = setup_.loader;
    }
    constants_ = effective_constants(setup_);
    modules_ = parse_into(sources_, ast_, diags_, /*require_values=*/false, &set_aside_);
    diags_.throw_if_errors();
    analysis_ = std::make_unique<lang::Analysis>(ast_, types_, diags_);
    analysis_->run(modules_);
    if (diags_.has_errors() && !set_aside_.empty()) {
        // A call of a set-aside function or method from the module is an error there (an unknown
        // name, or "S has no member 'm'"): say why it is gone.
        std::vector<std::string> named;
        auto names = [](const std::string& message, const std::string& fn) {
            const size_t dot = fn.rfind('.');
            if (dot == std::string::npos) return message.find("'" + fn + "'") != std::string::npos;
            return message.find("'" + fn.substr(dot + 1) + "'") != std::string::npos &&
                   message.find(fn.substr(0, dot)) != std::string::npos;
        };
        for (const lang::Diagnostic& d : diags_.all())
            for (const auto& [fn, f] : set_aside_)
                if (d.severity == lang::Severity::Error && names(d.message, fn)) named.push_back(fn);
        for (const auto& [fn, f] : set_aside_)
            if (std::find(named.begin(), named.end(), fn) != named.end()) diags_.note(f.loc, lang::set_aside_message(fn, f));
    }
    diags_.throw_if_errors();
    extern_names_ = lang::extern_constant_names(modules_);
    exports_ = lang::exported_constants(modules_, diags_);
    diags_.throw_if_errors();
    // The values of the externs, as bound (linked modules' exports, then overrides). The files a
    // module reads are fixed for its lifetime (the loader keeps them), so a module object's
    // functions need only these in their keys; a module without externs adds nothing to the
    // hot path. Kernels on disk are keyed by their generated source, which holds the values.
    if (!extern_names_.empty()) {
        lang::LinkConstants used;
        for (const std::string& n : extern_names_)
            if (auto it = constants_.find(n); it != constants_.end()) used[n] = it->second;
        link_key_ = lang::render_constants(used);
        if (link_key_.empty()) link_key_ = "defaults";
    }
    std::string material = "shadegrad module\n";
    runtime::append_key_field(material, "name", name_);
    for (const std::unique_ptr<lang::SourceFile>& file : sources_.files()) {
        runtime::append_key_field(material, "file", file->name);
        runtime::append_key_field(material, "text", file->text);
    }
    runtime::append_key_field(material, "constants", link_key_);
    content_key_ = runtime::content_hash(material);
}

std::vector<lang::ModuleAst*> UserModule::parse_into(lang::SourceManager& sources, lang::AstContext& ast,
                                                     lang::Diagnostics& diags, bool require_values,
                                                     std::map<std::string, lang::SetAsideFunction>* set_aside) const {
    std::string file = name_;
    if (setup_.path.empty() && file.find('.') == std::string::npos) file += ".slang";
    lang::SourceFile* root = sources.add(file, source_);
    root->path = setup_.path;
    std::vector<lang::ModuleAst*> modules = lang::load_modules(root, sources, *loader_, ast, diags);
    // Functions with textures or samplers are checked lazily: set aside, the rest loads.
    std::map<std::string, lang::SetAsideFunction> aside = lang::set_aside_tier3_functions(modules);
    if (set_aside) *set_aside = std::move(aside);
    lang::bind_link_constants(modules, constants_, require_values, ast, diags);
    return modules;
}

std::shared_ptr<UserModule> UserModule::with_constants(const lang::LinkConstants& overrides) const {
    std::set<std::string> known(extern_names_.begin(), extern_names_.end());
    for (const auto& [name, value] : overrides)
        if (!known.count(name)) {
            std::string list;
            for (const std::string& n : extern_names_) list += (list.empty() ? "" : ", ") + n;
            throw_value_error("constants: module '" + name_ + "' has no extern static const '" + name + "' (it has: " +
                              (list.empty() ? "none" : list) + ")");
        }
    ModuleSetup setup = setup_;
    setup.loader = loader_;  // the same files as this load, not whatever is on disk now
    for (const auto& [name, value] : overrides) setup.overrides[name] = value;
    return std::make_shared<UserModule>(name_, source_, std::move(setup));
}

// Instantiations of generics are reached through instantiate(), not by their names here.
std::vector<lang::FunctionDecl*> UserModule::functions(const std::string& fn) const {
    std::vector<lang::FunctionDecl*> out;
    for (lang::FunctionDecl* f : analysis_->result().functions)
        if (f->name == fn && !f->generic_origin) out.push_back(f);
    return out;
}

std::vector<lang::FunctionDecl*> UserModule::generic_functions(const std::string& fn) const {
    std::vector<lang::FunctionDecl*> out;
    for (lang::FunctionDecl* g : analysis_->result().generic_functions)
        if (g->name == fn) out.push_back(g);
    return out;
}

std::vector<std::string> UserModule::function_names() const {
    std::set<std::string> names;
    for (lang::FunctionDecl* f : analysis_->result().functions)
        if (!f->generic_origin && !lang::in_slangpy_module(f->loc)) names.insert(f->name);
    for (lang::FunctionDecl* g : analysis_->result().generic_functions) names.insert(g->name);
    return {names.begin(), names.end()};
}

std::vector<const lang::VarDecl*> UserModule::module_parameters() const {
    std::vector<const lang::VarDecl*> out;
    for (const lang::VarDecl* g : analysis_->result().globals)
        if (lang::is_module_parameter(g)) out.push_back(g);
    return out;
}

const lang::StructDecl* UserModule::find_struct(const std::string& name) const {
    for (const lang::StructDecl* s : analysis_->result().structs)
        if (s->name == name) return s;
    return nullptr;
}

std::vector<std::string> UserModule::struct_names() const {
    std::set<std::string> names;
    for (const lang::StructDecl* s : analysis_->result().structs)
        if (!lang::in_slangpy_module(s->loc)) names.insert(s->name);
    return {names.begin(), names.end()};
}

namespace {

[[noreturn]] void throw_instantiation_failure(const std::string& fn, std::vector<lang::Diagnostic> why) {
    std::string rendered;
    for (const lang::Diagnostic& d : why) rendered += lang::render_diagnostic(d);
    if (why.empty()) rendered = "cannot instantiate '" + fn + "'\n";
    throw lang::CompileError(rendered, std::move(why));
}

}  // namespace

lang::FunctionDecl* UserModule::instantiate(const std::string& fn, const std::vector<lang::GenericArg>& args) const {
    std::vector<lang::Diagnostic> why;
    if (lang::FunctionDecl* f = analysis_->instantiate(fn, args, why)) return f;
    throw_instantiation_failure(fn, std::move(why));
}

lang::FunctionDecl* UserModule::instantiate(lang::FunctionDecl* generic, const std::vector<lang::GenericArg>& args) const {
    std::vector<lang::Diagnostic> why;
    if (lang::FunctionDecl* f = analysis_->instantiate(generic, args, why)) return f;
    throw_instantiation_failure(generic->name, std::move(why));
}

}  // namespace sg::call
