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

std::map<std::string, SetAsideFunction> set_aside_tier3_functions(const std::vector<ModuleAst*>& modules) {
    std::map<std::string, SetAsideFunction> out;
    for (ModuleAst* m : modules) {
        auto& decls = m->decls;
        decls.erase(std::remove_if(decls.begin(), decls.end(),
                                   [&](Decl* d) {
                                       if (d->kind != DeclKind::Function || !d->function) return false;
                                       const FunctionDecl* fn = d->function;
                                       std::string why;
                                       if (std::string n = tier3_in(fn->return_type); !n.empty())
                                           why = "its result has type " + n;
                                       for (const VarDecl* p : fn->params) {
                                           if (!why.empty()) break;
                                           if (std::string n = tier3_in(p->type_expr); !n.empty())
                                               why = "its parameter '" + p->name + "' has type " + n;
                                       }
                                       if (why.empty()) return false;
                                       out[fn->name] = SetAsideFunction{fn->loc, why};
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
