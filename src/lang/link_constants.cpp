// src/lang/link_constants.cpp — binding extern constants and folding exported ones.
#include "lang/link_constants.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

namespace sg::lang {

namespace {

using K = ConstantScalar::Kind;

Expr* literal(AstContext& ast, const ConstantScalar& s, SourceLoc loc) {
    Expr* e = ast.make<Expr>();
    e->loc = loc;
    if (s.kind == K::Bool) {
        e->kind = ExprKind::BoolLit;
        e->int_value = s.i != 0;
    } else if (s.kind == K::Int) {
        // A negative value is `-(magnitude)`: literals are unsigned in the AST.
        e->kind = ExprKind::IntLit;
        e->int_value = s.i < 0 ? uint64_t(0) - uint64_t(s.i) : uint64_t(s.i);
        if (s.i < 0) {
            Expr* neg = ast.make<Expr>();
            neg->kind = ExprKind::Unary;
            neg->loc = loc;
            neg->op = Op::Neg;
            e->suffix = s.i == INT64_MIN ? "ull" : "ll";
            neg->operands.push_back(e);
            return neg;
        }
        if (s.i > INT32_MAX) e->suffix = "ll";
    } else {
        e->kind = ExprKind::FloatLit;
        e->float_value = std::fabs(s.f);
        e->suffix = "l";  // double: no precision lost before the conversion to T
        if (std::signbit(s.f)) {
            Expr* neg = ast.make<Expr>();
            neg->kind = ExprKind::Unary;
            neg->loc = loc;
            neg->op = Op::Neg;
            neg->operands.push_back(e);
            return neg;
        }
    }
    return e;
}

/// Folds an exported initializer. `depth` bounds references to other constants.
class Folder {
public:
    Folder(const std::vector<ModuleAst*>& modules) {
        for (ModuleAst* m : modules)
            for (Decl* d : m->decls)
                if (d->kind == DeclKind::GlobalVar)
                    for (VarDecl* g : d->globals) globals_[g->name] = g;
    }

    std::optional<ConstantValue> fold(const Expr* e, int depth = 0) {
        if (!e || depth > 64) return std::nullopt;
        switch (e->kind) {
        case ExprKind::IntLit: return ConstantValue{{K::Int, int64_t(e->int_value), double(e->int_value)}};
        case ExprKind::FloatLit: return ConstantValue{{K::Float, 0, e->float_value}};
        case ExprKind::BoolLit: return ConstantValue{{K::Bool, int64_t(e->int_value), double(e->int_value)}};
        case ExprKind::Name: {
            auto it = globals_.find(e->name);
            if (it == globals_.end() || !it->second->is_const) return std::nullopt;
            return fold(it->second->init, depth + 1);
        }
        case ExprKind::Unary: {
            auto v = fold(e->operands[0], depth + 1);
            if (!v || v->size() != 1) return std::nullopt;
            ConstantScalar s = (*v)[0];
            if (e->op == Op::Neg) s.i = int64_t(0 - uint64_t(s.i)), s.f = -s.f;
            else if (e->op == Op::Not) s = {K::Bool, !(s.kind == K::Float ? s.f != 0 : s.i != 0), 0};
            else if (e->op == Op::BitNot && s.kind == K::Int) s.i = ~s.i;
            else if (e->op != Op::Plus) return std::nullopt;
            if (s.kind == K::Bool && e->op == Op::Neg) s.kind = K::Int;
            return ConstantValue{s};
        }
        case ExprKind::Binary: {
            auto a = fold(e->operands[0], depth + 1), b = fold(e->operands[1], depth + 1);
            if (!a || !b || a->size() != 1 || b->size() != 1) return std::nullopt;
            return binary(e->op, (*a)[0], (*b)[0]);
        }
        case ExprKind::Call:
        case ExprKind::TypeCtor:
        case ExprKind::InitList: {
            // `float3(1, 2, 3)`, `{1, 2}`, `float(2)`: the components in order.
            ConstantValue out;
            size_t first = e->kind == ExprKind::Call ? 1 : 0;
            if (e->kind == ExprKind::Call && e->ref != RefKind::Type) return std::nullopt;
            for (size_t k = first; k < e->operands.size(); ++k) {
                auto v = fold(e->operands[k], depth + 1);
                if (!v) return std::nullopt;
                out.insert(out.end(), v->begin(), v->end());
            }
            return out;
        }
        default: return std::nullopt;
        }
    }

private:
    static std::optional<ConstantValue> binary(Op op, ConstantScalar a, ConstantScalar b) {
        bool fl = a.kind == K::Float || b.kind == K::Float;
        double x = a.kind == K::Float ? a.f : double(a.i), y = b.kind == K::Float ? b.f : double(b.i);
        int64_t p = a.i, q = b.i;
        auto num = [&](double f, int64_t i) { return ConstantValue{fl ? ConstantScalar{K::Float, 0, f} : ConstantScalar{K::Int, i, 0}}; };
        auto boolean = [](bool v) { return ConstantValue{{K::Bool, v, 0}}; };
        switch (op) {
        case Op::Add: return num(x + y, int64_t(uint64_t(p) + uint64_t(q)));
        case Op::Sub: return num(x - y, int64_t(uint64_t(p) - uint64_t(q)));
        case Op::Mul: return num(x * y, int64_t(uint64_t(p) * uint64_t(q)));
        case Op::Div:
            if (!fl && (q == 0 || (p == INT64_MIN && q == -1))) return std::nullopt;
            return num(x / y, fl ? 0 : p / q);
        case Op::Rem:
            if (fl || q == 0 || (p == INT64_MIN && q == -1)) return std::nullopt;
            return num(0, p % q);
        case Op::Lt: return boolean(x < y);
        case Op::Gt: return boolean(x > y);
        case Op::Le: return boolean(x <= y);
        case Op::Ge: return boolean(x >= y);
        case Op::Eq: return boolean(x == y);
        case Op::Ne: return boolean(x != y);
        default: return std::nullopt;
        }
    }

