// src/lang/sema_nested_generic.cpp — structs declared in a generic struct:
//
//   struct Box<T> { struct Item { T v; T w; }; Item make(T a) { ... } T a; };
//   Box<float>.Item it = b.make(2);
//
// The parser lifts Item out as the generic struct `Box.Item` with Box's parameters, and gives Box
// the member alias `Item` = `Box.Item<T>` (parser_nested_types.cpp), so `Box<float>.Item` is
// `Box.Item<float>` and Box's methods name it `Item`. Here, before anything is declared, the
// inner struct gets a copy of each member type of Box that it does not declare itself (Box's
// type aliases and other nested structs, its own name among them): inside Item they name what
// they name inside Box, for the same arguments.
#include "lang/sema_internal.h"

namespace sg::lang {

void Sema::share_outer_member_types() {
    for (StructDecl* g : result_.generic_structs) {
        const size_t dot = g->name.rfind('.');
        if (dot == std::string::npos) continue;
        auto outer = module_.generic_structs.find(g->name.substr(0, dot));
        if (outer == module_.generic_structs.end()) continue;
        for (const VarDecl* a : outer->second->type_aliases) {
            bool own = false;
            for (const VarDecl* b : g->type_aliases) own |= b->name == a->name;
            if (own) continue;
            auto* copy = ast_.make<VarDecl>();
            copy->loc = a->loc;
            copy->name = a->name;
            copy->type_expr = a->type_expr;  // resolved in each instance's copy, with its arguments
            copy->is_static = true;
            copy->visibility = a->visibility;
            g->type_aliases.push_back(copy);
        }
    }
}

}  // namespace sg::lang
