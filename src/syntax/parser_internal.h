// src/syntax/parser_internal.h — the recursive-descent Parser shared by parser*.cpp (private).
//
// The parser is split by concept: parser.cpp (cursor, recovery, top-level declarations),
// parser_type.cpp (types and the speculative scanners that decide "declaration or
// expression?"), parser_stmt.cpp (statements and variable declarators) and parser_expr.cpp
// (expressions). Each parse function carries its grammar rule in a comment above it.
//
// Error handling: a syntax error is reported once and then thrown as SyntaxError, which unwinds
// to the nearest recovery point (a statement list, a struct body or the top level); that point
// skips to the next `;` or `}` and continues, so one run reports several independent errors
// without cascades. Nesting depth is checked *before* each recursion (DepthGuard), so
// pathological input (100,000 '(') is rejected with one diagnostic instead of a stack overflow;
// the enclosing top-level declaration is then skipped as a whole.
//
// Locations: statements, types, attributes and prefix or primary expressions are located at
// their first token; infix and postfix expressions at their operator token (Binary, Assign,
// Comma, Conditional at '?', Index at '[', Postfix at '++'/'--', Member at the member name); a
// Call or TypeCtor at the start of its callee or type; named declarations (VarDecl,
// FunctionDecl, StructDecl) at their name, the Decl that wraps a top-level declaration at its
// first token.
#pragma once

#include <array>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "syntax/ast.h"
#include "syntax/lexer.h"
#include "syntax/parser.h"

namespace sg::lang::detail {

/// Thrown after a syntax error has been reported; caught at recovery points. Never escapes
/// parse_module.
struct SyntaxError {};

/// Thrown after "nesting too deep" has been reported. Unlike SyntaxError it unwinds the whole
/// top-level declaration, which is then skipped: resuming inside a 100,000-deep construct would
/// only produce a cascade of follow-up errors.
struct NestingTooDeep {};

/// Modifiers written before a declaration (`static const`, `no_diff`, `in out`, ...).
struct Modifiers {
    SourceLoc first;  ///< location of the first modifier (invalid when there is none)
    bool is_static = false;
    bool is_const = false;
    bool is_no_diff = false;
    bool is_in = false;
    bool is_out = false;
    bool is_inout = false;
    bool is_constref = false;  ///< `__constref` (parameters)
    SourceLoc link;   ///< where `extern` or `export` was written (invalid when neither)
    bool is_extern = false;
    bool is_export = false;
    SourceLoc groupshared;  ///< where `groupshared` was written (invalid when absent)
    SourceLoc uniform;      ///< where `uniform` was written: a no-op on a parameter, tier 3 elsewhere
    SourceLoc column_major; ///< where `column_major` was written
    SourceLoc override_loc; ///< where `override` was written (a method replacing an interface's default)
    SourceLoc visibility_loc;  ///< where `public` / `internal` / `private` was written
    Visibility visibility = Visibility::Default;
};

inline bool is_reserved_word(TokenKind k);

class Parser {
public:
    Parser(const SourceFile* file, std::vector<Token> tokens, AstContext& ctx, Diagnostics& diags)
        : file_(file), tokens_(std::move(tokens)), ctx_(ctx), diags_(diags) {}

    ModuleAst* parse_module();

    // ---- token cursor (parser.cpp)
    const Token& tok() const { return tokens_[pos_]; }
    TokenKind kind_at(size_t index) const {
        return index < tokens_.size() ? tokens_[index].kind : TokenKind::EndOfFile;
    }
    TokenKind kind(size_t ahead = 0) const { return kind_at(pos_ + ahead); }
    bool at(TokenKind k) const { return tok().kind == k; }
    bool at_word(std::string_view word) const {
        return at(TokenKind::Identifier) && text(tok()) == word;
    }
    bool match(TokenKind k);
    Token advance();
    Token expect(TokenKind k);
    void expect_closing_angle();
    /// The text of tokens [from, to), spaced as written ("IGet<float>", "IPair<A, B>").
    std::string tokens_text(size_t from, size_t to) const;
    std::string_view text(const Token& t) const {
        return std::string_view(file_->text).substr(t.offset, t.length);
    }
    SourceLoc loc(const Token& t) const { return {file_, t.offset}; }
    SourceLoc loc() const { return loc(tok()); }

