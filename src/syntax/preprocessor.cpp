// src/syntax/preprocessor.cpp — preprocess: directives, conditional inclusion, `#include`, and the
// output text with its origin map.
#include "syntax/preprocessor.h"

#include <algorithm>
#include <set>

#include "syntax/lexer.h"
#include "syntax/pp_internal.h"

namespace sg::lang {

namespace {

using pp::Kind;
using pp::Token;

/// The expanded text and its origin map, built token by token.
class Output {
public:
    void emit(const Token& t) {
        if (too_large_) return;
        bool contiguous = prev_ && !t.synthesized && !prev_synthesized_ && t.file == prev_ &&
                          t.index != pp::kNoIndex && t.index == prev_index_ + 1;
        if (contiguous) {
            // Tokens that follow each other in their file: copy what lies between them (blanks,
            // comments, newlines), so the output keeps the source's columns and lines.
            std::string_view gap = std::string_view(t.file->text).substr(prev_end_, t.offset - prev_end_);
            if (gap.find('\\') == std::string_view::npos) text_ += gap;
            else text_ += ' ';
        } else if (!text_.empty()) {
            text_ += t.line_start ? '\n' : ' ';  // never glue two tokens into one
        }
        const OriginSegment* last = segments_.empty() ? nullptr : &segments_.back();
        bool continues = last && !last->fixed && !t.synthesized && last->file == t.file &&
                         uint64_t(last->offset) + (text_.size() - last->out_offset) == t.offset;
        if (!continues) segments_.push_back({uint32_t(text_.size()), t.file, t.offset, t.synthesized});
        text_ += t.text;
        prev_ = t.file;
        prev_index_ = t.index;
        prev_end_ = t.offset + uint32_t(t.text.size());
        prev_synthesized_ = t.synthesized;
        if (text_.size() > kMaxSourceBytes) too_large_ = true;
    }
    bool too_large() const { return too_large_; }
    std::string take_text() { return std::move(text_); }
    std::vector<OriginSegment> take_segments() { return std::move(segments_); }

private:
    std::string text_;
    std::vector<OriginSegment> segments_;
    const SourceFile* prev_ = nullptr;
    uint32_t prev_index_ = 0, prev_end_ = 0;
    bool prev_synthesized_ = false, too_large_ = false;
};

/// One open `#if` group.
struct Conditional {
    SourceLoc loc;        ///< the directive's name (Slang's "see 'if' directive" note)
    bool parent_active;   ///< the text around the group is active
    bool taken;           ///< some branch of the group was (or is being) taken
    bool active;          ///< the current branch is active
    bool seen_else;
    std::string_view directive;  ///< "if", "ifdef" or "ifndef"
};

class Preprocessor {
public:
    Preprocessor(SourceManager& sources, SourceLoader& loader, Diagnostics& diags)
        : sources_(sources), loader_(loader), diags_(diags), expander_(diags) {}

    void run_file(const SourceFile* file, int depth);
    Output& output() { return out_; }

private:
    void directive(const SourceFile* file, const std::vector<Token>& line, std::vector<Conditional>& conds,
                   int depth);
    void define(const std::vector<Token>& line);
    void include(const SourceFile* file, const std::vector<Token>& line, int depth);
    bool condition(const std::vector<Token>& line);
public:
    void set_key(const SourceFile* file, std::string key) { keys_[file] = std::move(key); }

private:

