#include "runtime/module_state.hpp"

#include "runtime/jit_function.hpp"

namespace kiln::runtime {

namespace {
std::atomic<uint64_t> g_globals_version{0};
}

void GlobalsSnapshot::add(ModuleState &state) {
  const frontend::ModuleInfo *mod = state.info().get();
  if (states.count(mod))
    return;
  others.emplace(mod, state.globals());
  states.emplace(mod, state.weak_from_this());
}

ModuleState::ModuleState(std::shared_ptr<const frontend::ModuleInfo> info)
    : info_(std::move(info)), globals_(info_->globals) {}

ModuleState::ModuleState(std::shared_ptr<const frontend::ModuleInfo> info,
                         const std::shared_ptr<ModuleState> &root)
    : info_(std::move(info)), root_(root), globals_(info_->globals) {}

ModuleState::~ModuleState() = default;

uint64_t ModuleState::globals_version() {
  return g_globals_version.load(std::memory_order_acquire);
}

std::shared_ptr<ModuleState> ModuleState::state_of(const frontend::ModuleInfo *mod) {
  if (mod == info_.get())
    return shared_from_this();
  // An imported module asks its root, so each module has one state. A root
  // already gone leaves this one to keep its own (nobody else can reach it).
  if (auto root = root_.lock())
    return root->state_of(mod);
  std::lock_guard lock(mutex_);
  auto &slot = imported_[mod];
  if (!slot) // shares ownership of the root's analysis, which keeps every import alive
    slot = std::make_shared<ModuleState>(std::shared_ptr<const frontend::ModuleInfo>(info_, mod),
                                         shared_from_this());
  return slot;
}

std::shared_ptr<JitFunction> ModuleState::function(std::string_view name) {
  const frontend::JitFunctionInfo *fn = info_->function(name);
  if (!fn) {
    // A jit function this file imports (`from .activations import gelu`)
    // belongs to its own module's state, with that module's globals.
    fn = info_->visible_function(std::string(name));
    if (!fn)
      return nullptr;
    return state_of(fn->module)->function(fn->name);
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

GlobalsSnapshot ModuleState::snapshot() {
  GlobalsSnapshot s;
  s.own = globals();
  s.states.emplace(info_.get(), weak_from_this());
  std::shared_ptr<ModuleState> root = root_.lock();
  ModuleState &registry = root ? *root : *this;
  std::vector<std::shared_ptr<ModuleState>> family;
  {
    std::lock_guard lock(registry.mutex_);
    for (const auto &[mod, st] : registry.imported_)
      family.push_back(st);
  }
  if (root)
    family.push_back(root);
  for (const auto &st : family)
    s.add(*st);
  return s;
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
  g_globals_version.fetch_add(1, std::memory_order_acq_rel);
}

} // namespace kiln::runtime
