// src/lang/sema_extensions.cpp — `extension S : IFoo { ... }`: before any struct's members are
// declared, each extension's members move into the struct it names (its methods become S's,
// `this` and all), and its interfaces join S's bases, so conformance, calls and derivatives see
// one struct. An extension of an unknown name is 30015, of a generic struct by its bare name
// 30408, of an interface 30852 (as in Slang); a field in one is 31400 (an extension adds no
// storage). `extension<T> Box<T>`, every instance: sema_generic_extensions.cpp; `extension
// Box<float>`, some instances: sema_extensions_instances.cpp; `extension float`:
// sema_extensions_builtin.cpp.
#include "lang/sema_internal.h"

namespace sg::lang {

void Sema::merge_extensions(const std::vector<ModuleAst*>& modules) {
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls) {
            if (d->kind != DeclKind::Extension) continue;
            StructDecl* ext = d->structure;
            if (ext->extension_target) {  // `extension<T> Box<T>` (sema_generic_extensions.cpp)
                merge_generic_extension(ext, ext->extension_target);
                continue;
            }
            auto plain = module_.structs.find(ext->name);
            auto generic = module_.generic_structs.find(ext->name);
            if (generic != module_.generic_structs.end()) {  // Slang: 30408, `extension<T> Box<T>` is the form
                diags_.error(ext->loc, "generic struct '" + ext->name + "' used without its generic arguments", 30408);
                continue;
            }
            StructDecl* target = plain != module_.structs.end() ? plain->second : nullptr;
            if (!target) {
                const Type* builtin = nullptr;
                if (module_.interfaces.count(ext->name) || is_builtin_interface(ext->name))
                    diags_.error(ext->loc, "cannot extend interface '" + ext->name + "' (extend the types that conform to it: `extension<T : " + ext->name + "> T`)", 30852);
                else if ((builtin = resolve_named_type(ext->name, ext->loc, false)) &&
                         (builtin->is_scalar() || builtin->is_vector() || builtin->is_matrix()) && !builtin->enumeration)
                    merge_builtin_extension(ext, builtin);  // sema_extensions_builtin.cpp
                else if (builtin)
                    diags_.unsupported(ext->loc, "an extension of the built-in type '" + ext->name + "'");
                else  // Slang: undefined identifier
                    diags_.error(ext->loc, "extension of unknown type '" + ext->name + "'", 30015);
                continue;
            }
            move_extension_members(ext, target);
        }
}

void Sema::move_extension_members(StructDecl* ext, StructDecl* target) {
    for (const VarDecl* f : ext->fields)  // Slang: declaration not allowed in this context
        diags_.error(f->loc, "an extension cannot add a field ('" + f->name + "') to struct " + ext->name, 31400);
    for (FunctionDecl* f : ext->methods) {
        f->owner = target;
        target->methods.push_back(f);
    }
    target->static_consts.insert(target->static_consts.end(), ext->static_consts.begin(), ext->static_consts.end());
    target->type_aliases.insert(target->type_aliases.end(), ext->type_aliases.begin(), ext->type_aliases.end());
    for (size_t k = 0; k < ext->bases.size(); ++k) {
        target->base_types.resize(target->bases.size());  // `extension S : IGet<float>`
        target->bases.push_back(ext->bases[k]);
        target->base_locs.push_back(ext->base_locs[k]);
        target->base_types.push_back(k < ext->base_types.size() ? ext->base_types[k] : nullptr);
    }
}

}  // namespace sg::lang