    SourceManager& sources_;
    SourceLoader& loader_;
    Diagnostics& diags_;
    pp::Expander expander_;
    Output out_;
    std::set<std::string> once_;                       ///< keys of `#pragma once` files
    std::map<const SourceFile*, std::string> keys_;    ///< key of each file being read
};

/// The raw text of a directive line from token `from` on (for `#error` messages).
std::string rest_of_line(const std::vector<Token>& line, size_t from) {
    if (from >= line.size()) return "";
    const Token& a = line[from];
    const Token& b = line.back();
    if (a.file != b.file || b.offset < a.offset) return std::string(a.text);
    return std::string(a.file->text.substr(a.offset, b.offset + b.text.size() - a.offset));
}

void Preprocessor::run_file(const SourceFile* file, int depth) {
    std::vector<Token> toks = pp::lex_file(file, diags_);
    std::vector<Conditional> conds;
    size_t i = 0, n = toks.size();
    auto active = [&] { return conds.empty() || conds.back().active; };
    auto directive_start = [&](size_t k) { return toks[k].line_start && toks[k].is("#"); };
    while (i < n && !out_.too_large()) {
        if (directive_start(i)) {
            size_t j = i + 1;
            while (j < n && !toks[j].line_start) ++j;
            std::vector<Token> line(toks.begin() + long(i), toks.begin() + long(j));
            directive(file, line, conds, depth);
            i = j;
            continue;
        }
        size_t j = i;
        while (j < n && !directive_start(j)) ++j;
        if (active()) {
            std::vector<Token> text(toks.begin() + long(i), toks.begin() + long(j));
            for (const Token& t : expander_.expand(std::move(text), false)) out_.emit(t);
        }
        i = j;
    }
    if (out_.too_large()) {
        diags_.error({file, 0}, "preprocessed source is too large (the limit is " + std::to_string(kMaxSourceBytes) +
                                    " bytes)");
        return;
    }
    if (!conds.empty()) {
        diags_.error({file, uint32_t(file->text.size())}, "end of file encountered during preprocessor conditional",
                     15000);
        diags_.note(conds.back().loc, "see '" + std::string(conds.back().directive) + "' directive");
    }
}

bool Preprocessor::condition(const std::vector<Token>& line) {
    size_t errors = diags_.error_count();
    std::vector<Token> expr = expander_.expand(std::vector<Token>(line.begin() + 2, line.end()), true);
    if (diags_.error_count() != errors) return false;
    bool value = false;
    // Where a missing operand is reported: just past the line's last token, as Slang does.
    const Token& last = line.back();
    SourceLoc end{last.file, last.offset + uint32_t(last.text.size())};
    if (end.offset > last.file->text.size()) end.offset = uint32_t(last.file->text.size());
    return pp::evaluate_condition(expr, line.size() > 2 ? end : line[1].loc(), diags_, value) && value;
}

void Preprocessor::directive(const SourceFile* file, const std::vector<Token>& line, std::vector<Conditional>& conds,
                             int depth) {
    if (line.size() < 2) return;  // `#` alone: the null directive
    const Token& name = line[1];
    std::string_view d = name.kind == Kind::Identifier ? name.text : std::string_view();
    bool active = conds.empty() || conds.back().active;
    if (d == "if" || d == "ifdef" || d == "ifndef") {
        Conditional c{name.loc(), active, false, false, false, d};
        if (active) {
            if (d == "if") {
                c.active = condition(line);
            } else if (line.size() < 3 || line[2].kind != Kind::Identifier) {
                diags_.error(line.size() < 3 ? name.loc() : line[2].loc(), "expected a macro name after '#" + std::string(d) + "'");
            } else {
                c.active = (expander_.find(line[2].text) != nullptr) == (d == "ifdef");
            }
            c.taken = c.active;
        }
        conds.push_back(c);
        return;
    }
    if (d == "elif" || d == "else" || d == "endif") {
        if (conds.empty()) {
            diags_.error(name.loc(), "'#" + std::string(d) + "' without '#if'", 15001);
            return;
        }
        Conditional& c = conds.back();
        if (d == "endif") {
            conds.pop_back();
            return;
        }
        if (c.seen_else) {
            diags_.error(name.loc(), "'#" + std::string(d) + "' after '#else'", 15002);
            c.active = false;
            return;
        }
        c.seen_else = d == "else";
        if (!c.parent_active || c.taken) {
            c.active = false;
            return;
        }
        c.active = d == "else" ? true : condition(line);
        c.taken = c.active;
        return;
    }
    if (!active) return;  // other directives of skipped text are not even looked at
    if (d == "define") return define(line);
    if (d == "undef") {
        if (line.size() < 3 || line[2].kind != Kind::Identifier)
            diags_.error(name.loc(), "expected a macro name after '#undef'");
        else
            expander_.undefine(line[2].text);
        return;
    }
    if (d == "include") return include(file, line, depth);
    if (d == "pragma") {
        if (line.size() >= 3 && line[2].text == "once") once_.insert(keys_[file]);
        return;  // other pragmas (warning, pack_matrix, ...) do not change this subset
    }
    if (d == "error") {
        diags_.error(name.loc(), "#error: " + rest_of_line(line, 2), 15900);
        return;
    }
    if (d == "warning") {
        diags_.warning(name.loc(), "#warning: " + rest_of_line(line, 2), 15901);
        return;
    }
    if (d == "line" || d == "version" || d == "extension") {
        diags_.unsupported(name.loc(), "preprocessor directive '#" + std::string(d) + "'");
        return;
    }
    diags_.error(name.loc(), "unknown preprocessor directive '" + std::string(name.text) + "'", 15101);
}

// define = "#" "define" name ("(" params? ")")? body     (no blank between name and "(")
void Preprocessor::define(const std::vector<Token>& line) {
    if (line.size() < 3 || line[2].kind != Kind::Identifier) {
        diags_.error(line.size() < 3 ? line[1].loc() : line[2].loc(), "expected a macro name after '#define'", 15102);
        return;
    }
    auto m = std::make_unique<pp::Macro>();
    m->name = std::string(line[2].text);
    m->loc = line[2].loc();
    size_t i = 3;
    if (i < line.size() && line[i].is("(") && !line[i].space_before) {
        m->function_like = true;
        ++i;
        bool closed = false;
        while (i < line.size()) {
            const Token& t = line[i++];
            if (t.is(")") && m->params.empty() && !m->variadic) {
                closed = true;
                break;
            }
            if (t.is("...")) {
                m->variadic = true;
                m->params.push_back("__VA_ARGS__");
            } else if (t.kind == Kind::Identifier && !m->variadic) {
                m->params.push_back(std::string(t.text));
                if (i < line.size() && line[i].is("...")) m->variadic = true, ++i;
            } else {
                diags_.error(t.loc(), "expected a parameter name in the definition of macro '" + m->name + "'");
                return;
            }
            if (i < line.size() && line[i].is(")")) {
                closed = true;
                ++i;
                break;
            }
            if (i >= line.size() || !line[i].is(",") || m->variadic) {
                diags_.error(i < line.size() ? line[i].loc() : t.loc(),
                             "expected ',' or ')' in the parameters of macro '" + m->name + "'");
                return;
            }
            ++i;
        }
        if (!closed) {
            diags_.error(line.back().loc(), "expected ')' in the parameters of macro '" + m->name + "'");
            return;
        }
    }
    m->body.assign(line.begin() + long(i), line.end());
    for (Token& t : m->body) t.line_start = false;
    if (!m->body.empty() && (m->body.front().is("##") || m->body.back().is("##"))) {
        const Token& at = m->body.front().is("##") ? m->body.front() : m->body.back();
        diags_.error(at.loc(), "'##' cannot appear at either end of a macro body", 15406);
        return;
    }
    if (m->function_like)
        for (size_t k = 0; k < m->body.size(); ++k)
            if (m->body[k].is("#") &&
                (k + 1 == m->body.size() || m->body[k + 1].kind != Kind::Identifier ||
                 std::find(m->params.begin(), m->params.end(), m->body[k + 1].text) == m->params.end())) {
                diags_.error(m->body[k].loc(), "'#' is not followed by a parameter of macro '" + m->name + "'");
                return;
            }
    expander_.define(std::move(m));
}

// include = "#" "include" ( string | "<" tokens ">" )
void Preprocessor::include(const SourceFile* file, const std::vector<Token>& line, int depth) {
    std::string name;
    SourceLoc at = line[1].loc();
    if (line.size() >= 3 && line[2].kind == Kind::String) {
        name = decode_string_literal(line[2].text);
        at = line[2].loc();
    } else if (line.size() >= 4 && line[2].is("<") && line.back().is(">")) {
        at = line[2].loc();
        name = rest_of_line(std::vector<Token>(line.begin() + 3, line.end() - 1), 0);
    } else {
        diags_.error(line.size() >= 3 ? line[2].loc() : at, "expected a file name after '#include'");
        return;
    }
    std::optional<FoundSource> found = loader_.find(name, file->path, file->name);
    if (!found) {
        diags_.error(at, "failed to find include file '" + name + "'", 15300);
        return;
    }
    if (once_.count(found->key)) return;
    if (depth + 1 >= kMaxIncludeDepth) {
        diags_.error(at, "#include nested too deeply (limit " + std::to_string(kMaxIncludeDepth) + ")");
        return;
    }
    SourceFile* inc = sources_.add(found->display, *found->text);
    inc->path = found->path;
    inc->included_from = file;
    inc->included_at = line[0].offset;
    keys_[inc] = found->key;
    run_file(inc, depth + 1);
}

}  // namespace

const SourceFile* preprocess(const SourceFile* file, SourceManager& sources, SourceLoader& loader, Diagnostics& diags) {
    const bool predefined = !loader.predefined().empty();
    if ((!predefined && file->text.find('#') == std::string::npos) || file->text.size() > kMaxSourceBytes) return file;
    Preprocessor pre(sources, loader, diags);
    if (predefined) {  // the loader's macros (defines={...}): directives only, so no output
        const SourceFile* defines = sources.add("<defines>", loader.predefined());
        pre.set_key(defines, "<defines>");
        pre.run_file(defines, 0);
    }
    pre.set_key(file, file->path.empty() ? "<memory>/" + file->name : file->path);
    pre.run_file(file, 0);
    SourceFile* out = sources.add(file->name, pre.output().take_text());
    out->origins = pre.output().take_segments();
    out->path = file->path;
    return out;
}

}  // namespace sg::lang
