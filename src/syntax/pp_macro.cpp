// src/syntax/pp_macro.cpp — the macro table and C's expansion algorithm (hide sets, argument
// pre-expansion, `#` stringizing, `##` pasting, rescanning), with limits instead of hangs.
#include <algorithm>

#include "syntax/pp_internal.h"
#include "syntax/preprocessor.h"

namespace sg::lang::pp {

namespace {

bool hidden(const HideSet* h, const Macro* m) {
    for (; h; h = h->next)
        if (h->macro == m) return true;
    return false;
}

Kind classify(std::string_view text) {
    if (text.empty()) return Kind::Other;
    char c = text[0];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
        for (char d : text)
            if (!((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || d == '_' || (d >= '0' && d <= '9')))
                return Kind::Other;
        return Kind::Identifier;
    }
    if ((c >= '0' && c <= '9') || c == '.') return Kind::Number;
    if (c == '"') return Kind::String;
    return Kind::Punct;
}

}  // namespace

const Macro* Expander::find(std::string_view name) const {
    auto it = macros_.find(name);
    return it == macros_.end() ? nullptr : it->second.get();
}

void Expander::define(std::unique_ptr<Macro> m) {
    auto it = macros_.find(m->name);
    if (it != macros_.end()) {
        retired_.push_back(std::move(it->second));
        it->second = std::move(m);
    } else {
        std::string name = m->name;
        macros_.emplace(std::move(name), std::move(m));
    }
}

void Expander::undefine(std::string_view name) {
    auto it = macros_.find(name);
    if (it == macros_.end()) return;
    retired_.push_back(std::move(it->second));
    macros_.erase(it);
}

std::string_view Expander::keep(std::string text) {
    arena_.push_back(std::move(text));
    return arena_.back();
}

const HideSet* Expander::hide_with(const HideSet* hide, const Macro* m) {
    hide_sets_.push_back({m, hide});
    return &hide_sets_.back();
}

bool Expander::budget_exceeded(const Token& at) {
    if (made_ <= kMaxExpandedTokens) return false;
    if (!budget_reported_)
        diags_.error(at.loc(), "macro expansion is too large (more than " + std::to_string(kMaxExpandedTokens) +
                                   " tokens)");
    budget_reported_ = true;
    return true;
}

std::vector<Token> Expander::expand(std::vector<Token> in, bool if_mode) {
    std::reverse(in.begin(), in.end());  // a stack: the next token is at the back
    std::vector<Token> out;
    out.reserve(in.size());
    expand_into(in, out, if_mode, 0);
    return out;
}

// Tokens are taken from the back of `stack`; an expansion pushes its result back onto the
// stack, so that it is rescanned together with the tokens that follow it (a macro that expands
// to the name of a function-like macro picks up the arguments written after it).
void Expander::expand_into(std::vector<Token>& stack, std::vector<Token>& out, bool if_mode, int depth) {
    while (!stack.empty()) {
        Token t = stack.back();
        stack.pop_back();
        if (t.kind != Kind::Identifier || t.no_expand || budget_reported_) {
            out.push_back(t);
            continue;
        }
        if (if_mode && t.text == "defined") {
            // defined X | defined ( X )
            bool paren = !stack.empty() && stack.back().is("(");
            if (paren) stack.pop_back();
            bool ok = !stack.empty() && stack.back().kind == Kind::Identifier;
            bool value = false;
            if (ok) {
                value = find(stack.back().text) != nullptr;
                stack.pop_back();
            }
            if (ok && paren) {
                ok = !stack.empty() && stack.back().is(")");
                if (ok) stack.pop_back();
            }
            if (!ok) {
                diags_.error(t.loc(), "expected a macro name after 'defined'");
                stack.clear();
                out.clear();  // the caller sees the error and evaluates nothing
                return;
            }
            Token v = t;
            v.text = value ? "1" : "0";
            v.kind = Kind::Number;
            v.synthesized = true;
            out.push_back(v);
            continue;
        }
        const Macro* m = find(t.text);
        if (!m) {
            out.push_back(t);
            continue;
        }
        if (hidden(t.hide, m)) {
            t.no_expand = true;  // painted: never expanded, even if rescanned elsewhere
            out.push_back(t);
            continue;
        }
        if (!m->function_like) {
            std::vector<Token> result;
            substitute(*m, t, {}, result, depth);
            made_ += result.size();
            if (budget_exceeded(t)) continue;
            for (auto it = result.rbegin(); it != result.rend(); ++it) stack.push_back(*it);
            continue;
        }
        if (stack.empty() || !stack.back().is("(")) {
            out.push_back(t);  // a function-like macro's name without arguments is just a name
            continue;
        }
        if (!expand_function(*m, t, stack, depth)) return;
    }
}

/// Collects the arguments of `m` (the stack's back is the `(`), substitutes them and pushes the
/// result onto the stack. Returns false after an error that ends this expansion.
bool Expander::expand_function(const Macro& m, const Token& name, std::vector<Token>& stack, int depth) {
    const Token open = stack.back();  // where Slang reports a wrong argument count
    stack.pop_back();
    std::vector<std::vector<Token>> args(1);
    int nesting = 0;
    for (;;) {
        if (stack.empty()) {
            diags_.error(name.loc(), "unterminated argument list invoking macro '" + m.name + "'");
            return false;
        }
        Token a = stack.back();
        stack.pop_back();
        if (a.is(")") && nesting == 0) break;
        if (a.is("(")) ++nesting;
        if (a.is(")")) --nesting;
        // Past the named parameters, the variadic one takes the rest, commas included.
        if (a.is(",") && nesting == 0 && !(m.variadic && args.size() >= m.params.size())) {
            args.emplace_back();
            continue;
        }
        a.line_start = false;
        args.back().push_back(a);
    }
    if (m.params.empty() && args.size() == 1 && args[0].empty()) args.clear();
    if (m.variadic && args.size() + 1 == m.params.size()) args.emplace_back();  // F(a) for F(a, ...)
    if (args.size() != m.params.size()) {
        diags_.error(open.loc(), "macro '" + m.name + "' takes " + std::to_string(m.params.size()) +
                                     " argument" + (m.params.size() == 1 ? "" : "s") + ", but " +
                                     std::to_string(args.size()) + " were given", 15501);
        return true;
    }
    if (depth >= kMaxMacroNesting) {
        diags_.error(name.loc(), "macro calls nested too deeply (limit " + std::to_string(kMaxMacroNesting) + ")");
        budget_reported_ = true;  // stop expanding: the rest is copied as it is
        return false;
    }
    std::vector<Token> result;
    substitute(m, name, args, result, depth);
    made_ += result.size();
    if (budget_exceeded(name)) return true;
    for (auto it = result.rbegin(); it != result.rend(); ++it) stack.push_back(*it);
    return true;
}

/// The body of `m` with its parameters replaced: `#p` by the argument's spelling as a string,
/// a `##` operand by the argument as written, any other use by the argument fully expanded.
/// Every result token hides `m` (and whatever the name token hid).
void Expander::substitute(const Macro& m, const Token& name, const std::vector<std::vector<Token>>& args,
                          std::vector<Token>& result, int depth) {
    auto param_index = [&](const Token& t) -> int {
        if (t.kind != Kind::Identifier) return -1;
        for (size_t k = 0; k < m.params.size(); ++k)
            if (m.params[k] == t.text) return int(k);
        return -1;
    };
    std::vector<std::vector<Token>> expanded(args.size());
    std::vector<bool> have_expanded(args.size(), false);
    const std::vector<Token>& body = m.body;
    bool paste_next = false;  // the previous body token was `##`: paste onto result.back()
    for (size_t i = 0; i < body.size(); ++i) {
        const Token& b = body[i];
        std::vector<Token> piece;
        if (m.function_like && b.is("#") && i + 1 < body.size() && param_index(body[i + 1]) >= 0) {
            std::string s = "\"";
            for (const Token& a : args[size_t(param_index(body[i + 1]))]) {
                if (s.size() > 1 && a.space_before) s += ' ';
                for (char c : a.text) {
                    if (a.kind == Kind::String && (c == '"' || c == '\\')) s += '\\';
                    s += c;
                }
            }
            Token str = b;
            str.text = keep(s + "\"");
            str.kind = Kind::String;
            str.synthesized = true;
            piece.push_back(str);
            ++i;
        } else if (b.is("##")) {
            paste_next = true;
            continue;
        } else if (int p = param_index(b); p >= 0) {
            bool pasted = paste_next || (i + 1 < body.size() && body[i + 1].is("##"));
            if (pasted) {
                piece = args[size_t(p)];
            } else {
                if (!have_expanded[size_t(p)]) {
                    std::vector<Token> stack(args[size_t(p)].rbegin(), args[size_t(p)].rend());
                    expand_into(stack, expanded[size_t(p)], false, depth + 1);
                    have_expanded[size_t(p)] = true;
                }
                piece = expanded[size_t(p)];
            }
            if (!piece.empty()) piece[0].space_before = b.space_before;
        } else {
            piece.push_back(b);
        }
        if (paste_next && !result.empty() && !piece.empty()) {
            Token& left = result.back();
            std::string joined = std::string(left.text) + std::string(piece[0].text);
            left.text = keep(std::move(joined));
            left.kind = classify(left.text);
            left.synthesized = true;
            left.no_expand = false;
            piece.erase(piece.begin());
        }
        paste_next = false;
        for (Token& t : piece) result.push_back(t);
    }
    const HideSet* hide = hide_with(name.hide, &m);
    for (size_t k = 0; k < result.size(); ++k) {
        result[k].hide = hide;
        result[k].line_start = false;
        if (k == 0) result[k].space_before = name.space_before;
    }
}

}  // namespace sg::lang::pp
