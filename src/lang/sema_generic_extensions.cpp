// src/lang/sema_generic_extensions.cpp — `extension<T> Box<T> { ... }`: members added to every
// instance of a generic struct.
//
//   struct Box<T> { T a; T b; };
//   extension<T> Box<T> { T first() { return a; } }          // Box<float>.first(), Box<int>.first()
//   extension<U : IFloat> Box<U> : IGet { ... }               // when Box's own T : IFloat
//
// The extension's parameters name the struct's, one each, in the order the struct's arguments
// list them (`extension<U> Box<U>`: U is Box's T; a name of its own is a member alias of Box for
// T). Its members and interfaces move into the generic declaration before anything is
// instantiated, so each instance gets them as it gets its own. An extension whose constraint is
// stronger than the struct's own, or of some instances (`extension Box<float>`,
// `extension<T> Pair<T, T>`), extends only the instances it matches: sema_extensions_instances.cpp.
#include "lang/sema_internal.h"

namespace sg::lang {

namespace {

/// Whether `have` (the struct's parameter) implies every constraint of `want` (the extension's).
bool implies(const GenericParam& have, const GenericParam& want) {
    std::vector<std::string> haves{have.constraint};
    haves.insert(haves.end(), have.more_constraints.begin(), have.more_constraints.end());
    std::vector<std::string> wants{want.constraint};
    wants.insert(wants.end(), want.more_constraints.begin(), want.more_constraints.end());
    for (const std::string& w : wants) {
        if (w.empty()) continue;
        bool found = false;
        for (const std::string& h : haves) found |= h == w;
        if (!found) return false;
    }
    return true;
}

}  // namespace

void Sema::merge_generic_extension(StructDecl* ext, const TypeExpr* target) {
    auto generic = module_.generic_structs.find(ext->name);
    for (const GenericParam& p : ext->generic_params)
        if (p.name == ext->name && target->type_args.empty()) {  // `extension<T : IFoo> T : IBar`
            register_blanket_extension(ext);  // sema_extensions_blanket.cpp
            return;
        }
    if (generic == module_.generic_structs.end()) {
        if (module_.structs.count(ext->name))  // Slang: 30019 / a non-generic struct given arguments
            diags_.error(target->loc, "struct '" + ext->name + "' is not generic: write `extension " + ext->name + "`");
        else if (module_.interfaces.count(ext->name) || module_.generic_interfaces.count(ext->name))
            diags_.unsupported(ext->loc, "an extension of an interface");
        else if (resolve_named_type(ext->name, ext->loc, false))
            diags_.unsupported(ext->loc, "an extension of the built-in type '" + ext->name + "'");
        else  // Slang: undefined identifier
            diags_.error(ext->loc, "extension of unknown type '" + ext->name + "'", 30015);
        return;
    }
    StructDecl* g = generic->second;
    const std::vector<GenericParam>& own = g->generic_params;
    // Each argument names one of the extension's parameters, each once, of the same kind.
    std::vector<int> param_of(own.size(), -1);  // Box's k-th parameter: the extension's
    bool plain = target->arg_is_value.size() == own.size() && ext->generic_params.size() == own.size();
    size_t type_k = 0, value_k = 0;
    for (size_t k = 0; plain && k < target->arg_is_value.size(); ++k) {
        std::string name;
        if (target->arg_is_value[k]) {
            const Expr* v = target->value_args[value_k++];
            if (v->kind == ExprKind::Name) name = v->name;
        } else {
            const TypeExpr* t = target->type_args[type_k++];
            if (t->type_args.empty() && t->member.empty() && t->array_dims.empty()) name = t->name;
        }
        int found = -1;
        for (size_t j = 0; j < ext->generic_params.size(); ++j)
            if (ext->generic_params[j].name == name) found = int(j);
        plain = found >= 0 && ext->generic_params[size_t(found)].is_value == own[k].is_value;
        for (int p : param_of) plain &= p != found;
        param_of[k] = found;
    }
    for (size_t k = 0; plain && k < own.size(); ++k)
        plain = implies(own[k], ext->generic_params[size_t(param_of[k])]);
    if (!plain) {  // `extension Box<float>`, `extension<T : IFloat> Box<T>`: some instances only
        register_instance_extension(ext, g, target);
        return;
    }
    for (size_t k = 0; k < own.size(); ++k) {
        const GenericParam& p = ext->generic_params[size_t(param_of[k])];
        if (p.name == own[k].name) continue;
        if (p.is_value) {
            diags_.unsupported(p.loc, "a generic extension that names value parameter '" + own[k].name + "' of " +
                                          g->name + " '" + p.name + "'");
            return;
        }
        // `extension<U> Box<U>`: U is a member alias of Box for its T.
        auto* te = ast_.make<TypeExpr>();
        te->loc = p.loc;
        te->name = own[k].name;
        auto* alias = ast_.make<VarDecl>();
        alias->loc = p.loc;
        alias->name = p.name;
        alias->type_expr = te;
        alias->is_static = true;
        g->type_aliases.push_back(alias);
    }
    move_extension_members(ext, g);
}

}  // namespace sg::lang