    // ---- diagnostics and recovery (parser.cpp)
    void error(SourceLoc where, std::string message);
    void unsupported(SourceLoc where, std::string_view construct);
    [[noreturn]] void fail_expected(std::string_view what);
    void fail_missing_semicolon();  ///< throws, with a note, when the ';' belongs on an earlier line
    [[noreturn]] void fail(SourceLoc where, std::string message);
    std::string describe(const Token& t) const;
    void synchronize();
    void enter_nesting();

    /// Counts nesting levels for the lifetime of a parse function (and, with deepen(), the
    /// left-deep chains built by loops such as `a + b + c` or `x[0][1].y`).
    class DepthGuard {
    public:
        explicit DepthGuard(Parser& parser, int levels = 1) : parser_(parser) {
            for (int i = 0; i < levels; ++i) deepen();
        }
        ~DepthGuard() { parser_.depth_ -= levels_; }
        DepthGuard(const DepthGuard&) = delete;
        DepthGuard& operator=(const DepthGuard&) = delete;
        void deepen() {
            parser_.enter_nesting();  // throws before counting when the limit is reached
            ++levels_;
        }

    private:
        Parser& parser_;
        int levels_ = 0;
    };

    // ---- top-level declarations (parser.cpp)
    void parse_top_level_decl(std::vector<Decl*>& out);
    Decl* parse_import();
    Decl* parse_struct(SourceLoc first);
    void parse_struct_member(StructDecl* s);
    /// `struct Item { ... }` inside struct `outer`: a module struct `outer.Item` and a member
    /// alias `Item` of outer (parser_nested_types.cpp).
    void parse_nested_struct(StructDecl* outer, const Modifiers& lead);
    void add_member_alias(StructDecl* s, const Token& name, TypeExpr* type);
    bool parse_visibility(Modifiers& m);
    void parse_struct_body(StructDecl* s);
    Decl* parse_function_or_global(SourceLoc first, std::vector<Attribute> attrs, const Modifiers& vis);
    void parse_function_rest(FunctionDecl* fn);
    VarDecl* parse_param();
    void parse_attributes(std::vector<Attribute>& out);
    Modifiers parse_modifiers();
    /// `extern` / `export` outside a global declaration: reported.
    void reject_link_modifiers(const Modifiers& m) {
        if (m.link.valid())
            unsupported(m.link, std::string("'") + (m.is_extern ? "extern" : "export") +
                                    "' outside a global 'static const'");
    }
    /// `uniform` anywhere but on a parameter (a shader parameter: tier 3): reported.
    void reject_uniform(const Modifiers& m) {
        if (m.uniform.valid()) unsupported(m.uniform, "'uniform' modifier outside a parameter");
    }
    bool report_unsupported_declaration(std::vector<Decl*>* out);
    Decl* make_decl(DeclKind kind, SourceLoc loc);

    // ---- type declarations: typealias, typedef, enum (parser_typedecl.cpp)
    TypeAliasDecl* parse_typealias();
    TypeAliasDecl* parse_typedef();
    EnumDecl* parse_enum();
    /// Whether the cursor starts `typealias X =` or `typedef T X` (the words are contextual).
    bool at_type_alias() const;
    /// Whether `name` is a type declared so far (struct, typealias, typedef, enum): `(name)x`
    /// is then a cast.
    bool is_declared_type_name(std::string_view name) const { return type_names_.count(std::string(name)) > 0; }

