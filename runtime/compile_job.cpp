#include "runtime/compile_job.hpp"

#include <algorithm>
#include <set>

#include "kiln/error.hpp"
#include "runtime/arg_packer.hpp"
#include "runtime/driver.hpp"
#include "runtime/spec_key.hpp"

namespace kiln::runtime {

namespace {

/// The module of `root`'s imports (transitively) whose file is `path`.
const frontend::ModuleInfo *find_module(const frontend::ModuleInfo &root, const std::string &path,
                                        std::set<const frontend::ModuleInfo *> &seen) {
  if (!seen.insert(&root).second)
    return nullptr;
  if (root.ast.source->path() == path)
    return &root;
  for (const auto &[name, m] : root.imported_modules)
    if (const frontend::ModuleInfo *found = find_module(*m, path, seen))
      return found;
  for (const auto &[name, fn] : root.imported_functions)
    if (const frontend::ModuleInfo *found = find_module(*fn->module, path, seen))
      return found;
  return nullptr;
}

} // namespace

template <class F> void CompileJob::guarded(F step) {
  try {
    step();
  } catch (...) {
    locks_.clear(); // never leave other processes waiting on a failed compile
    pending_.clear();
    compilation_.reset();
    throw;
  }
}

void CompileJob::stage(int i) {
  guarded([&] {
    if (i == 0)
      look_up();
    if (compilation_) // none after a hit
      compilation_->run_stage(i);
  });
}

std::shared_ptr<LoadedKernel> CompileJob::result() {
  guarded([&] { finish(); });
  return std::move(loaded_);
}

std::shared_ptr<LoadedKernel> CompileJob::run() {
  for (int i = 0; i < kStages; ++i)
    stage(i);
  return result();
}

void CompileJob::found(size_t i, CachedKernel hit) {
  source = levels[i]->source();
  // A remote hit is written to disk too, but not on the launch path (the
  // disk's fsyncs cost more than the hit saved): the writer holds our lock
  // of the key until the entry is there, for other processes waiting on it.
  for (size_t j = 0; j < i; ++j)
    levels[j]->put_later(key, hit, j < locks_.size() ? std::move(locks_[j]) : nullptr);
  found_ = std::move(hit);
}

bool CompileJob::find_in_levels() {
  for (size_t i = 0; i < levels.size(); ++i) {
    if (i >= locks_.size() || !locks_[i])
      continue;
    if (std::any_of(pending_.begin(), pending_.end(), [&](const auto &p) { return p.first == i; }))
      continue;
    if (std::optional<CachedKernel> hit = levels[i]->get(key)) {
      found(i, std::move(*hit));
      return true;
    }
  }
  return false;
}

bool CompileJob::remote_arrived(bool may_wait) {
  for (auto &[i, p] : pending_)
    if (p->arrived(may_wait)) {
      found(i, p->take());
      return true;
    }
  return false;
}

void CompileJob::look_up() {
  // In order; a level on the network (reached only after the disk missed)
  // starts its look-up here and answers while the rest runs.
  if (read_levels)
    for (size_t i = 0; i < levels.size(); ++i) {
      if (std::shared_ptr<PendingGet> p = levels[i]->start_get(key)) {
        pending_.emplace_back(i, std::move(p));
      } else if (std::optional<CachedKernel> hit = levels[i]->get(key)) {
        found(i, std::move(*hit));
        pending_.clear();
        return;
      }
    }
  // Another process on this machine may be compiling this key: wait for
  // it, then look again.
  for (CacheLevel *l : levels)
    locks_.push_back(l->lock(key));
  if (read_levels && (find_in_levels() || remote_arrived())) {
    locks_.clear();
    pending_.clear();
    return;
  }
  compiler::CompileRequest req = request;
  req.globals = &globals.own;
  req.other_globals = &globals.others;
  if (!pending_.empty())
    req.proceed = [this](bool may_wait) { return !remote_arrived(may_wait); };
  compilation_.emplace(std::move(req));
}

void CompileJob::finish() {
  auto lk = std::make_shared<LoadedKernel>();
  auto state_of = [&](const frontend::ModuleInfo *mod) -> std::weak_ptr<ModuleState> {
    auto st = globals.states.find(mod);
    return st != globals.states.end() ? st->second : module->state_of(mod);
  };
  if (compilation_ && compilation_->stopped()) // a remote hit came first: found_ holds it
    compilation_.reset();
  if (found_) {
    pending_.clear();
    locks_.clear();
    lk->compiled = std::move(found_->kernel);
    for (StoredGlobal &g : found_->globals) {
      std::set<const frontend::ModuleInfo *> seen;
      const frontend::ModuleInfo *mod = find_module(*module->info(), g.module_path, seen);
      lk->used_globals.push_back(
          {mod ? state_of(mod) : std::weak_ptr<ModuleState>(), g.name, std::move(g.value)});
    }
    found_.reset();
  } else {
    compiler::CompileOutput out = compilation_->take();
    compilation_.reset();
    CachedKernel entry;
    entry.kernel = std::move(out.kernel);
    entry.kernel.key = key;
    for (auto &[ref, value] : out.used_globals) {
      entry.globals.push_back({ref.first->ast.source->path(), ref.second, value});
      lk->used_globals.push_back({state_of(ref.first), ref.second, std::move(value)});
    }
    for (CacheLevel *l : levels)
      l->put(key, entry);
    pending_
        .clear(); // the compile came first: Redis is not waited for (its claim goes after the put)
    locks_.clear();
    lk->compiled = std::move(entry.kernel);
  }
  lk->compiled.key = key;
  lk->binary = driver->load(lk->compiled, device);
  if (!keep_stages) {
    // The memory cache keeps what launches need (issue 17.5): the stage
    // texts are tens of KB per specialization; the assembler's log is kept.
    std::erase_if(lk->compiled.stages, [](const auto &s) { return s.first != "cubin_log"; });
  }
  lk->specs = request.params;
  for (unsigned p = 0; p < lk->specs.size(); ++p)
    add_slots(lk->slots, static_cast<uint16_t>(p), lk->specs[p]);
  if (lk->slots.size() > kMaxParams)
    throw ArgumentError(request.function->name + " takes " + std::to_string(lk->slots.size()) +
                        " launch arguments with its tuples unpacked; kiln supports at most " +
                        std::to_string(kMaxParams));
  lk->globals_version.store(globals_version, std::memory_order_relaxed);
  loaded_ = std::move(lk);
}

} // namespace kiln::runtime
