// src/syntax/diagnostics.h — source files, locations and the diagnostic sink of the front end.
//
// Every token, AST node and IR instruction carries a SourceLoc. A Diagnostics object collects
// user errors (mistakes in kernel source, reported as `file:line:col: error: message`, the
// source line and a caret) separately from internal errors (compiler bugs, which say so).
// A reported Diagnostic holds its location resolved to file name, line, column and line text,
// never a SourceLoc: the sources die with the compilation, the diagnostics may not.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sg::lang {

struct SourceFile;

/// Where a run of a preprocessed text came from: text from `out_offset` on (up to the next
/// segment) is `file`'s text from `offset` on, byte for byte, or, when `fixed`, was made by the
/// preprocessor (`##`, `#`) and every byte of it points at `offset`.
struct OriginSegment {
    uint32_t out_offset = 0;
    const SourceFile* file = nullptr;
    uint32_t offset = 0;
    bool fixed = false;
};

/// One source text. Owned by a SourceManager; never moves once created.
struct SourceFile {
    std::string name;  ///< shown in diagnostics ("m.slang", "<glue>")
    std::string text;
    std::vector<uint32_t> line_starts;  ///< byte offset of each line start
    std::string path;  ///< where it was read from (includes resolve beside it); "" in memory
    /// A preprocessed text maps back to the files its pieces came from (sorted by out_offset);
    /// empty for a text that is its own origin.
    std::vector<OriginSegment> origins;
    /// The include chain: the file (and offset in it) whose `#include` or `import` brought this
    /// one in; nullptr for the root of a compilation.
    const SourceFile* included_from = nullptr;
    uint32_t included_at = 0;
    bool imported = false;  ///< brought in by `import` (else by `#include` / `__include`)

    SourceFile(std::string name, std::string text);
    /// 1-based line and column of a byte offset.
    std::pair<uint32_t, uint32_t> line_col(uint32_t offset) const;
    std::string_view line_text(uint32_t line) const;
};

/// A position in a source file. file == nullptr means "no location" (synthesized code).
struct SourceLoc {
    const SourceFile* file = nullptr;
    uint32_t offset = 0;

    bool valid() const { return file != nullptr; }
};

/// Owns the source files of one compilation.
class SourceManager {
public:
    SourceFile* add(std::string name, std::string text);
    /// Every file added, in order.
    const std::vector<std::unique_ptr<SourceFile>>& files() const { return files_; }

private:
    std::vector<std::unique_ptr<SourceFile>> files_;
};

enum class Severity : uint8_t { Error, Warning, Note };

/// Where a diagnostic points, resolved from a SourceLoc when the diagnostic is reported. Plain
/// values, no pointer into a SourceFile: a Diagnostic, and the CompileError carrying it, stay
/// valid after the SourceManager that owned the text is gone (it usually dies while a
/// CompileError unwinds the compilation).
struct ResolvedLocation {
    std::string file;         ///< the SourceFile's name ("m.slang", "<glue>")
    int line = 0;             ///< 1-based; 0 means "no location" (synthesized code)
    int col = 0;              ///< 1-based, in bytes from the start of the line
    std::string source_line;  ///< the line's text as rendered: valid UTF-8 (bad bytes become
                              ///< '?', one for one), at most 400 bytes
    /// Innermost first: "in file included from a.slang:3" / "in module imported from a.slang:1".
    std::vector<std::string> include_chain;

    bool valid() const { return line != 0; }
};

/// In: a location (possibly "no location"). Out: its file name, line, column and line text,
/// followed through a preprocessed text's origin map to the file the text came from.
ResolvedLocation resolve_location(SourceLoc loc);
/// The location in the file a preprocessed text's byte came from (itself for plain files).
SourceLoc original_location(SourceLoc loc);

/// One reported error, warning or note. Self-contained: see ResolvedLocation.
struct Diagnostic {
    Severity severity = Severity::Error;
    int code = 0;  ///< Slang's diagnostic number where one exists (30510, 41022, ...), else 0
    ResolvedLocation location;
    std::string message;
};

/// "error", "warning" or "note".
const char* severity_name(Severity severity);

/// Thrown when compilation must stop (too many errors, a resource limit, or at the end of a
/// phase that reported errors). Carries the rendered text (what()) and every diagnostic so
/// far, both independent of the compilation's sources, so the error may outlive them.
class CompileError : public std::runtime_error {
public:
    CompileError(std::string rendered, std::vector<Diagnostic> diags)
        : std::runtime_error(std::move(rendered)), diagnostics(std::move(diags)) {}
    std::vector<Diagnostic> diagnostics;
};

/// A compiler bug: an invariant of the compiler itself did not hold.
class InternalError : public std::logic_error {
public:
    explicit InternalError(const std::string& what)
        : std::logic_error("internal compiler error (a shadegrad bug; please report it): " + what) {}
};

/// Collects the diagnostics of one compilation. Each report resolves its SourceLoc at once (the
/// SourceFile must be alive then, and only then).
class Diagnostics {
public:
    static constexpr size_t kMaxErrors = 100;

    void error(SourceLoc loc, std::string message, int code = 0);
    void warning(SourceLoc loc, std::string message, int code = 0);
    void note(SourceLoc loc, std::string message);
    /// "not supported yet" for a construct of a later tier.
    void unsupported(SourceLoc loc, std::string_view construct);

    bool has_errors() const { return error_count_ > 0; }
    size_t error_count() const { return error_count_; }
    const std::vector<Diagnostic>& all() const { return diags_; }

    /// Renders every diagnostic: `file:line:col: error[E30510]: message`, source line, caret.
    std::string render() const;
    /// Throws CompileError with everything collected so far when there are errors.
    void throw_if_errors() const;

    /// Removes and returns the diagnostics reported since `all().size()` was `first` (the
    /// error count follows), so that a question asked of a checked module leaves it clean.
    std::vector<Diagnostic> take_from(size_t first);
    /// Puts back one diagnostic taken with take_from.
    void restore(Diagnostic d);

    /// Text appended in parentheses to every later error and warning ("in instantiation
    /// f<int>"); empty for none. Returns the previous context, for the caller to restore.
    std::string set_context(std::string context) {
        std::swap(context, context_);
        return context;
    }

private:
    std::string context_;
    std::vector<Diagnostic> diags_;
    size_t error_count_ = 0;
};

/// Renders one diagnostic (with source line and caret when the location is known).
std::string render_diagnostic(const Diagnostic& d);

#define SG_INTERNAL_ASSERT(cond, msg)                                                   \
    do {                                                                                \
        if (!(cond)) [[unlikely]]                                                       \
            throw ::sg::lang::InternalError(std::string(__FILE__) + ":" +               \
                                            std::to_string(__LINE__) + ": " + (msg));   \
    } while (0)

}  // namespace sg::lang
