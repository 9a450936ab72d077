// src/syntax/ast_clone.h — deep copies of declarations, for the instantiation of generics.
//
// In: a declaration as the parser built it (never one sema has annotated: sema rewrites parts
// of the trees it checks, e.g. implicit `this` and inferred loop bounds). Out: an independent
// copy in the same AstContext with every sema annotation cleared, ready to be checked with
// concrete generic arguments. Recursion follows the tree, whose depth the parser bounds.
#pragma once

#include "syntax/ast.h"

namespace sg::lang {

FunctionDecl* clone_function(AstContext& ast, const FunctionDecl* f);
/// Copies a struct with its fields, static constants, type aliases and member functions (whose
/// `owner` is the copy).
StructDecl* clone_struct(AstContext& ast, const StructDecl* s);
/// Copies an expression as the parser built it (a parameter's default value, for each use).
Expr* clone_expr(AstContext& ast, const Expr* e);

}  // namespace sg::lang
