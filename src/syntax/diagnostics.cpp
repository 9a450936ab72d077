// src/syntax/diagnostics.cpp — source files, line lookup and diagnostic rendering.
#include "syntax/diagnostics.h"

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

SourceFile* SourceManager::add(std::string name, std::string text) {
    files_.push_back(std::make_unique<SourceFile>(std::move(name), std::move(text)));
    return files_.back().get();
}

void Diagnostics::error(SourceLoc loc, std::string message, int code) {
    ++error_count_;
    if (!context_.empty()) message += " (" + context_ + ")";
    diags_.push_back({Severity::Error, code, resolve_location(loc), std::move(message)});
    if (error_count_ >= kMaxErrors) {
        diags_.push_back({Severity::Note, 0, {}, "too many errors; stopping"});
        throw_if_errors();
    }
}

void Diagnostics::warning(SourceLoc loc, std::string message, int code) {
    if (!context_.empty()) message += " (" + context_ + ")";
    diags_.push_back({Severity::Warning, code, resolve_location(loc), std::move(message)});
}

void Diagnostics::note(SourceLoc loc, std::string message) {
    diags_.push_back({Severity::Note, 0, resolve_location(loc), std::move(message)});
}

std::vector<Diagnostic> Diagnostics::take_from(size_t first) {
    std::vector<Diagnostic> out;
    if (first >= diags_.size()) return out;
    out.assign(diags_.begin() + long(first), diags_.end());
    diags_.resize(first);
    for (const Diagnostic& d : out) error_count_ -= d.severity == Severity::Error ? 1 : 0;
    return out;
}

void Diagnostics::restore(Diagnostic d) {
    if (d.severity == Severity::Error) ++error_count_;
    diags_.push_back(std::move(d));
}

void Diagnostics::unsupported(SourceLoc loc, std::string_view construct) {
    error(loc, std::string(construct) + " is not supported yet");
}

namespace {

/// Length of the well-formed UTF-8 sequence at s[i], or 0 when the byte there starts none.
size_t utf8_sequence_length(std::string_view s, size_t i) {
    auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
    auto continuation = [&](size_t k) { return (byte(k) & 0xC0) == 0x80; };
    unsigned c = byte(i);
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return continuation(i + 1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;  // no overlong, no surrogates
        return byte(i + 1) >= lo && byte(i + 1) <= hi && continuation(i + 2) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return byte(i + 1) >= lo && byte(i + 1) <= hi && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
    }
    return 0;
}

/// At most `max_bytes` of `s` as valid UTF-8: every byte that is not part of a well-formed
/// character becomes '?' (one byte for one, so columns stay put). Rendered diagnostics become
/// Python exception messages, which must decode; sources may hold Latin-1 comments or junk.
std::string printable(std::string_view s, size_t max_bytes) {
    std::string out;
    out.reserve(std::min(s.size(), max_bytes));
    for (size_t i = 0; i < s.size();) {
        size_t n = utf8_sequence_length(s, i);
        if (out.size() + std::max<size_t>(n, 1) > max_bytes) break;
        if (n == 0) out += '?', i += 1;
        else out.append(s, i, n), i += n;
    }
    return out;
}

/// A message as rendered: valid UTF-8, and cut when it quotes a huge name or expression from
/// the source, so that 100 errors about a 1 MB identifier do not render 100 MB.
std::string rendered_message(const std::string& message) {
    constexpr size_t kMaxMessageBytes = 1000;
    std::string out = printable(message, kMaxMessageBytes);
    if (out.size() < message.size() && message.size() > kMaxMessageBytes)
        out += "... [" + std::to_string(message.size() - out.size()) + " more bytes]";
    return out;
}

}  // namespace

SourceLoc original_location(SourceLoc loc) {
    // Preprocessed texts are never nested (an included file is expanded into the same output),
    // but a loop guards against a chain all the same.
    for (int hop = 0; loc.valid() && !loc.file->origins.empty() && hop < 4; ++hop) {
        const auto& segs = loc.file->origins;
        auto it = std::upper_bound(segs.begin(), segs.end(), loc.offset,
                                   [](uint32_t off, const OriginSegment& s) { return off < s.out_offset; });
        if (it == segs.begin()) break;
        --it;
        if (it->file == nullptr) break;
        uint64_t offset = it->fixed ? it->offset : uint64_t(it->offset) + (loc.offset - it->out_offset);
        // Past a segment's text (the end-of-file token after the last one): its file's end.
        loc = {it->file, uint32_t(std::min<uint64_t>(offset, it->file->text.size()))};
    }
    return loc;
}

ResolvedLocation resolve_location(SourceLoc loc) {
    if (!loc.valid()) return {};
    loc = original_location(loc);
    auto [line, col] = loc.file->line_col(loc.offset);
    // Only what the renderer shows is kept (long lines stay readable, and a 1 MB one-line
    // source does not cost 1 MB per diagnostic).
    ResolvedLocation out{loc.file->name, int(line), int(col), printable(loc.file->line_text(line), 400), {}};
    // The chain is bounded by the include depth limit; 70 guards against a malformed chain.
    for (const SourceFile* f = loc.file; f->included_from && out.include_chain.size() < 70; f = f->included_from) {
        SourceLoc at = original_location({f->included_from, f->included_at});
        std::string where = at.file->name + ":" + std::to_string(at.file->line_col(at.offset).first);
        out.include_chain.push_back((f->imported ? "in module imported from " : "in file included from ") + where);
    }
    return out;
}

const char* severity_name(Severity severity) {
    static const char* kNames[] = {"error", "warning", "note"};
    return kNames[int(severity)];
}

std::string render_diagnostic(const Diagnostic& d) {
    const ResolvedLocation& at = d.location;
    std::string out;
    for (auto it = at.include_chain.rbegin(); it != at.include_chain.rend(); ++it) {
        out += *it;
        out += ":\n";
    }
    if (at.valid()) out += at.file + ":" + std::to_string(at.line) + ":" + std::to_string(at.col) + ": ";
    // Appended piece by piece: `" " + std::string` here trips a false -Wrestrict in GCC 12.
    out += severity_name(d.severity);
    if (d.code) {
        out += ' ';
        out += std::to_string(d.code);
    }
    out += ": ";
    out += rendered_message(d.message);
    out += '\n';
    if (at.valid()) {
        out += "    ";
        out += at.source_line;
        out += "\n    ";
        // One blank per character before the column (tabs kept, so the caret lines up).
        for (size_t i = 1; i < size_t(at.col) && i <= at.source_line.size(); ++i) {
            unsigned char c = static_cast<unsigned char>(at.source_line[i - 1]);
            if ((c & 0xC0) != 0x80) out += c == '\t' ? '\t' : ' ';
        }
        out += "^\n";
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
