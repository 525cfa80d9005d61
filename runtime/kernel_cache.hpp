// A per-device table from launch key to compiled kernel: lock-free reads,
// serialized inserts, and an optional bound on the number of entries
// (KILN_MEMORY_CACHE_MAX) with least-recently-used eviction, approximated
// by a clock: a hit sets the entry's `referenced` bit (a relaxed store, and
// only when it is clear), and the clock hand spares a referenced entry once.
//
// Readers probe an open-addressing array of atomic pointers inside a
// GracePeriod::Reader; an evicted entry is unlinked (its slot becomes a
// tombstone) and freed, like a table replaced by a rebuild, only once every
// reader that could have seen it has left its read section.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
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
  /// Owns `ready`'s kernel. Written once, under compile_mutex, before
  /// `ready` is published; a reader that saw `ready` may copy it.
  std::shared_ptr<LoadedKernel> owned;
  FutureKernel future; ///< the compile in flight in an async scope, if any
  std::mutex compile_mutex;
  /// The thread preparing this key's compile (running the jit_cache_hook,
  /// without compile_mutex), so that other threads wait for its outcome
  /// instead of asking the hook again; `prepared` wakes them.
  std::thread::id preparing;
  std::condition_variable prepared;
  /// Set by hits, cleared by the clock hand (eviction's "recently used").
  std::atomic<bool> referenced{false};
  /// Launches working on this entry outside a read section (compiling,
  /// waiting); guarded by the cache's mutex. A pinned entry is never evicted.
  uint32_t pins = 0;
};

class KernelCache {
public:
  /// `max_entries`: 0 for no bound (KILN_MEMORY_CACHE_MAX).
  explicit KernelCache(std::size_t max_entries = 0);
  ~KernelCache();
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;

  /// The entry for `key`, or null. Lock-free; the caller must be inside a
  /// GracePeriod::Reader, and the entry is valid until that section ends.
  CacheEntry *find(const SpecKey &key, uint64_t hash) const;

  /// An entry kept from eviction for as long as this lives.
  class Pin {
  public:
    Pin(KernelCache &cache, CacheEntry &entry) : cache_(&cache), entry_(&entry) {}
    ~Pin();
    Pin(const Pin &) = delete;
    Pin &operator=(const Pin &) = delete;
    CacheEntry &operator*() const { return *entry_; }
    CacheEntry *operator->() const { return entry_; }

  private:
    KernelCache *cache_;
    CacheEntry *entry_;
  };
  /// The entry for `key`, created if missing (evicting others when the
  /// bound is reached), pinned. Takes a lock.
  Pin find_or_insert(const SpecKey &key, uint64_t hash);

  /// Entries in the table (live, not counting evicted ones not yet freed).
  std::size_t size() const;
  /// Entries evicted so far.
  uint64_t evictions() const;
  /// Evicted entries and replaced tables not yet freed (readers may hold them).
  std::size_t retired() const;
  /// The loaded kernels of every entry that has one (takes the lock).
  std::vector<std::shared_ptr<LoadedKernel>> loaded() const;

private:
  struct Table {
    explicit Table(std::size_t cap) : slots(cap) {}
    std::vector<std::atomic<CacheEntry *>> slots;
    std::size_t tombstones = 0; ///< guarded by mutex_
  };
  /// What an eviction or a rebuild unlinked, with its GracePeriod stamp.
  struct Retired {
    uint64_t stamp;
    std::unique_ptr<CacheEntry> entry;
    std::unique_ptr<Table> table;
  };
  static CacheEntry *probe(const Table &t, const SpecKey &key, uint64_t hash);
  /// Clock sweep until there is room for one more entry, skipping entries in
  /// use; the unlinked ones go to `retired_`. Under mutex_.
  void evict_for_one();
  bool evictable(CacheEntry &e) const;
  /// A fresh table of the live entries, publishing it and retiring the old. Under mutex_.
  void rebuild(std::size_t capacity);
  /// Moves what no reader can still see out of `retired_` (freed by the
  /// caller, outside the lock: a kernel's destructor unloads it). Under mutex_.
  std::vector<Retired> reclaimable();

  const std::size_t max_;
  std::atomic<Table *> table_;
  mutable std::mutex mutex_;
  std::unique_ptr<Table> current_;
  std::vector<std::unique_ptr<CacheEntry>> entries_; ///< the live ones
  std::size_t hand_ = 0;                             ///< the clock's position in entries_
  std::vector<Retired> retired_;
  uint64_t evictions_ = 0;
};

} // namespace kiln::runtime
