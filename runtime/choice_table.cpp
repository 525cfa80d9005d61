#include "runtime/choice_table.hpp"

#include <algorithm>

namespace kiln::runtime {

uint64_t TuningKey::hash() const {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ size;
  for (unsigned i = 0; i < size; ++i) {
    uint64_t z = words[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    h ^= z ^ (z >> 31);
  }
  return h;
}

ChoiceTable::ChoiceTable() {
  tables_.push_back(std::make_unique<Table>(16));
  table_.store(tables_.back().get(), std::memory_order_release);
}

ChoiceTable::~ChoiceTable() = default;

const ChoiceTable::Entry *ChoiceTable::probe(const Table &t, const TuningKey &key, uint64_t hash) {
  const size_t mask = t.slots.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Entry *e = t.slots[i].load(std::memory_order_acquire);
    if (!e)
      return nullptr; // tables are never full: an empty slot ends the probe
    if (e->hash == hash && e->words.size() == key.size &&
        std::equal(e->words.begin(), e->words.end(), key.words))
      return e;
  }
}

void ChoiceTable::place(Table &t, const Entry *e) {
  const size_t mask = t.slots.size() - 1;
  size_t i = e->hash & mask;
  while (t.slots[i].load(std::memory_order_relaxed))
    i = (i + 1) & mask;
  t.slots[i].store(e, std::memory_order_release);
}

std::optional<size_t> ChoiceTable::find(const TuningKey &key) const {
  const Entry *e = probe(*table_.load(std::memory_order_acquire), key, key.hash());
  return e ? std::optional<size_t>(e->config) : std::nullopt;
}

size_t ChoiceTable::insert(const TuningKey &key, size_t config) {
  std::lock_guard lock(mutex_);
  const uint64_t hash = key.hash();
  Table *t = table_.load(std::memory_order_relaxed);
  if (const Entry *e = probe(*t, key, hash))
    return e->config;
  entries_.push_back(std::make_unique<Entry>(
      Entry{std::vector<uint64_t>(key.words, key.words + key.size), hash, config}));
  if (2 * entries_.size() > t->slots.size()) { // at most half full: probes stay short
    tables_.push_back(std::make_unique<Table>(2 * t->slots.size()));
    t = tables_.back().get();
    for (const auto &e : entries_)
      place(*t, e.get());
    table_.store(t, std::memory_order_release);
  } else {
    place(*t, entries_.back().get());
  }
  return config;
}

} // namespace kiln::runtime
