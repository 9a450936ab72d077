// src/lang/sema_interfaces.cpp — user interfaces: their bases, the conformance of structs that
// list them (every required method present with the same signature, [Differentiable] where the
// requirement is, every associatedtype given by a member type, meeting its constraints), and the constraint test used by
// generics. Calls through a constrained type parameter need nothing here: the parameter is a
// concrete struct in each instantiation, so dispatch is static. Generic requirements:
// sema_generic_requirements.cpp.
#include "lang/sema_internal.h"

namespace sg::lang {

void Sema::declare_interface(StructDecl* s) {
    for (size_t k = 0; k < s->bases.size(); ++k) {
        const std::string& b = s->bases[k];
        SourceLoc at = k < s->base_locs.size() ? s->base_locs[k] : s->loc;
        auto base = module_.interfaces.find(b);
        if (b == s->name || (base != module_.interfaces.end() && interface_extends(base->second, s->name)))
            diags_.error(at, "interface '" + s->name + "' inherits from itself (through '" + b + "')");
        else if (b != "IDifferentiable" && !module_.interfaces.count(b))
            diags_.error(at, is_builtin_interface(b) ? "an interface may inherit from IDifferentiable and user "
                                                       "interfaces only, not '" + b + "'"
                                                     : "unknown interface '" + b + "'");
    }
    check_associated_constraint_names(s);  // `associatedtype D : IDifferentiable` (sema_assoc_types.cpp)
    for (FunctionDecl* r : s->methods) {
        // A default implementation: conforming structs without their own take a copy
        // (sema_interface_defaults.cpp); in a generic interface not supported yet.
        if (r->body && s->generic_origin)
            diags_.unsupported(r->body->loc, "a default implementation in a generic interface");
        // Which default a call through the interface would take (the requirement's or the
        // conforming method's) is left open: none is accepted.
        for (const VarDecl* p : r->params)
            if (p->default_value) diags_.unsupported(p->default_value->loc, "a default value in an interface requirement");
    }
}

bool Sema::interface_extends(const StructDecl* iface, const std::string& base, int depth) const {
    if (iface->name == base) return true;
    if (depth > 32) return false;  // a cycle (reported by declare_interface)
    for (const std::string& b : iface->bases) {
        if (b == base) return true;
        auto it = module_.interfaces.find(b);
        if (it != module_.interfaces.end() && interface_extends(it->second, base, depth + 1)) return true;
    }
    return false;
}

bool Sema::conforms_to(const Type* t, const std::string& iface) const {
    const StructDecl* s = t->is_struct() ? t->decl : builtin_extension(t);  // `extension float : IFoo`
    if (!s) return false;
    if (iface == "IDifferentiable") return t->is_struct() && types_.struct_is_differentiable(t);
    for (const std::string& b : s->bases) {
        if (b == iface) return true;
        auto it = module_.interfaces.find(b);
        if (it != module_.interfaces.end() && interface_extends(it->second, iface)) return true;
    }
    return false;
}

bool direction_meets(ParamDir required, ParamDir given) { return given == required || required == ParamDir::InOut; }

const char* direction_name(ParamDir d) { return d == ParamDir::In ? "in" : d == ParamDir::Out ? "out" : "inout"; }

namespace {

void collect_interfaces(const std::map<std::string, StructDecl*>& interfaces, const std::string& name,
                        std::vector<const StructDecl*>& out, int depth) {
    auto it = interfaces.find(name);
    if (it == interfaces.end() || depth > 32) return;
    for (const StructDecl* s : out)
        if (s == it->second) return;
    out.push_back(it->second);
    for (const std::string& b : it->second->bases) collect_interfaces(interfaces, b, out, depth + 1);
}

}  // namespace

void Sema::check_conformance(StructDecl* s) {
    std::vector<const StructDecl*> required;
    for (size_t k = 0; k < s->bases.size(); ++k) {
        const std::string& b = s->bases[k];
        SourceLoc at = k < s->base_locs.size() ? s->base_locs[k] : s->loc;
        if (b == "IDifferentiable") continue;
        if (module_.interfaces.count(b)) collect_interfaces(module_.interfaces, b, required, 0);
        else if (is_builtin_interface(b)) diags_.unsupported(at, "conforming a struct to built-in interface '" + b + "'");
        else diags_.error(at, "unknown interface '" + b + "'", 30015);
    }
    for (const StructDecl* iface : required) {
        // Associated types first: the requirements' signatures may name them.
        Substitution assoc;  // an instance of a generic interface: its arguments too
        if (const Substitution* args = substitution_of_struct(iface)) assoc = *args;
        bool assoc_missing = false;
        for (size_t k = 0; k < iface->associated_types.size(); ++k) {
            const std::string& a = iface->associated_types[k];
            const VarDecl* alias = nullptr;
            for (const VarDecl* v : s->type_aliases)
                if (v->name == a) alias = v;
            if (!alias || !alias->type) {
                diags_.error(s->loc,
                             "struct " + s->name + " does not define associatedtype '" + a + "' required by interface '" +
                                 iface->name + "' (add `typealias " + a + " = ...;`)",
                             38100);
                assoc_missing = true;
                continue;
            }
            assoc.types[a] = alias->type;
            if (!check_associated_type_constraints(s, iface, k, alias->type)) assoc_missing = true;  // 38029
        }
        if (assoc_missing) continue;  // the requirements' signatures would name it
        adopt_default_implementations(s, iface);  // sema_interface_defaults.cpp
        for (const FunctionDecl* r : iface->methods) {
            if (r->is_init) {
                check_init_requirement(s, iface, r);  // sema_interface_inits.cpp
                continue;
            }
            if (!r->generic_params.empty()) {
                check_generic_requirement(s, iface, r, assoc);
                continue;
            }
            const Substitution* saved = subst_;
            subst_ = &assoc;
            size_t errors = diags_.error_count();
            const Type* ret = resolve_type(r->return_type);
            std::vector<const Type*> params;
            for (const VarDecl* p : r->params) params.push_back(resolve_type(p->type_expr));
            subst_ = saved;
            if (diags_.error_count() != errors) continue;
            // Slang's numbers: 38100 no such member, 38105 another signature, 38106 another
            // return type.
            const FunctionDecl* found = nullptr;
            const FunctionDecl* near = nullptr;
            SourceLoc near_at = s->loc;
            std::string mismatch;
            int code = 38100;
            for (const FunctionDecl* m : find_methods(s, r->member_name)) {
                size_t first = m->this_param ? 1 : 0;
                // As in slangc, a static method meets a non-static requirement.
                bool same = (m->is_static || !r->is_static) && m->params.size() - first == params.size();
                const VarDecl* wrong_dir = nullptr;
                for (size_t k = 0; same && k < params.size(); ++k) {
                    const VarDecl* p = m->params[k + first];
                    same = p->type == params[k];
                    if (same && !wrong_dir && !direction_meets(r->params[k]->dir, p->dir)) wrong_dir = p;
                }
                near = m;
                near_at = m->loc;
                if (same && wrong_dir) {  // Slang: 38108, at the parameter
                    ParamDir want = r->params[size_t(wrong_dir->index) - first]->dir;
                    mismatch = " (its parameter '" + wrong_dir->name + "' is " + direction_name(wrong_dir->dir) +
                               ", the requirement's is " + direction_name(want) + ")";
                    code = 38108;
                    near_at = wrong_dir->loc;
                    continue;
                }
                if (!same) {
                    mismatch = r->is_static && !m->is_static ? " (its '" + r->member_name + "' is not static)"
                                                             : " (its '" + r->member_name + "' has another signature)";
                    code = 38105;
                    continue;
                }
                if (m->result_type != ret) {
                    mismatch = " (its '" + r->member_name + "' has another signature: it returns " +
                               type_name(m->result_type) + ", not " + type_name(ret) + ")";
                    code = 38106;
                    continue;
                }
                // A non-mutating method meets a [mutating] requirement, not the other way round.
                if (m->is_mutating && !find_attribute(r->attrs, "mutating")) {
                    mismatch = " (its '" + r->member_name + "' is [mutating], the requirement is not)";
                    code = 38105;
                    continue;
                }
                found = m;
                break;
            }
            if (!found) found = generic_method_meeting(s, r, ret, params);  // `T scale<T : IFloat>(T x)`
            if (!found) {
                if (code == 38100 && accessor_sibling(s, r, near_at)) code = 38105;  // `get` without `set`
                diags_.error(near_at,
                             (s->type && !s->type->is_struct() ? "type " : "struct ") + s->name +  // `extension float`
                                 " does not implement " + accessor_display_name(r->member_name) +
                                 " required by interface '" + iface->name + "'" + mismatch,
                             code);
                continue;
            }
            bool need_diff = find_attribute(r->attrs, "Differentiable") || find_attribute(r->attrs, "BackwardDifferentiable");
            if (need_diff && !found->is_differentiable)
                diags_.error(found->loc,
                             "method '" + found->name + "' must be [Differentiable]: interface '" + iface->name +
                                 "' requires it",
                             38105);
        }
    }
    check_overrides(s, required);  // sema_interface_defaults.cpp
}

}  // namespace sg::lang
