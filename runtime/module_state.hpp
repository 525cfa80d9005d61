// What a kiln::Module handle points at: the analysed file, the current
// values of its globals, and its jit functions.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "compiler/frontend/module_info.hpp"
#include "compiler/specialization.hpp"

namespace kiln::runtime {

class JitFunction;
class ModuleState;

/// The globals a compile reads, taken at once: the current values of every
/// module it may reach, and the states to check them against later.
struct GlobalsSnapshot {
  compiler::GlobalValues own;
  compiler::ModuleGlobals others;
  /// Weak: a module nobody holds any more cannot change its globals.
  std::map<const frontend::ModuleInfo *, std::weak_ptr<ModuleState>> states;

  /// Adds the current globals of `state` (another module's) unless present.
  void add(ModuleState &state);
};

class ModuleState : public std::enable_shared_from_this<ModuleState> {
public:
  /// A module loaded by the host (its own root).
  explicit ModuleState(std::shared_ptr<const frontend::ModuleInfo> info);
  /// A module `root` imports; it shares the root's registry of modules.
  ModuleState(std::shared_ptr<const frontend::ModuleInfo> info,
              const std::shared_ptr<ModuleState> &root);
  ~ModuleState();

  const std::shared_ptr<const frontend::ModuleInfo> &info() const { return info_; }
  const std::string &path() const { return info_->ast.source->path(); }

  /// The jit function `name` (the same object for every call), or null;
  /// also one this file imports from another kernel file. The
  /// module owns its functions; the pointer shares the module's ownership,
  /// so a Kernel handle keeps the whole module (and its caches) alive.
  std::shared_ptr<JitFunction> function(std::string_view name);
  /// The state of `mod`: this one, or that of a module this one's root
  /// imports (one per module, so set_global on it is what compiles read).
  std::shared_ptr<ModuleState> state_of(const frontend::ModuleInfo *mod);

  /// A snapshot of the globals for a compile.
  compiler::GlobalValues globals() const;
  /// This module's globals and those of every imported module with a state.
  GlobalsSnapshot snapshot();
  /// The current value of global `name`, if any.
  std::optional<frontend::ConstValue> global(const std::string &name) const;
  void set_global(std::string_view name, const frontend::ConstValue &value);
  /// Bumped by every set_global of any module of the process; launches
  /// compare it before anything else, so the check costs one load.
  static uint64_t globals_version();

private:
  std::shared_ptr<const frontend::ModuleInfo> info_;
  std::weak_ptr<ModuleState> root_; ///< empty for a root
  mutable std::mutex mutex_;
  compiler::GlobalValues globals_;
  std::map<std::string, std::unique_ptr<JitFunction>, std::less<>> functions_;
  std::map<const frontend::ModuleInfo *, std::shared_ptr<ModuleState>> imported_; ///< a root's only
};

} // namespace kiln::runtime
