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
    sema_ = lang::analyze({module_}, ast_, types_, diags_);
    diags_.throw_if_errors();
}

std::vector<lang::FunctionDecl*> UserModule::functions(const std::string& fn) const {
    std::vector<lang::FunctionDecl*> out;
    for (lang::FunctionDecl* f : sema_.functions)
        if (f->name == fn) out.push_back(f);
    return out;
}

std::vector<std::string> UserModule::function_names() const {
    std::set<std::string> names;
    for (lang::FunctionDecl* f : sema_.functions) names.insert(f->name);
    return {names.begin(), names.end()};
}

const lang::StructDecl* UserModule::find_struct(const std::string& name) const {
    for (const lang::StructDecl* s : sema_.structs)
        if (s->name == name) return s;
    return nullptr;
}

std::vector<std::string> UserModule::struct_names() const {
    std::set<std::string> names;
    for (const lang::StructDecl* s : sema_.structs) names.insert(s->name);
    return {names.begin(), names.end()};
}

}  // namespace sg::call
