#include "compiler/frontend/module_set.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/frontend/ast.hpp"
#include "compiler/frontend/import_demand.hpp"
#include "compiler/frontend/module_info.hpp"
#include "compiler/frontend/parser.hpp"
#include "kiln/error.hpp"

namespace kiln::frontend {

namespace fs = std::filesystem;

namespace {

bool is_package(const fs::path &dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "__init__.py", ec);
}

/// The file a module's path names under `root`, if there is one.
std::optional<std::string> file_under(const fs::path &root, const std::string &dotted) {
  fs::path p = root;
  size_t start = 0;
  while (start <= dotted.size()) {
    const size_t dot = dotted.find('.', start);
    p /= dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  std::error_code ec;
  for (const fs::path &candidate : {fs::path(p.string() + ".py"), p / "__init__.py"})
    if (fs::is_regular_file(candidate, ec))
      return fs::weakly_canonical(candidate, ec).string();
  return std::nullopt;
}

} // namespace

std::vector<std::string> module_search_roots(const std::string &importer_path,
                                             const std::vector<std::string> &extra) {
  std::vector<std::string> roots;
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::path(importer_path), ec).parent_path();
  if (!dir.empty()) {
    roots.push_back(dir.string());
    fs::path top = dir;
    while (is_package(top) && top.has_parent_path() && top.parent_path() != top)
      top = top.parent_path();
    if (top != dir)
      roots.push_back(top.string());
  }
  roots.insert(roots.end(), extra.begin(), extra.end());
  return roots;
}

std::optional<std::string> find_module_file(const std::string &importer_path, const std::string &dotted,
                                            int level, const std::vector<std::string> &extra) {
  if (level > 0) {
    // `from .x import y` is relative to the importing file's package;
    // each further dot goes up one package.
    std::error_code ec;
    fs::path base = fs::weakly_canonical(fs::path(importer_path), ec).parent_path();
    for (int i = 1; i < level; ++i)
      base = base.parent_path();
    if (dotted.empty()) {
      std::error_code ec2;
      if (fs::is_regular_file(base / "__init__.py", ec2))
        return (base / "__init__.py").string();
      return std::nullopt;
    }
    return file_under(base, dotted);
  }
  for (const std::string &root : module_search_roots(importer_path, extra))
    if (auto f = file_under(root, dotted))
      return f;
  return std::nullopt;
}

int import_level(const Stmt &s) {
  int level = 0;
  while (level < static_cast<int>(s.module.size()) && s.module[level] == '.')
    ++level;
  return level;
}

bool is_modelled_import(const std::string &dotted) {
  return dotted == "triton" || dotted.rfind("triton.", 0) == 0 || dotted == "math";
}

std::optional<std::string> ModuleSet::find_file(const std::string &importer_path,
                                                const std::string &dotted, int level) {
  return demand_ ? demand_->find_file(importer_path, dotted, level)
                 : find_module_file(importer_path, dotted, level, search_path_);
}

void ModuleSet::add(const std::string &path, ModuleInfo *m) {
  // Made canonical only when an import first asks (load): a kernel file that
  // imports no file of its own pays no readlink per component of its path
  // (four syscalls for /work/shared/kernels/x.py, a twentieth of a disk hit).
  unresolved_.emplace_back(path, m);
}

const ModuleInfo &ModuleSet::load(const std::string &path) {
  for (const auto &[p, m] : unresolved_) {
    std::error_code ec;
    modules_[fs::weakly_canonical(fs::path(p), ec).string()] = m;
  }
  unresolved_.clear();
  if (auto it = modules_.find(path); it != modules_.end())
    return *it->second;
  FileDemand *demand = demand_ ? demand_->find(path) : nullptr;
  auto m = std::make_shared<ModuleInfo>();
  if (demand && demand->ast) {
    m->ast = std::move(*demand->ast); // parsed by the demand's scan
    demand->ast.reset();
  } else {
    m->ast = parse(std::make_shared<const SourceFile>(path, read_source_file(path, "module")));
  }
  owned_.push_back(m);
  modules_[path] = m.get();
  analyze_into(*m, *this, demand);
  return *m;
}

} // namespace kiln::frontend
