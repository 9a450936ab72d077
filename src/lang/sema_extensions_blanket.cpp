// src/lang/sema_extensions_blanket.cpp — an extension of every type that conforms to an interface:
//
//   interface IGet { float get(); }
//   interface ITwice { float twice(); }
//   extension<T : IGet> T : ITwice { float twice() { return get() * 2; } }
//   struct S : IGet { ... };          // S.twice(), and S meets ITwice (use<W : ITwice>(s))
//
// As in Slang, each type that meets the extension's constraints gets its members and interfaces,
// `T` naming the type itself. Here each struct (a generic struct's instance, a built-in type an
// extension conforms, a generic's stand-in alike) that meets them gets a copy of the members as
// its own when its members are declared, so a generic constrained by IGet calls `u.twice()` as
// well. A member the struct declares itself wins. An unconstrained `extension<T> T` is Slang's
// 30850. Not supported yet: one with several parameters.
#include "lang/sema_internal.h"
#include "syntax/ast_clone.h"

namespace sg::lang {

void Sema::register_blanket_extension(StructDecl* ext) {
    const GenericParam& p = ext->generic_params.front();
    if (ext->generic_params.size() != 1 || p.is_value) {
        diags_.unsupported(ext->loc, "an extension of every type that has several or value parameters");
        return;
    }
    if (p.constraint.empty()) {  // Slang: 30850 type cannot be extended
        diags_.error(ext->loc, "an extension of '" + p.name + "' extends every type: constrain it (`extension<" + p.name +
                                   " : IFoo> " + p.name + "`)",
                     30850);
        return;
    }
    std::vector<std::string> all{p.constraint};
    all.insert(all.end(), p.more_constraints.begin(), p.more_constraints.end());
    for (size_t k = 0; k < all.size(); ++k)
        if (is_deferred_constraint(all[k]) || (!module_.interfaces.count(all[k]) && !is_builtin_interface(all[k]))) {
            if (is_deferred_constraint(all[k]))
                diags_.unsupported(p.loc, "a generic interface constraint on an extension of every conforming type");
            else  // Slang: undefined identifier
                diags_.error(k < p.constraint_types.size() ? p.constraint_types[k]->loc : p.loc,
                             "unknown interface '" + all[k] + "'", 30015);
            return;
        }
    for (const VarDecl* f : ext->fields)  // Slang: declaration not allowed in this context
        diags_.error(f->loc, "an extension cannot add a field ('" + f->name + "') to the types it extends", 31400);
    blanket_extensions_.push_back(ext);
}

void Sema::apply_blanket_extensions(StructDecl* s) {
    if (s->is_interface || !s->type) return;
    for (const StructDecl* ext : blanket_extensions_) {
        const GenericParam& p = ext->generic_params.front();
        if (!satisfies(p, {s->type, 0, false})) continue;
        StructDecl* copy = clone_struct(ast_, ext);
        copy->fields.clear();  // reported when the extension was registered (31400)
        std::vector<FunctionDecl*> methods;
        for (FunctionDecl* m : copy->methods) {
            bool own = false;
            for (const FunctionDecl* o : s->methods) own |= o->member_name == m->member_name;
            if (own) continue;
            m->name = s->name + "." + m->member_name;
            methods.push_back(m);
        }
        copy->methods = std::move(methods);
        // `T` in the members is the type itself.
        auto* alias = ast_.make<VarDecl>();
        alias->loc = p.loc;
        alias->name = p.name;
        alias->is_static = true;
        alias->type = s->type;
        copy->type_aliases.push_back(alias);
        move_extension_members(copy, s);
    }
}

}  // namespace sg::lang