    std::map<std::string, VarDecl*> globals_;
};

}  // namespace

void bind_link_constants(const std::vector<ModuleAst*>& modules, const LinkConstants& values, bool require_values,
                         AstContext& ast, Diagnostics& diags) {
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls) {
            if (d->kind != DeclKind::GlobalVar) continue;
            for (VarDecl* g : d->globals) {
                if (!g->is_extern) continue;
                auto it = values.find(g->name);
                if (it != values.end() && g->type_expr) {
                    // `T(v...)`: the declared type converts the value (an int for a float is fine).
                    Expr* ctor = ast.make<Expr>();
                    ctor->kind = ExprKind::TypeCtor;
                    ctor->loc = g->loc;
                    ctor->type_expr = g->type_expr;
                    for (const ConstantScalar& s : it->second) ctor->operands.push_back(literal(ast, s, g->loc));
                    g->init = ctor;
                } else if (!g->init && require_values) {
                    diags.error(g->loc, "extern static const '" + g->name +
                                            "' has no value: link a module that exports it (link=[...]) or give "
                                            "it with .constants({'" + g->name + "': ...})",
                                45001);  // Slang: unresolved external symbol, when it links a kernel
                }
            }
        }
}

std::vector<std::string> extern_constant_names(const std::vector<ModuleAst*>& modules) {
    std::vector<std::string> out;
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls)
            if (d->kind == DeclKind::GlobalVar)
                for (VarDecl* g : d->globals)
                    if (g->is_extern) out.push_back(g->name);
    return out;
}

LinkConstants exported_constants(const std::vector<ModuleAst*>& modules, Diagnostics& diags) {
    LinkConstants out;
    Folder folder(modules);
    for (ModuleAst* m : modules)
        for (Decl* d : m->decls)
            if (d->kind == DeclKind::GlobalVar)
                for (VarDecl* g : d->globals) {
                    if (!g->is_export) continue;
                    std::optional<ConstantValue> v = folder.fold(g->init);
                    if (!v || v->empty())
                        diags.error(g->init ? g->init->loc : g->loc,
                                    "the value of export static const '" + g->name +
                                        "' must be a constant of literals (numbers, vectors, arrays of them)");
                    else
                        out[g->name] = *v;
                }
    return out;
}

std::string render_constants(const LinkConstants& values) {
    std::string out;
    for (const auto& [name, value] : values) {
        if (!out.empty()) out += ", ";
        out += name + "=";
        if (value.size() != 1) out += "(";
        for (size_t k = 0; k < value.size(); ++k) {
            const ConstantScalar& s = value[k];
            if (k) out += ", ";
            if (s.kind == K::Bool) out += s.i ? "true" : "false";
            else if (s.kind == K::Int) out += std::to_string(s.i);
            else {
                char buf[40];
                std::snprintf(buf, sizeof buf, "%.17g", s.f);
                out += buf;
                if (out.find_first_of(".eni", out.size() - std::strlen(buf)) == std::string::npos) out += ".0";
            }
        }
        if (value.size() != 1) out += ")";
    }
    return out;
}

}  // namespace sg::lang
