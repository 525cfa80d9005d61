// The parser: kernel file text to a syntax tree (ast.hpp).
#pragma once

#include "compiler/frontend/ast.hpp"

namespace kiln::frontend {

/// Parses a whole kernel file. Throws CompileError (file:line:col, the line,
/// a caret) on the first syntax error. Safe to call from several threads.
Module parse(SourceFilePtr source);

} // namespace kiln::frontend
