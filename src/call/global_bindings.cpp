// src/call/global_bindings.cpp — see global_bindings.h.
#include "call/global_bindings.h"

#include "call/errors.h"

namespace sg::call {

void check_global_bindings(const lang::FunctionDecl& fn, const std::string& name) {
    for (const lang::VarDecl* g : fn.static_globals) {
        if (!lang::is_global_resource(g)) continue;
        const uint32_t line = g->loc.valid() ? g->loc.file->line_col(g->loc.offset).first : 0;
        throw_type_error(name + "(): it uses global buffer '" + g->name + "' (line " + std::to_string(line) +
                         "), which a call from Python cannot bind yet; pass the buffer as a parameter of " + name +
                         "() instead");
    }
}

}  // namespace sg::call
