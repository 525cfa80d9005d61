// A canonical text form of a syntax tree: the form tests/tools/ast_canon.py
// prints for CPython's `ast` of the same file (its docstring defines the
// form and the few normalisations), so that kiln's parser can be checked
// against CPython's on any Python file by comparing two strings.
#pragma once

#include <string>

#include "compiler/frontend/ast.hpp"

namespace kiln::frontend {

/// The canonical dump of `module`: one line per statement. Safe to call from
/// several threads.
std::string dump(const Module &module);

} // namespace kiln::frontend
