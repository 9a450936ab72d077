// tests/cpp/parser_test_util.h — small helpers shared by the parser tests: parse a snippet,
// print it, find nodes, format locations.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "syntax/ast_printer.h"
#include "syntax/parser.h"

#ifndef SG_CONFORMANCE_DIR
#define SG_CONFORMANCE_DIR ""
#endif
#ifndef SG_SOURCE_DIR
#define SG_SOURCE_DIR "."
#endif

namespace sg::lang::test {

/// The conformance kernels: the build's SG_CONFORMANCE_DIR, else the repository's own copy.
inline std::string conformance_dir() {
    std::string dir = SG_CONFORMANCE_DIR;
    return dir.empty() ? std::string(SG_SOURCE_DIR) + "/tests/conformance" : dir;
}

/// One parsed source file with everything that owns it. CompileError (error limit) propagates.
struct Parsed {
    SourceManager sources;
    AstContext ctx;
    Diagnostics diags;
    const SourceFile* file = nullptr;
    ModuleAst* module = nullptr;

    explicit Parsed(std::string text, std::string name = "m.slang") {
        file = sources.add(std::move(name), std::move(text));
        module = parse_module(file, ctx, diags);
    }
    std::string errors() const { return diags.render(); }
    std::string ast() const { return print_ast(*module); }
    /// The i-th top-level function (counting only function declarations).
    const FunctionDecl* function(size_t i = 0) const {
        for (const Decl* d : module->decls)
            if (d->kind == DeclKind::Function && i-- == 0) return d->function;
        return nullptr;
    }
    /// The statements of the body of the first function.
    const std::vector<Stmt*>& body() const { return function()->body->body; }
};

inline std::unique_ptr<Parsed> parse(std::string text) {
    return std::make_unique<Parsed>(std::move(text));
}

/// `line:col` of a location, for comparing node positions.
inline std::string line_col(SourceLoc loc) {
    if (!loc.valid()) return "<none>";
    auto [line, col] = loc.file->line_col(loc.offset);
    return std::to_string(line) + ":" + std::to_string(col);
}

/// Parses `void f() { <statements> }` (which must be error-free) and prints the body's
/// statements, one per line.
inline std::string statements(const std::string& code) {
    Parsed p("void f() {\n" + code + "\n}");
    EXPECT_FALSE(p.diags.has_errors()) << code << "\n" << p.errors();
    std::string out;
    if (p.function() && p.function()->body)
        for (const Stmt* s : p.body()) out += print_stmt(*s);
    return out;
}

/// Parses the expression statement `<code>;` (which must be error-free) and prints it.
inline std::string expression(const std::string& code) {
    Parsed p("void f() { " + code + "; }");
    EXPECT_FALSE(p.diags.has_errors()) << code << "\n" << p.errors();
    if (!p.function() || !p.function()->body || p.body().size() != 1 ||
        p.body()[0]->kind != StmtKind::Expr)
        return "<not one expression statement>";
    return print_expr(*p.body()[0]->expr);
}

/// Errors from parsing `code`, rendered (empty when there are none).
inline std::string errors_of(const std::string& code) {
    try {
        return Parsed(code).errors();
    } catch (const CompileError& e) {
        return e.what();
    }
}

inline bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

}  // namespace sg::lang::test
