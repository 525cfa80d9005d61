#include "runtime/module_state.hpp"

#include "runtime/jit_function.hpp"

namespace kiln::runtime {

ModuleState::ModuleState(std::shared_ptr<const frontend::ModuleInfo> info)
    : info_(std::move(info)), globals_(info_->globals) {}

ModuleState::~ModuleState() = default;

std::shared_ptr<JitFunction> ModuleState::function(std::string_view name) {
  const frontend::JitFunctionInfo *fn = info_->function(name);
  if (!fn) {
    // A jit function this file imports (`from .activations import gelu`)
    // belongs to its own module's state, with that module's globals.
    fn = info_->visible_function(std::string(name));
    if (!fn)
      return nullptr;
    std::shared_ptr<ModuleState> owner;
    {
      std::lock_guard lock(mutex_);
      auto &slot = imported_[fn->module];
      if (!slot) // shares ownership of the root module, which keeps every import alive
        slot = std::make_shared<ModuleState>(std::shared_ptr<const frontend::ModuleInfo>(info_, fn->module));
      owner = slot;
    }
    return owner->function(fn->name);
  }
  fn->check(); // a broken signature or decorator is an error now, when the kernel is used
  std::lock_guard lock(mutex_);
  auto it = functions_.find(name);
  if (it == functions_.end())
    it = functions_.emplace(std::string(name), std::make_unique<JitFunction>(*this, *fn)).first;
  return std::shared_ptr<JitFunction>(shared_from_this(), it->second.get());
}

compiler::GlobalValues ModuleState::globals() const {
  std::lock_guard lock(mutex_);
  return globals_;
}

std::optional<frontend::ConstValue> ModuleState::global(const std::string &name) const {
  std::lock_guard lock(mutex_);
  auto it = globals_.find(name);
  if (it == globals_.end())
    return std::nullopt;
  return it->second.value;
}

void ModuleState::set_global(std::string_view name, const frontend::ConstValue &value) {
  std::lock_guard lock(mutex_);
  auto it = globals_.find(std::string(name));
  if (it == globals_.end())
    throw ArgumentError("module " + path() + " has no global '" + std::string(name) + "'");
  it->second.value = value;
  version_.fetch_add(1, std::memory_order_acq_rel);
}

} // namespace kiln::runtime