    // ---- generics, interfaces, struct members (parser_generics.cpp)
    void parse_generic_params(std::vector<GenericParam>& out);
    /// `where T : IA (& IB)*`, any number of them, after a function's parameters (parser_where.cpp).
    void parse_where_clauses(FunctionDecl* fn);
    /// `operator+` / `operator()` at the cursor: its function name and location (parser_operators.cpp);
    /// false, consuming nothing, when the cursor is not at `operator`.
    bool parse_operator_name(std::string& name, SourceLoc& where);
    /// `property` / `__subscript` in a struct: its accessors as methods (parser_accessors.cpp).
    void parse_accessor_member(StructDecl* s, std::vector<Attribute> attrs, const Modifiers& lead);
    /// `extension S (: bases)? { members }` (parser_extensions.cpp).
    Decl* parse_extension(SourceLoc first);
    /// `: IA (& IB)*` of a generic parameter or where clause: the first in p.constraint.
    void parse_constraints(GenericParam& p);
    /// Merges fn's where clauses into its generic parameters; with `final`, one naming none of
    /// them is reported (else it waits for a `__generic<...>` prefix's parameters).
    void apply_where_clauses(FunctionDecl* fn, bool final);
    Decl* parse_interface(SourceLoc first);
    void parse_bases(StructDecl* s);

    // ---- types and speculation (parser_type.cpp)
    TypeExpr* parse_type();
    void parse_generic_args(TypeExpr* type);
    void parse_array_dims(std::vector<Expr*>& dims);
    TypeExpr* parse_declarator_dims(TypeExpr* type);
    TypeExpr* array_type_from_generic(TypeExpr* generic);
    size_t skip_balanced(size_t i, TokenKind open, TokenKind close) const;
    size_t scan_generic_args(size_t i) const;
    size_t scan_type(size_t i) const;
    bool looks_like_declaration(size_t i) const;
    /// `Type keyword =` / `;` / `,` / `[` at token `i`: Slang takes a reserved word as the name of
    /// a declared variable (`int return = 1;`).
    bool keyword_declarator_at(size_t i) const;
    bool at_declaration_statement() const;
    bool looks_like_array_type_ctor() const;
    bool looks_like_generic_type_ctor() const;
    bool looks_like_generic_member_access() const;

    // ---- statements and declarators (parser_stmt.cpp)
    Stmt* parse_block();
    Stmt* parse_statement();
    Stmt* parse_if(SourceLoc where);
    Stmt* parse_for(SourceLoc where);
    Stmt* parse_while(SourceLoc where);
    Stmt* parse_do_while(SourceLoc where);
    Stmt* parse_switch(SourceLoc where);
    Stmt* parse_case_label(SourceLoc where);
    Stmt* parse_return(SourceLoc where);
    Stmt* parse_decl_statement();
    Stmt* parse_expression_statement();
    void parse_declarators(TypeExpr* type, const VarDecl& proto, std::vector<VarDecl*>& out);
    void parse_inferred_declarators(const VarDecl& proto, std::vector<VarDecl*>& out);
    Stmt* make_stmt(StmtKind kind, SourceLoc loc);

    // ---- reserved words that name variables (parser_stmt.cpp)
    /// As in Slang, a reserved word declared as a variable, parameter or field name (`int in = 1;`)
    /// is read as that name in expressions while the declaration is in scope: the parser keeps
    /// the words declared in the enclosing blocks, for statements, functions and struct bodies
    /// (a braceless branch or while/do body declares in the enclosing scope, as sema does).
    class NameScope {
    public:
        explicit NameScope(Parser& parser) : parser_(parser), mark_(parser.keyword_names_.size()) {}
        ~NameScope() {
            while (parser_.keyword_names_.size() > mark_) {
                --parser_.keyword_name_counts_[size_t(parser_.keyword_names_.back()) - size_t(TokenKind::KwIf)];
                parser_.keyword_names_.pop_back();
            }
        }
        NameScope(const NameScope&) = delete;
        NameScope& operator=(const NameScope&) = delete;

