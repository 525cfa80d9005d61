// One miss of the in-memory table, from compile key to loaded kernel: look
// the key up in each persistent cache level, compile when none has it
// (stage by stage, so the async pool can interleave many jobs), store the
// result in every level, load it on the device. A level on the network
// (Redis) is asked alongside the compile: its hit stops the compile at the
// next stage boundary; a compile that ends first does not wait for it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/compile.hpp"
#include "runtime/cache_level.hpp"
#include "runtime/loaded_kernel.hpp"
#include "runtime/module_state.hpp"

namespace kiln::runtime {

class Driver;

/// Everything one compile needs, owned, so that it can run on a pool thread
/// after the launch that asked for it has returned. Not thread-safe: its
/// stages run one at a time, in order.
class CompileJob {
public:
  compiler::CompileRequest request;
  GlobalsSnapshot globals;
  std::shared_ptr<ModuleState> module; ///< resolves the modules of globals a compile read
  uint64_t globals_version = 0;
  std::string key, repr, data;
  Driver *driver = nullptr;
  int device = 0;
  bool warmup = false;
  /// The persistent levels, in order (disk, remote); not owned.
  std::vector<CacheLevel *> levels;
  bool read_levels = true; ///< false under KILN_ALWAYS_COMPILE: compile, but still store
  bool keep_stages = false; ///< the loaded kernel keeps its stage texts (KILN_KEEP_STAGES)
  /// Where the binary came from, once the job ran.
  BinarySource source = BinarySource::compiled;

  /// The compiler's stages (the first begins with the look-up), one per node
  /// of the pool's task graph; then result() stores and loads, in its
  /// finishing node.
  static constexpr int kStages = compiler::Compilation::kStages;
  void stage(int i);
  /// After the stages: stores the binary in the cache levels, loads it on
  /// the device and hands it over.
  std::shared_ptr<LoadedKernel> result();
  /// Every stage, then result(), on the calling thread.
  std::shared_ptr<LoadedKernel> run();

private:
  /// Runs `step`; on failure lets go of the cache levels' locks first.
  template <class F> void guarded(F step);
  void look_up();
  void finish();
  /// Level `i`'s hit: what finish() loads, written to the levels before it.
  void found(size_t i, CachedKernel hit);
  /// The first locked level answering at once (not `pending_`) that has
  /// the key.
  bool find_in_levels();
  /// Whether a look-up running alongside the compile has found the key
  /// (then found_ holds it); the compile's CompileRequest::proceed.
  bool remote_arrived(bool may_wait = true);

  std::optional<CachedKernel> found_;
  std::vector<std::unique_ptr<KeyLock>> locks_;
  /// The look-ups running alongside the compile, by level.
  std::vector<std::pair<size_t, std::shared_ptr<PendingGet>>> pending_;
  std::optional<compiler::Compilation> compilation_;
  std::shared_ptr<LoadedKernel> loaded_;
};

} // namespace kiln::runtime
