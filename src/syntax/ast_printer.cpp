// src/syntax/ast_printer.cpp — the S-expression AST dump (format documented in ast_printer.h).
#include "syntax/ast_printer.h"

#include <charconv>

namespace sg::lang {

namespace {

/// Appends to `out`. Each node prints itself starting at the current position; a parent puts
/// each child on a new line one level deeper, and closing parentheses gather on the last line
/// (Lisp style), which keeps dumps short and line-diffable in golden tests. Only what the parser
/// produces is printed, not sema's annotations, so dumps do not change when sema does. Null
/// pointers print as `<null>` instead of crashing: the printer is a debugging aid and may see a
/// tree that another pass left half-built.
class Printer {
public:
    std::string out;

    void module(const ModuleAst& m);
    void decl(const Decl& d, int indent);
    void function(const FunctionDecl& fn, int indent);
    void var(const char* head, const VarDecl& v);
    void stmt(const Stmt& s, int indent);
    void expr(const Expr* e);
    void type(const TypeExpr* t);
    void attributes(const std::vector<Attribute>& attrs);

private:
    void newline(int indent) {
        out += '\n';
        out.append(size_t(indent) * 2, ' ');
    }
    void child(const Stmt* s, int indent) {
        newline(indent);
        if (s) stmt(*s, indent);
        else out += "<null>";
    }
    void operands(const Expr& e) {
        for (const Expr* operand : e.operands) {
            out += ' ';
            expr(operand);
        }
    }
    void float_literal(double value);
};

void Printer::module(const ModuleAst& m) {
    out += "(module";
    if (m.file) out += " " + m.file->name;
    for (const Decl* d : m.decls) {
        newline(1);
        decl(*d, 1);
    }
    out += ")\n";
}

void Printer::decl(const Decl& d, int indent) {
    switch (d.kind) {
    case DeclKind::Import: out += "(import " + d.import_name + ")"; return;
    case DeclKind::Unsupported: out += "(unsupported)"; return;
    case DeclKind::Function: function(*d.function, indent); return;
    case DeclKind::GlobalVar:
        for (size_t i = 0; i < d.globals.size(); ++i) {
            if (i) newline(indent);
            var("global", *d.globals[i]);
        }
        return;
    case DeclKind::Extension:
    case DeclKind::Struct: {
        const StructDecl& s = *d.structure;
        out += (d.kind == DeclKind::Extension ? "(extension " : "(struct ") + s.name;
        for (size_t i = 0; i < s.bases.size(); ++i) out += (i ? ", " : " : ") + s.bases[i];
        for (const VarDecl* f : s.fields) {
            newline(indent + 1);
            var("field", *f);
        }
        out += ')';
        return;
    }
    }
}

void Printer::function(const FunctionDecl& fn, int indent) {
    out += "(function " + fn.name + " -> ";
    if (fn.return_no_diff) out += "no_diff ";
    type(fn.return_type);
    if (!fn.attrs.empty()) out += ' ';
    attributes(fn.attrs);
    for (const VarDecl* p : fn.params) {
        newline(indent + 1);
        var("param", *p);
    }
    if (fn.body) child(fn.body, indent + 1);
    out += ')';
}

void Printer::var(const char* head, const VarDecl& v) {
    out += std::string("(") + head + " " + v.name + " ";
    if (v.type_expr) type(v.type_expr);
    else out += "auto";
    if (v.dir == ParamDir::Out) out += " out";
    if (v.dir == ParamDir::InOut) out += " inout";
    if (v.is_static) out += " static";
    if (v.is_const) out += " const";
    if (v.is_no_diff) out += " no_diff";
    if (v.init) {
        out += " = ";
        expr(v.init);
    }
    out += ')';
}

void Printer::attributes(const std::vector<Attribute>& attrs) {
    for (size_t i = 0; i < attrs.size(); ++i) {
        if (i) out += ' ';
        out += "[" + attrs[i].name;
        if (!attrs[i].args.empty()) {
            out += '(';
            for (size_t j = 0; j < attrs[i].args.size(); ++j) {
                if (j) out += ", ";
                expr(attrs[i].args[j]);
            }
            out += ')';
        }
        out += ']';
    }
}

void Printer::stmt(const Stmt& s, int indent) {
    static const char* kHeads[] = {"block", "expr",  "decl",     "if",     "for",   "while",
                                   "do-while", "break", "continue", "return", "empty", "switch",
                                   "case",     "typealias"};
    out += '(';
    out += kHeads[int(s.kind)];
    if (!s.attrs.empty()) out += ' ';
    attributes(s.attrs);
    switch (s.kind) {
    case StmtKind::Block:
        for (const Stmt* c : s.body) child(c, indent + 1);
        break;
    case StmtKind::Expr:
        out += ' ';
        expr(s.expr);
        break;
    case StmtKind::Decl:
        for (const VarDecl* v : s.decls) {
            out += ' ';
            var("var", *v);
        }
        break;
    case StmtKind::If:
        out += ' ';
        expr(s.cond);
        child(s.then_stmt, indent + 1);
        if (s.else_stmt) child(s.else_stmt, indent + 1);
        break;
    case StmtKind::For:  // `_` marks an omitted clause
        out += ' ';
        if (s.init) stmt(*s.init, indent + 1);  // a decl or expr statement: one line
        else out += '_';
        out += ' ';
        if (s.cond) expr(s.cond);
        else out += '_';
        out += ' ';
        if (s.step) expr(s.step);
        else out += '_';
        child(s.then_stmt, indent + 1);
        break;
    case StmtKind::While:
    case StmtKind::DoWhile:
        out += ' ';
        expr(s.cond);
        child(s.then_stmt, indent + 1);
        break;
    case StmtKind::Return:
        if (s.expr) {
            out += ' ';
            expr(s.expr);
        }
        break;
    case StmtKind::Switch:
        out += ' ';
        expr(s.cond);
        for (const Stmt* c : s.body) child(c, indent + 1);
        break;
    case StmtKind::Case:  // `(case _)` is `default:`
        out += ' ';
        if (s.expr) expr(s.expr);
        else out += '_';
        break;
    case StmtKind::TypeAlias:
        out += ' ';
        out += s.alias->name;
        break;
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Empty: break;
    }
    out += ')';
}

/// Shortest text that reads back as the same double, always with a '.' or an exponent so
/// that `1.0` does not print like the integer `1`.
void Printer::float_literal(double value) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    std::string s(buf, ec == std::errc() ? end : buf);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    out += s;
}

void Printer::expr(const Expr* e) {
    if (!e) {
        out += "<null>";
        return;
    }
    switch (e->kind) {
    case ExprKind::IntLit: out += std::to_string(e->int_value) + e->suffix; return;
    case ExprKind::FloatLit:
        float_literal(e->float_value);
        out += e->suffix;
        return;
    case ExprKind::BoolLit: out += e->int_value ? "true" : "false"; return;
    case ExprKind::Name: out += e->name; return;
    case ExprKind::InitList:
        out += '{';
        for (size_t i = 0; i < e->operands.size(); ++i) {
            if (i) out += ' ';
            expr(e->operands[i]);
        }
        out += '}';
        return;
    default: break;
    }
    out += '(';
    switch (e->kind) {
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Assign: out += op_spelling(e->op); break;
    case ExprKind::Postfix: out += std::string("post") + op_spelling(e->op); break;
    case ExprKind::Conditional: out += "?:"; break;
    case ExprKind::Call: out += "call"; break;
    case ExprKind::Index: out += "index"; break;
    case ExprKind::Member: out += "."; break;
    case ExprKind::Comma: out += ","; break;
    case ExprKind::NoDiff: out += "no_diff"; break;
    case ExprKind::TypeCtor:
    case ExprKind::Cast:
        out += e->kind == ExprKind::Cast ? "cast " : "ctor ";
        type(e->type_expr);
        break;
    default: out += "?"; break;
    }
    operands(*e);
    if (e->kind == ExprKind::Member) out += " " + e->name;
    out += ')';
}

void Printer::type(const TypeExpr* t) {
    if (!t) {
        out += "<null>";
        return;
    }
    out += t->name;
    // Type and value arguments live in two lists; arg_is_value restores the written order.
    if (!t->arg_is_value.empty()) {
        out += '<';
        size_t next_type = 0, next_value = 0;
        for (size_t i = 0; i < t->arg_is_value.size(); ++i) {
            if (i) out += ',';
            if (t->arg_is_value[i]) {
                if (next_value < t->value_args.size()) expr(t->value_args[next_value++]);
            } else if (next_type < t->type_args.size()) {
                type(t->type_args[next_type++]);
            }
        }
        out += '>';
    }
    if (!t->member.empty()) out += "." + t->member;
    // In Slang's type syntax, innermost first: {5, 3} (five arrays of three) prints float[3][5].
    for (auto it = t->array_dims.rbegin(); it != t->array_dims.rend(); ++it) {
        const Expr* dim = *it;
        out += '[';
        expr(dim);
        out += ']';
    }
}

}  // namespace

std::string print_ast(const ModuleAst& module) {
    Printer p;
    p.module(module);
    return std::move(p.out);
}

std::string print_expr(const Expr& expr) {
    Printer p;
    p.expr(&expr);
    return std::move(p.out);
}

std::string print_type(const TypeExpr& type) {
    Printer p;
    p.type(&type);
    return std::move(p.out);
}

std::string print_stmt(const Stmt& stmt) {
    Printer p;
    p.stmt(stmt, 0);
    p.out += '\n';
    return std::move(p.out);
}

}  // namespace sg::lang
