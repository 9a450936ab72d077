// src/syntax/parser_where.cpp — constraints on generic parameters: conjunctions `T : IA & IB`
// and `where` clauses after a function's parameters (`f<T>(T x) where T : IA where T : IB`).
// A where clause adds its constraints to the generic parameter it names; the checker sees one
// parameter with all of them (GenericParam::constraint and more_constraints).
#include "syntax/parser_internal.h"

namespace sg::lang::detail {

// constraints = constraint ("&" constraint)*
// constraint = ident generic_args?      (a generic interface with its arguments: `IGet<T>`)
void Parser::parse_constraints(GenericParam& p) {
    do {
        size_t first = pos_;
        Token id = expect(TokenKind::Identifier);
        auto* te = ctx_.make<TypeExpr>();
        te->loc = loc(id);
        te->name = std::string(text(id));
        if (at(TokenKind::Less)) parse_generic_args(te);
        p.constraint_types.push_back(te);
        std::string name = te->name;
        if (!te->arg_is_value.empty()) name = tokens_text(first, pos_);
        if (p.constraint.empty()) p.constraint = std::move(name);
        else if (name != p.constraint) p.more_constraints.push_back(std::move(name));
    } while (match(TokenKind::Amp));
}

// where_clause = "where" ident ":" constraints
//              | "where" ident "==" ident        (both type parameters take one argument)
void Parser::parse_where_clauses(FunctionDecl* fn) {
    while (at_word("where")) {
        advance();
        if (at_word("optional")) {
            unsupported(loc(), "an optional constraint ('where optional')");
            throw SyntaxError{};
        }
        GenericParam clause;
        Token name = expect(TokenKind::Identifier);
        clause.loc = loc(name);
        clause.name = std::string(text(name));
        if (match(TokenKind::EqualEqual)) {  // `where T == U`: one argument for both
            Token other = expect(TokenKind::Identifier);
            if (at(TokenKind::Less) || at(TokenKind::Dot) || at(TokenKind::LBracket)) {
                unsupported(loc(other), "a type equality with a type other than a type parameter in a 'where' clause");
                throw SyntaxError{};
            }
            clause.same_as.emplace_back(text(other));
            clause.same_as_locs.push_back(loc(other));
            fn->where_clauses.push_back(std::move(clause));
            continue;
        }
        expect(TokenKind::Colon);
        parse_constraints(clause);
        fn->where_clauses.push_back(std::move(clause));
    }
    apply_where_clauses(fn, false);
}

void Parser::apply_where_clauses(FunctionDecl* fn, bool final) {
    std::vector<GenericParam> left;
    for (GenericParam& clause : fn->where_clauses) {
        GenericParam* p = nullptr;
        for (GenericParam& g : fn->generic_params)
            if (!g.is_value && g.name == clause.name) p = &g;
        if (!p) {
            if (!final) {
                left.push_back(std::move(clause));
                continue;
            }
            if (fn->generic_params.empty())  // Slang reads no clause there (20001, unexpected token)
                error(clause.loc, "a 'where' clause constrains a generic function's own type parameters; '" +
                                      (fn->member_name.empty() ? fn->name : fn->member_name) + "' is not generic");
            else  // Slang: 30015 undefined identifier
                diags_.error(clause.loc, "'" + clause.name + "' in a 'where' clause is not a generic type parameter of '" +
                                             (fn->member_name.empty() ? fn->name : fn->member_name) + "'",
                             30015);
            continue;
        }
        for (size_t k = 0; k < clause.same_as.size(); ++k) {
            bool known = false;
            for (const GenericParam& g : fn->generic_params) known |= !g.is_value && g.name == clause.same_as[k];
            if (!known)  // `where T == float`: Slang fixes T; not here
                unsupported(clause.same_as_locs[k], "a type equality with a type other than a type parameter in a 'where' clause");
            else if (clause.same_as[k] != p->name) {
                p->same_as.push_back(clause.same_as[k]);
                p->same_as_locs.push_back(clause.same_as_locs[k]);
            }
        }
        if (clause.constraint.empty() && clause.more_constraints.empty()) continue;  // `where T == U` only
        std::vector<std::string> all{clause.constraint};
        all.insert(all.end(), clause.more_constraints.begin(), clause.more_constraints.end());
        p->constraint_types.insert(p->constraint_types.end(), clause.constraint_types.begin(),
                                   clause.constraint_types.end());
        for (std::string& c : all) {
            bool have = c == p->constraint;
            for (const std::string& m : p->more_constraints) have |= m == c;
            if (have) continue;
            if (p->constraint.empty()) p->constraint = std::move(c);
            else p->more_constraints.push_back(std::move(c));
        }
    }
    fn->where_clauses = std::move(left);
}

}  // namespace sg::lang::detail

namespace sg::lang::detail {

std::string Parser::tokens_text(size_t from, size_t to) const {
    std::string out;
    for (size_t k = from; k < to && k < tokens_.size(); ++k) {
        out += text(tokens_[k]);
        if (tokens_[k].kind == TokenKind::Comma) out += ' ';
    }
    return out;
}

}  // namespace sg::lang::detail
