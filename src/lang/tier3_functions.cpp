// src/lang/tier3_functions.cpp — setting aside functions with texture and sampler types
// (tier3_functions.h).
#include "lang/tier3_functions.h"

#include <algorithm>
#include <string_view>

namespace sg::lang {

namespace {

/// HLSL / Slang resource types of the graphics pipeline that shadegrad does not model.
constexpr std::string_view kTier3Types[] = {
    "Texture1D",        "Texture2D",        "Texture3D",        "TextureCube",        "Texture1DArray",
    "Texture2DArray",   "TextureCubeArray", "Texture2DMS",      "Texture2DMSArray",   "RWTexture1D",
    "RWTexture2D",      "RWTexture3D",      "RWTexture1DArray", "RWTexture2DArray",   "SamplerState",
    "SamplerComparisonState", "Sampler2D",  "Sampler3D",        "SamplerCube",        "RaytracingAccelerationStructure",
};

bool is_tier3(const std::string& name) {
    return std::find(std::begin(kTier3Types), std::end(kTier3Types), name) != std::end(kTier3Types);
}

/// The tier-3 type named anywhere in `te` (its generic arguments too), or "".
std::string tier3_in(const TypeExpr* te) {
    if (!te) return "";
    if (is_tier3(te->name)) return te->name;
    for (const TypeExpr* a : te->type_args)
        if (std::string n = tier3_in(a); !n.empty()) return n;
    return "";
}

}  // namespace

namespace {

/// Why `fn` is set aside ("its parameter 'sampler' has type SamplerState"), or "" when its
/// result and parameter types name no texture or sampler type.
std::string tier3_reason(const FunctionDecl* fn) {
    if (std::string n = tier3_in(fn->return_type); !n.empty()) return "its result has type " + n;
    for (const VarDecl* p : fn->params)
        if (std::string n = tier3_in(p->type_expr); !n.empty()) return "its parameter '" + p->name + "' has type " + n;
    return "";
}

/// Removes the methods of `s` (a struct or an extension of one) with texture or sampler types,
/// recording them as "S.method".
void set_aside_methods(StructDecl* s, std::map<std::string, SetAsideFunction>& out) {
    auto& methods = s->methods;
    methods.erase(std::remove_if(methods.begin(), methods.end(),
                                 [&](FunctionDecl* fn) {
                                     std::string why = tier3_reason(fn);
                                     if (why.empty()) return false;
                                     out[fn->name] = SetAsideFunction{fn->loc, why};  // "S.method"
                                     return true;
                                 }),
                  methods.end());
}

}  // namespace

std::map<std::string, SetAsideFunction> set_aside_tier3_functions(const std::vector<ModuleAst*>& modules) {
    std::map<std::string, SetAsideFunction> out;
    for (ModuleAst* m : modules) {
        auto& decls = m->decls;
        for (Decl* d : decls)
            if ((d->kind == DeclKind::Struct || d->kind == DeclKind::Extension) && d->structure && !d->structure->is_interface)
                set_aside_methods(d->structure, out);
        decls.erase(std::remove_if(decls.begin(), decls.end(),
                                   [&](Decl* d) {
                                       if (d->kind != DeclKind::Function || !d->function) return false;
                                       std::string why = tier3_reason(d->function);
                                       if (why.empty()) return false;
                                       out[d->function->name] = SetAsideFunction{d->function->loc, why};
                                       return true;
                                   }),
                    decls.end());
    }
    return out;
}

std::string set_aside_message(const std::string& name, const SetAsideFunction& f) {
    return name + "() cannot be used: " + f.reason +
           " (textures and samplers are not supported yet; the rest of the module loaded without it)";
}

}  // namespace sg::lang
