// A per-device table from launch key to compiled kernel: lock-free reads,
// serialized inserts. Readers probe an open-addressing array of atomic
// pointers; a grown table is published atomically and the old ones are kept
// until the cache dies, so a reader never touches freed memory.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "kiln/async.hpp"
#include "runtime/loaded_kernel.hpp"
#include "runtime/spec_key.hpp"

namespace kiln::runtime {

/// One key's slot. `ready` is published once the kernel is compiled and
/// loaded; until then launches of this key take `compile_mutex` and wait.
struct CacheEntry {
  StoredKey key;
  uint64_t hash = 0;
  std::atomic<LoadedKernel *> ready{nullptr};
  std::shared_ptr<LoadedKernel> owned;
  FutureKernel future; ///< the compile in flight in an async scope, if any
  std::mutex compile_mutex;
  /// The thread preparing this key's compile (running the jit_cache_hook,
  /// without compile_mutex), so that other threads wait for its outcome
  /// instead of asking the hook again; `prepared` wakes them.
  std::thread::id preparing;
  std::condition_variable prepared;
};

class KernelCache {
public:
  KernelCache();
  ~KernelCache();

  /// The entry for `key`, or null. Lock-free; safe from any thread.
  CacheEntry *find(const SpecKey &key, uint64_t hash) const;
  /// The entry for `key`, created if missing. Takes a lock.
  CacheEntry *find_or_insert(const SpecKey &key, uint64_t hash);
  std::size_t size() const;
  /// Every entry, for statistics and tests (takes the lock).
  std::vector<CacheEntry *> entries() const;

private:
  struct Table {
    explicit Table(std::size_t cap) : slots(cap) {}
    std::vector<std::atomic<CacheEntry *>> slots;
  };
  static CacheEntry *probe(const Table &t, const SpecKey &key, uint64_t hash);

  std::atomic<Table *> table_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Table>> tables_; // all generations, newest last
  std::vector<std::unique_ptr<CacheEntry>> entries_;
};

} // namespace kiln::runtime
