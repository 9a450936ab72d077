// src/lang/sema_interface_defaults.cpp — default implementations in interfaces:
//
//   interface IShape { float area(); float twice() { return 2 * area(); } }
//   struct Sq : IShape { float s; float area() { return s * s; } };   // Sq.twice() is the default
//   interface IIdx { __subscript(int i) -> float { get { return 0; } } }   // a default accessor
//
// As in Slang, a struct that conforms to the interface and declares no method of that name gets
// the default: here a copy of it becomes the struct's own method (its `this` the struct, so the
// body's calls of other requirements are the struct's methods), declared with the struct's other
// members before conformance is checked, and checked, lowered and differentiated as any method.
// A struct's own method of that name, marked `override` (else Slang's 30853), wins (also one
// with another signature, which conformance then reports). Not supported yet: default
// implementations in a generic interface.
#include "lang/sema_internal.h"
#include "syntax/ast_clone.h"

namespace sg::lang {

void Sema::adopt_default_implementations(StructDecl* s, const StructDecl* iface) {
    if (iface->generic_origin) return;  // reported by declare_interface
    if (s->type && standins_.constraint_of(s->type)) return;  // a stand-in offers every requirement
    for (const FunctionDecl* r : iface->methods) {
        if (!r->body || r->is_init) continue;
        const FunctionDecl* own = nullptr;
        for (const FunctionDecl* m : s->methods)
            if (m->member_name == r->member_name) own = m;
        if (own) {
            if (!own->is_override && own->owner == s)  // Slang: 30853, `override` says it is meant
                diags_.error(own->loc, "'" + r->member_name + "' of struct " + s->name +
                                           " replaces the default implementation in interface '" + iface->name +
                                           "': mark it 'override'",
                             30853);
            continue;
        }
        FunctionDecl* m = clone_function(ast_, r);
        m->owner = s;
        m->name = s->name + "." + m->member_name;
        s->methods.push_back(m);
        if (!m->generic_params.empty()) continue;  // a generic method: declared per instantiation
        const StructDecl* saved_struct = resolving_struct_;
        resolving_struct_ = s;
        instances_.inherit_depth(s, m);
        declare_signature(m);
        resolving_struct_ = saved_struct;
    }
}

void Sema::check_overrides(const StructDecl* s, const std::vector<const StructDecl*>& interfaces) {
    for (const FunctionDecl* m : s->methods) {
        if (!m->is_override || m->owner != s) continue;
        bool found = false;
        for (const StructDecl* iface : interfaces)
            for (const FunctionDecl* r : iface->methods) found |= r->member_name == m->member_name;
        if (!found)  // Slang: 30854
            diags_.error(m->loc, "'" + m->member_name + "' of struct " + s->name +
                                     " is marked 'override' but no interface it conforms to declares it",
                         30854);
    }
}

}  // namespace sg::lang
