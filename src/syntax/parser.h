// src/syntax/parser.h — lexer and recursive-descent parser: source text in, ModuleAst out.
//
// The parser recovers from errors (skipping to the next `;` or `}`) so that several errors in
// one module are all reported. It enforces resource limits (nesting depth, literal size, token
// count) with diagnostics instead of crashing. Constructs of later language tiers that it can
// recognise (generics, `switch`, `typedef`, `#include`, ...) are reported as "not supported yet".
#pragma once

#include "syntax/ast.h"
#include "syntax/lexer.h"  // kMaxSourceBytes

namespace sg::lang {

/// Parses one source file. Never throws for bad input except CompileError when the error
/// limit is reached; errors go to `diags`. The returned AST lives in `ctx`.
ModuleAst* parse_module(const SourceFile* file, AstContext& ctx, Diagnostics& diags);

/// Parser limits (documented for users in the README).
inline constexpr int kMaxNestingDepth = 256;       ///< expressions + statements

}  // namespace sg::lang
