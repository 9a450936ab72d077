// src/call/global_bindings.cpp — see global_bindings.h.
#include "call/global_bindings.h"

#include "call/binder.h"
#include "call/errors.h"
#include "call/value_kind.h"

namespace sg::call {

std::vector<std::string> parameter_keywords(const std::vector<std::string>& keyword_names) {
    std::vector<std::string> out;
    for (const std::string& k : keyword_names)
        if (!is_global_keyword(k)) out.push_back(k);
    return out;
}

namespace {

uint32_t line_of(const lang::VarDecl* g) { return g->loc.valid() ? g->loc.file->line_col(g->loc.offset).first : 0; }

std::string global_text(const lang::VarDecl* g) {
    return std::string(lang::is_global_resource(g) ? "global buffer '" : "uniform global '") + g->name + "' (" +
           lang::type_name(g->type) + ", line " + std::to_string(line_of(g)) + ")";
}

}  // namespace

std::vector<GlobalValue> match_globals(const lang::FunctionDecl& fn, const std::string& function, size_t positional,
                                       const std::vector<std::string>& keyword_names) {
    std::vector<GlobalValue> out;
    for (const lang::VarDecl* g : fn.static_globals) {
        if (!lang::is_module_parameter(g)) continue;
        int arg = -1;
        for (size_t k = 0; k < keyword_names.size() && arg < 0; ++k)
            if (is_global_keyword(keyword_names[k]) && keyword_names[k].compare(1, std::string::npos, g->name) == 0)
                arg = int(positional + k);
        if (arg < 0)
            throw_type_error(function + "(): it uses " + global_text(g) + ", which the call does not bind; give its " +
                             "value with " + function + ".set(" + g->name + "=...) (Parameter '" + g->name +
                             "' not specified)");
        out.push_back({g, arg});
    }
    return out;
}

void check_global_values(const Binding& b, const ArgInfo* args, size_t first_global) {
    for (const ParamBinding& pb : b.params) {
        if (size_t(pb.param) < first_global || pb.call_dims == 0) continue;
        const ArgInfo& a = args[pb.arg];
        throw_type_error(b.function + "(): global '" + pb.name + "' of type " + lang::type_name(pb.type) +
                         " takes one value per call (every call element reads the same), got " +
                         value_kind(a.kind).describe(a) + ", which has " + std::to_string(pb.call_dims) +
                         " call dimension" + (pb.call_dims == 1 ? "" : "s") + " against it");
    }
}

}  // namespace sg::call