    private:
        Parser& parser_;
        size_t mark_;
    };
    /// Records `name` when it is a reserved word (a declaration's name token).
    void declare_name(const Token& name);
    /// Whether the reserved word `k` names a variable declared in scope.
    bool names_variable(TokenKind k) const;
    /// Whether an expression reads the reserved word `k` as a name: in the scope of its
    /// declaration, and after it (a use out of scope is then sema's "unknown name", as Slang's
    /// undefined identifier), except `true`, `false` and `no_diff`, which start expressions again.
    bool reads_as_name(TokenKind k) const;
    /// A variable name: an identifier, or a reserved word (as Slang allows).
    bool at_variable_name() const { return at(TokenKind::Identifier) || is_reserved_word(kind()); }
    /// At a statement's start: a reserved word that names a variable and is used as one
    /// (`in = in + 3;`), not a declaration's modifier or keyword (`const x = 1;`).
    bool at_name_statement() const;

    // ---- expressions (parser_expr.cpp)
    Expr* parse_expression();
    Expr* parse_assignment();
    Expr* parse_conditional();
    Expr* parse_binary(int min_precedence);
    Expr* parse_unary();
    Expr* parse_postfix();
    Expr* parse_primary();
    Expr* parse_init_list();
    Expr* parse_literal();
    void parse_arguments(Expr* node, TokenKind close);
    Expr* make_expr(ExprKind kind, SourceLoc loc);

    /// Precedence of the additive level: generic value arguments (`vector<float, 2 * 2>`) are
    /// parsed from here up, so that `>` and `>>` always close the argument list. (An argument
    /// that starts with a name is a type: `Tensor<float, (N + 1)>` needs its parentheses.)
    static constexpr int kAdditivePrecedence = 9;
    /// Bound on speculative lookahead, so that scanning stays linear on adversarial input.
    static constexpr size_t kMaxLookahead = 512;
    static constexpr size_t npos = size_t(-1);

private:
    const SourceFile* file_;
    std::vector<Token> tokens_;
    size_t pos_ = 0;
    AstContext& ctx_;
    Diagnostics& diags_;
    int depth_ = 0;
    int64_t last_error_offset_ = -1;  ///< suppresses a second error at the same token
    std::set<std::string> type_names_;  ///< user type names declared so far (for C-style casts)
    std::string struct_prefix_;         ///< "Outer." while a nested struct is parsed
    bool in_generic_nest_ = false;      ///< while a struct nested in a generic struct is parsed
    std::vector<Decl*> lifted_;         ///< nested structs, added to the module after their container
    std::vector<TokenKind> keyword_names_;  ///< reserved words declared as names in scope (NameScope)
    uint64_t keyword_names_ever_ = 0;       ///< bit k - KwIf: reserved word k was declared as a name
    /// Per reserved word (k - KwIf): how many of keyword_names_ it is (constant-time lookups).
    std::array<uint32_t, size_t(TokenKind::KwNoDiff) - size_t(TokenKind::KwIf) + 1> keyword_name_counts_{};
};

/// `'text'`: how diagnostics quote source text. (Built by appending: GCC 12 gives a false
/// -Wrestrict warning on `"'" + std::string(...)`.)
inline std::string quoted(std::string_view text) {
    std::string out = "'";
    out.append(text).append("'");
    return out;
}

/// `float`, `uint3`, `float3x3`, `int64_t`, ...: the scalar, vector and matrix names.
/// if, for, return, ... no_diff: the words the lexer reserves (TokenKind::KwIf .. KwNoDiff).
inline bool is_reserved_word(TokenKind k) { return k >= TokenKind::KwIf && k <= TokenKind::KwNoDiff; }
bool is_builtin_type_name(std::string_view name);
/// `vector`, `matrix`, `DifferentialPair` and the 18 tensor names: written with `<...>`.
bool is_generic_type_name(std::string_view name);

}  // namespace sg::lang::detail
