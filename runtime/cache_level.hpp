// One level of the persistent caches behind the in-memory table (DESIGN.md
// section 5). A launch that misses memory asks each level in order (disk,
// then remote) before it compiles, and stores what it compiled in every
// level. A level on the network (Redis) answers alongside the local compile
// instead (start_get): whichever finishes first wins.
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

/// A look-up running alongside the local compile (CacheLevel::start_get).
/// Dropping it abandons it (and lets other machines compile the key, if it
/// had claimed it). Safe to use from one thread while the level's own
/// threads answer it.
class PendingGet {
public:
  virtual ~PendingGet() = default;
  /// Whether the entry has arrived (then take() it). Does not wait for the
  /// answer, except, with `may_wait`, while another machine holds the key's
  /// claim (it is compiling the key): then it waits, up to the level's
  /// bound, for that machine's entry, so that a fleet compiles a key once.
  virtual bool arrived(bool may_wait = true) = 0;
  /// The entry, once arrived() said so; only once.
  virtual CachedKernel take() = 0;
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
  /// Stores an entry found in a later level (a remote hit written to disk)
  /// without making the caller wait for it where the level can: `lock`
  /// (this level's lock of the key, or null) is let go once it is stored,
  /// so other processes waiting on it find the entry. flush() waits for it.
  /// By default the same as put().
  virtual void put_later(const std::string &key, CachedKernel entry,
                         std::unique_ptr<KeyLock> lock) {
    put(key, entry);
    lock.reset();
  }
  /// A lock other processes asking for `key` wait on (null: none).
  virtual std::unique_ptr<KeyLock> lock(const std::string &) { return nullptr; }
  /// Starts a look-up that runs while the caller compiles (null: this level
  /// answers get() at once, and is asked that way). Where the level can,
  /// the look-up also claims the key for this process when nobody has it,
  /// so that others wait for this compile (a fleet's single flight).
  virtual std::shared_ptr<PendingGet> start_get(const std::string &) { return nullptr; }
  /// Waits (within the level's deadlines) for writes still in flight (put_later's
  /// too): at exit, so that what this process compiled reaches the others.
  virtual void flush() {}

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
