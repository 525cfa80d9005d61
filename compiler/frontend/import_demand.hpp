// Which of the names a kernel file imports can matter to a kernel, found
// before any file is analysed, so that a file is loaded only for names some
// kernel can reach.
//
// A Triton user's file imports its project's host code beside its kernels
// (vLLM's batch_invariant.py reaches 531 files through `vllm.envs`,
// `vllm.platforms`, ...), and Python runs all of it; kiln compiles only jit
// functions and the names they read. Starting from the root file's names,
// a name is needed when something kiln evaluates reads it: a needed jit
// function's body, decorators and defaults, the value assigned to a needed
// name, the test of an `if` that binds one, the body of a needed plain
// function that may run (a heuristic, a config builder). An import that
// binds a needed name asks the imported file for the names read through it
// (`utils.helper` asks utils for `helper`); the others are never loaded.
// Syntax only, so a superset: every name a kernel could read is loaded.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/frontend/ast.hpp"

namespace kiln::frontend {

/// How much of a name's binding matters.
enum class Need : uint8_t {
  Bind = 1, ///< what it is bound to (the root's names: a kernel the API may ask for)
  Use = 2,  ///< also what running it reads (a plain function a heuristic calls)
};

/// What one file must bind for the kernels that reach it.
struct FileDemand {
  /// The parsed file, handed to its analysis (null for the root, which its
  /// caller owns, and for a file that did not parse: its load reports it).
  std::optional<Module> ast;
  /// Every name it binds (the root; a file the root star-imports).
  bool everything = false;
  struct Name {
    Need need = Need::Bind;
    /// Attribute chains read through the name ("helper" for `utils.helper`).
    std::set<std::string> attrs;
  };
  std::map<std::string, Name> names;

  bool needs(const std::string &name) const { return everything || names.count(name) != 0; }
};

/// The demand of every file reached from a root, by the path its importers
/// find it at (find_module_file's answer).
class ImportDemand {
public:
  /// Scans `root` (its names all needed) and every file its needed imports
  /// reach, parsing each once.
  ImportDemand(const Module &root, std::vector<std::string> search_path);
  ~ImportDemand();
  ImportDemand(const ImportDemand &) = delete;
  ImportDemand &operator=(const ImportDemand &) = delete;

  const FileDemand &root() const;
  /// The demand of `path`, or null when no needed import reaches it (then
  /// it is loaded whole, as a file of unknown use).
  FileDemand *find(const std::string &path);

  /// The file `importer_path` imports as `dotted` (find_module_file,
  /// memoized: the analysis asks what the scan asked).
  std::optional<std::string> find_file(const std::string &importer_path, const std::string &dotted,
                                       int level);

  /// Files reached (the root included).
  size_t files() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln::frontend
