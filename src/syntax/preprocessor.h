// src/syntax/preprocessor.h — the C-style preprocessor that runs before the lexer.
//
// In: one source file (its name, text and file-system path), the loader that finds `#include`d
// files, and the diagnostic sink. Out: the text the lexer reads — the file itself when it holds
// no `#` at all (the common case costs one scan), else a new SourceFile of `sources`, named like
// the input, holding the expansion. The new file's origin map (SourceFile::origins) sends every
// byte back to the file and offset it was written at (a macro's body tokens to the `#define`,
// as Slang reports them), and included files carry their include chain, so diagnostics of every
// later phase point into the right file and line.
//
// Supported: `#define` (object- and function-like, variadic `...`/`__VA_ARGS__`, `#` and `##`),
// `#undef`, `#if/#ifdef/#ifndef/#elif/#else/#endif` with `defined` and integer expressions,
// `#include "file"` / `<file>`, `#pragma once` (other pragmas are ignored), `#error`, `#warning`.
// Macros are expanded as in C (a macro is not expanded again inside its own expansion).
// Errors carry Slang's numbers where Slang has one (15300 include not found, 15900 #error,
// 15101 unknown directive, 15000 unterminated conditional).
#pragma once

#include "syntax/diagnostics.h"
#include "syntax/source_loader.h"

namespace sg::lang {

const SourceFile* preprocess(const SourceFile* file, SourceManager& sources, SourceLoader& loader,
                             Diagnostics& diags);

inline constexpr int kMaxIncludeDepth = 64;         ///< nested `#include`s
inline constexpr int kMaxMacroNesting = 200;        ///< macro calls nested in macro arguments
inline constexpr size_t kMaxExpandedTokens = 1u << 20;  ///< tokens made by macro expansion, per file

}  // namespace sg::lang
