// src/call/user_module.cpp — loading and reflecting a user module.
#include "call/user_module.h"

#include <set>

#include "call/errors.h"
#include "lang/parser.h"

namespace sg::call {

void throw_type_error(const std::string& message) { throw CallError(ErrorKind::Type, message); }
void throw_value_error(const std::string& message) { throw CallError(ErrorKind::Value, message); }

UserModule::UserModule(std::string name, std::string source) : name_(std::move(name)), source_(std::move(source)) {
    std::string file = name_;
    if (file.find('.') == std::string::npos) file += ".slang";
    const lang::SourceFile* sf = sources_.add(file, source_);
    module_ = lang::parse_module(sf, ast_, diags_);
    diags_.throw_if_errors();
    analysis_ = std::make_unique<lang::Analysis>(ast_, types_, diags_);
    analysis_->run({module_});
    diags_.throw_if_errors();
}

// Instantiations of generics are reached through instantiate(), not by their names here.
std::vector<lang::FunctionDecl*> UserModule::functions(const std::string& fn) const {
    std::vector<lang::FunctionDecl*> out;
    for (lang::FunctionDecl* f : analysis_->result().functions)
        if (f->name == fn && !f->generic_origin) out.push_back(f);
    return out;
}

std::vector<std::string> UserModule::function_names() const {
    std::set<std::string> names;
    for (lang::FunctionDecl* f : analysis_->result().functions)
        if (!f->generic_origin) names.insert(f->name);
    return {names.begin(), names.end()};
}

lang::FunctionDecl* UserModule::instantiate(const std::string& fn, const std::vector<lang::GenericArg>& args) {
    std::vector<lang::Diagnostic> why;
    lang::FunctionDecl* f = analysis_->instantiate(fn, args, why);
    if (f) return f;
    std::string rendered;
    for (const lang::Diagnostic& d : why) rendered += lang::render_diagnostic(d);
    if (why.empty()) rendered = "cannot instantiate '" + fn + "'\n";
    throw lang::CompileError(rendered, std::move(why));
}

}  // namespace sg::call
