// src/lang/diagnostics.cpp — source files, line lookup and diagnostic rendering.
#include "lang/diagnostics.h"

#include <algorithm>

namespace sg::lang {

SourceFile::SourceFile(std::string n, std::string t) : name(std::move(n)), text(std::move(t)) {
    line_starts.push_back(0);
    for (uint32_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n') line_starts.push_back(i + 1);
}

std::pair<uint32_t, uint32_t> SourceFile::line_col(uint32_t offset) const {
    auto it = std::upper_bound(line_starts.begin(), line_starts.end(), offset);
    uint32_t line = uint32_t(it - line_starts.begin());  // 1-based: it points past the line
    uint32_t col = offset - line_starts[line - 1] + 1;
    return {line, col};
}

std::string_view SourceFile::line_text(uint32_t line) const {
    if (line == 0 || line > line_starts.size()) return {};
    uint32_t begin = line_starts[line - 1];
    uint32_t end = line < line_starts.size() ? line_starts[line] : uint32_t(text.size());
    while (end > begin && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
    return std::string_view(text).substr(begin, end - begin);
}

const SourceFile* SourceManager::add(std::string name, std::string text) {
    files_.push_back(std::make_unique<SourceFile>(std::move(name), std::move(text)));
    return files_.back().get();
}

void Diagnostics::error(SourceLoc loc, std::string message, int code) {
    ++error_count_;
    diags_.push_back({Severity::Error, code, loc, std::move(message)});
    if (error_count_ >= kMaxErrors) {
        diags_.push_back({Severity::Note, 0, {}, "too many errors; stopping"});
        throw_if_errors();
    }
}

void Diagnostics::warning(SourceLoc loc, std::string message, int code) {
    diags_.push_back({Severity::Warning, code, loc, std::move(message)});
}

void Diagnostics::note(SourceLoc loc, std::string message) {
    diags_.push_back({Severity::Note, 0, loc, std::move(message)});
}

void Diagnostics::unsupported(SourceLoc loc, std::string_view construct) {
    error(loc, std::string(construct) + " is not supported yet");
}

std::string render_diagnostic(const Diagnostic& d) {
    static const char* kSeverity[] = {"error", "warning", "note"};
    std::string out;
    if (d.loc.valid()) {
        auto [line, col] = d.loc.file->line_col(d.loc.offset);
        out += d.loc.file->name + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
        out += kSeverity[int(d.severity)];
        if (d.code) out += " " + std::to_string(d.code);
        out += ": " + d.message + "\n";
        std::string_view text = d.loc.file->line_text(line);
        if (text.size() > 400) text = text.substr(0, 400);  // keep very long lines readable
        out += "    ";
        out += text;
        out += "\n    ";
        for (uint32_t i = 1; i < col && i <= text.size(); ++i) out += text[i - 1] == '\t' ? '\t' : ' ';
        out += "^\n";
    } else {
        out += kSeverity[int(d.severity)];
        if (d.code) out += " " + std::to_string(d.code);
        out += ": " + d.message + "\n";
    }
    return out;
}

std::string Diagnostics::render() const {
    std::string out;
    for (const auto& d : diags_) out += render_diagnostic(d);
    return out;
}

void Diagnostics::throw_if_errors() const {
    if (has_errors()) throw CompileError(render(), diags_);
}

}  // namespace sg::lang
