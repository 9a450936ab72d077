// src/syntax/ast_printer.h — a readable S-expression dump of the AST (`shadegradc --emit ast`).
//
// Declarations and statements go one per line, indented by two spaces per level; expressions
// and types are printed on one line. The format, by example:
//
//   (module m.slang
//     (import slangpy)
//     (struct Particle : IDifferentiable
//       (field pos float3)
//       (field mass float no_diff))
//     (global K float[2] static const = {1 2})
//     (function f -> float [Differentiable]
//       (param x float)
//       (param acc float inout)
//       (block
//         (decl (var s float = 0.0))
//         (for [MaxIters(16)] (decl (var i int = 0)) (< i n) (post++ i)
//           (expr (+= s (call float i))))
//         (return (* (* x x) (call sin x))))))
//
// Expressions: literals as written in value form (`1`, `3u`, `0.5f`, `true`), names bare,
// `(op a b)` for binary and assignment, `(op a)` for prefix, `(post++ a)` for postfix,
// `(?: c a b)`, `(call f args...)`, `(ctor TYPE args...)`, `(index base i j)`, `(. base name)`,
// `{a b}` for initializer lists, `(, a b)`, `(no_diff a)`, `(cast TYPE a)`. Types print as
// written: `vector<float,3>`, `T.Differential`, `float[5][3]`; `auto` for var/let without one.
#pragma once

#include <string>

#include "syntax/ast.h"

namespace sg::lang {

/// The whole module, one declaration or statement per line, ending with a newline.
std::string print_ast(const ModuleAst& module);
/// One expression on one line (no newline). Handy in tests and debug output.
std::string print_expr(const Expr& expr);
/// One type expression as written (`IDiffTensor<float,2>`, `float[5]`).
std::string print_type(const TypeExpr& type);
/// One statement (possibly several lines, ending with a newline).
std::string print_stmt(const Stmt& stmt);

}  // namespace sg::lang
