// The kernel files a module reaches through `import` / `from ... import`,
// found on a module search path the way Python's import system would find
// them, each loaded and analysed once.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::frontend {

struct ModuleInfo;
struct Stmt;
struct FileDemand;
class ImportDemand;

/// Where `import` looks for a module, in order: the importing file's folder,
/// the root of the package that folder belongs to (the parent of the topmost
/// folder with an `__init__.py`), then `extra` (KILN_PATH, the API).
std::vector<std::string> module_search_roots(const std::string &importer_path,
                                             const std::vector<std::string> &extra);

/// The file of module `dotted` ("pkg.utils" -> pkg/utils.py or
/// pkg/utils/__init__.py) imported from `importer_path` with `level` leading
/// dots (0 for an absolute import), or nullopt when it is not a file on the
/// search path (then it is host code such as torch, and never compiled).
std::optional<std::string> find_module_file(const std::string &importer_path, const std::string &dotted,
                                            int level, const std::vector<std::string> &extra);

/// The level of `from ..x import y` (parsed with the dots kept in
/// Stmt::module): its leading dots.
int import_level(const Stmt &import_from);

/// Whether `dotted` (an absolute import) names triton or any part of it, or
/// Python's math: modules kiln models itself, never loaded from a file.
bool is_modelled_import(const std::string &dotted);

/// Every module loaded while analysing one root file, by canonical path. A
/// module imported twice (or in a cycle) is analysed once. Owned by the root
/// ModuleInfo; the modules point at each other with plain pointers.
class ModuleSet {
public:
  explicit ModuleSet(std::vector<std::string> search_path) : search_path_(std::move(search_path)) {}

  const std::vector<std::string> &search_path() const { return search_path_; }

  /// find_module_file on this set's search path, through the demand's memo.
  std::optional<std::string> find_file(const std::string &importer_path, const std::string &dotted,
                                       int level);

  /// The analysed module of `path`, loading it on first use. Throws
  /// CompileError (syntax errors) and RuntimeError (unreadable file).
  const ModuleInfo &load(const std::string &path);
  /// Registers the module being analysed so a cycle back to it finds it.
  void add(const std::string &path, ModuleInfo *m);
  /// What each file must bind (import_demand.hpp); without one, every
  /// import of every file is loaded.
  void set_demand(std::shared_ptr<ImportDemand> demand) { demand_ = std::move(demand); }

private:
  std::vector<std::string> search_path_;
  std::shared_ptr<ImportDemand> demand_;
  std::map<std::string, ModuleInfo *> modules_;                  ///< by canonical path
  std::vector<std::pair<std::string, ModuleInfo *>> unresolved_; ///< added, not yet in modules_
  std::vector<std::shared_ptr<ModuleInfo>> owned_;
};

/// Analyses the parsed `m.ast` into `m`, loading what it imports through
/// `set` (module_info.cpp): the imports of the names `demand` needs, or all
/// of them when it is null.
void analyze_into(ModuleInfo &m, ModuleSet &set, const FileDemand *demand);

} // namespace kiln::frontend
