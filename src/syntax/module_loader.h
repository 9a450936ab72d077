// src/syntax/module_loader.h — a module and everything it imports, preprocessed and parsed.
//
// In: the root file of a module (name, text and file-system path; a path of "" resolves against
// the current folder), the loader that finds files (the root's folder, then the include paths),
// and the compilation's arenas. Out: the parsed files in dependency order — each imported module
// once, before the modules that import it, the root last — ready for sema::analyze, which sees
// them as one scope. `import slangpy;` brings nothing (its built-ins are always in scope).
//
// `import a.b;` finds `a/b.slang` (Slang's spelling: `_` may also be `-` in the file name),
// `import "x.slang";` and `__include "x";` find the file as written; `module m;` and
// `implementing m;` name the module a file belongs to and load nothing. Errors carry Slang's
// numbers: 1 for a module file that cannot be found (at the name), 38200 for an import cycle (at
// the import that closes it).
#pragma once

#include <vector>

#include "syntax/ast.h"
#include "syntax/source_loader.h"

namespace sg::lang {

std::vector<ModuleAst*> load_modules(const SourceFile* root, SourceManager& sources, SourceLoader& loader,
                                     AstContext& ast, Diagnostics& diags);

inline constexpr int kMaxImportDepth = 64;  ///< nested imports

}  // namespace sg::lang
