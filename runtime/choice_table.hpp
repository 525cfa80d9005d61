// The autotuner's choices: tuning key -> config index, read on every launch
// of an autotuned kernel. Lock-free, allocation-free reads (the launch
// path's rule); serialized inserts. Readers probe an open-addressing array
// of atomic pointers to immutable entries; a grown array is published
// atomically and old ones are kept until the table dies (as KernelCache
// does), so a reader never touches freed memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/spec_key.hpp"

namespace kiln::runtime {

/// A tuning key, built on the stack: the key parameters' value words, then
/// a word per tensor argument's element type.
struct TuningKey {
  uint64_t words[2 * kMaxParams];
  unsigned size = 0;
  uint64_t hash() const;
};

class ChoiceTable {
public:
  ChoiceTable();
  ~ChoiceTable();
  /// The config chosen for `key`, if any. Lock-free; allocates nothing.
  std::optional<size_t> find(const TuningKey &key) const;
  /// Records `config` for `key` unless a choice is there already; returns
  /// the one kept. Takes a lock.
  size_t insert(const TuningKey &key, size_t config);

private:
  struct Entry {
    std::vector<uint64_t> words;
    uint64_t hash;
    size_t config;
  };
  struct Table {
    explicit Table(size_t cap) : slots(cap) {}
    std::vector<std::atomic<const Entry *>> slots;
  };
  static const Entry *probe(const Table &t, const TuningKey &key, uint64_t hash);
  static void place(Table &t, const Entry *e);

  std::atomic<Table *> table_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Table>> tables_; ///< every generation, newest last
  std::vector<std::unique_ptr<Entry>> entries_;
};

} // namespace kiln::runtime
