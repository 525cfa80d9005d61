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

class ModuleState : public std::enable_shared_from_this<ModuleState> {
public:
  explicit ModuleState(std::shared_ptr<const frontend::ModuleInfo> info);
  ~ModuleState();

  const std::shared_ptr<const frontend::ModuleInfo> &info() const { return info_; }
  const std::string &path() const { return info_->ast.source->path(); }

  /// The jit function `name` (the same object for every call), or null;
  /// also one this file imports from another kernel file. The
  /// module owns its functions; the pointer shares the module's ownership,
  /// so a Kernel handle keeps the whole module (and its caches) alive.
  std::shared_ptr<JitFunction> function(std::string_view name);

  /// A snapshot of the globals for a compile.
  compiler::GlobalValues globals() const;
  /// The current value of global `name`, if any.
  std::optional<frontend::ConstValue> global(const std::string &name) const;
  void set_global(std::string_view name, const frontend::ConstValue &value);
  /// Bumped by every set_global; launches compare it before anything else.
  uint64_t globals_version() const { return version_.load(std::memory_order_acquire); }

private:
  std::shared_ptr<const frontend::ModuleInfo> info_;
  mutable std::mutex mutex_;
  compiler::GlobalValues globals_;
  std::atomic<uint64_t> version_{0};
  std::map<std::string, std::unique_ptr<JitFunction>, std::less<>> functions_;
  std::map<const frontend::ModuleInfo *, std::shared_ptr<ModuleState>> imported_;
};

} // namespace kiln::runtime
