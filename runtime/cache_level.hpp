// One level of the persistent caches behind the in-memory table (DESIGN.md
// section 5). A launch that misses memory asks each level in order (disk,
// then remote) before it compiles, and stores what it compiled in every
// level.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/frontend/const_value.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/kernel.hpp"

namespace kiln::runtime {

/// A module global a compile read, named by the module's path so that it
/// survives the process.
struct StoredGlobal {
  std::string module_path;
  std::string name;
  frontend::ConstValue value;
};

/// What a level stores under one compile key.
struct CachedKernel {
  CompiledKernel kernel;
  std::vector<StoredGlobal> globals;
};

/// Held while this process compiles a key, so that other processes asking
/// for it wait for the result instead of compiling it too.
class KeyLock {
public:
  virtual ~KeyLock() = default;
};

/// Implementations are safe to call from several threads at once.
class CacheLevel {
public:
  virtual ~CacheLevel() = default;
  /// What a launch reports for a hit here.
  virtual BinarySource source() const = 0;
  /// The entry stored under `key` (a hex compile key), or nullopt. A
  /// damaged, foreign or unreadable entry is a miss (and is discarded);
  /// never throws for what it finds stored.
  virtual std::optional<CachedKernel> get(const std::string &key) = 0;
  /// Stores an entry. Best effort: a failure is reported once, never thrown.
  virtual void put(const std::string &key, const CachedKernel &entry) = 0;
  /// A lock other processes asking for `key` wait on (null: none).
  virtual std::unique_ptr<KeyLock> lock(const std::string &) { return nullptr; }

  /// Small text records kept beside the binaries under their own key space
  /// (`kind` "tuning": the autotuner's choices, runtime/tuning_cache.hpp).
  /// Levels that do not keep them (the disk cache keeps tuning records in
  /// its own folder) find nothing. The caller checks what it gets back as it
  /// checks its own files; a level only vouches that the text is what some
  /// process stored (signed, where it signs entries).
  virtual std::optional<std::string> get_record(const std::string &, const std::string &) {
    return std::nullopt;
  }
  virtual void put_record(const std::string &, const std::string &, const std::string &) {}
};

} // namespace kiln::runtime
